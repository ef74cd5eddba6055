/* leakhound - SPDX-License-Identifier: MIT
 *
 * peer_shapes.c (e2e, run_peer.py): the heap shapes the leak checkers' own test suites
 * (Valgrind memcheck's leak tests, LeakSanitizer's) are built on, one per mode (argv[1]),
 * so that the same binary gives Valgrind's answer and leakhound's for the same shape. Each
 * mode builds its blocks in a function of its own and wipes the stack below main before
 * returning, so that no stray copy of a pointer decides a class. The answers are in
 * run_peer.py.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

/* Where results go so that the compiler keeps them, without stdio's buffer (a block of its
 * own, which Valgrind frees at exit and leakhound sees). */
volatile uintptr_t g_sink;

typedef struct node {
    struct node *next;
    long pad;
} node_t;

/* Two nodes' worth, so that node + 1 is an interior pointer still inside the block. */
static node_t *
mk(node_t *next)
{
    node_t *x = malloc(2 * sizeof *x);
    x->next = next;
    return x;
}

node_t *g_r1, *g_r2, *g_r5, *g_r6, *g_r7, *g_r8, *g_r9;

/* Start and interior pointers, from a global or from a lost block: the nine chains of
 * Valgrind's leak-cases, each block 32 bytes. */
__attribute__((noinline)) static void
chains(void)
{
    g_r1 = mk(NULL);            /* reachable */
    g_r2 = mk(mk(NULL));        /* reachable, and what it points to */
    (void)mk(NULL);             /* definitely lost */
    (void)mk(mk(NULL));         /* definitely lost, and indirectly what it points to */
    g_r5 = mk(NULL) + 1;        /* possibly lost: only an interior pointer */
    g_r6 = mk(mk(NULL));        /* reachable ... */
    g_r6->next++;               /* ... pointing inside a block: possibly lost */
    g_r7 = mk(mk(NULL)) + 1;    /* possibly lost, and so is what it points to */
    g_r8 = mk(mk(NULL));        /* interior pointers both hops: both possibly lost */
    g_r8->next++;
    g_r8++;
    g_r9 = mk(mk(NULL));        /* lost, pointing inside another block: */
    g_r9->next++;               /* definitely lost, the other indirectly lost */
    g_r9 = NULL;
}

/* A block whose only pointer is its own first word: definitely lost. */
__attribute__((noinline)) static void
selfref(void)
{
    void **p = malloc(64);
    *p = p;
}

char g_bytes[32];

/* The only copy of a pointer stored at an odd address: scanners read aligned words only. */
__attribute__((noinline)) static void
unaligned(void)
{
    void *p = malloc(48);
    memcpy(g_bytes + 3, &p, sizeof p);
}

void *g_zero;

/* malloc(0) and calloc(0, n) are blocks too (0 bytes each); realloc(p, 0) frees p. */
__attribute__((noinline)) static void
zero(void)
{
    void *lost = malloc(0);
    g_zero = malloc(0);
    void *q = realloc(malloc(100), 0);
    void *c = calloc(0, 8);
    g_sink = (uintptr_t)lost + (uintptr_t)q + (uintptr_t)c;
}

/* Failed allocations record nothing, and a failed realloc leaves its block as it was. */
__attribute__((noinline)) static void
fails(void)
{
    char *p = malloc(77);
    volatile size_t huge = SIZE_MAX - 4096;
    char *q = realloc(p, huge);
    volatile size_t half = SIZE_MAX / 2;
    void *c = calloc(half, 4);
    void *m = malloc(huge);
    g_sink = (uintptr_t)q + (uintptr_t)c + (uintptr_t)m; /* 0: all three failed */
}

char *g_end, *g_last;

/* One past the end of a block does not point into it; its last byte does. */
__attribute__((noinline)) static void
onepast(void)
{
    char *p = malloc(40);
    g_end = p + 40;          /* definitely lost */
    char *q = malloc(40);
    g_last = q + 39;         /* possibly lost */
}

typedef struct tnode {
    struct tnode *l, *r;
} tnode_t;

static tnode_t *
mktree(int depth)
{
    if (!depth) {
        return NULL;
    }
    tnode_t *x = malloc(sizeof *x);
    x->l = mktree(depth - 1);
    x->r = mktree(depth - 1);
    return x;
}

tnode_t *g_tree;

/* A tree of 15 nodes whose left subtree (7) is cut off: its root definitely lost, the 6
 * below it indirectly; the 8 left reachable. */
__attribute__((noinline)) static void
tree(void)
{
    g_tree = mktree(4);
    g_tree->l = NULL;
}

uintptr_t g_xor;
void *g_ring;

/* A pointer hidden by xor (lost to any scanner), a 3-cycle reachable from a global, a
 * 2-cycle nothing reaches (one definitely lost, the other indirectly). */
__attribute__((noinline)) static void
cycles(void)
{
    g_xor = (uintptr_t)malloc(99) ^ 0x5555;
    void **a = malloc(16), **b = malloc(16), **c = malloc(16);
    a[0] = b;
    b[0] = c;
    c[0] = a;
    g_ring = b;
    void **x = malloc(24), **y = malloc(24);
    x[0] = y;
    y[0] = x;
}

/* The only copy of a pointer is in a frame that has returned, far below the stack
 * pointer: not a root (LeakSanitizer's stale_stack_leak). */
__attribute__((noinline)) static void
put_on_stack(void *p)
{
    void *locals[2048];
    locals[0] = p;
    __asm__ volatile("" : : "r"(locals) : "memory"); /* the store is kept */
}

__attribute__((noinline)) static void
stale(void)
{
    put_on_stack(malloc(1337));
}

/* Pointers in memory that cannot be read: a page made PROT_NONE (lost) and the page of a
 * shared file mapping past the file's end (reading it raises SIGBUS) beside a readable
 * one; and one in an ordinary anonymous mapping (reachable, as Valgrind scans mappings). */
__attribute__((noinline)) static void
unreadable(const char *dir)
{
    void **m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    m[0] = malloc(111);
    mprotect(m, 4096, PROT_NONE);
    char path[4096];
    snprintf(path, sizeof path, "%s/peer_shapes.XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0 || unlink(path) < 0 || ftruncate(fd, 8192) < 0) {
        perror("peer_shapes: temporary file");
        exit(3);
    }
    void **fm = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    fm[0] = malloc(222);
    if (ftruncate(fd, 100) < 0) { /* the second page is now past the end of the file */
        perror("peer_shapes: ftruncate");
        exit(3);
    }
    void **r = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    r[0] = malloc(333);
}

/* Every allocation function of the C library, each block lost: posix_memalign,
 * aligned_alloc, valloc, calloc, memalign, strdup, strndup, asprintf, getline. */
__attribute__((noinline)) static void
allocfns(void)
{
    void *a;
    if (posix_memalign(&a, 64, 100) != 0) {
        exit(3);
    }
    void *b = aligned_alloc(256, 512);
    void *c = valloc(10);
    void *d = calloc(3, 7);
    void *e = memalign(4096, 5000);
    char *s = strdup("hello world");
    char *t = strndup("abcdefgh", 4);
    char *u;
    if (asprintf(&u, "%d-%s", 42, "x") < 0) {
        exit(3);
    }
    char *line = NULL;
    size_t n = 0;
    FILE *fp = fmemopen("line one\n", 9, "r");
    if (!fp || getline(&line, &n, fp) < 0) {
        exit(3);
    }
    fclose(fp);
    g_sink = a && b && c && d && e && s && t && u && line;
}

void *g_big;

/* Blocks malloc serves by mmap: lost, reachable, and a lost one holding the only pointer
 * to a small block (indirectly lost). */
__attribute__((noinline)) static void
large(void)
{
    char *p = malloc(40 << 20);
    p[0] = 1;
    g_big = malloc(33 << 20);
    void **holder = malloc(20 << 20);
    holder[1000] = malloc(1000);
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready;

static void *
blocked(void *arg)
{
    (void)arg;
    void *volatile mine = malloc(321); /* only on this thread's stack: reachable */
    pthread_mutex_lock(&mu);
    ready = 1;
    pthread_cond_broadcast(&cv);
    for (;;) {
        pthread_cond_wait(&cv, &mu);
    }
    return (void *)mine;
}

static void *
returns_block(void *arg)
{
    (void)arg;
    return malloc(234); /* a detached thread's result: nobody takes it, lost */
}

static void *
ignores_arg(void *arg)
{
    (void)arg;
    return NULL; /* its argument is never freed: lost */
}

/* Thread stacks, a detached thread's result and an argument nobody frees (LeakSanitizer's
 * use_stacks_threaded and create_thread_leak): exits with the first thread still blocked. */
__attribute__((noinline)) static void
threads(void)
{
    pthread_t t, d, g;
    pthread_create(&t, NULL, blocked, NULL);
    pthread_mutex_lock(&mu);
    while (!ready) {
        pthread_cond_wait(&cv, &mu);
    }
    pthread_mutex_unlock(&mu);
    pthread_create(&d, NULL, returns_block, NULL);
    pthread_detach(d);
    pthread_create(&g, NULL, ignores_arg, malloc(123));
    pthread_join(g, NULL);
    usleep(100000); /* the detached one ends */
}

void *g_data = (void *)1;
void *g_bss;
__thread void *t_kept;

/* Everything still reachable: from initialized data, from .bss, from the main thread's
 * TLS (LeakSanitizer's use_globals_initialized, use_globals_uninitialized, use_tls_static). */
__attribute__((noinline)) static void
kept(void)
{
    g_data = malloc(1337);
    g_bss = malloc(1338);
    t_kept = malloc(1339);
}

static void *
exits_process(void *arg)
{
    (void)arg;
    void *volatile mine = malloc(600); /* on this thread's stack when it calls exit */
    usleep(50000);
    exit(0);
    return (void *)mine;
}

/* exit called by a thread while main waits in pthread_join (LeakSanitizer's
 * exit_atexit_stale_stack): both stacks are live, the caller's from its stack pointer. */
__attribute__((noinline)) static void
thread_exits(void)
{
    void *volatile on_main = malloc(700);
    g_data = malloc(800);
    g_sink = (uintptr_t)malloc(900);
    g_sink = 0; /* lost */
    pthread_t t;
    pthread_create(&t, NULL, exits_process, NULL);
    pthread_join(t, NULL);
    g_sink = (uintptr_t)on_main;
}

static ucontext_t main_ctx, co_ctx;

static void
coroutine(void)
{
    void *volatile on_co_stack = malloc(777);
    swapcontext(&co_ctx, &main_ctx);
    g_sink = (uintptr_t)on_co_stack;
    exit(0); /* on the coroutine's stack, a heap block */
}

/* A coroutine (makecontext) whose stack is a heap block, holding the only pointer to a
 * block; the process exits from it while main's frame, on the thread's own stack, holds
 * another (LeakSanitizer's swapcontext): all reachable. */
__attribute__((noinline)) static void
coroutine_exits(void)
{
    void *volatile on_main = malloc(555);
    size_t size = 128 * 1024;
    getcontext(&co_ctx);
    co_ctx.uc_stack.ss_sp = malloc(size);
    co_ctx.uc_stack.ss_size = size;
    co_ctx.uc_link = &main_ctx;
    makecontext(&co_ctx, coroutine, 0);
    swapcontext(&main_ctx, &co_ctx);
    swapcontext(&main_ctx, &co_ctx); /* it exits */
    g_sink = (uintptr_t)on_main;
}

/* The rules the program embeds for LeakSanitizer: leakhound applies them where it applies
 * its built-in list (run --check, --default-suppressions), as LeakSanitizer and heaptrack
 * do. They name only the functions below. */
const char *__lsan_default_suppressions(void);
void *peer_hidden_by_program(void);
void *peer_embedded_too(void);
void *peer_shown(void);

const char *
__lsan_default_suppressions(void)
{
    return "# the program's own\nleak:^peer_hidden_by_program$\nleak:peer_emb*_too\n";
}

__attribute__((noinline)) void *
peer_hidden_by_program(void)
{
    return malloc(11);
}

__attribute__((noinline)) void *
peer_embedded_too(void)
{
    return malloc(22);
}

__attribute__((noinline)) void *
peer_shown(void)
{
    return malloc(44);
}

/* Three lost blocks: two the program's own rules suppress, one they do not. */
__attribute__((noinline)) static void
embedded(void)
{
    g_sink = (uintptr_t)peer_hidden_by_program() + (uintptr_t)peer_embedded_too() +
             (uintptr_t)peer_shown();
}

static void scrub(void);

/* Loses n blocks of size bytes each. */
__attribute__((noinline)) static void
lose(int n, size_t size)
{
    for (int i = 0; i < n; i++) {
        g_sink = (uintptr_t)malloc(size); /* LEAK: forks_lost */
    }
    g_sink = 0;
}

/* A process forks three children and loses nothing itself: the first loses 4 blocks of 100
 * bytes and returns through exit (LeakSanitizer checks it there: it fails), the second
 * loses 3 of 50 and leaves by _exit, the third 2 of 30 and execs /bin/true (LeakSanitizer
 * checks neither). Prints the three pids. */
__attribute__((noinline)) static void
forks(void)
{
    pid_t pid[3];
    for (int k = 0; k < 3; k++) {
        fflush(stdout);
        if ((pid[k] = fork()) == 0) {
            lose(4 - k, k == 0 ? 100 : k == 1 ? 50 : 30);
            scrub();
            if (k == 0) {
                exit(0);
            } else if (k == 1) {
                _exit(0);
            }
            execl("/bin/true", "true", (char *)NULL);
            _exit(127);
        }
        int status;
        if (pid[k] < 0 || waitpid(pid[k], &status, 0) != pid[k] || status != 0) {
            exit(1);
        }
    }
    printf("%d %d %d\n", (int)pid[0], (int)pid[1], (int)pid[2]);
    fflush(stdout);
}

/* Overwrites the stack below main's frame, where the mode's frames were. */
__attribute__((noinline)) static void
scrub(void)
{
    volatile char big[32768];
    for (size_t i = 0; i < sizeof big; i++) {
        big[i] = 0;
    }
}

int
main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "chains") == 0) {
        chains();
    } else if (strcmp(mode, "selfref") == 0) {
        selfref();
    } else if (strcmp(mode, "unaligned") == 0) {
        unaligned();
    } else if (strcmp(mode, "zero") == 0) {
        zero();
    } else if (strcmp(mode, "fails") == 0) {
        fails();
    } else if (strcmp(mode, "onepast") == 0) {
        onepast();
    } else if (strcmp(mode, "tree") == 0) {
        tree();
    } else if (strcmp(mode, "cycles") == 0) {
        cycles();
    } else if (strcmp(mode, "stale") == 0) {
        stale();
    } else if (strcmp(mode, "unreadable") == 0 && argc > 2) {
        unreadable(argv[2]);
    } else if (strcmp(mode, "allocfns") == 0) {
        allocfns();
    } else if (strcmp(mode, "large") == 0) {
        large();
    } else if (strcmp(mode, "threads") == 0) {
        threads();
        scrub();
        exit(0); /* the blocked thread still runs */
    } else if (strcmp(mode, "kept") == 0) {
        kept();
    } else if (strcmp(mode, "embedded") == 0) {
        embedded();
    } else if (strcmp(mode, "thread_exits") == 0) {
        thread_exits();
    } else if (strcmp(mode, "coroutine_exits") == 0) {
        coroutine_exits();
    } else if (strcmp(mode, "forks") == 0) {
        forks();
    } else {
        fprintf(stderr, "usage: peer_shapes MODE (see run_peer.py)\n");
        return 2;
    }
    scrub();
    return 0;
}
