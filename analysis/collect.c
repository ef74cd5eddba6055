/* leakhound - SPDX-License-Identifier: MIT
 *
 * collect.c: the one-pass collector behind the pictures, attributions and exports.
 */
#include "collect.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dupstr.h"
#include "grow.h"

#define FIRST_WIDTH_NS 1000000ull /* 1 ms */

/* ---------------------------------------------------------------------------------------
 * Checkpoint sets: the stacks changed since the previous checkpoint, with their values.
 * ------------------------------------------------------------------------------------- */
typedef struct entry {
    uint32_t stack;
    uint64_t blocks;
    uint64_t bytes;
} entry_t;

typedef struct ckset {
    entry_t *e;
    size_t n, cap;
    size_t *start;      /* checkpoint k holds e[start[k] .. start[k + 1]) */
    size_t n_ck, cap_ck;
    uint32_t *dirty;    /* stacks changed since the last checkpoint */
    size_t n_dirty, cap_dirty;
    uint32_t *gen;      /* per stack: the checkpoint generation it was last marked dirty in */
    size_t cap_gen;
    uint32_t cur_gen;   /* starts at 1, so that gen 0 means never */
} ckset_t;

/* Per-stack state of the pass. */
typedef struct sstate {
    uint64_t live_bytes, live_blocks;
    uint64_t peak_bytes, peak_blocks; /* saved value at the latest peak (see peak_gen) */
    uint32_t peak_gen;                /* generation of the peak it was saved for */
} sstate_t;

struct lh_collect {
    lh_trace_t *t;
    lh_replay_t *r;
    lh_timeline_t *tl;     /* the per-site series and growth, fed by the same pass */
    lh_symbolizer_t *sym;
    lh_collect_opts_t opts;
    int started;           /* start_ns set from the trace's info */

    sstate_t *st;
    size_t n_st, cap_st;
    uint64_t heap_bytes, heap_blocks, peak_bytes;
    uint32_t peak_gen;

    lh_cstack_t *stacks;   /* built at the end */
    size_t n_stacks;

    lh_site_t *sites;      /* lazily symbolized, per stack id */
    uint8_t *site_done;

    /* columns */
    ckset_t cols;
    lh_ccolumn_t *colmeta;
    size_t cap_colmeta;
    uint64_t t0, width;
    int have_t0;

    lh_rss_sample_t *rss;
    size_t n_rss, cap_rss;

    uint64_t start_ns, end_ns;
};

static int
oom(lh_err_t *err)
{
    return lh_err_set(err, LH_ENOMEM, "out of memory collecting the trace");
}

static void
ckset_fini(ckset_t *s)
{
    LH_FREE_ALL(s->e, s->start, s->dirty, s->gen);
}

static int
cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Closes a checkpoint: the dirty stacks with their current values, sorted by id. */
static int
ckset_close(ckset_t *s, const sstate_t *st)
{
    if (lh_grow_to(&s->start, &s->cap_ck, s->n_ck + 2, sizeof *s->start, 16) < 0 ||
        lh_grow_to(&s->e, &s->cap, s->n + s->n_dirty, sizeof *s->e, 16) < 0) {
        return -1;
    }
    if (s->n_ck == 0) {
        s->start[0] = 0;
    }
    lh_qsort(s->dirty, s->n_dirty, sizeof *s->dirty, cmp_u32);
    for (size_t i = 0; i < s->n_dirty; i++) {
        uint32_t id = s->dirty[i];
        s->e[s->n++] = (entry_t){id, st[id].live_blocks, st[id].live_bytes};
    }
    s->n_ck++;
    s->start[s->n_ck] = s->n;
    s->n_dirty = 0;
    s->cur_gen++;
    return 0;
}

static int
ckset_touch(ckset_t *s, uint32_t id)
{
    if (s->gen[id] == s->cur_gen) {
        return 0;
    }
    if (lh_grow_to(&s->dirty, &s->cap_dirty, s->n_dirty + 1, sizeof *s->dirty, 16) < 0) {
        return -1;
    }
    s->gen[id] = s->cur_gen;
    s->dirty[s->n_dirty++] = id;
    return 0;
}

/* Merges checkpoints pairwise (2k and 2k+1 into k, the later value winning); n_ck must be
 * even. */
static int
ckset_halve(ckset_t *s)
{
    entry_t *v = malloc((s->n ? s->n : 1) * sizeof *v);
    size_t k = 0;
    if (!v) {
        return -1;
    }
    for (size_t c = 0; c + 1 < s->n_ck; c += 2) {
        size_t a = s->start[c], ae = s->start[c + 1];
        size_t b = s->start[c + 1], be = s->start[c + 2];
        size_t first = k;
        while (a < ae || b < be) {
            if (b >= be || (a < ae && s->e[a].stack < s->e[b].stack)) {
                v[k++] = s->e[a++];
            } else if (a >= ae || s->e[b].stack < s->e[a].stack) {
                v[k++] = s->e[b++];
            } else {
                v[k++] = s->e[b++];
                a++;
            }
        }
        s->start[c / 2] = first;
    }
    s->n_ck /= 2;
    s->start[s->n_ck] = k;
    free(s->e);
    s->e = v;
    s->n = k;
    s->cap = s->n ? s->n : 1;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * The pass
 * ------------------------------------------------------------------------------------- */
static int
ensure_stack(lh_collect_t *c, uint32_t id)
{
    size_t need = (size_t)id + 1;
    if (need <= c->n_st) {
        return 0;
    }
    if (lh_grow_zeroed(&c->st, &c->cap_st, need, sizeof *c->st, 16) < 0 ||
        lh_grow_zeroed(&c->cols.gen, &c->cols.cap_gen, need, sizeof *c->cols.gen, 16) < 0) {
        return -1;
    }
    c->n_st = need;
    return 0;
}

/* Applies a change of live bytes/blocks to a stack, saving its value at the latest peak
 * first if this is its first change since that peak. */
static int
change(lh_collect_t *c, uint32_t id, int64_t dblocks, int64_t dbytes)
{
    if (ensure_stack(c, id) < 0) {
        return -1;
    }
    sstate_t *s = &c->st[id];
    if (s->peak_gen != c->peak_gen) {
        s->peak_bytes = s->live_bytes;
        s->peak_blocks = s->live_blocks;
        s->peak_gen = c->peak_gen;
    }
    s->live_blocks += (uint64_t)dblocks;
    s->live_bytes += (uint64_t)dbytes;
    c->heap_blocks += (uint64_t)dblocks;
    c->heap_bytes += (uint64_t)dbytes;
    return c->opts.n_columns ? ckset_touch(&c->cols, id) : 0;
}

static int
push_column(lh_collect_t *c)
{
    size_t k = c->cols.n_ck;
    if (lh_grow_to(&c->colmeta, &c->cap_colmeta, k + 1, sizeof *c->colmeta, 16) < 0 ||
        ckset_close(&c->cols, c->st) < 0) {
        return -1;
    }
    c->colmeta[k].end_ns = c->t0 + (k + 1) * c->width;
    c->colmeta[k].heap_bytes = c->heap_bytes;
    return 0;
}

/* Closes the columns before the one holding ts (which stays open). */
static int
advance_columns(lh_collect_t *c, uint64_t ts)
{
    size_t max = 2 * c->opts.n_columns;
    if (!c->have_t0) {
        c->t0 = c->start_ns && c->start_ns <= ts ? c->start_ns : ts;
        c->width = FIRST_WIDTH_NS;
        c->have_t0 = 1;
    }
    uint64_t j = ts > c->t0 ? (ts - c->t0) / c->width : 0;
    while (j >= max) {
        /* close the open column, make the count even, merge pairs */
        if (push_column(c) < 0) {
            return -1;
        }
        if (c->cols.n_ck % 2 && push_column(c) < 0) {
            return -1;
        }
        if (ckset_halve(&c->cols) < 0) {
            return -1;
        }
        for (size_t k = 0; k < c->cols.n_ck; k++) {
            c->colmeta[k] = c->colmeta[2 * k + 1];
        }
        c->width *= 2;
        j = ts > c->t0 ? (ts - c->t0) / c->width : 0;
    }
    while (c->cols.n_ck < j) {
        if (push_column(c) < 0) {
            return -1;
        }
    }
    return 0;
}

/* The collector's consumer of the one pass (stream.h): ev was just applied to r. */
static int
apply(void *ctx, const lh_trace_t *t, const lh_replay_t *r, const lh_event_t *ev, lh_err_t *err)
{
    lh_collect_t *c = ctx;
    const lh_live_block_t *freed;
    size_t n_freed;
    int rc;
    if (!c->started) {
        const lh_trace_info_t *in = &lh_trace_parts(t)->info;
        c->start_ns = in->has_clock ? in->mono_start_ns : 0;
        c->started = 1;
    }
    if (c->opts.n_columns && ev->type != LH_REC_RSS && advance_columns(c, ev->ts_ns) < 0) {
        return oom(err);
    }
    n_freed = lh_replay_freed(r, &freed);
    for (size_t i = 0; i < n_freed; i++) {
        if (change(c, freed[i].stack_id, -1, -(int64_t)freed[i].size) < 0) {
            return oom(err);
        }
    }
    switch (ev->type) {
    case LH_REC_ALLOC:
    case LH_REC_REALLOC:
        if (ev->addr && (ev->type == LH_REC_ALLOC || ev->half != LH_HALF_FREE)) {
            if (change(c, lh_replay_last_stack(r), 1, (int64_t)ev->size) < 0) {
                return oom(err);
            }
            if (c->heap_bytes > c->peak_bytes) {
                c->peak_bytes = c->heap_bytes;
                c->peak_gen++;
            }
        }
        break;
    case LH_REC_RSS:
        if (lh_grow_to(&c->rss, &c->cap_rss, c->n_rss + 1, sizeof *c->rss, 16) < 0) {
            return oom(err);
        }
        c->rss[c->n_rss++] = (lh_rss_sample_t){ev->ts_ns, ev->size};
        break;
    default:
        break;
    }
    if (c->opts.on_event && (rc = c->opts.on_event(c->opts.event_ctx, ev, err)) < 0) {
        return rc;
    }
    return 0;
}

/* After the pass: per-stack results, the last column, the times. */
static int
finish(lh_collect_t *c, lh_err_t *err)
{
    const lh_trace_info_t *in = &lh_trace_parts(c->t)->info;
    const lh_trace_stats_t *ts = &lh_trace_parts(c->t)->stats;
    const lh_trace_end_t *end = &lh_trace_parts(c->t)->end;
    size_t n = lh_replay_n_stacks(c->r);
    lh_sym_opts_t sopts = {.exe_path = in->exe};

    c->start_ns = in->has_clock ? in->mono_start_ns : ts->first_ts_ns;
    if (ts->n_events && ts->first_ts_ns < c->start_ns) {
        c->start_ns = ts->first_ts_ns;
    }
    c->end_ns = end->present ? end->ts_ns : ts->last_ts_ns;
    if (ts->last_ts_ns > c->end_ns) {
        c->end_ns = ts->last_ts_ns;
    }
    if (n < c->n_st) {
        n = c->n_st;
    }
    if (ensure_stack(c, n ? (uint32_t)(n - 1) : 0) < 0) {
        return oom(err);
    }
    c->n_stacks = c->n_st;
    c->stacks = calloc(c->n_stacks ? c->n_stacks : 1, sizeof *c->stacks);
    c->sites = calloc(c->n_stacks ? c->n_stacks : 1, sizeof *c->sites);
    c->site_done = calloc(c->n_stacks ? c->n_stacks : 1, 1);
    if (!c->stacks || !c->sites || !c->site_done) {
        return oom(err);
    }
    for (size_t id = 0; id < c->n_stacks; id++) {
        const lh_stack_stats_t *rs = lh_replay_stack(c->r, (uint32_t)id);
        sstate_t *s = &c->st[id];
        lh_cstack_t *o = &c->stacks[id];
        o->n_allocs = rs->n_allocs;
        o->alloc_bytes = rs->alloc_bytes;
        o->live_blocks = s->live_blocks;
        o->live_bytes = s->live_bytes;
        if (s->peak_gen == c->peak_gen) {
            o->peak_blocks = s->peak_blocks;
            o->peak_bytes = s->peak_bytes;
        } else { /* unchanged since the peak */
            o->peak_blocks = s->live_blocks;
            o->peak_bytes = s->live_bytes;
        }
    }
    if (c->opts.n_columns && c->have_t0) {
        if (advance_columns(c, c->end_ns) < 0 || push_column(c) < 0) {
            return oom(err);
        }
        c->colmeta[c->cols.n_ck - 1].end_ns = c->end_ns;
    }
    return lh_sym_new(&lh_trace_parts(c->t)->modules, &sopts, &c->sym, err);
}

int
lh_collect_run(const char *path, const lh_collect_opts_t *opts, lh_collect_t **out,
               lh_err_t *err)
{
    lh_collect_t *c = calloc(1, sizeof *c);
    int rc;
    *out = NULL;
    if (!c) {
        return oom(err);
    }
    if (opts) {
        c->opts = *opts;
    }
    c->cols.cur_gen = 1;
    if (ensure_stack(c, 0) < 0) {
        rc = oom(err);
        goto fail;
    }
    lh_timeline_opts_t tlo = {.series = 1};
    if ((rc = lh_timeline_new(&tlo, &c->tl, err)) < 0) {
        goto fail;
    }
    lh_consumer_t cs[2] = {{apply, c, 0}, lh_timeline_consumer(c->tl)};
    lh_stream_opts_t so = {c->opts.salvage, cs, 2, c->opts.on_progress, c->opts.progress_ctx};
    if ((rc = lh_stream_run(path, &so, &c->t, &c->r, err)) < 0 || (rc = finish(c, err)) < 0) {
        goto fail;
    }
    *out = c;
    return 0;
fail:
    lh_collect_free(c);
    return rc;
}

void
lh_collect_free(lh_collect_t *c)
{
    if (!c) {
        return;
    }
    for (size_t i = 0; c->sites && i < c->n_stacks; i++) {
        lh_site_fini(&c->sites[i]);
    }
    ckset_fini(&c->cols);
    lh_sym_free(c->sym);
    lh_timeline_free(c->tl);
    lh_replay_free(c->r);
    lh_trace_close(c->t);
    LH_FREE_ALL(c->sites, c->site_done, c->stacks, c->st, c->colmeta, c->rss, c);
}

/* ---------------------------------------------------------------------------------------
 * Accessors
 * ------------------------------------------------------------------------------------- */
const lh_trace_t *
lh_collect_trace(const lh_collect_t *c)
{
    return c->t;
}

const lh_replay_t *
lh_collect_replay(const lh_collect_t *c)
{
    return c->r;
}

lh_symbolizer_t *
lh_collect_symbolizer(lh_collect_t *c)
{
    return c->sym;
}

uint64_t
lh_collect_start_ns(const lh_collect_t *c)
{
    return c->start_ns;
}

uint64_t
lh_collect_end_ns(const lh_collect_t *c)
{
    return c->end_ns;
}

size_t
lh_collect_n_stacks(const lh_collect_t *c)
{
    return c->n_stacks;
}

const lh_cstack_t *
lh_collect_stack(const lh_collect_t *c, uint32_t id)
{
    static const lh_cstack_t zero;
    return id < c->n_stacks ? &c->stacks[id] : &zero;
}

int
lh_collect_site(lh_collect_t *c, uint32_t id, const lh_site_t **out, lh_err_t *err)
{
    static lh_site_t none = {.location = -1, .user_frame = -1};
    if (id >= c->n_stacks) {
        *out = &none;
        return 0;
    }
    if (!c->site_done[id]) {
        lh_site_t *s = &c->sites[id];
        s->stack_id = id;
        int rc = lh_site_symbolize(s, c->t, c->sym, err);
        if (rc < 0 || (rc = lh_site_growers(s, c->t, c->r, c->sym, err)) < 0) {
            return rc;
        }
        s->stats = *lh_replay_stack(c->r, id);
        c->site_done[id] = 1;
    }
    *out = &c->sites[id];
    return 0;
}

const lh_timeline_t *
lh_collect_timeline(const lh_collect_t *c)
{
    return c->tl;
}

size_t
lh_collect_n_columns(const lh_collect_t *c)
{
    return c->opts.n_columns ? c->cols.n_ck : 0;
}

const lh_ccolumn_t *
lh_collect_column(const lh_collect_t *c, size_t i)
{
    return i < lh_collect_n_columns(c) ? &c->colmeta[i] : NULL;
}

int
lh_collect_columns(const lh_collect_t *c, const uint32_t *ids, size_t n, uint64_t *out,
                   uint64_t *max_bytes)
{
    size_t nc = lh_collect_n_columns(c);
    /* the position of each requested stack in ids, or SIZE_MAX */
    size_t *pos = malloc((c->n_stacks ? c->n_stacks : 1) * sizeof *pos);
    uint64_t *cur = calloc(n ? n : 1, sizeof *cur);
    if (!pos || !cur) {
        LH_FREE_ALL(pos, cur);
        return LH_ENOMEM;
    }
    for (size_t s = 0; s < c->n_stacks; s++) {
        pos[s] = SIZE_MAX;
    }
    for (size_t k = 0; k < n; k++) {
        if (ids[k] < c->n_stacks) {
            pos[ids[k]] = k;
        }
    }
    if (max_bytes) {
        memset(max_bytes, 0, c->n_stacks * sizeof *max_bytes);
    }
    for (size_t col = 0; col < nc; col++) {
        for (size_t e = c->cols.start[col]; e < c->cols.start[col + 1]; e++) {
            const entry_t *x = &c->cols.e[e];
            if (pos[x->stack] != SIZE_MAX) {
                cur[pos[x->stack]] = x->bytes;
            }
            if (max_bytes && x->bytes > max_bytes[x->stack]) {
                max_bytes[x->stack] = x->bytes;
            }
        }
        if (out) {
            memcpy(out + col * n, cur, n * sizeof *cur);
        }
    }
    LH_FREE_ALL(pos, cur);
    return 0;
}

size_t
lh_collect_n_rss(const lh_collect_t *c)
{
    return c->n_rss;
}

const lh_rss_sample_t *
lh_collect_rss(const lh_collect_t *c)
{
    return c->rss;
}
