/* leakhound - SPDX-License-Identifier: MIT
 *
 * window.c: the reorder window.
 */
#include "window.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

#include "bound.h"
#include "err.h"

void
lh_window_init(lh_window_t *w)
{
    memset(w, 0, sizeof *w);
}

void
lh_window_fini(lh_window_t *w)
{
    lh_window_truncate(w, 0);
    free(w->v);
    free(w->tmp);
    lh_window_init(w);
}

int
lh_window_push(lh_window_t *w, const lh_event_t *ev, uint64_t seq, uint64_t idx)
{
    char *label = NULL;
    if (w->n == w->cap && w->pos > 0) {
        /* Reuse the space of delivered entries before growing. */
        memmove(w->v, w->v + w->pos, (w->n - w->pos) * sizeof *w->v);
        w->n -= w->pos;
        w->ready -= w->pos;
        w->sorted -= w->pos;
        w->pos = 0;
    }
    if (lh_grow(&w->v, &w->cap, w->n, sizeof *w->v, 4096) < 0) {
        return LH_ENOMEM;
    }
    if (ev->label_len) {
        label = malloc(ev->label_len);
        if (!label) {
            return LH_ENOMEM;
        }
        memcpy(label, ev->label, ev->label_len);
    }
    lh_pending_t *p = &w->v[w->n++];
    p->ev = *ev;
    p->ev.label = label;
    p->seq = seq;
    p->idx = idx;
    return 0;
}

void
lh_window_truncate(lh_window_t *w, size_t n_pending)
{
    size_t n = w->pos + n_pending;
    while (w->n > n) {
        free((char *)w->v[--w->n].ev.label);
    }
    if (w->ready > w->n) {
        w->ready = w->n;
    }
    if (w->sorted > w->n) {
        w->sorted = w->n;
    }
}

static int
cmp_pending(const void *a, const void *b)
{
    const lh_pending_t *x = a, *y = b;
    if (x->ev.ts_ns != y->ev.ts_ns) {
        return x->ev.ts_ns < y->ev.ts_ns ? -1 : 1;
    }
    if (x->seq != y->seq) {
        return x->seq < y->seq ? -1 : 1;
    }
    if (x->idx != y->idx) {
        return x->idx < y->idx ? -1 : 1;
    }
    return 0;
}

static inline int
before(const lh_pending_t *x, const lh_pending_t *y)
{
    if (x->ev.ts_ns != y->ev.ts_ns) {
        return x->ev.ts_ns < y->ev.ts_ns;
    }
    if (x->seq != y->seq) {
        return x->seq < y->seq;
    }
    return x->idx < y->idx;
}

#define MAX_RUNS 512

/* Sorts v[0, n), whose prefix [0, sorted) is in order, by merging its sorted runs pairwise
 * (a natural merge sort). Returns 0, or -1 when it would not pay (too many runs) or the
 * merge buffer cannot be had: the caller sorts another way. */
static int
merge_runs(lh_window_t *w)
{
    size_t runs[MAX_RUNS + 1];
    size_t nr = 0;
    runs[nr++] = 0;
    for (size_t i = w->sorted > 1 ? w->sorted : 1; i < w->n; i++) {
        if (before(&w->v[i], &w->v[i - 1])) {
            if (nr == MAX_RUNS) {
                return -1;
            }
            runs[nr++] = i;
        }
    }
    if (nr == 1) {
        return 0;
    }
    if (w->tmp_cap != w->cap) { /* the same size as v: the two may swap places */
        lh_pending_t *t = realloc(w->tmp, w->cap * sizeof *t);
        if (!t) {
            return -1;
        }
        w->tmp = t;
        w->tmp_cap = w->cap;
    }
    runs[nr] = w->n;
    lh_pending_t *src = w->v, *dst = w->tmp;
    while (nr > 1) {
        size_t out = 0;
        for (size_t r = 0; r < nr; r += 2) { /* runs[nr] is the end: n */
            size_t a = runs[r], am = runs[r + 1];
            size_t k = a;
            runs[out++] = a;
            if (r + 1 == nr) { /* an odd run out: copied as is */
                memcpy(dst + a, src + a, (am - a) * sizeof *src);
                continue;
            }
            size_t b = am, bm = runs[r + 2];
            while (a < am && b < bm) {
                dst[k++] = before(&src[b], &src[a]) ? src[b++] : src[a++];
            }
            memcpy(dst + k, src + a, (am - a) * sizeof *src);
            k += am - a;
            memcpy(dst + k, src + b, (bm - b) * sizeof *src);
        }
        runs[out] = w->n;
        nr = out;
        lh_pending_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != w->v) { /* the result is in the merge buffer: swap the two arrays */
        w->tmp = w->v;
        w->v = src;
    }
    return 0;
}

/* Moves the undelivered entries to the front and sorts them. */
static void
compact_sort(lh_window_t *w)
{
    if (w->pos) {
        memmove(w->v, w->v + w->pos, (w->n - w->pos) * sizeof *w->v);
        w->n -= w->pos;
        w->sorted = w->sorted > w->pos ? w->sorted - w->pos : 0;
        w->pos = 0;
    }
    if (w->n > 1 && merge_runs(w) != 0) {
        lh_qsort(w->v, w->n, sizeof *w->v, cmp_pending);
    }
    w->sorted = w->n;
}

void
lh_window_release(lh_window_t *w, uint64_t ts, int all)
{
    compact_sort(w);
    if (all) {
        w->ready = w->n;
        return;
    }
    /* Binary search for the first entry stamped at or after ts. */
    w->ready = LH_LOWER(w->v, w->n, lh_pending_t, ev.ts_ns, ts);
}

void
lh_window_release_oldest(lh_window_t *w, size_t k)
{
    compact_sort(w);
    w->ready = k < w->n ? k : w->n;
}

int
lh_window_pop(lh_window_t *w, lh_event_t *ev, char **label)
{
    if (w->pos >= w->ready) {
        return 0;
    }
    lh_pending_t *p = &w->v[w->pos++];
    *ev = p->ev;
    *label = (char *)p->ev.label;
    p->ev.label = NULL;
    return 1;
}
