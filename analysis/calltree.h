/* leakhound - SPDX-License-Identifier: MIT
 *
 * calltree.h: call trees of one metric, for `leakhound tree`, flame graphs and folded
 * stacks.
 *
 * Each counted stack (funcs.h: allocated or live, not suppressed) is a path of functions,
 * cut above the outermost `main` (lh_funcs_trim). Top-down, paths run from the outermost
 * frame to the innermost, so a node's value is what was allocated in it and below (its
 * inclusive figure on that path) and the leaves are where the allocations happened;
 * bottom-up, they run from the innermost frame outward: the roots are the allocating
 * functions and their children the callers. The root node (index 0) is "all".
 *
 * Focus on FUNC: only the stacks through FUNC count, and each one's path starts at FUNC
 * (top-down: its outermost occurrence; bottom-up: its innermost), so all the places FUNC
 * is called from merge into one tree rooted at FUNC.
 *
 * Growth values can be negative for a stack that shrank; trees count only growing stacks
 * (value > 0), so that widths add up. Percentages are of the root of the unfocused tree.
 */
#ifndef LH_CALLTREE_H
#define LH_CALLTREE_H

#include <stddef.h>
#include <stdint.h>

#include "collect.h"
#include "err.h"
#include "funcs.h"

#define LH_TNODE_NONE UINT32_MAX

typedef struct lh_tnode {
    uint32_t func;         /* index into the funcs table; LH_TNODE_NONE for the root */
    uint32_t parent;
    uint32_t first_child;  /* LH_TNODE_NONE when none; sorted by value after build */
    uint32_t next_sibling;
    double value;          /* the metric */
    uint64_t n_allocs;
    const char *file;      /* a frame's source position on this path (first seen) */
    uint32_t line;
} lh_tnode_t;

typedef struct lh_tree {
    lh_tnode_t *v;         /* v[0] is the root */
    size_t n;
    double total;          /* of all counted stacks, before focusing */
    lh_metric_t metric;
    int growth_is_snapshots; /* growth is per snapshot, not per mark (lh_funcs_t's) */
    int bottom_up;
    /* internal */
    uint32_t *hash;
    size_t hash_mask;
    size_t cap;
} lh_tree_t;

typedef struct lh_tree_opts {
    lh_metric_t metric;
    int bottom_up;
    const char *focus;     /* a function name, or NULL */
} lh_tree_opts_t;

/* Builds the tree of the stacks f counted. Returns 0, LH_ENOENT when focus names no
 * function on any counted stack (message says so), or LH_ENOMEM. */
int lh_tree_build(lh_tree_t *t, lh_collect_t *c, const lh_funcs_t *f, const lh_supp_t *supp,
                  const lh_tree_opts_t *opts, lh_err_t *err);
void lh_tree_fini(lh_tree_t *t);

/* Calls fn for every path of the stacks f counted, root first (top-down order, trimmed as
 * above), with its value for metric m (stacks whose value is 0 are skipped): what folded
 * exports write. Returns 0, fn's negative result, or LH_ENOMEM. */
int lh_tree_paths(lh_collect_t *c, const lh_funcs_t *f, const lh_supp_t *supp, lh_metric_t m,
                  int (*fn)(void *ctx, const lh_frame_t *const *path, size_t n, double value,
                            lh_err_t *err),
                  void *ctx, lh_err_t *err);

#endif /* LH_CALLTREE_H */
