/* leakhound - SPDX-License-Identifier: MIT
 *
 * funcs_view.h: `leakhound report --by function` as text or JSON.
 *
 * JSON: {"trace", "metric", "sort": "inclusive"|"exclusive", "growth_points",
 *        "growth_over": "marks"|"snapshots"|null, "suppressed_stacks",
 *        "total": FIGURES,
 *        "functions": [{"function", "module", "file", "line", "program",
 *                       "inclusive": FIGURES, "exclusive": FIGURES}, ...]}
 * where FIGURES is {"allocated", "allocations", "leaked", "leaked_blocks", "peak",
 * "growth"} (bytes, counts; growth in bytes per mark). Field names are a contract.
 */
#ifndef LH_VIEW_FUNCS_H
#define LH_VIEW_FUNCS_H

#include <stdio.h>

#include "err.h"
#include "funcs.h"

typedef struct lh_funcs_view {
    const char *trace_path;
    const char *cwd;       /* paths under it are shown relative; may be NULL */
    lh_metric_t metric;
    int inclusive;         /* sorted by inclusive figures */
    size_t top;            /* rows; 0: all */
} lh_funcs_view_t;

int lh_view_funcs_text(FILE *out, const lh_funcs_t *f, const lh_funcs_view_t *v, lh_err_t *err);
int lh_view_funcs_json(FILE *out, const lh_funcs_t *f, const lh_funcs_view_t *v, lh_err_t *err);

/* A metric value as text: bytes in binary units, growth as "+1.5 KiB/mark" (or
 * "/snapshot" when per_snapshot: the boundaries the slope was measured over). */
const char *lh_view_metric_str(char *buf, size_t len, lh_metric_t m, double v,
                               int per_snapshot);

#endif /* LH_VIEW_FUNCS_H */
