/* leakhound - SPDX-License-Identifier: MIT
 *
 * html.h: `leakhound html`: one self-contained page (inline CSS, JS and SVG; nothing from
 * the network or other files) with the summary, the heap over time, the flame graph, the
 * top sites with their stacks (collapsible), the functions, the growth ranking when the
 * trace has marks or snapshots, and the reachability section (a placeholder until heap
 * contents are recorded). It renders aggregates the caller computed, never every event.
 */
#ifndef LH_VIEW_HTML_H
#define LH_VIEW_HTML_H

#include <stdio.h>

#include "calltree.h"
#include "err.h"
#include "evolution.h"
#include "funcs.h"
#include "report.h"

typedef struct lh_html_page {
    const lh_report_t *rep;        /* summary and the top sites */
    const lh_funcs_t *funcs;       /* sorted by exclusive leaked */
    const lh_evolution_t *evo;     /* over time */
    const lh_tree_t *flame;        /* top-down */
    const lh_growth_t *growth;
    const lh_site_t *const *growth_sites; /* symbolized, parallel to growth->v */
    size_t n_growth_sites;         /* shown (<= growth->n) */
    const char *title;             /* the program */
    const char *plot_title, *plot_subtitle, *flame_title;
    const char *cwd;               /* may be NULL */
    const char *version;
} lh_html_page_t;

int lh_view_html(FILE *out, const lh_html_page_t *p, lh_err_t *err);

#endif /* LH_VIEW_HTML_H */
