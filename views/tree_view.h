/* leakhound - SPDX-License-Identifier: MIT
 *
 * tree_view.h: `leakhound tree` output: the call tree (calltree.h) as an indented text
 * tree with percentages (like heaptrack_print and perf report --children), or JSON:
 *
 *   {"trace", "metric", "direction": "top-down"|"bottom-up", "focus", "total",
 *    "root": NODE}   NODE = {"function", "file", "line", "module", "value", "percent",
 *                            "allocations", "children": [NODE...]}
 *
 * Nodes below min_percent of the total are left out (their parents keep their value).
 */
#ifndef LH_VIEW_TREE_H
#define LH_VIEW_TREE_H

#include <stdio.h>

#include "calltree.h"
#include "err.h"

typedef struct lh_tree_view {
    const char *trace_path;
    const char *cwd;        /* may be NULL */
    const char *focus;      /* may be NULL */
    double min_percent;
    size_t max_depth;       /* 0: no limit */
} lh_tree_view_t;

int lh_view_tree_text(FILE *out, const lh_tree_t *t, const lh_funcs_t *f,
                      const lh_tree_view_t *v, lh_err_t *err);
int lh_view_tree_json(FILE *out, const lh_tree_t *t, const lh_funcs_t *f,
                      const lh_tree_view_t *v, lh_err_t *err);

#endif /* LH_VIEW_TREE_H */
