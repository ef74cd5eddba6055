/* leakhound - SPDX-License-Identifier: MIT
 *
 * svg_plot.h: the evolution chart (evolution.h) as one self-contained SVG: the live heap
 * stacked by the top sites plus "other", the RSS line over it, marks and snapshots as
 * labelled vertical lines, axes with units (B/KiB/MiB/GiB; seconds or mark numbers), a
 * legend naming each site's function and file:line, and a title.
 */
#ifndef LH_VIEW_SVG_PLOT_H
#define LH_VIEW_SVG_PLOT_H

#include <stdio.h>

#include "err.h"
#include "evolution.h"

typedef struct lh_plot_opts {
    const char *id;        /* element id ("plot") */
    int embedded;          /* inside an HTML page: no XML prolog */
    const char *title;
    const char *subtitle;  /* may be NULL */
    const char *cwd;       /* may be NULL */
    int width;             /* pixels (default 1000) */
} lh_plot_opts_t;

int lh_view_svg_plot(FILE *out, const lh_evolution_t *e, const lh_plot_opts_t *o,
                     lh_err_t *err);


/* "function — file.c:42" for a site (file's base name), into buf. */
const char *lh_plot_site_name(char *buf, size_t len, const lh_site_t *site);

#endif /* LH_VIEW_SVG_PLOT_H */
