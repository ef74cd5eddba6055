/* leakhound - SPDX-License-Identifier: MIT
 *
 * flamegraph.h: a flame graph of a top-down call tree as one self-contained SVG: the root
 * ("all") at the bottom, callees above their callers, widths proportional to the metric.
 * Hovering a frame shows its function, file:line, bytes and share (<title> tooltips and a
 * status line); clicking zooms into it (click "Reset zoom" to go back); "Search" highlights
 * the functions matching a regular expression and says what share they hold. Colours
 * tell the program's own code (warm) from the C/C++ runtime (blue) and other libraries
 * (green). The small script needs no network and nothing outside the file.
 *
 * Embedded (in leakhound's HTML page) the SVG has no XML prolog and the page may drive the
 * search through the element's lhSearch(regexp) method.
 */
#ifndef LH_VIEW_FLAMEGRAPH_H
#define LH_VIEW_FLAMEGRAPH_H

#include <stdio.h>

#include "calltree.h"
#include "err.h"

typedef struct lh_flame_opts {
    const char *id;       /* element id, unique in the document ("flame") */
    int embedded;         /* inside an HTML page: no XML prolog */
    const char *title;    /* the heading, e.g. "Leaked bytes: myprog" */
    const char *cwd;      /* paths under it are shown relative; may be NULL */
    int width;            /* pixels (default 1200) */
} lh_flame_opts_t;

/* t must be top-down. Returns 0 or LH_EIO. */
int lh_view_flamegraph(FILE *out, const lh_tree_t *t, const lh_funcs_t *f,
                       const lh_flame_opts_t *o, lh_err_t *err);

#endif /* LH_VIEW_FLAMEGRAPH_H */
