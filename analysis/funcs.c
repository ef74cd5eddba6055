/* leakhound - SPDX-License-Identifier: MIT
 *
 * funcs.c: per-function attribution.
 */
#include "funcs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dupstr.h"
#include "grow.h"
#include "hash.h"

const char *
lh_metric_name(lh_metric_t m)
{
    switch (m) {
    case LH_METRIC_ALLOCATED:
        return "allocated";
    case LH_METRIC_LEAKED:
        return "leaked";
    case LH_METRIC_PEAK:
        return "peak";
    case LH_METRIC_GROWTH:
        return "growth";
    case LH_METRIC_ALLOCATIONS:
        return "allocations";
    }
    return "?";
}

double
lh_fmetrics_value(const lh_fmetrics_t *f, lh_metric_t m)
{
    switch (m) {
    case LH_METRIC_ALLOCATED:
        return (double)f->allocated;
    case LH_METRIC_LEAKED:
        return (double)f->leaked;
    case LH_METRIC_PEAK:
        return (double)f->peak;
    case LH_METRIC_GROWTH:
        return f->growth;
    case LH_METRIC_ALLOCATIONS:
        return (double)f->n_allocs;
    }
    return 0;
}

const char *
lh_funcs_frame_name(const lh_frame_t *fr, char *buf, size_t len)
{
    if (fr->function) {
        snprintf(buf, len, "%s", fr->function);
    } else if (fr->module && fr->module[0]) {
        snprintf(buf, len, "%s+0x%" PRIx64, lh_sym_module_label(fr->module), fr->offset);
    } else {
        snprintf(buf, len, "0x%" PRIx64, fr->ip);
    }
    return buf;
}

size_t
lh_funcs_trim(const lh_frame_t *frames, size_t n)
{
    for (size_t i = n; i-- > 0;) {
        if (frames[i].function && strcmp(frames[i].function, "main") == 0) {
            return i + 1;
        }
    }
    return n;
}

static uint64_t
hash_str(const char *s, const char *m)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    }
    h = (h ^ 0xff) * 1099511628211ull;
    for (; m && *m; m++) {
        h = (h ^ (unsigned char)*m) * 1099511628211ull;
    }
    return h ^ (h >> 29);
}

static int
same_module(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The second part of frame fr's function key (lh_func_t.key): perl names the top-level
 * code of every file and eval "(require)" or "(eval)", which are as many functions as
 * files, not one; python names a function without its module (`main`, `<module>`,
 * `<lambda>` of two files are two functions). */
static const char *
key_of(const lh_frame_t *fr)
{
    int by_file = fr->lang == LH_LANG_PYTHON ||
                  (fr->lang != LH_LANG_NATIVE && fr->function && fr->function[0] == '(');
    return by_file && fr->file ? fr->file : fr->module;
}

static long
lookup(const lh_funcs_t *f, const char *name, const char *module, size_t *slot)
{
    if (!f->hash) {
        return -1;
    }
    size_t i = hash_str(name, module) & f->hash_mask;
    while (f->hash[i] != UINT32_MAX) {
        const lh_func_t *x = &f->v[f->hash[i]];
        if (strcmp(x->name, name) == 0 && same_module(x->key, module)) {
            return f->hash[i];
        }
        i = (i + 1) & f->hash_mask;
    }
    if (slot) {
        *slot = i;
    }
    return -1;
}

static uint64_t
func_hash(const void *f, size_t k)
{
    const lh_func_t *x = &((const lh_funcs_t *)f)->v[k];
    return hash_str(x->name, x->key);
}

static int
rehash(lh_funcs_t *f, size_t cap)
{
    return lh_index_rebuild(&f->hash, &f->hash_mask, cap, 0, f->n, func_hash, f);
}

long
lh_funcs_find(const lh_funcs_t *f, const lh_frame_t *fr)
{
    char buf[512];
    return lookup(f, lh_funcs_frame_name(fr, buf, sizeof buf), key_of(fr), NULL);
}

/* Whether script frame i of site is at the line of the next script frame out (its caller):
 * perl has entered the sub but not yet run a statement of it. */
static int
at_call_site(const lh_site_t *site, size_t i)
{
    const lh_frame_t *fr = &site->frames[i];
    for (size_t j = i + 1; j < site->n_frames; j++) {
        const lh_frame_t *up = &site->frames[j];
        if (up->lang != LH_LANG_NATIVE) {
            return fr->line == up->line && fr->file && up->file && strcmp(fr->file, up->file) == 0;
        }
    }
    return 0;
}

/* The function of frame fr, added when new; returns its index or -1 (no memory).
 * innermost: fr is the innermost script frame and at its caller's line (at_call_site):
 * while perl enters a sub, the statement is still the caller's (MyApp::handler's first
 * allocations are at Plack/Middleware/Lint.pm:24), so a function's file is taken from
 * another frame when one exists. */
static long
intern(lh_funcs_t *f, const lh_frame_t *fr, int innermost, const char *exe, size_t *cap_v)
{
    char buf[512];
    const char *name = lh_funcs_frame_name(fr, buf, sizeof buf);
    size_t slot = 0;
    long k = lookup(f, name, key_of(fr), &slot);
    if (k >= 0) {
        lh_func_t *x = &f->v[k];
        if (fr->file && (!x->file || (x->file_from_callee && !innermost))) {
            x->file = fr->file;
            x->line = fr->line;
            x->file_from_callee = innermost;
        }
        return k;
    }
    int grown = lh_index_room(&f->hash, &f->hash_mask, 0, f->n, func_hash, f);
    if (grown < 0) {
        return -1;
    }
    if (grown) {
        lookup(f, name, key_of(fr), &slot); /* its free slot moved with the rebuild */
    }
    if (lh_grow(&f->v, cap_v, f->n, sizeof *f->v, 256) < 0) {
        return -1;
    }
    lh_func_t *x = &f->v[f->n];
    memset(x, 0, sizeof *x);
    if (!(x->name = strdup(name))) {
        return -1;
    }
    x->module = fr->module;
    x->key = key_of(fr);
    x->file = fr->file;
    x->line = fr->line;
    x->file_from_callee = innermost;
    x->is_program = fr->module && exe && strcmp(fr->module, exe) == 0;
    f->hash[slot] = (uint32_t)f->n;
    return (long)f->n++;
}

static void
add(lh_fmetrics_t *to, const lh_fmetrics_t *m)
{
    to->allocated += m->allocated;
    to->n_allocs += m->n_allocs;
    to->leaked += m->leaked;
    to->leaked_blocks += m->leaked_blocks;
    to->peak += m->peak;
    to->growth += m->growth;
}

void
lh_funcs_stack_metrics(const lh_funcs_t *f, const lh_collect_t *c, uint32_t id,
                       lh_fmetrics_t *out)
{
    const lh_cstack_t *s = lh_collect_stack(c, id);
    out->allocated = s->alloc_bytes;
    out->n_allocs = s->n_allocs;
    out->leaked = s->live_bytes;
    out->leaked_blocks = s->live_blocks;
    out->peak = s->peak_bytes;
    out->growth = f && f->stack_growth && id < f->n_stack_growth ? f->stack_growth[id] : 0;
    out->trend = f && f->stack_trend && id < f->n_stack_growth ? (lh_trend_t)f->stack_trend[id]
                                                               : LH_TREND_NONE;
}

/* Growth per stack: the timeline's (timeline.h), over marks, else snapshots. */
static int
stack_growth(lh_funcs_t *f, const lh_collect_t *c, lh_err_t *err)
{
    size_t n = lh_collect_n_stacks(c);
    lh_growth_opts_t o = {LH_BOUND_AUTO, 1};
    lh_growth_t g;
    int rc = lh_timeline_growth(lh_collect_timeline(c), &o, &g, err);
    if (rc < 0) {
        return rc == LH_ENOMEM ? rc : 0; /* fewer than 2 points: no growth */
    }
    f->n_growth_points = (int)g.n_points;
    f->growth_is_snapshots = g.kind == LH_BOUND_SNAPSHOTS;
    f->stack_trend = calloc(n ? n : 1, sizeof *f->stack_trend);
    f->stack_growth = calloc(n ? n : 1, sizeof *f->stack_growth);
    rc = f->stack_trend && f->stack_growth ? 0 : lh_err_set(err, LH_ENOMEM, "out of memory");
    f->n_stack_growth = rc ? 0 : n;
    for (size_t i = 0; !rc && i < g.n_sites; i++) {
        const lh_growth_site_t *s = &g.sites[i];
        if (s->stack_id < n) {
            f->stack_growth[s->stack_id] = s->growing ? s->slope_bytes : 0;
            f->stack_trend[s->stack_id] = (uint8_t)s->trend.kind;
        }
    }
    lh_growth_fini(&g);
    return rc;
}

int
lh_funcs_build(lh_funcs_t *f, lh_collect_t *c, const lh_supp_t *supp, lh_err_t *err)
{
    size_t n = lh_collect_n_stacks(c), cap_v = 0;
    uint32_t *seen = NULL; /* per function: 1 + the last stack it was counted for */
    size_t cap_seen = 0;
    const char *exe = lh_trace_parts(lh_collect_trace(c))->info.exe;
    int rc;

    memset(f, 0, sizeof *f);
    if (rehash(f, 1024) < 0) {
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    if ((rc = stack_growth(f, c, err)) < 0) {
        goto fail;
    }
    for (uint32_t id = 0; id < n; id++) {
        const lh_cstack_t *s = lh_collect_stack(c, id);
        const lh_site_t *site;
        lh_fmetrics_t m;
        if (!s->n_allocs && !s->live_blocks) {
            continue;
        }
        if ((rc = lh_collect_site(c, id, &site, err)) < 0) {
            goto fail;
        }
        if (supp && lh_supp_match(supp, site->frames, site->n_frames) >= 0) {
            f->n_suppressed_stacks++;
            continue;
        }
        lh_funcs_stack_metrics(f, c, id, &m);
        add(&f->total, &m);
        f->n_stacks++;
        int script_seen = 0;
        for (size_t i = 0; i < site->n_frames; i++) {
            const lh_frame_t *fr = &site->frames[i];
            int script = fr->lang != LH_LANG_NATIVE;
            long k = intern(f, fr, script && !script_seen && at_call_site(site, i), exe,
                            &cap_v);
            script_seen |= script;
            if (k < 0) {
                rc = lh_err_set(err, LH_ENOMEM, "out of memory");
                goto fail;
            }
            if (lh_grow_zeroed(&seen, &cap_seen, (size_t)k + 1, sizeof *seen, cap_v) < 0) {
                rc = lh_err_set(err, LH_ENOMEM, "out of memory");
                goto fail;
            }
            if (seen[k] != id + 1) { /* recursion: once per stack */
                seen[k] = id + 1;
                add(&f->v[k].incl, &m);
            }
            if ((long)i == site->location) {
                add(&f->v[k].excl, &m);
            }
        }
    }
    free(seen);
    return 0;
fail:
    free(seen);
    lh_funcs_fini(f);
    return rc;
}

void
lh_funcs_fini(lh_funcs_t *f)
{
    LH_FREE_EACH(f->v, f->n, lh_func_t, name);
    free(f->hash);
    free(f->stack_growth);
    free(f->stack_trend);
    memset(f, 0, sizeof *f);
}

static int sort_inclusive;
static lh_metric_t sort_metric;

static int
cmp_func(const void *a, const void *b)
{
    const lh_func_t *x = a, *y = b;
    double vx = lh_fmetrics_value(sort_inclusive ? &x->incl : &x->excl, sort_metric);
    double vy = lh_fmetrics_value(sort_inclusive ? &y->incl : &y->excl, sort_metric);
    if (vx != vy) {
        return vx > vy ? -1 : 1;
    }
    return strcmp(x->name, y->name);
}

void
lh_funcs_sort(lh_funcs_t *f, int inclusive, lh_metric_t m)
{
    sort_inclusive = inclusive;
    sort_metric = m;
    lh_qsort(f->v, f->n, sizeof *f->v, cmp_func);
    rehash(f, f->hash_mask + 1);
}
