/* leakhound - SPDX-License-Identifier: MIT
 *
 * window.c: the reorder window.
 */
#include "window.h"

#include <stdlib.h>
#include <string.h>

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
        w->pos = 0;
    }
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 4096;
        lh_pending_t *v = realloc(w->v, cap * sizeof *v);
        if (!v) {
            return LH_ENOMEM;
        }
        w->v = v;
        w->cap = cap;
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

/* Moves the undelivered entries to the front and sorts them. */
static void
compact_sort(lh_window_t *w)
{
    if (w->pos) {
        memmove(w->v, w->v + w->pos, (w->n - w->pos) * sizeof *w->v);
        w->n -= w->pos;
        w->pos = 0;
    }
    if (w->n > 1) {
        lh_qsort(w->v, w->n, sizeof *w->v, cmp_pending);
    }
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
    size_t lo = 0, hi = w->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->v[mid].ev.ts_ns < ts) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    w->ready = lo;
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
