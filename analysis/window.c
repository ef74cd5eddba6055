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

lh_pending_t *
lh_window_room_slow(lh_window_t *w, size_t k)
{
    if (w->n + k > w->cap && w->pos > 0) {
        /* Reuse the space of delivered entries before growing. */
        memmove(w->v, w->v + w->pos, (w->n - w->pos) * sizeof *w->v);
        w->n -= w->pos;
        w->ready -= w->pos;
        w->sorted -= w->pos;
        w->pos = 0;
    }
    if (lh_grow_to(&w->v, &w->cap, w->n + k, sizeof *w->v, 4096) < 0) {
        return NULL;
    }
    return &w->v[w->n];
}

int
lh_window_commit_label(lh_window_t *w, uint64_t seq, uint64_t idx)
{
    lh_pending_t *p = &w->v[w->n];
    char *label = malloc(p->ev.label_len);
    if (!label) {
        return LH_ENOMEM;
    }
    memcpy(label, p->ev.label, p->ev.label_len);
    p->ev.label = label;
    p->seq = seq;
    p->idx = idx;
    w->n++;
    return 0;
}

int
lh_window_push(lh_window_t *w, const lh_event_t *ev, uint64_t seq, uint64_t idx)
{
    lh_pending_t *p = lh_window_room(w, 1);
    if (!p) {
        return LH_ENOMEM;
    }
    p->ev = *ev;
    return lh_window_commit(w, seq, idx);
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

/* The first entry of v[lo, hi) (sorted) that key comes before (after: 1), or that does not
 * come before key (after: 0). */
static size_t
search(const lh_pending_t *v, size_t lo, size_t hi, const lh_pending_t *key, int after)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (after ? before(key, &v[mid]) : !before(&v[mid], key)) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return lo;
}

/* Merges the sorted neighbours v[a, m) and v[m, b) in place. The entries of the first run
 * that come before the second's first entry, and those of the second that come after the
 * first's last, are where they belong already: only the overlap between is moved, through
 * tmp (room for the smaller side). A frame's events usually overlap the window's last few
 * entries only (a ticker's record stamped inside another thread's frame), so this moves a
 * few entries where merging whole runs copied the window (100 bytes an event) each time. */
static void
merge_pair(lh_pending_t *v, size_t a, size_t m, size_t b, lh_pending_t *tmp)
{
    a = search(v, a, m, &v[m], 1);
    b = search(v, m, b, &v[m - 1], 0);
    if (a == m || b == m) {
        return;
    }
    if (m - a <= b - m) { /* the first side to tmp, merged forward */
        size_t na = m - a, i = 0, j = m, k = a;
        memcpy(tmp, v + a, na * sizeof *v);
        while (i < na && j < b) {
            v[k++] = before(&v[j], &tmp[i]) ? v[j++] : tmp[i++];
        }
        memcpy(v + k, tmp + i, (na - i) * sizeof *v);
    } else { /* the second side to tmp, merged backward */
        size_t nb = b - m, i = m, j = nb, k = b;
        memcpy(tmp, v + m, nb * sizeof *v);
        while (i > a && j > 0) {
            v[--k] = before(&tmp[j - 1], &v[i - 1]) ? v[--i] : tmp[--j];
        }
        memcpy(v + k - j, tmp, j * sizeof *v);
    }
}

/* Sorts v[0, n), whose prefix [0, sorted) is in order, by merging its sorted runs pairwise
 * in place (a natural merge sort). Returns 0, or -1 when it would not pay (too many runs)
 * or the merge buffer cannot be had: the caller sorts another way. */
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
    runs[nr] = w->n;
    /* tmp holds the smaller side of a merge: at most half of the entries. */
    size_t need = w->n / 2 + 1;
    if (w->tmp_cap < need) {
        lh_pending_t *t = realloc(w->tmp, need * sizeof *t);
        if (!t) {
            return -1;
        }
        w->tmp = t;
        w->tmp_cap = need;
    }
    while (nr > 1) {
        size_t out = 0;
        for (size_t r = 0; r < nr; r += 2) { /* runs[nr] is the end: n */
            runs[out++] = runs[r];
            if (r + 1 < nr) {
                merge_pair(w->v, runs[r], runs[r + 1], runs[r + 2], w->tmp);
            }
        }
        runs[out] = w->n;
        nr = out;
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
