/* leakhound - SPDX-License-Identifier: MIT
 *
 * calltree.c (e2e, `leakhound report --by function`, tree, plot, flamegraph, html,
 * export): a program whose call tree and figures are known exactly. No stdio, so the C
 * library allocates nothing of its own. Built with -O0: every function keeps its frame,
 * except inl(), which is always inlined into f_inline().
 *
 *   main -> a -> c           malloc(100)   leaked
 *   main -> b -> c           malloc(100)   freed
 *   main -> b -> d           malloc(1000)  leaked
 *   main -> rec x4 (recursion)  malloc(50) leaked  (rec counted once per stack)
 *   main                     malloc(7)     leaked
 *   main -> f_inline -> inl  malloc(30)    leaked  (inl is an inlined frame)
 *   main -> grow, once per mark (5 marks), malloc(64) leaked: growth 64 bytes per mark
 *   main -> e                malloc(1 MiB) freed: the heap peak is reached in e
 *
 * Leaked in total: 100 + 1000 + 50 + 7 + 30 + 5 * 64 = 1507 bytes.
 */
#include <stdlib.h>
#include <time.h>

#define LH_WEAK_API
#include "leakhound.h"

static void *keep[32];
static int n_keep;

static void
pause_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void *
c(size_t n)
{
    return malloc(n); /* SITE: tree_c */
}

__attribute__((noinline)) static void
a(void)
{
    keep[n_keep++] = c(100);
}

__attribute__((noinline)) static void *
d(void)
{
    return malloc(1000); /* LEAK: tree_d */
}

__attribute__((noinline)) static void
b(void)
{
    free(c(100));
    keep[n_keep++] = d();
}

__attribute__((noinline)) static void *
rec(int depth)
{
    if (depth == 0) {
        return malloc(50); /* LEAK: tree_rec */
    }
    return rec(depth - 1);
}

static inline __attribute__((always_inline)) void *
inl(void)
{
    return malloc(30); /* LEAK: tree_inl */
}

__attribute__((noinline)) static void
f_inline(void)
{
    keep[n_keep++] = inl();
}

__attribute__((noinline)) static void
grow(void)
{
    keep[n_keep++] = malloc(64); /* LEAK: tree_grow */
}

__attribute__((noinline)) static void
e(void)
{
    char *big = malloc(1 << 20); /* SITE: tree_e */
    pause_ms(20);
    free(big);
}

int
main(void)
{
    a();
    pause_ms(10);
    b();
    pause_ms(10);
    keep[n_keep++] = rec(3);
    keep[n_keep++] = malloc(7); /* LEAK: tree_main */
    f_inline();
    if (lh_snapshot) {
        lh_snapshot("setup done");
    }
    for (int i = 0; i < 5; i++) {
        if (lh_mark) {
            lh_mark("iteration");
        }
        grow();
        pause_ms(5);
    }
    e();
    pause_ms(10);
    return n_keep == 10 ? 0 : 1;
}
