/* leakhound - SPDX-License-Identifier: MIT
 *
 * leakclass.c: Valgrind's leak classification on the reference graph (see refgraph.h).
 */
#include "refgraph.h"

#include <stdlib.h>

enum { UNREACHED = 0, POSSIBLE = 1, REACHABLE = 2, IN_CLIQUE = 3 };

/* Marks the blocks node v points to: a start pointer from a node reached for certain (a
 * root, a reachable block: definite) makes the target reachable; anything else makes an
 * unreached target possibly lost. Pushes each block it marks. */
static void
mark_targets(const lh_refgraph_t *g, uint32_t v, int definite, uint8_t *st, uint32_t *stack,
             size_t *sp)
{
    for (uint64_t e = g->off[v]; e < g->off[v + 1]; e++) {
        uint32_t t = LH_EDGE_NODE(g->dst[e]);
        if (t >= g->n_blocks) {
            continue;
        }
        int strong = !(g->dst[e] & LH_EDGE_INTERIOR);
        if (strong && definite && st[t] != REACHABLE) {
            st[t] = REACHABLE;
            stack[(*sp)++] = t;
        } else if (st[t] == UNREACHED) {
            st[t] = POSSIBLE;
            stack[(*sp)++] = t;
        }
    }
}

int
lh_refgraph_classify(lh_refgraph_t *g, lh_err_t *err)
{
    uint32_t nb = g->n_blocks;
    uint8_t *st = calloc(nb ? nb : 1, 1);
    uint32_t *stack = malloc(((size_t)nb * 2 + 1) * sizeof *stack);
    uint8_t *cls = malloc(nb ? nb : 1);
    size_t sp = 0;
    if (!st || !stack || !cls) {
        free(st);
        free(stack);
        free(cls);
        return lh_err_set(err, LH_ENOMEM, "out of memory classifying blocks");
    }
    /* Marking from the roots, then from what they reached. A block is pushed at most twice
     * (once possible, once reachable), so the stack holds 2 n. */
    for (uint32_t r = nb; r < g->super; r++) {
        mark_targets(g, r, 1, st, stack, &sp);
    }
    while (sp) {
        uint32_t v = stack[--sp];
        mark_targets(g, v, st[v] == REACHABLE, st, stack, &sp);
    }
    for (uint32_t v = 0; v < nb; v++) {
        cls[v] = st[v] == REACHABLE ? LH_CLASS_REACHABLE
               : st[v] == POSSIBLE  ? LH_CLASS_POSSIBLE
                                    : LH_CLASS_DEFINITE;
    }
    /* Cliques of lost blocks, in node (address) order. A leader stays UNREACHED in st[]
     * so a later clique can absorb it; members become IN_CLIQUE. */
    for (uint32_t leader = 0; leader < nb; leader++) {
        if (st[leader] != UNREACHED) {
            continue;
        }
        sp = 0;
        stack[sp++] = leader;
        while (sp) {
            uint32_t v = stack[--sp];
            for (uint64_t e = g->off[v]; e < g->off[v + 1]; e++) {
                uint32_t t = LH_EDGE_NODE(g->dst[e]);
                if (t >= nb || t == leader || st[t] != UNREACHED) {
                    continue;
                }
                st[t] = IN_CLIQUE;
                cls[t] = LH_CLASS_INDIRECT;
                stack[sp++] = t;
            }
        }
    }
    free(st);
    free(stack);
    free(g->cls);
    g->cls = cls;
    return 0;
}
