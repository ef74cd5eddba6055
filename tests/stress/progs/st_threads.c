/* leakhound - SPDX-License-Identifier: MIT
 *
 * st_threads.c (stress): threads that allocate, free and reallocate each other's blocks.
 *
 *   st_threads cross [THREADS] [ITERS]   THREADS threads (default 32) share an array of
 *       atomic pointers; each swaps a fresh block (malloc or calloc) into a random slot
 *       and frees or reallocates what it took out, so most blocks die in another thread
 *       than the one that made them.
 *   st_threads churn [ROUNDS]            threads created and joined in a loop (ROUNDS
 *       rounds of 4 threads, default 1000): each allocates, reallocates and frees a few
 *       blocks and leaves one for main to free.
 *
 * Every call is counted and printed ("COUNT <site> allocs=.. frees=.. reallocs=.."), one
 * line per allocating function (st_*), which the runner compares with the trace: an
 * allocation counts at the function that made it, a free at the function that made the
 * block it frees, a realloc at the function that called realloc. The allocating
 * functions are noinline so that each is a frame of its own.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define N_SLOTS 1024

typedef struct counts {
    atomic_long allocs, frees, reallocs;
} counts_t;

/* One set of counters per allocating function: the runner checks them per site. */
static counts_t c_fresh, c_grow, c_churn;
static _Atomic(void *) g_slots[N_SLOTS];
/* Which function made the block in each slot: its frees count there. A block's origin
 * travels with it, through realloc too (a reallocated block is the same object, made
 * where it was first allocated): the first byte holds 1 (st_fresh). */
static long g_iters = 20000;

static counts_t *
origin(void *p)
{
    return ((unsigned char *)p)[0] == 2 ? &c_grow : &c_fresh;
}

NOINLINE static void *
st_fresh(unsigned *seed)
{
    size_t n = 16 + (size_t)(rand_r(seed) % 2000);
    unsigned char *p = (rand_r(seed) & 1) ? malloc(n) : calloc(1, n);
    if (!p) {
        abort();
    }
    p[0] = 1;
    atomic_fetch_add(&c_fresh.allocs, 1);
    return p;
}

/* realloc of a block another thread made: the block stays st_fresh's (its frees count
 * there); the realloc itself counts here. */
NOINLINE static void *
st_grow(void *old, unsigned *seed)
{
    size_t n = 16 + (size_t)(rand_r(seed) % 8000);
    counts_t *was = origin(old);
    unsigned char *p = realloc(old, n);
    if (!p) {
        abort();
    }
    (void)was;
    atomic_fetch_add(&c_grow.reallocs, 1);
    return p;
}

NOINLINE static void
st_release(void *p)
{
    atomic_fetch_add(&origin(p)->frees, 1);
    free(p);
}

static void *
cross_worker(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u + 1;
    for (long i = 0; i < g_iters; i++) {
        void *mine = st_fresh(&seed);
        void *old = atomic_exchange(&g_slots[rand_r(&seed) % N_SLOTS], mine);
        if (!old) {
            continue;
        }
        if (rand_r(&seed) % 4 == 0) {
            /* Reallocate what another thread made, then put it back for someone to free. */
            void *grown = st_grow(old, &seed);
            void *out = atomic_exchange(&g_slots[rand_r(&seed) % N_SLOTS], grown);
            if (out) {
                st_release(out);
            }
        } else {
            st_release(old);
        }
    }
    return NULL;
}

NOINLINE static void *
st_churn_alloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        abort();
    }
    atomic_fetch_add(&c_churn.allocs, 1);
    return p;
}

static void *
churn_worker(void *arg)
{
    size_t k = (size_t)(uintptr_t)arg;
    void *a = st_churn_alloc(32 + k);
    void *b = st_churn_alloc(4096);
    void *c = realloc(a, 200 + k); /* counted as a realloc of site st_churn_worker */
    if (!c) {
        abort();
    }
    atomic_fetch_add(&c_churn.reallocs, 1);
    free(b);
    atomic_fetch_add(&c_churn.frees, 1);
    return c; /* main frees it after the join */
}

static void
print_counts(const char *name, counts_t *c)
{
    printf("COUNT %s allocs=%ld frees=%ld reallocs=%ld\n", name, atomic_load(&c->allocs),
           atomic_load(&c->frees), atomic_load(&c->reallocs));
}

int
main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "cross";
    if (strcmp(mode, "cross") == 0) {
        int n = argc > 2 ? atoi(argv[2]) : 32;
        if (argc > 3) {
            g_iters = atol(argv[3]);
        }
        pthread_t *t = calloc((size_t)n, sizeof *t);
        for (int i = 0; i < n; i++) {
            if (pthread_create(&t[i], NULL, cross_worker, (void *)(uintptr_t)i) != 0) {
                perror("pthread_create");
                return 1;
            }
        }
        for (int i = 0; i < n; i++) {
            pthread_join(t[i], NULL);
        }
        free(t);
        for (int i = 0; i < N_SLOTS; i++) {
            void *p = atomic_exchange(&g_slots[i], NULL);
            if (p) {
                st_release(p);
            }
        }
        printf("threads %d iterations %ld\n", n, g_iters);
        print_counts("st_fresh", &c_fresh);
        print_counts("st_grow", &c_grow);
        return 0;
    }
    if (strcmp(mode, "churn") == 0) {
        long rounds = argc > 2 ? atol(argv[2]) : 1000;
        long created = 0;
        for (long r = 0; r < rounds; r++) {
            pthread_t t[4];
            for (int i = 0; i < 4; i++) {
                if (pthread_create(&t[i], NULL, churn_worker, (void *)(uintptr_t)i) != 0) {
                    perror("pthread_create");
                    return 1;
                }
                created++;
            }
            for (int i = 0; i < 4; i++) {
                void *ret = NULL;
                pthread_join(t[i], &ret);
                free(ret);
                atomic_fetch_add(&c_churn.frees, 1);
            }
        }
        printf("threads created and joined %ld\n", created);
        print_counts("st_churn", &c_churn);
        return 0;
    }
    fprintf(stderr, "usage: st_threads cross [THREADS] [ITERS] | churn [ROUNDS]\n");
    return 2;
}
