/* leakhound - SPDX-License-Identifier: MIT
 *
 * timeline.c: boundaries, per-site series, differential leaks, temporaries, RSS. See
 * timeline.h for the definitions; the comments here are about how.
 */
#include "timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bound.h"
#include "dupstr.h"
#include "grow.h"
#include "hash.h"

#include "rank.h"
#include "stacks.h"
#include "survivors.h"

/* One change of a site's live set, recorded at the boundary with global index g. */
typedef struct sentry {
    uint64_t blocks;
    uint64_t bytes;
    uint64_t g;
} sentry_t;

typedef struct site {
    sentry_t *series;
    size_t n_series, cap_series;
    uint64_t dirty_gen;   /* == tl->gen: already on the dirty list */
    uint64_t n_temp, temp_bytes, temp_life_ns;
} site_t;

/* A block freed after the current `to` boundary of a kind, born before it. */
typedef struct after {
    uint64_t ts_ns;
    uint64_t size;
    uint32_t stack_id;
} after_t;

typedef struct thr_last {
    uint32_t tid;
    uint64_t addr;
} thr_last_t;

typedef struct bvec {
    lh_boundary_t *v;
    size_t n, cap;
} bvec_t;

/* Where the `to` boundary of one kind is, as the stream goes (boundary.h's resolver, fed
 * one boundary at a time). */
typedef struct to_state {
    long idx;          /* -1: none yet */
    lh_bound_cursor_t cur;
    after_t *after;
    size_t n_after, cap_after;
} to_state_t;

struct lh_timeline {
    lh_timeline_opts_t o;
    char *to_copy;
    lh_bound_spec_t to;
    bvec_t b[2];
    bvec_t all;          /* both kinds in time order: copies whose labels b[] owns */
    size_t n_global;
    uint64_t n_marks;
    size_t n_running;
    site_t *sites;       /* indexed by stack id */
    size_t n_sites;
    uint32_t *dirty;
    size_t n_dirty, cap_dirty;
    uint64_t gen;
    to_state_t ts[2];
    /* With the default end only: per kind, the first point of the newest run of points
     * whose heap falls at each one, the end lh_bound_main_end picks when that run is
     * teardown. While it is ts's boundary it has no list of its own. */
    to_state_t peak[2];
    long last_point[2];  /* the newest point of each kind (exit snapshots are not), -1 */
    lh_rss_cmp_t rss;
    /* With temp_immediate: per thread, the block its latest call to the allocator made (0:
     * that call was a free, or made none), and their index by tid (hash.h). */
    thr_last_t *last;
    size_t n_last, cap_last;
    uint32_t *last_index;
    size_t last_mask;
    /* With series: the survivors' growth when there are no points (survivors.h), over the
     * replay as the pass left it. */
    lh_activity_t *act;
    const lh_replay_t *last_r;
    const lh_trace_t *t; /* the pass's, when fed by consume() */
};

static int
oom(lh_err_t *err)
{
    return lh_err_set(err, LH_ENOMEM, "out of memory in the timeline");
}

/* ---------------------------------------------------------------------------------------
 * RSS
 * ------------------------------------------------------------------------------------- */

void
lh_rss_cmp_event(lh_rss_cmp_t *c, const lh_event_t *ev, uint64_t heap_bytes)
{
    if (ev->type != LH_REC_RSS) {
        return;
    }
    if (c->n_samples++ == 0) {
        c->first_ts_ns = ev->ts_ns;
        c->first_rss = ev->size;
        c->first_heap = heap_bytes;
    }
    c->last_ts_ns = ev->ts_ns;
    c->last_rss = ev->size;
    c->last_heap = heap_bytes;
}

int
lh_rss_cmp_suspicious(const lh_rss_cmp_t *c)
{
    if (c->n_samples < 2 || c->last_rss <= c->first_rss) {
        return 0;
    }
    double rss = (double)c->last_rss - (double)c->first_rss;
    double heap = (double)c->last_heap - (double)c->first_heap;
    if (heap < 0) {
        heap = 0;
    }
    return rss - heap > 4.0 * 1024 * 1024 && rss > 2.0 * heap;
}

/* ---------------------------------------------------------------------------------------
 * The pass
 * ------------------------------------------------------------------------------------- */

int
lh_timeline_new(const lh_timeline_opts_t *opts, lh_timeline_t **out, lh_err_t *err)
{
    lh_timeline_t *tl = calloc(1, sizeof *tl);
    if (!tl) {
        *out = NULL;
        return oom(err);
    }
    if (opts) {
        tl->o = *opts;
    }
    if (tl->o.diff_to) {
        if (!(tl->to_copy = strdup(tl->o.diff_to))) {
            free(tl);
            *out = NULL;
            return oom(err);
        }
        tl->o.diff_to = tl->to_copy;
    }
    lh_bound_spec_parse(tl->o.diff_to, &tl->to);
    for (int k = 0; k < 2; k++) {
        tl->ts[k].idx = tl->peak[k].idx = tl->last_point[k] = -1;
    }
    tl->gen = 1;
    if (tl->o.series && !tl->o.points_only && !(tl->act = malloc(sizeof *tl->act))) {
        free(tl->to_copy);
        free(tl);
        *out = NULL;
        return oom(err);
    }
    if (tl->act) {
        lh_activity_init(tl->act);
    }
    *out = tl;
    return 0;
}

void
lh_timeline_free(lh_timeline_t *tl)
{
    if (!tl) {
        return;
    }
    for (int k = 0; k < 2; k++) {
        LH_FREE_EACH(tl->b[k].v, tl->b[k].n, lh_boundary_t, label);
        free(tl->ts[k].after);
        free(tl->peak[k].after);
    }
    LH_FREE_EACH(tl->sites, tl->n_sites, site_t, series);
    free(tl->all.v);
    free(tl->dirty);
    free(tl->to_copy);
    free(tl->last);
    free(tl->last_index);
    if (tl->act) {
        lh_activity_fini(tl->act);
        free(tl->act);
    }
    free(tl);
}

static site_t *
site_at(lh_timeline_t *tl, uint32_t id)
{
    if (id > LH_STACK_ID_MAX) {
        return NULL;
    }
    return lh_grow_slot(&tl->sites, &tl->n_sites, id, sizeof *tl->sites, 64);
}

/* The live set of site id changed: remember to record it at the next boundary (with
 * points_only, none before the first: add_boundary takes every live site there). */
static int
touch(lh_timeline_t *tl, uint32_t id)
{
    if (tl->o.points_only && !tl->all.n) {
        return 0;
    }
    site_t *s = site_at(tl, id);
    if (!s) {
        return -1;
    }
    if (s->dirty_gen != tl->gen) {
        if (lh_grow(&tl->dirty, &tl->cap_dirty, tl->n_dirty, sizeof *tl->dirty, 16) < 0) {
            return -1;
        }
        tl->dirty[tl->n_dirty++] = id;
        s->dirty_gen = tl->gen;
    }
    return 0;
}

/* Keeps fb in t's list when it was born before t's boundary (and not before the first). */
static int
keep_after(lh_timeline_t *tl, int k, to_state_t *t, const lh_live_block_t *fb)
{
    if (t->idx < 0 || fb->ts_ns >= tl->b[k].v[t->idx].ts_ns || fb->ts_ns < tl->b[k].v[0].ts_ns) {
        return 0; /* born after `to`, or before the first boundary */
    }
    if (lh_grow(&t->after, &t->cap_after, t->n_after, sizeof *t->after, 16) < 0) {
        return -1;
    }
    t->after[t->n_after++] = (after_t){fb->ts_ns, fb->size, fb->stack_id};
    return 0;
}

static uint64_t
last_hash(const void *ctx, size_t k)
{
    return lh_hash_mix(((const thr_last_t *)ctx)[k].tid);
}

/* Thread tid's latest block in the temp_immediate table, made (0) when new; NULL when out
 * of memory. */
static uint64_t *
last_of(lh_timeline_t *tl, uint32_t tid)
{
    if (!tl->last_index && lh_index_rebuild(&tl->last_index, &tl->last_mask, 16, 0, 0,
                                            last_hash, tl->last) < 0) {
        return NULL;
    }
    size_t i = lh_hash_mix(tid) & tl->last_mask;
    for (; tl->last_index[i] != UINT32_MAX; i = (i + 1) & tl->last_mask) {
        if (tl->last[tl->last_index[i]].tid == tid) {
            return &tl->last[tl->last_index[i]].addr;
        }
    }
    if (lh_grow(&tl->last, &tl->cap_last, tl->n_last, sizeof *tl->last, 16) < 0) {
        return NULL;
    }
    tl->last[tl->n_last] = (thr_last_t){tid, 0};
    int rc = lh_index_room(&tl->last_index, &tl->last_mask, 0, tl->n_last, last_hash, tl->last);
    if (rc < 0) {
        return NULL;
    }
    if (rc > 0) {
        i = lh_hash_mix(tid) & tl->last_mask;
    }
    while (tl->last_index[i] != UINT32_MAX) {
        i = (i + 1) & tl->last_mask;
    }
    tl->last_index[i] = (uint32_t)tl->n_last;
    return &tl->last[tl->n_last++].addr;
}

/* Is a block that ev frees temporary? */
static int
is_temporary(const lh_timeline_t *tl, const lh_event_t *ev, const lh_live_block_t *fb,
             int immediate)
{
    if (!tl->o.temporary || ev->type != LH_REC_FREE) {
        return 0; /* a block realloc ends is not temporary: it lives on in the new one */
    }
    if (tl->o.temp_immediate) {
        return immediate;
    }
    return ev->ts_ns >= fb->ts_ns && ev->ts_ns - fb->ts_ns <= tl->o.temp_threshold_ns;
}

static int
freed_block(lh_timeline_t *tl, const lh_event_t *ev, const lh_live_block_t *fb, int immediate)
{
    if (tl->o.series && touch(tl, fb->stack_id) < 0) {
        return -1;
    }
    for (int k = 0; tl->o.diff && k < 2; k++) {
        if (keep_after(tl, k, &tl->ts[k], fb) < 0 ||
            (tl->peak[k].idx != tl->ts[k].idx && keep_after(tl, k, &tl->peak[k], fb) < 0)) {
            return -1;
        }
    }
    if (is_temporary(tl, ev, fb, immediate)) {
        site_t *s = site_at(tl, fb->stack_id);
        if (!s) {
            return -1;
        }
        s->n_temp++;
        s->temp_bytes += fb->size;
        s->temp_life_ns += ev->ts_ns - fb->ts_ns;
    }
    return 0;
}

/* Is boundary b (the newest of kind k) the `to` boundary among those seen so far? */
static int
is_to(lh_timeline_t *tl, int k, const lh_boundary_t *b)
{
    if (!tl->to.whole) {
        /* The default end is the last boundary taken while the program ran; with a single
         * snapshot taken while running there is no interval before exit, and the exit
         * snapshot is the only end there is (the output names it). */
        return !(b->is_snapshot && b->trigger == LH_SNAP_EXIT) || (k && tl->n_running == 1);
    }
    return lh_bound_step(&tl->to, &tl->ts[k].cur, b->label, 1);
}

/* Moves the `to` states of kind k to boundary b, the newest, where it is their boundary. */
static void
follow_to(lh_timeline_t *tl, int k, const lh_boundary_t *b)
{
    to_state_t *t = &tl->ts[k], *pk = &tl->peak[k];
    long idx = (long)tl->b[k].n - 1, prev = tl->last_point[k];
    int is_point = !(b->is_snapshot && b->trigger == LH_SNAP_EXIT);
    int new_peak = !tl->to.whole && is_point &&
                   (prev < 0 || b->heap_bytes >= tl->b[k].v[prev].heap_bytes);
    if (is_to(tl, k, b)) {
        if (!tl->to.whole && !new_peak && pk->idx >= 0 && pk->idx == t->idx) {
            /* the heap fell: the peak stays behind with the list it shared */
            *pk = *t;
            t->after = NULL;
            t->cap_after = 0;
        }
        t->idx = idx;
        t->n_after = 0; /* freed before the new `to`: not live there */
    }
    if (new_peak) {
        free(pk->after);
        *pk = (to_state_t){.idx = idx};
    }
    if (is_point) {
        tl->last_point[k] = idx;
    }
}

static int
add_boundary(lh_timeline_t *tl, const lh_replay_t *r, const lh_event_t *ev)
{
    int k = ev->type == LH_REC_SNAPSHOT;
    bvec_t *bv = &tl->b[k];
    if (lh_grow(&bv->v, &bv->cap, bv->n, sizeof *bv->v, 16) < 0) {
        return -1;
    }
    lh_boundary_t *b = &bv->v[bv->n];
    if (lh_boundary_init(b, ev, tl->n_global++, tl->n_marks, lh_replay_totals(r)->heap_bytes,
                         lh_replay_totals(r)->heap_blocks) < 0) {
        return -1;
    }
    bv->n++;
    if (lh_grow(&tl->all.v, &tl->all.cap, tl->all.n, sizeof *tl->all.v, 16) < 0) {
        return -1;
    }
    tl->all.v[tl->all.n++] = *b;
    if (!k) {
        tl->n_marks++;
    } else if (b->trigger != LH_SNAP_EXIT) {
        tl->n_running++;
    }
    if (tl->o.series) {
        /* points_only: nothing was touched before the first boundary; every site live at
         * it is what the touched ones would have recorded (a site at 0 records nothing) */
        for (size_t id = 0, n = tl->o.points_only && tl->all.n == 1 ? lh_replay_n_stacks(r) : 0;
             id < n; id++) {
            const lh_stack_stats_t *st = lh_replay_stack(r, (uint32_t)id);
            if ((st->live_blocks || st->live_bytes) && touch(tl, (uint32_t)id) < 0) {
                return -1;
            }
        }
        for (size_t i = 0; i < tl->n_dirty; i++) {
            uint32_t id = tl->dirty[i];
            site_t *s = &tl->sites[id];
            const lh_stack_stats_t *st = lh_replay_stack(r, id);
            /* Only changes are kept: a site that churns back to where it was costs nothing. */
            uint64_t last_blocks = s->n_series ? s->series[s->n_series - 1].blocks : 0;
            uint64_t last_bytes = s->n_series ? s->series[s->n_series - 1].bytes : 0;
            if (st->live_blocks == last_blocks && st->live_bytes == last_bytes) {
                continue;
            }
            if (lh_grow(&s->series, &s->cap_series, s->n_series, sizeof *s->series, 16) < 0) {
                return -1;
            }
            s->series[s->n_series++] = (sentry_t){st->live_blocks, st->live_bytes, b->global};
        }
        tl->n_dirty = 0;
        tl->gen++;
    }
    if (tl->o.diff) {
        follow_to(tl, k, b);
    }
    return 0;
}

int
lh_timeline_event(lh_timeline_t *tl, const lh_replay_t *r, const lh_event_t *ev, lh_err_t *err)
{
    if (tl->act && tl->n_marks < 2 && tl->n_running < 2) {
        /* only a trace with fewer than two points of each kind falls back to the survivors
         * (lh_timeline_growth): the second mark or running snapshot ends this work */
        (void)lh_activity_event(tl->act, tl->t, r, ev, err);
        tl->last_r = r;
    }
    switch (ev->type) {
    case LH_REC_ALLOC:
    case LH_REC_REALLOC:
    case LH_REC_FREE: {
        if (tl->o.points_only && !tl->all.n && !tl->o.diff && !tl->o.temporary) {
            return 0; /* nothing to do before the first boundary (touch) */
        }
        const lh_live_block_t *fb;
        size_t n = lh_replay_freed(r, &fb);
        int immediate = 0;
        if (tl->o.temporary && tl->o.temp_immediate) {
            /* heaptrack's rule, per thread (threads interleave at random): the free of the
             * block its thread made last, nothing made or freed by that thread between */
            uint64_t *last = last_of(tl, ev->tid);
            if (!last) {
                return oom(err);
            }
            immediate = ev->type == LH_REC_FREE && ev->addr && *last == ev->addr;
            *last = ev->type != LH_REC_FREE && ev->half != LH_HALF_FREE ? ev->addr : 0;
        }
        for (size_t i = 0; i < n; i++) {
            if (freed_block(tl, ev, &fb[i], immediate) < 0) {
                return oom(err);
            }
        }
        if (tl->o.series && ev->type != LH_REC_FREE && ev->addr &&
            ev->half != LH_HALF_FREE && touch(tl, lh_replay_last_stack(r)) < 0) {
            return oom(err);
        }
        return 0;
    }
    case LH_REC_MARK:
    case LH_REC_SNAPSHOT:
        return add_boundary(tl, r, ev) < 0 ? oom(err) : 0;
    case LH_REC_RSS:
        lh_rss_cmp_event(&tl->rss, ev, lh_replay_totals(r)->heap_bytes);
        return 0;
    default:
        return 0;
    }
}

static int
consume(void *tl, const lh_trace_t *t, const lh_replay_t *r, const lh_event_t *ev, lh_err_t *err)
{
    ((lh_timeline_t *)tl)->t = t; /* for the activity: where a fork child's own run starts */
    return lh_timeline_event(tl, r, ev, err);
}

lh_consumer_t
lh_timeline_consumer(lh_timeline_t *tl)
{
    /* Without series, differential leaks, temporaries or the activity, a heap event
     * changes nothing here (lh_timeline_event): the plain report's timeline is only its
     * RSS samples, marks and snapshots. */
    int heap = tl->o.series || tl->o.diff || tl->o.temporary || tl->act;
    return (lh_consumer_t){consume, tl, !heap};
}

const lh_boundary_t *
lh_timeline_bounds(const lh_timeline_t *tl, lh_bound_kind_t kind, size_t *n)
{
    int k = kind == LH_BOUND_SNAPSHOTS;
    *n = tl->b[k].n;
    return tl->b[k].v;
}

const lh_boundary_t *
lh_timeline_all_bounds(const lh_timeline_t *tl, size_t *n)
{
    *n = tl->all.n;
    return tl->all.v;
}

const lh_rss_cmp_t *
lh_timeline_rss(const lh_timeline_t *tl)
{
    return &tl->rss;
}

/* ---------------------------------------------------------------------------------------
 * Differential leaks
 * ------------------------------------------------------------------------------------- */

typedef struct diff_acc {
    lh_diff_t *d;
    uint32_t *slot_of;   /* stack id -> index + 1 in d->sites, 0: none */
    size_t n_ids;
    size_t cap_sites;
} diff_acc_t;

static int
diff_add(diff_acc_t *a, uint32_t stack_id, uint64_t ts, uint64_t size)
{
    lh_diff_t *d = a->d;
    if (ts < d->bounds[d->first].ts_ns || ts >= d->bounds[d->to].ts_ns) {
        return 0;
    }
    /* the interval of ts: the last boundary at or before it */
    size_t i = LH_UPPER(d->bounds, d->n_bounds, lh_boundary_t, ts_ns, ts) - 1 - d->first;
    if (lh_grow_zeroed(&a->slot_of, &a->n_ids, (size_t)stack_id + 1, sizeof *a->slot_of, 64) < 0) {
        return -1;
    }
    if (!a->slot_of[stack_id]) {
        if (lh_grow(&d->sites, &a->cap_sites, d->n_sites, sizeof *d->sites, 16) < 0) {
            return -1;
        }
        lh_diff_site_t *s = &d->sites[d->n_sites];
        memset(s, 0, sizeof *s);
        s->stack_id = stack_id;
        s->blocks = calloc(d->n_intervals, sizeof *s->blocks);
        s->bytes = calloc(d->n_intervals, sizeof *s->bytes);
        if (!s->blocks || !s->bytes) {
            free(s->blocks);
            free(s->bytes);
            return -1;
        }
        a->slot_of[stack_id] = (uint32_t)++d->n_sites;
    }
    lh_diff_site_t *s = &d->sites[a->slot_of[stack_id] - 1];
    s->blocks[i]++;
    s->bytes[i] += size;
    return 0;
}

static int
cmp_diff_site(const void *pa, const void *pb)
{
    const lh_diff_site_t *a = pa, *b = pb;
    return lh_rank_order(a->score, b->score, a->total_bytes, b->total_bytes, a->stack_id,
                         b->stack_id);
}

static int
unknown_label(lh_diff_t *d, lh_bound_why_t why, const char *spec, lh_err_t *err)
{
    char labels[320];
    lh_bound_labels(d->bounds, d->n_bounds, labels, sizeof labels);
    d->why = why;
    return lh_err_set(err, LH_EINVAL, "%s '%s': no such %s; the trace's %s are: %s",
                      why == LH_WHY_FROM ? "start" : "end", spec, lh_bound_noun(d->kind, 0),
                      lh_bound_noun(d->kind, 1), labels);
}

static int
no_points(lh_bound_why_t *why, lh_err_t *err)
{
    *why = LH_WHY_NO_POINTS;
    return lh_err_set(err, LH_EINVAL, "the trace has no marks and no snapshots taken while "
                      "the program ran");
}

/* The range's skip and counted intervals, from d's from and to. */
static int
set_range(lh_diff_t *d, const lh_diff_opts_t *o, lh_err_t *err)
{
    size_t range = d->to - d->from;
    d->skip = o->skip >= 0 ? (size_t)o->skip : (!o->from && range >= 2 ? 1 : 0);
    if (d->skip >= range) {
        d->why = LH_WHY_SKIP;
        return lh_err_set(err, LH_EINVAL, "skip %zu leaves no interval: the range has %zu",
                          d->skip, range);
    }
    d->first = d->from + d->skip;
    d->n_intervals = d->to - d->first;
    d->n_marks = d->bounds[d->to].marks_before - d->bounds[d->first].marks_before;
    return 0;
}

/* The points of a kind: marks, or snapshots without the trailing exit ones. */
static size_t
n_points(const lh_timeline_t *tl, int k)
{
    size_t n = tl->b[k].n;
    while (k && n && tl->b[k].v[n - 1].trigger == LH_SNAP_EXIT) {
        n--;
    }
    return n;
}

int
lh_timeline_diff(const lh_timeline_t *tl, const lh_replay_t *r, const lh_diff_opts_t *o,
                 lh_diff_t *d, lh_err_t *err)
{
    diff_acc_t acc = {0};
    lh_diff_opts_t defaults = {LH_BOUND_AUTO, NULL, -1};
    int rc;
    memset(d, 0, sizeof *d);
    if (!o) {
        o = &defaults;
    }
    if (!tl->o.diff) {
        return lh_err_set(err, LH_EINVAL, "the timeline was not asked for differential leaks");
    }
    lh_bound_kind_t kind = o->kind;
    if (kind == LH_BOUND_AUTO) {
        kind = tl->n_running ? LH_BOUND_SNAPSHOTS : LH_BOUND_MARKS;
    }
    int k = kind == LH_BOUND_SNAPSHOTS;
    d->kind = kind;
    d->bounds = tl->b[k].v;
    d->n_bounds = tl->b[k].n;
    if (tl->n_marks == 0 && tl->n_running == 0) {
        return no_points(&d->why, err);
    }
    if (d->n_bounds < 2) {
        d->why = LH_WHY_FEW;
        return lh_err_set(err, LH_EINVAL, "the trace has %zu %s: differential leaks need at "
                          "least 2 (one interval)", d->n_bounds,
                          lh_bound_noun(kind, d->n_bounds != 1));
    }
    if (tl->ts[k].idx < 0) {
        if (tl->o.diff_to) {
            return unknown_label(d, LH_WHY_TO, tl->o.diff_to, err);
        }
        return lh_err_set(err, LH_EINVAL, "no %s to end the range at", lh_bound_noun(kind, 0));
    }
    d->to = (size_t)tl->ts[k].idx;
    if (o->from) {
        long f = lh_bound_find(d->bounds, d->n_bounds, o->from, 0);
        if (f < 0) {
            return unknown_label(d, LH_WHY_FROM, o->from, err);
        }
        d->from = (size_t)f;
    }
    if (d->from >= d->to) {
        return lh_err_set(err, LH_EINVAL, "empty range: the start, %s '%s' (#%zu), is not "
                          "before the end, %s '%s' (#%zu)", lh_bound_noun(kind, 0), d->bounds[d->from].label,
                          d->from + 1, lh_bound_noun(kind, 0), d->bounds[d->to].label, d->to + 1);
    }
    if ((rc = set_range(d, o, err)) < 0) {
        return rc;
    }
    /* The default end moves back before teardown (lh_bound_main_end over the points): the
     * pass followed that boundary too (follow_to), so no second pass is needed. */
    const to_state_t *t = &tl->ts[k];
    size_t n = n_points(tl, k), last = n ? n - 1 : 0, end = lh_bound_main_end(d->bounds, n);
    if (!tl->o.diff_to && end < last && end >= d->from + 1 && tl->peak[k].idx == (long)end) {
        t = &tl->peak[k];
        d->to = end;
        d->to_before_teardown = 1;
        d->n_last = last;
        if ((rc = set_range(d, o, err)) < 0) {
            return rc;
        }
    }

    acc.d = d;
    size_t cursor = 0;
    lh_live_block_t blk;
    while (lh_replay_live_next(r, &cursor, &blk)) {
        if (diff_add(&acc, blk.stack_id, blk.ts_ns, blk.size) < 0) {
            goto nomem;
        }
    }
    for (size_t i = 0; i < t->n_after; i++) {
        if (diff_add(&acc, t->after[i].stack_id, t->after[i].ts_ns, t->after[i].size) < 0) {
            goto nomem;
        }
    }
    free(acc.slot_of);
    for (size_t i = 0; i < d->n_sites; i++) {
        lh_diff_site_t *s = &d->sites[i];
        for (size_t j = 0; j < d->n_intervals; j++) {
            s->total_blocks += s->blocks[j];
            s->total_bytes += s->bytes[j];
            s->leaked_intervals += s->blocks[j] != 0;
        }
        s->share = (double)s->leaked_intervals / (double)d->n_intervals;
        s->score = (double)s->total_bytes * s->share;
        d->total_blocks += s->total_blocks;
        d->total_bytes += s->total_bytes;
    }
    if (d->n_sites) {
        lh_qsort(d->sites, d->n_sites, sizeof *d->sites, cmp_diff_site);
    }
    return 0;
nomem:
    free(acc.slot_of);
    lh_diff_fini(d);
    return oom(err);
}

void
lh_diff_fini(lh_diff_t *d)
{
    LH_FREE_EACH2(d->sites, d->n_sites, lh_diff_site_t, blocks, bytes);
    d->sites = NULL;
    d->n_sites = 0;
}

/* ---------------------------------------------------------------------------------------
 * Growth
 * ------------------------------------------------------------------------------------- */

/* Least-squares slope of y over x = 0..n-1, exactly: with c_k = 2k - (n - 1), the slope is
 * 2 sum(c_k y_k) / sum(c_k^2); the numerator is summed in 128 bits, so a series that lies on
 * a line gives its slope to the last bit. */
static double
slope_of(const uint64_t *y, size_t n)
{
    if (n < 2) {
        return 0.0;
    }
    __int128 num = 0, den = 0;
    for (size_t k = 0; k < n; k++) {
        __int128 c = 2 * (__int128)k - (__int128)(n - 1);
        num += c * (__int128)y[k];
        den += c * c;
    }
    return 2.0 * (double)num / (double)den;
}

void
lh_growth_site_stats(lh_growth_site_t *s, size_t n)
{
    s->slope_bytes = slope_of(s->bytes, n);
    s->slope_blocks = slope_of(s->blocks, n);
    s->intervals = n ? n - 1 : 0;
    s->grew_intervals = 0;
    s->gained_bytes = 0;
    for (size_t k = 1; k < n; k++) {
        if (s->bytes[k] > s->bytes[k - 1]) {
            s->grew_intervals++;
            s->gained_bytes += s->bytes[k] - s->bytes[k - 1];
        }
    }
    lh_trend_classify(s->bytes, n, &s->trend);
    s->growing = s->trend.kind == LH_TREND_GROWING;
}

/* Site id's live blocks and bytes at each of the n points. */
static void
densify(const lh_timeline_t *tl, uint32_t id, const lh_boundary_t *pts, size_t n,
        uint64_t *blocks, uint64_t *bytes)
{
    const site_t *s = &tl->sites[id];
    size_t j = 0;
    uint64_t bl = 0, by = 0;
    for (size_t p = 0; p < n; p++) {
        while (j < s->n_series && s->series[j].g <= pts[p].global) {
            bl = s->series[j].blocks;
            by = s->series[j].bytes;
            j++;
        }
        blocks[p] = bl;
        bytes[p] = by;
    }
}

static int
growth_site_cmp(const void *pa, const void *pb)
{
    const lh_growth_site_t *a = pa, *b = pb;
    if (a->growing != b->growing) {
        return a->growing ? -1 : 1;
    }
    if (a->slope_bytes != b->slope_bytes) {
        return a->slope_bytes > b->slope_bytes ? -1 : 1;
    }
    return a->stack_id < b->stack_id ? -1 : a->stack_id > b->stack_id;
}

static lh_bound_kind_t
series_kind(const lh_timeline_t *tl, lh_bound_kind_t kind)
{
    if (kind == LH_BOUND_AUTO) {
        /* marks first; a single mark does not hide two running snapshots */
        int marks = tl->n_marks >= 2 || (tl->n_marks && tl->n_running < 2) || !tl->n_running;
        return marks ? LH_BOUND_MARKS : LH_BOUND_SNAPSHOTS;
    }
    return kind;
}

static int
need_points(const lh_timeline_t *tl, lh_bound_kind_t kind, size_t n, lh_bound_why_t *why,
            lh_err_t *err)
{
    if (!tl->n_marks && !tl->n_running) {
        return no_points(why, err);
    }
    if (n < 2) {
        *why = LH_WHY_FEW;
        return lh_err_set(err, LH_EINVAL, "the trace has %zu %s: growth needs at least 2", n,
                          lh_bound_noun(kind, n != 1));
    }
    return 0;
}

int
lh_growth_add(lh_growth_t *g, size_t *cap, const lh_growth_site_t *s, size_t n, int every_site)
{
    g->n_active++;
    g->n_growing += s->growing;
    g->n_trend[s->trend.kind]++;
    if (!s->growing && !every_site) {
        return 0;
    }
    if (lh_grow(&g->sites, cap, g->n_sites, sizeof *g->sites, 16) < 0) {
        return -1;
    }
    lh_growth_site_t c = *s;
    c.blocks = malloc(n * sizeof *c.blocks);
    c.bytes = malloc(n * sizeof *c.bytes);
    if (!c.blocks || !c.bytes) {
        free(c.blocks);
        free(c.bytes);
        return -1;
    }
    memcpy(c.blocks, s->blocks, n * sizeof *c.blocks);
    memcpy(c.bytes, s->bytes, n * sizeof *c.bytes);
    g->sites[g->n_sites++] = c;
    return 0;
}

void
lh_growth_sort(lh_growth_t *g)
{
    if (g->n_sites) {
        lh_qsort(g->sites, g->n_sites, sizeof *g->sites, growth_site_cmp);
    }
}

int
lh_timeline_growth(const lh_timeline_t *tl, const lh_growth_opts_t *o, lh_growth_t *g,
                   lh_err_t *err)
{
    memset(g, 0, sizeof *g);
    if (!tl->o.series) {
        return lh_err_set(err, LH_EINVAL, "the timeline was not asked for series");
    }
    g->kind = series_kind(tl, o ? o->kind : LH_BOUND_AUTO);
    int k = g->kind == LH_BOUND_SNAPSHOTS;
    size_t n = n_points(tl, k);
    int rc = need_points(tl, g->kind, n, &g->why, err);
    if (rc < 0 && (g->why == LH_WHY_NO_POINTS || n < 2) && tl->n_marks < 2 &&
        tl->n_running < 2 && tl->act && tl->last_r && (!o || o->kind == LH_BOUND_AUTO)) {
        /* not two marks nor two running snapshots (a server loaded, sent one SIGUSR2, then
         * stopped): what survived, by when it was made (survivors.h) */
        return lh_activity_growth(tl->act, tl->last_r, o, g, err);
    }
    if (rc < 0) {
        return rc;
    }
    g->bounds = tl->b[k].v;
    g->n_all_points = n;
    n = lh_bound_main_end(tl->b[k].v, n) + 1;
    g->n_points = n;
    size_t cap = 0;
    uint64_t *bl = malloc(n * sizeof *bl), *by = malloc(n * sizeof *by);
    if (!bl || !by) {
        goto nomem;
    }
    for (size_t id = 0; id < tl->n_sites; id++) {
        if (!tl->sites[id].n_series) {
            continue;
        }
        lh_growth_site_t s = {.stack_id = (uint32_t)id, .blocks = bl, .bytes = by};
        densify(tl, (uint32_t)id, g->bounds, n, bl, by);
        int active = 0;
        for (size_t p = 0; p < n && !active; p++) {
            active = bl[p] != 0;
        }
        if (!active) {
            continue;
        }
        lh_growth_site_stats(&s, n);
        if (lh_growth_add(g, &cap, &s, n, o && o->every_site) < 0) {
            goto nomem;
        }
    }
    free(bl);
    free(by);
    lh_growth_sort(g);
    return 0;
nomem:
    free(bl);
    free(by);
    lh_growth_fini(g);
    return oom(err);
}

uint8_t *
lh_timeline_trend_map(const lh_timeline_t *tl, lh_bound_kind_t kind, int *rc, lh_err_t *err)
{
    lh_growth_opts_t o = {kind, 1};
    lh_growth_t g;
    *rc = lh_timeline_growth(tl, &o, &g, err);
    if (*rc < 0) {
        /* fewer than 2 points, or no series: no trend to tell, not an error of the caller */
        *rc = *rc == LH_ENOMEM ? *rc : 0;
        return NULL;
    }
    uint8_t *map = calloc(tl->n_sites ? tl->n_sites : 1, 1);
    if (!map) {
        *rc = oom(err);
    }
    for (size_t j = 0; map && j < g.n_sites; j++) {
        map[g.sites[j].stack_id] = (uint8_t)g.sites[j].trend.kind;
    }
    lh_growth_fini(&g);
    return map;
}

typedef struct growth_drop {
    lh_growth_t *g;
    int (*drop)(void *ctx, uint32_t id, lh_err_t *err);
    void *ctx;
} growth_drop_t;

/* lh_drop_rows's answer for a site of lh_growth_filter. */
static int
growth_drop_site(void *ctx, void *row, lh_err_t *err)
{
    const growth_drop_t *d = ctx;
    lh_growth_site_t *s = row;
    int rc = d->drop(d->ctx, s->stack_id, err);
    if (rc == 1) {
        d->g->n_growing -= s->growing;
        d->g->n_trend[s->trend.kind]--;
        d->g->n_active--;
        free(s->blocks);
        free(s->bytes);
    }
    return rc;
}

int
lh_growth_filter(lh_growth_t *g, int (*drop)(void *ctx, uint32_t id, lh_err_t *err), void *ctx,
                 lh_err_t *err)
{
    growth_drop_t d = {g, drop, ctx};
    return lh_drop_rows(g->sites, &g->n_sites, sizeof *g->sites, growth_drop_site, &d, err);
}

/* Sets, in each of the n records at recs (size bytes apart), the lh_trend_t at byte
 * offset trend_off to the class over kind of the site whose uint32_t stack id is at
 * id_off (none beyond the timeline's sites): one loop for the diff's sites and the counts'
 * groups. */
static int
set_trends(const lh_timeline_t *tl, lh_bound_kind_t kind, void *recs, size_t n, size_t size,
           size_t id_off, size_t trend_off, lh_err_t *err)
{
    int rc;
    uint8_t *map = lh_timeline_trend_map(tl, kind, &rc, err);
    for (size_t i = 0; map && i < n; i++) {
        char *r = (char *)recs + i * size;
        uint32_t id;
        memcpy(&id, r + id_off, sizeof id);
        lh_trend_t t = id < tl->n_sites ? (lh_trend_t)map[id] : LH_TREND_NONE;
        memcpy(r + trend_off, &t, sizeof t);
    }
    free(map);
    return rc;
}

int
lh_diff_trends(const lh_timeline_t *tl, lh_diff_t *d, lh_err_t *err)
{
    return set_trends(tl, d->kind, d->sites, d->n_sites, sizeof *d->sites,
                      offsetof(lh_diff_site_t, stack_id), offsetof(lh_diff_site_t, trend), err);
}

/* Grouped by site, a group's one member is its site: first_stack is the group. */
int
lh_counts_trends(const lh_timeline_t *tl, lh_counts_t *c, lh_err_t *err)
{
    return set_trends(tl, c->kind, c->groups, c->n_groups, sizeof *c->groups,
                      offsetof(lh_count_group_t, first_stack), offsetof(lh_count_group_t, trend),
                      err);
}

void
lh_growth_fini(lh_growth_t *g)
{
    LH_FREE_EACH2(g->sites, g->n_sites, lh_growth_site_t, blocks, bytes);
    g->sites = NULL;
    g->n_sites = 0;
}

/* ---------------------------------------------------------------------------------------
 * Counts
 * ------------------------------------------------------------------------------------- */

size_t
lh_timeline_n_sites(const lh_timeline_t *tl)
{
    return tl->n_sites;
}

int
lh_timeline_site_active(const lh_timeline_t *tl, uint32_t id)
{
    return id < tl->n_sites && tl->sites[id].n_series != 0;
}

static int
cmp_group(const void *pa, const void *pb)
{
    const lh_count_group_t *a = pa, *b = pb;
    return lh_rank_order((double)a->final, (double)b->final, a->max, b->max, a->group, b->group);
}

int
lh_timeline_counts(const lh_timeline_t *tl, lh_bound_kind_t kind, const uint32_t *group_of,
                   size_t n_groups, size_t top, lh_counts_t *c, lh_err_t *err)
{
    memset(c, 0, sizeof *c);
    if (!tl->o.series) {
        return lh_err_set(err, LH_EINVAL, "the timeline was not asked for series");
    }
    c->kind = series_kind(tl, kind);
    int k = c->kind == LH_BOUND_SNAPSHOTS;
    size_t n = n_points(tl, k);
    int rc = need_points(tl, c->kind, n, &c->why, err);
    if (rc < 0) {
        return rc;
    }
    if (!group_of) {
        n_groups = tl->n_sites;
    }
    c->bounds = tl->b[k].v;
    c->n_points = n;
    lh_count_group_t *all = calloc(n_groups ? n_groups : 1, sizeof *all);
    uint64_t *bl = malloc(n * sizeof *bl), *by = malloc(n * sizeof *by);
    if (!all || !bl || !by) {
        goto nomem;
    }
    /* First pass: final and peak counts per group, to rank without keeping every series. */
    for (size_t id = 0; id < tl->n_sites; id++) {
        if (!tl->sites[id].n_series) {
            continue;
        }
        size_t grp = group_of ? group_of[id] : id;
        if (grp >= n_groups) {
            continue;
        }
        densify(tl, (uint32_t)id, c->bounds, n, bl, by);
        lh_count_group_t *gr = &all[grp];
        gr->group = grp;
        if (!gr->n_sites++) {
            gr->first_stack = (uint32_t)id;
        }
        gr->final += bl[n - 1];
        gr->final_bytes += by[n - 1];
        uint64_t mx = 0;
        for (size_t p = 0; p < n; p++) {
            mx = bl[p] > mx ? bl[p] : mx;
        }
        gr->max += mx; /* an upper bound of the group's peak; only used to order ties */
    }
    size_t m = 0;
    for (size_t i = 0; i < n_groups; i++) {
        if (all[i].n_sites && (all[i].final || all[i].max)) {
            all[m++] = all[i];
        }
    }
    c->n_groups = m;
    if (m) {
        lh_qsort(all, m, sizeof *all, cmp_group);
    }
    c->n_shown = top && top < m ? top : m;
    c->groups = all;
    all = NULL;
    for (size_t i = 0; i < c->n_shown; i++) {
        if (!(c->groups[i].counts = calloc(n, sizeof *c->groups[i].counts))) {
            goto nomem;
        }
    }
    /* Second pass: the series of the groups shown. */
    for (size_t id = 0; id < tl->n_sites; id++) {
        if (!tl->sites[id].n_series) {
            continue;
        }
        size_t grp = group_of ? group_of[id] : id;
        size_t i;
        for (i = 0; i < c->n_shown && c->groups[i].group != grp; i++) {
        }
        if (i == c->n_shown) {
            continue;
        }
        densify(tl, (uint32_t)id, c->bounds, n, bl, by);
        for (size_t p = 0; p < n; p++) {
            c->groups[i].counts[p] += bl[p];
        }
    }
    free(bl);
    free(by);
    return 0;
nomem:
    free(all);
    free(bl);
    free(by);
    lh_counts_fini(c);
    return oom(err);
}

void
lh_counts_fini(lh_counts_t *c)
{
    LH_FREE_EACH(c->groups, c->n_shown, lh_count_group_t, counts);
    c->groups = NULL;
    c->n_groups = c->n_shown = 0;
}

int
lh_timeline_at(const lh_timeline_t *tl, size_t g, size_t n, uint64_t *bytes, uint64_t *blocks)
{
    if (!tl->o.series || g >= tl->all.n) {
        return LH_EINVAL;
    }
    for (size_t id = 0; id < n; id++) {
        const site_t *s = id < tl->n_sites ? &tl->sites[id] : NULL;
        /* the site's last change at or before g */
        size_t j = s ? LH_UPPER(s->series, s->n_series, sentry_t, g, g) : 0;
        bytes[id] = j ? s->series[j - 1].bytes : 0;
        blocks[id] = j ? s->series[j - 1].blocks : 0;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Temporary allocations
 * ------------------------------------------------------------------------------------- */

static int
cmp_temp(const void *pa, const void *pb)
{
    const lh_temp_site_t *a = pa, *b = pb;
    return lh_rank_order((double)a->n_temp, (double)b->n_temp, a->temp_bytes, b->temp_bytes,
                         a->stack_id, b->stack_id);
}

int
lh_timeline_temporary(const lh_timeline_t *tl, const lh_replay_t *r, lh_temp_t *t,
                      lh_err_t *err)
{
    size_t cap = 0;
    memset(t, 0, sizeof *t);
    t->threshold_ns = tl->o.temp_threshold_ns;
    t->immediate = tl->o.temp_immediate;
    if (!tl->o.temporary) {
        return lh_err_set(err, LH_EINVAL, "the timeline was not asked for temporaries");
    }
    t->n_allocs = lh_replay_totals(r)->n_allocs + lh_replay_totals(r)->n_reallocs;
    for (size_t id = 0; id < tl->n_sites; id++) {
        const site_t *s = &tl->sites[id];
        if (!s->n_temp) {
            continue;
        }
        if (lh_grow(&t->sites, &cap, t->n_sites, sizeof *t->sites, 16) < 0) {
            lh_temp_fini(t);
            return oom(err);
        }
        t->sites[t->n_sites++] = (lh_temp_site_t){(uint32_t)id, s->n_temp, s->temp_bytes,
                                                  lh_replay_stack(r, (uint32_t)id)->n_allocs,
                                                  s->temp_life_ns};
        t->n_temp += s->n_temp;
        t->temp_bytes += s->temp_bytes;
    }
    if (t->n_sites) {
        lh_qsort(t->sites, t->n_sites, sizeof *t->sites, cmp_temp);
    }
    return 0;
}

void
lh_temp_fini(lh_temp_t *t)
{
    free(t->sites);
    t->sites = NULL;
    t->n_sites = 0;
}
