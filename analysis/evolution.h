/* leakhound - SPDX-License-Identifier: MIT
 *
 * evolution.h: the heap over time, ready to draw: the live bytes of the top N sites (by
 * the most each one held at any sampled time) and of all the others, at every column of
 * the collector (time) or at every mark (marks), with the RSS samples, the marks and the
 * snapshots on the same x axis.
 */
#ifndef LH_EVOLUTION_H
#define LH_EVOLUTION_H

#include <stddef.h>
#include <stdint.h>

#include "collect.h"
#include "err.h"
#include "growth.h"
#include "suppress.h"

typedef struct lh_evo_series {
    uint32_t stack_id;
    const lh_site_t *site;  /* owned by the collector */
    uint64_t *bytes;        /* per x */
    uint64_t max;
    lh_trend_t trend;       /* its class in the growth model (growth.h), over the marks, else
                               the snapshots taken while running; NONE with fewer than 2 */
} lh_evo_series_t;

typedef struct lh_evo_line {
    double x;
    const char *label;      /* owned by the collector */
    int is_snapshot;
} lh_evo_line_t;

typedef struct lh_evolution {
    int x_marks;            /* x is the mark number (1-based), else seconds since start */
    int x_snapshots;        /* x_marks, and the points are snapshots (no marks) */
    size_t n;               /* points on the x axis */
    double *x;
    uint64_t *total;        /* live heap at each x */
    uint64_t *other;        /* total minus the top series */
    lh_evo_series_t *series;
    size_t n_series;
    double *rss_x;          /* RSS samples (x in the same unit) */
    uint64_t *rss;
    size_t n_rss;
    lh_evo_line_t *lines;   /* marks and snapshots (time: all; marks: snapshots omitted) */
    size_t n_lines;
    double x_max;
} lh_evolution_t;

/* Builds the model with the top `top` sites (at most 12). x_marks: one point per mark (or
 * per snapshot when there are no marks); returns LH_EINVAL when the trace has neither.
 * Stacks a rule of supp matches (supp may be NULL) are never drawn on their own: they are
 * in "other sites". Returns 0, LH_EINVAL or LH_ENOMEM. */
int lh_evolution_build(lh_evolution_t *e, lh_collect_t *c, size_t top, int x_marks,
                       const lh_supp_t *supp, lh_err_t *err);
void lh_evolution_fini(lh_evolution_t *e);

/* The growth ranking: the sites that grow (timeline.h: lh_timeline_growth, the one growth
 * model), by least-squares slope, descending, perl's arena last (report.h:
 * lh_growth_arena_last); sites a rule of supp matches (supp may be NULL) are left out. With fewer than 2 boundaries, 0 and g->n_points < 2. Returns 0 or
 * LH_ENOMEM; release with lh_growth_fini. */
int lh_growth_rank(lh_growth_t *g, lh_collect_t *c, const lh_supp_t *supp, lh_err_t *err);

#endif /* LH_EVOLUTION_H */
