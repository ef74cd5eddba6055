/* leakhound - SPDX-License-Identifier: MIT
 *
 * views_churn.c (e2e, timing of `leakhound html` against `leakhound report`): N rounds
 * (argv[1], default 200000) of allocations from a dozen call sites, most freed at once,
 * some kept in a ring (churn), one in 64 leaked; a mark every 10000 rounds.
 */
#include <stdlib.h>

#define LH_WEAK_API
#include "leakhound.h"

#define RING 4096

static void *ring[RING];

__attribute__((noinline)) static void *
site(int k, size_t n)
{
    switch (k % 12) {
    case 0: return malloc(n);
    case 1: return malloc(n + 8);
    case 2: return calloc(1, n);
    case 3: return malloc(n * 2);
    case 4: return malloc(n + 100);
    case 5: return malloc(n + 3);
    case 6: return malloc(n * 3);
    case 7: return malloc(n + 40);
    case 8: return calloc(2, n);
    case 9: return malloc(n + 1);
    case 10: return malloc(n + 17);
    default: return malloc(n + 64);
    }
}

__attribute__((noinline)) static void
round_(long i)
{
    void *p = site((int)i, (size_t)(16 + i % 200));
    if (i % 64 == 0) {
        return; /* leaked */
    }
    size_t r = (size_t)i % RING;
    free(ring[r]);
    ring[r] = p;
}

int
main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    for (long i = 0; i < n; i++) {
        if (i % 10000 == 0 && lh_mark) {
            lh_mark("round");
        }
        round_(i);
    }
    for (size_t r = 0; r < RING; r++) {
        free(ring[r]);
    }
    return 0;
}
