/* leakhound - SPDX-License-Identifier: MIT
 *
 * survivors.c: growth of what survived to the end, by when it was allocated (survivors.h).
 */
#include "survivors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bound.h"
#include "grow.h"
#include "trace.h"
#include "err.h"

#define NPOINTS (LH_SURV_SLICES + 1)

void
lh_activity_init(lh_activity_t *a)
{
    memset(a, 0, sizeof *a);
    a->every = 1;
    a->next = 1;
}

void
lh_activity_fini(lh_activity_t *a)
{
    free(a->site);
    a->site = NULL;
}

static unsigned
log2_floor(uint64_t n)
{
    return 63u - (unsigned)__builtin_clzll(n);
}

/* What site s allocated in epoch e - k, its counts being as of its own last epoch (e is
 * that one or a later one). */
static uint64_t
made_in(const struct lh_activity_site *s, unsigned e, unsigned k)
{
    unsigned d = e - s->epoch;
    return k >= d ? s->made[k - d] : 0;
}

/* Counts allocation number n (from 1) for the stack its block belongs to. */
static void
count_epoch(lh_activity_t *a, const lh_replay_t *r, uint64_t n, uint64_t ts_ns)
{
    unsigned e = log2_floor(n);
    if (e + 1 > a->epoch) { /* the first block of epoch e */
        a->epoch_ts[e] = ts_ns;
        a->epoch = e + 1;
    }
    uint32_t id = lh_replay_last_stack(r);
    if (a->oom || (id >= a->cap_site && lh_grow_zeroed(&a->site, &a->cap_site, (size_t)id + 1,
                                                       sizeof *a->site, 1024) < 0)) {
        a->oom = 1;
        return;
    }
    struct lh_activity_site *s = &a->site[id];
    if (s->epoch != e) { /* shift its counts to epoch e (made[k - d] is read before written) */
        for (unsigned k = LH_SURV_EPOCHS; k-- > 0;) {
            s->made[k] = made_in(s, e, k);
        }
        s->epoch = e;
    }
    s->made[0]++;
}

int
lh_activity_event(void *ctx, const lh_trace_t *t, const lh_replay_t *r, const lh_event_t *ev,
                  lh_err_t *err)
{
    lh_activity_t *a = ctx;
    (void)err;
    if (ev->type != LH_REC_ALLOC && ev->type != LH_REC_REALLOC) {
        return 0;
    }
    if (!a->since_set && t) { /* once: a seeded fork child starts at its fork */
        const lh_trace_info_t *in = &lh_trace_parts(t)->info;
        a->since_ns = in && in->inherited ? in->fork_ts_ns : 0;
        a->since_set = 1;
    }
    if (ev->ts_ns < a->since_ns) {
        return 0;
    }
    if (ev->half != LH_HALF_ALLOC) { /* a REALLOC's halves count once, as in the replay */
        a->n_allocs++;
    }
    const lh_replay_totals_t *tot = lh_replay_totals(r);
    uint64_t n = a->n_allocs;
    /* a block made: an ALLOC, a REALLOC's new block (not its freeing half, not realloc to 0) */
    if (ev->addr && ev->half != LH_HALF_FREE) {
        count_epoch(a, r, n, ev->ts_ns);
    }
    if (n < a->next) {
        return 0;
    }
    if (a->n_cp == 2 * LH_ACTIVITY_CHECKPOINTS) {
        /* checkpoint i stands at allocation (i + 1) * every: keep the odd ones */
        for (size_t i = 0; i < LH_ACTIVITY_CHECKPOINTS; i++) {
            a->cp[i] = a->cp[2 * i + 1];
        }
        a->n_cp = LH_ACTIVITY_CHECKPOINTS;
        a->every *= 2;
    }
    a->cp[a->n_cp++] = (struct lh_activity_cp){ev->ts_ns, tot->heap_bytes, tot->heap_blocks};
    a->next = (a->n_cp + 1) * a->every;
    return 0;
}

/* One surviving site's blocks and bytes per slice (index 1 .. LH_SURV_SLICES). */
typedef struct surv_site {
    uint32_t stack_id;
    uint64_t blocks[NPOINTS], bytes[NPOINTS];
    uint64_t kept[LH_SURV_EPOCHS]; /* kept[k]: survivors made in the last epoch - k */
} surv_site_t;

/* The points: 0 is the start, p the moment the p-th share of the allocations was made. */
static void
set_points(lh_activity_t *a, const lh_replay_totals_t *tot, uint64_t total, uint64_t *limit)
{
    for (size_t p = 0; p < NPOINTS; p++) {
        lh_boundary_t *b = &a->bounds[p];
        memset(b, 0, sizeof *b);
        b->global = p;
        b->is_slice = 1;
        snprintf(a->labels[p], sizeof a->labels[p], "%u%%",
                 (unsigned)(p * 100 / LH_SURV_SLICES));
        b->label = a->labels[p];
        if (p == 0) {
            b->ts_ns = tot->first_ts_ns;
            limit[p] = 0; /* nothing was allocated before the start */
        } else if (p == LH_SURV_SLICES) {
            b->ts_ns = tot->last_ts_ns;
            b->heap_bytes = tot->heap_bytes;
            b->heap_blocks = tot->heap_blocks;
            limit[p] = UINT64_MAX;
        } else {
            uint64_t c = (total * p + LH_SURV_SLICES - 1) / LH_SURV_SLICES;
            size_t i = c / a->every ? (size_t)(c / a->every) - 1 : 0;
            if (i >= a->n_cp) {
                i = a->n_cp - 1;
            }
            b->ts_ns = limit[p] = a->cp[i].ts_ns;
            b->heap_bytes = a->cp[i].heap_bytes;
            b->heap_blocks = a->cp[i].heap_blocks;
        }
    }
}

/* The first point at or after ts (1 .. LH_SURV_SLICES). */
static size_t
slice_of(const uint64_t *limit, uint64_t ts)
{
    return 1 + lh_bound_u64(limit + 1, LH_SURV_SLICES - 1, sizeof *limit, 0, ts, 0);
}

static int
collect(const lh_activity_t *a, const lh_replay_t *r, const uint64_t *limit, surv_site_t **out,
        size_t *n_out, lh_err_t *err)
{
    unsigned e = a->epoch - 1; /* the last epoch (a->epoch >= 1: there were allocations) */
    size_t n_stacks = lh_replay_n_stacks(r), n = 0, cap = 0, cursor = 0;
    uint32_t *slot = calloc(n_stacks ? n_stacks : 1, sizeof *slot);
    surv_site_t *v = NULL;
    lh_live_block_t b;
    if (!slot) {
        return lh_err_set(err, LH_ENOMEM, "out of memory reading the surviving blocks");
    }
    while (lh_replay_live_next(r, &cursor, &b)) {
        if (b.stack_id >= n_stacks) {
            continue;
        }
        if (!slot[b.stack_id]) {
            if (lh_grow(&v, &cap, n, sizeof *v, 64) < 0) {
                free(slot);
                free(v);
                return lh_err_set(err, LH_ENOMEM, "out of memory reading the surviving blocks");
            }
            memset(&v[n], 0, sizeof v[n]);
            v[n].stack_id = b.stack_id;
            slot[b.stack_id] = (uint32_t)++n;
        }
        surv_site_t *s = &v[slot[b.stack_id] - 1];
        size_t p = slice_of(limit, b.ts_ns);
        s->blocks[p]++;
        s->bytes[p] += b.size;
        for (unsigned k = 0; k < LH_SURV_EPOCHS && k <= e; k++) {
            if (b.ts_ns >= a->epoch_ts[e - k]) {
                s->kept[k]++;
                break;
            }
        }
    }
    free(slot);
    *out = v;
    *n_out = n;
    return 0;
}

/* Whether the site kept, in one of the run's last epochs before the last, much less of
 * what it allocated than in the last: a bounded structure that keeps its newest entries
 * (survivors.h). */
static int
recycles(const lh_activity_t *a, const surv_site_t *s)
{
    unsigned e = a->epoch - 1;
    if (a->oom || s->stack_id >= a->cap_site) {
        return 0;
    }
    const struct lh_activity_site *st = &a->site[s->stack_id];
    uint64_t last = made_in(st, e, 0);
    if (last < 8) {
        return 0;
    }
    for (unsigned k = 1; k < LH_SURV_EPOCHS && k <= e; k++) {
        /* kept[k] / made[k] < kept[0] / made[0] / 4 */
        uint64_t made = made_in(st, e, k);
        if (made >= 8 &&
            (double)s->kept[k] * (double)last * 4.0 < (double)s->kept[0] * (double)made) {
            return 1;
        }
    }
    return 0;
}

int
lh_activity_growth(lh_activity_t *a, const lh_replay_t *r, const lh_growth_opts_t *o,
                   lh_growth_t *g, lh_err_t *err)
{
    const lh_replay_totals_t *tot = lh_replay_totals(r);
    uint64_t total = a->n_allocs, limit[NPOINTS];
    surv_site_t *v = NULL;
    size_t n = 0, cap = 0;
    memset(g, 0, sizeof *g);
    g->kind = LH_BOUND_ACTIVITY;
    if (total < 2 * LH_SURV_SLICES || !a->n_cp) {
        g->why = LH_WHY_NO_POINTS;
        return lh_err_set(err, LH_EINVAL, "the trace has no marks and no snapshots taken while "
                          "the program ran, and too few allocations (%llu) to slice the run",
                          (unsigned long long)total);
    }
    set_points(a, tot, total, limit);
    int rc = collect(a, r, limit, &v, &n, err);
    if (rc < 0) {
        return rc;
    }
    g->bounds = a->bounds;
    g->n_points = g->n_all_points = NPOINTS;
    for (size_t i = 0; i < n; i++) {
        surv_site_t *s = &v[i];
        for (size_t p = 1; p < NPOINTS; p++) { /* allocated at or before point p */
            s->blocks[p] += s->blocks[p - 1];
            s->bytes[p] += s->bytes[p - 1];
        }
        lh_growth_site_t gs = {.stack_id = s->stack_id, .blocks = s->blocks, .bytes = s->bytes};
        lh_growth_site_stats(&gs, NPOINTS);
        if (gs.growing && recycles(a, s)) {
            gs.trend.kind = LH_TREND_SATURATED;
            gs.growing = 0;
        }
        if (lh_growth_add(g, &cap, &gs, NPOINTS, o && o->every_site) < 0) {
            free(v);
            lh_growth_fini(g);
            return lh_err_set(err, LH_ENOMEM, "out of memory in the survivors' growth");
        }
    }
    free(v);
    lh_growth_sort(g);
    return 0;
}
