/* leakhound - SPDX-License-Identifier: MIT
 *
 * evolution.c: the evolution chart's model.
 */
#include "evolution.h"

#include <stdlib.h>
#include <string.h>

#include "dupstr.h"
#include "rank.h"

/* The x axis in marks mode: the boundaries of one kind, marks, else snapshots. */
static const lh_boundary_t *
x_points(lh_collect_t *c, int snapshots, size_t *n)
{
    return lh_timeline_bounds(lh_collect_timeline(c),
                              snapshots ? LH_BOUND_SNAPSHOTS : LH_BOUND_MARKS, n);
}

/* Per-stack maximum over the x points, and the per-x values of all stacks in vals when not
 * NULL (marks mode), from the live sets at each point. */
static int
marks_values(lh_collect_t *c, int snapshots, uint64_t *max, uint64_t **vals, size_t n_x,
             const uint32_t *ids, size_t n_ids, lh_evolution_t *e)
{
    size_t ns = lh_collect_n_stacks(c), np;
    const lh_boundary_t *pts = x_points(c, snapshots, &np);
    uint64_t *cur = calloc(ns ? ns : 1, sizeof *cur), *blk = calloc(ns ? ns : 1, sizeof *blk);
    if (!cur || !blk) {
        LH_FREE_ALL(cur, blk);
        return -1;
    }
    for (size_t k = 0; k < np && k < n_x; k++) {
        lh_timeline_at(lh_collect_timeline(c), pts[k].global, ns, cur, blk);
        for (size_t s = 0; max && s < ns; s++) {
            max[s] = cur[s] > max[s] ? cur[s] : max[s];
        }
        if (vals) {
            for (size_t j = 0; j < n_ids; j++) {
                vals[j][k] = cur[ids[j]];
            }
            e->x[k] = (double)(k + 1);
            e->total[k] = pts[k].heap_bytes;
        }
    }
    LH_FREE_ALL(cur, blk);
    return 0;
}

/* 1 when a rule of supp matches stack id (supp may be NULL), 0, or LH_ENOMEM. */
static int
suppressed(lh_collect_t *c, const lh_supp_t *supp, uint32_t id, lh_err_t *err)
{
    const lh_site_t *site;
    if (!supp || !supp->n) {
        return 0;
    }
    int rc = lh_collect_site(c, id, &site, err);
    return rc < 0 ? rc : lh_supp_match(supp, site->frames, site->n_frames) >= 0;
}

int
lh_evolution_build(lh_evolution_t *e, lh_collect_t *c, size_t top, int x_marks,
                   const lh_supp_t *supp, lh_err_t *err)
{
    size_t ns = lh_collect_n_stacks(c);
    uint64_t start = lh_collect_start_ns(c);
    int snapshots = 0, rc;
    uint64_t *max = calloc(ns ? ns : 1, sizeof *max);
    lh_rank_t *ranks = NULL;
    uint32_t *ids = NULL;
    uint64_t *cols = NULL;
    uint64_t **vals = NULL;
    uint8_t *gr = NULL;
    memset(e, 0, sizeof *e);
    e->x_marks = x_marks;
    if (top > 12) {
        top = 12;
    }
    if (!max) {
        goto fail;
    }
    if (x_marks) {
        size_t n_m, n_s;
        x_points(c, 0, &n_m);
        x_points(c, 1, &n_s);
        if (!n_m && !n_s) {
            rc = lh_err_set(err, LH_EINVAL, "the trace has no marks or snapshots to draw over");
            goto done;
        }
        snapshots = n_m == 0;
        e->x_snapshots = snapshots;
        e->n = n_m ? n_m : n_s;
        if (marks_values(c, snapshots, max, NULL, e->n, NULL, 0, e) < 0) {
            goto fail;
        }
    } else {
        e->n = lh_collect_n_columns(c);
        if (lh_collect_columns(c, NULL, 0, NULL, max) < 0) {
            goto fail;
        }
    }
    /* the top sites */
    if (!(ranks = malloc((ns ? ns : 1) * sizeof *ranks))) {
        goto fail;
    }
    size_t nr = 0;
    for (uint32_t id = 0; id < ns; id++) {
        int sup = max[id] ? suppressed(c, supp, id, err) : 0;
        if (sup < 0) {
            rc = sup;
            goto done;
        }
        if (max[id] && !sup) {
            ranks[nr++] = (lh_rank_t){id, max[id], lh_collect_stack(c, id)->live_bytes};
        }
    }
    lh_qsort(ranks, nr, sizeof *ranks, lh_rank_cmp);
    e->n_series = top < nr ? top : nr;
    e->series = calloc(e->n_series ? e->n_series : 1, sizeof *e->series);
    ids = malloc((e->n_series ? e->n_series : 1) * sizeof *ids);
    e->x = calloc(e->n ? e->n : 1, sizeof *e->x);
    e->total = calloc(e->n ? e->n : 1, sizeof *e->total);
    e->other = calloc(e->n ? e->n : 1, sizeof *e->other);
    if (!e->series || !ids || !e->x || !e->total || !e->other) {
        goto fail;
    }
    if (!(vals = (uint64_t **)calloc(e->n_series ? e->n_series : 1, sizeof *vals))) {
        goto fail;
    }
    const lh_timeline_t *tl = lh_collect_timeline(c);
    gr = lh_timeline_trend_map(tl, LH_BOUND_AUTO, &rc, err);
    if (rc < 0) {
        goto done;
    }
    for (size_t k = 0; k < e->n_series; k++) {
        lh_evo_series_t *s = &e->series[k];
        s->stack_id = ids[k] = ranks[k].id;
        s->max = ranks[k].key1;
        s->trend = gr && s->stack_id < lh_timeline_n_sites(tl) ? (lh_trend_t)gr[s->stack_id]
                                                               : LH_TREND_NONE;
        if (!(s->bytes = calloc(e->n ? e->n : 1, sizeof *s->bytes)) ||
            lh_collect_site(c, s->stack_id, &s->site, err) < 0) {
            goto fail;
        }
        vals[k] = s->bytes;
    }
    if (x_marks) {
        if (marks_values(c, snapshots, NULL, vals, e->n, ids, e->n_series, e) < 0) {
            goto fail;
        }
    } else {
        if (!(cols = malloc((e->n * e->n_series + 1) * sizeof *cols)) ||
            lh_collect_columns(c, ids, e->n_series, cols, NULL) < 0) {
            goto fail;
        }
        for (size_t x = 0; x < e->n; x++) {
            const lh_ccolumn_t *col = lh_collect_column(c, x);
            e->x[x] = (double)(col->end_ns - start) / 1e9;
            e->total[x] = col->heap_bytes;
            for (size_t k = 0; k < e->n_series; k++) {
                vals[k][x] = cols[x * e->n_series + k];
            }
        }
    }
    for (size_t x = 0; x < e->n; x++) {
        uint64_t sum = 0;
        for (size_t k = 0; k < e->n_series; k++) {
            sum += e->series[k].bytes[x];
        }
        e->other[x] = e->total[x] > sum ? e->total[x] - sum : 0;
    }
    e->x_max = x_marks ? (double)e->n : (double)(lh_collect_end_ns(c) - start) / 1e9;
    /* RSS and boundary lines */
    size_t nrss = lh_collect_n_rss(c), np, nx;
    const lh_boundary_t *pts = lh_timeline_all_bounds(lh_collect_timeline(c), &np);
    const lh_boundary_t *xs = x_points(c, snapshots, &nx);
    const lh_rss_sample_t *rs = lh_collect_rss(c);
    size_t n_rss = x_marks ? nx : nrss; /* over marks: one sample (or none) at each */
    e->rss_x = calloc(n_rss ? n_rss : 1, sizeof *e->rss_x);
    e->rss = calloc(n_rss ? n_rss : 1, sizeof *e->rss);
    e->lines = calloc(np ? np : 1, sizeof *e->lines);
    if (!e->rss_x || !e->rss || !e->lines) {
        goto fail;
    }
    if (!x_marks) {
        for (size_t i = 0; i < nrss; i++) {
            e->rss_x[i] = (double)(rs[i].ts_ns - start) / 1e9;
            e->rss[i] = rs[i].rss_bytes;
        }
        e->n_rss = nrss;
        for (size_t i = 0; i < np; i++) {
            e->lines[e->n_lines++] = (lh_evo_line_t){(double)(pts[i].ts_ns - start) / 1e9,
                                                     pts[i].label, pts[i].is_snapshot};
        }
    } else {
        /* RSS at each mark: the last sample taken before it */
        for (size_t k = 0, r = 0; k < nx; k++) {
            while (r < nrss && rs[r].ts_ns <= xs[k].ts_ns) {
                r++;
            }
            if (r > 0) {
                e->rss_x[e->n_rss] = (double)(k + 1);
                e->rss[e->n_rss++] = rs[r - 1].rss_bytes;
            }
        }
    }
    rc = 0;
    goto done;
fail:
    rc = lh_err_set(err, LH_ENOMEM, "out of memory building the evolution chart");
done:
    LH_FREE_ALL(max, ranks, ids, cols, vals, gr);
    if (rc < 0) {
        lh_evolution_fini(e);
    }
    return rc;
}

void
lh_evolution_fini(lh_evolution_t *e)
{
    LH_FREE_EACH(e->series, e->n_series, lh_evo_series_t, bytes);
    LH_FREE_ALL(e->x, e->total, e->other, e->rss_x, e->rss, e->lines);
    memset(e, 0, sizeof *e);
}

typedef struct drop_ctx {
    lh_collect_t *c;
    const lh_supp_t *supp;
} drop_ctx_t;

static int
drop_suppressed(void *ctx, uint32_t id, lh_err_t *err)
{
    const drop_ctx_t *d = ctx;
    return suppressed(d->c, d->supp, id, err);
}

int
lh_growth_rank(lh_growth_t *g, lh_collect_t *c, const lh_supp_t *supp, lh_err_t *err)
{
    drop_ctx_t d = {c, supp};
    int rc = lh_timeline_growth(lh_collect_timeline(c), NULL, g, err);
    if (rc < 0) {
        return rc == LH_ENOMEM ? rc : 0; /* fewer than 2 points: g->n_points < 2 */
    }
    if ((rc = lh_growth_filter(g, drop_suppressed, &d, err)) < 0 ||
        (rc = lh_growth_arena_last(g, lh_collect_trace(c), lh_collect_symbolizer(c), err)) < 0) {
        lh_growth_fini(g);
    }
    return rc;
}
