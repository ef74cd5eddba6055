/* leakhound - SPDX-License-Identifier: MIT
 *
 * misaligned.c (e2e, issue 11): every interposed allocation function and the public API
 * called with the stack 8 bytes off the x86-64 ABI's 16-byte alignment, as hand-written
 * assembly and some JITs do and glibc tolerates (once the thread's arena exists: glibc's
 * own arena set-up does not, so each thread allocates once normally first). Left live at
 * exit: malloc 100, calloc 3 x 10, realloc to 200, reallocarray 4 x 50, posix_memalign 64,
 * aligned_alloc 128, memalign 256, valloc 512: 8 blocks, 1490 bytes, plus in a thread
 * malloc 1000: 9 blocks, 2490 bytes. Exit status 3: the trampoline did not misalign (the
 * test would prove nothing); 4: something returned a wrong result.
 */
#define LH_WEAK_API
#include <leakhound.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
/* mis3(fn, a, b, c) calls fn(a, b, c) with rsp 8 bytes off at the call: the callee starts
 * with rsp % 16 == 0 instead of 8. */
uintptr_t mis3(void *fn, uintptr_t a, uintptr_t b, uintptr_t c);
__asm__(".text\n"
        ".globl mis3\n"
        ".type mis3, @function\n"
        "mis3:\n"
        "  mov %rdi, %rax\n"
        "  mov %rsi, %rdi\n"
        "  mov %rdx, %rsi\n"
        "  mov %rcx, %rdx\n"
        "  call *%rax\n"
        "  ret\n"
        ".size mis3, .-mis3\n");

#define CALL(fn, a, b, c) mis3((void *)(fn), (uintptr_t)(a), (uintptr_t)(b), (uintptr_t)(c))

static void *g_keep[16];

/* With frame pointers, rbp = entry rsp - 8: 0 mod 16 when the caller kept the ABI. */
__attribute__((noinline)) static uintptr_t
probe(void)
{
    return (uintptr_t)__builtin_frame_address(0) & 15;
}

static int
check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "misaligned: %s failed\n", what);
        exit(4);
    }
    return ok;
}

static void *
worker(void *arg)
{
    (void)arg;
    free(malloc(8)); /* the thread's arena, set up on an aligned stack */
    void *p = (void *)CALL(malloc, 1000, 0, 0); /* LEAK: mis_thread */
    check(p != NULL, "malloc in a thread");
    CALL(free, CALL(malloc, 77, 0, 0), 0, 0);
    g_keep[15] = p;
    return NULL;
}

int
main(void)
{
    if (CALL(probe, 0, 0, 0) != 8) {
        return 3;
    }
    free(malloc(8));
    int k = 0;
    g_keep[k++] = (void *)CALL(malloc, 100, 0, 0);   /* LEAK: mis_malloc */
    g_keep[k++] = (void *)CALL(calloc, 3, 10, 0);    /* LEAK: mis_calloc */
    void *r = (void *)CALL(malloc, 20, 0, 0);
    g_keep[k++] = (void *)CALL(realloc, r, 200, 0);  /* LEAK: mis_realloc */
    g_keep[k++] = (void *)CALL(reallocarray, NULL, 4, 50); /* LEAK: mis_reallocarray */
    void *pm = NULL;
    check(CALL(posix_memalign, &pm, 64, 64) == 0, "posix_memalign"); /* LEAK: mis_pm */
    g_keep[k++] = pm;
    g_keep[k++] = (void *)CALL(aligned_alloc, 64, 128, 0); /* LEAK: mis_aligned */
    g_keep[k++] = (void *)CALL(memalign, 64, 256, 0);      /* LEAK: mis_memalign */
    g_keep[k++] = (void *)CALL(valloc, 512, 0, 0);         /* LEAK: mis_valloc */
    for (int i = 0; i < k; i++) {
        check(g_keep[i] != NULL, "allocation");
    }
    check(CALL(malloc_usable_size, g_keep[0], 0, 0) >= 100, "malloc_usable_size");
    for (int i = 0; i < 50; i++) {
        void *t = (void *)CALL(malloc, 32 + i, 0, 0);
        t = (void *)CALL(realloc, t, 64 + i, 0);
        CALL(free, t, 0, 0);
        CALL(free, CALL(pvalloc, 100, 0, 0), 0, 0);
    }
    if (lh_mark) {
        CALL(lh_mark, "misaligned", 0, 0);
        CALL(lh_tag, g_keep[0], "mis_block", 0);
        CALL(lh_snapshot, "misaligned", 0, 0);
    }
    pthread_t t;
    check(pthread_create(&t, NULL, worker, NULL) == 0, "pthread_create");
    pthread_join(t, NULL);
    printf("misaligned: ok\n");
    fflush(stdout);
    CALL(exit, 0, 0, 0);
    return 0;
}
#else
int
main(void)
{
    return 77; /* the stack alignment case is x86-64's */
}
#endif
