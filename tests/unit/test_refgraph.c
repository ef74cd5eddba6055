/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_refgraph.c: leak classification and dominators on small hand-made graphs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "refgraph.h"

#define I LH_EDGE_INTERIOR

/* Builds a graph of nb blocks (sizes 1, 2, 4, ... so retained sums are unique) and nr
 * roots (nodes nb .. nb + nr - 1), classified and with dominators. */
static void
make(lh_refgraph_t *g, uint64_t *sizes, uint32_t nb, uint32_t nr, const uint32_t (*e)[2],
     size_t ne)
{
    uint32_t src[64], dst[64];
    lh_err_t err;
    for (uint32_t i = 0; i < nb; i++) {
        sizes[i] = 1ull << i;
    }
    for (size_t i = 0; i < ne; i++) {
        src[i] = e[i][0];
        dst[i] = e[i][1];
    }
    assert_int_equal(lh_refgraph_build(g, nb, nr, sizes, 1, src, dst, ne, &err), 0);
    assert_int_equal(lh_refgraph_classify(g, &err), 0);
    assert_int_equal(lh_refgraph_dominators(g, &err), 0);
}

/* root R(4) -> 0 -> 1 -> 2; 3 is pointed to by nothing. */
static void
test_chain_and_lost(void **state)
{
    (void)state;
    lh_refgraph_t g;
    uint64_t sz[4];
    static const uint32_t e[][2] = {{4, 0}, {0, 1}, {1, 2}};
    make(&g, sz, 4, 1, e, 3);
    assert_int_equal(g.cls[0], LH_CLASS_REACHABLE);
    assert_int_equal(g.cls[2], LH_CLASS_REACHABLE);
    assert_int_equal(g.cls[3], LH_CLASS_DEFINITE);
    assert_int_equal(g.idom[0], 4);
    assert_int_equal(g.idom[1], 0);
    assert_int_equal(g.idom[2], 1);
    assert_int_equal(g.idom[3], g.super);
    assert_int_equal(g.retained[4], 1 + 2 + 4);
    assert_int_equal(g.retained[1], 2 + 4);
    assert_int_equal(g.retained[3], 8);
    assert_int_equal(g.retained[g.super], 15);
    lh_refgraph_fini(&g);
}

/* Diamond: R -> 0, 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3: 3 is dominated by 0, not 1 or 2. */
static void
test_diamond(void **state)
{
    (void)state;
    lh_refgraph_t g;
    uint64_t sz[4];
    static const uint32_t e[][2] = {{4, 0}, {0, 1}, {0, 2}, {1, 3}, {2, 3}};
    make(&g, sz, 4, 1, e, 5);
    assert_int_equal(g.idom[3], 0);
    assert_int_equal(g.idom[1], 0);
    assert_int_equal(g.retained[1], 2);
    assert_int_equal(g.retained[0], 15);
    lh_refgraph_fini(&g);
}

/* Two roots share block 1: its dominator is the super-root; each root retains only its
 * own. R0(3) -> 0 -> 1; R1(4) -> 1 -> 2. */
static void
test_two_roots(void **state)
{
    (void)state;
    lh_refgraph_t g;
    uint64_t sz[3];
    static const uint32_t e[][2] = {{3, 0}, {0, 1}, {4, 1}, {1, 2}};
    make(&g, sz, 3, 2, e, 4);
    assert_int_equal(g.idom[1], g.super);
    assert_int_equal(g.idom[2], 1);
    assert_int_equal(g.retained[3], 1);
    assert_int_equal(g.retained[4], 0);
    assert_int_equal(g.retained[1], 2 + 4);
    lh_refgraph_fini(&g);
}

/* A lost ring 0 -> 1 -> 2 -> 0 and a lost chain 5 -> 3 -> 4 (5 at a higher index than
 * 3: Valgrind's clique rule demotes the earlier leader 3). */
static void
test_lost_ring_and_chain(void **state)
{
    (void)state;
    lh_refgraph_t g;
    uint64_t sz[6];
    static const uint32_t e[][2] = {{0, 1}, {1, 2}, {2, 0}, {5, 3}, {3, 4}};
    make(&g, sz, 6, 1, e, 5);
    assert_int_equal(g.cls[0], LH_CLASS_DEFINITE);
    assert_int_equal(g.cls[1], LH_CLASS_INDIRECT);
    assert_int_equal(g.cls[2], LH_CLASS_INDIRECT);
    assert_int_equal(g.cls[5], LH_CLASS_DEFINITE);
    assert_int_equal(g.cls[3], LH_CLASS_INDIRECT);
    assert_int_equal(g.cls[4], LH_CLASS_INDIRECT);
    /* The leaders dominate their cliques. */
    assert_int_equal(g.idom[1], 0);
    assert_int_equal(g.idom[2], 1);
    assert_int_equal(g.retained[0], 1 + 2 + 4);
    assert_int_equal(g.retained[5], 8 + 16 + 32);
    lh_refgraph_fini(&g);
}

/* Interior pointers: R -> 0 interior (possibly lost), 0 -> 1 start (possibly: its holder
 * is not definitely reachable), R -> 2 start, 2 -> 3 interior (possibly), 2 -> 4 start
 * (reachable); a block reached by both a start chain and an interior one is reachable. */
static void
test_interior(void **state)
{
    (void)state;
    lh_refgraph_t g;
    uint64_t sz[6];
    static const uint32_t e[][2] = {{6, 0 | I}, {0, 1}, {6, 2}, {2, 3 | I}, {2, 4}, {0, 5 | I},
                                    {4, 5}};
    make(&g, sz, 6, 1, e, 7);
    assert_int_equal(g.cls[0], LH_CLASS_POSSIBLE);
    assert_int_equal(g.cls[1], LH_CLASS_POSSIBLE);
    assert_int_equal(g.cls[2], LH_CLASS_REACHABLE);
    assert_int_equal(g.cls[3], LH_CLASS_POSSIBLE);
    assert_int_equal(g.cls[4], LH_CLASS_REACHABLE);
    assert_int_equal(g.cls[5], LH_CLASS_REACHABLE);
    assert_int_equal(g.n_interior, 3);
    assert_int_equal(g.n_strong, 4);
    lh_refgraph_fini(&g);
}

/* A long doubly-linked list reached from a head and a tail root: everything is dominated
 * by the super-root (the case that makes the iterative algorithm quadratic), and a deep
 * chain must not overflow the stack. */
static void
test_long_list(void **state)
{
    (void)state;
    enum { N = 200000 };
    lh_refgraph_t g;
    lh_err_t err;
    uint64_t *sz = malloc(N * sizeof *sz);
    uint32_t *src = malloc((2 * N + 2) * sizeof *src), *dst = malloc((2 * N + 2) * sizeof *dst);
    size_t ne = 0;
    for (uint32_t i = 0; i < N; i++) {
        sz[i] = 10;
        if (i + 1 < N) {
            src[ne] = i, dst[ne++] = i + 1;
            src[ne] = i + 1, dst[ne++] = i;
        }
    }
    src[ne] = N, dst[ne++] = 0;         /* head */
    src[ne] = N + 1, dst[ne++] = N - 1; /* tail */
    assert_int_equal(lh_refgraph_build(&g, N, 2, sz, 1, src, dst, ne, &err), 0);
    assert_int_equal(lh_refgraph_classify(&g, &err), 0);
    assert_int_equal(lh_refgraph_dominators(&g, &err), 0);
    for (uint32_t i = 0; i < N; i++) {
        assert_int_equal(g.cls[i], LH_CLASS_REACHABLE);
        assert_int_equal(g.idom[i], g.super);
        assert_int_equal(g.retained[i], 10);
    }
    assert_int_equal(g.retained[g.super], 10ull * N);
    lh_refgraph_fini(&g);
    free(sz);
    free(src);
    free(dst);
}

static void
test_bad_edges(void **state)
{
    (void)state;
    lh_refgraph_t g;
    lh_err_t err;
    uint64_t sz[2] = {1, 1};
    uint32_t src[1] = {5}, dst[1] = {0};
    assert_int_equal(lh_refgraph_build(&g, 2, 1, sz, 1, src, dst, 1, &err), LH_EINVAL);
    /* No edges at all: every block is definitely lost and dominated by the super-root. */
    assert_int_equal(lh_refgraph_build(&g, 2, 0, sz, 1, src, dst, 0, &err), 0);
    assert_int_equal(lh_refgraph_classify(&g, &err), 0);
    assert_int_equal(lh_refgraph_dominators(&g, &err), 0);
    assert_int_equal(g.cls[0], LH_CLASS_DEFINITE);
    assert_int_equal(g.idom[1], g.super);
    lh_refgraph_fini(&g);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_and_lost),   cmocka_unit_test(test_diamond),
        cmocka_unit_test(test_two_roots),        cmocka_unit_test(test_lost_ring_and_chain),
        cmocka_unit_test(test_interior),         cmocka_unit_test(test_long_list),
        cmocka_unit_test(test_bad_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
