/* leakhound - SPDX-License-Identifier: MIT
 *
 * window.h: the reorder window of the trace reader (internal to analysis/).
 *
 * Decoded events wait here until a SYNC record says no earlier event can still come; then
 * they are sorted by (ts, frame seq, index in frame), a key unique per event, so the order
 * is the same as a stable sort's and does not depend on the sort algorithm. Each frame's
 * events arrive in order already, so the window is a few sorted runs (what is left from the
 * last release, then one per frame since): they are merged in place, rather than sorted
 * from scratch, and only where runs overlap are entries moved.
 */
#ifndef LH_WINDOW_H
#define LH_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

typedef struct lh_pending {
    lh_event_t ev; /* ev.label points at a malloc'd copy owned by the entry */
    uint64_t seq;
    uint64_t idx; /* order inside the frame */
} lh_pending_t;

typedef struct lh_window {
    lh_pending_t *v;
    size_t n;     /* entries in v */
    size_t cap;
    size_t pos;   /* next entry to deliver */
    size_t ready; /* entries [pos, ready) are sorted and may be delivered */
    size_t sorted; /* entries [pos, sorted) are in order (what the last release sorted) */
    lh_pending_t *tmp; /* merge buffer: the smaller side of a merge */
    size_t tmp_cap;
} lh_window_t;

void lh_window_init(lh_window_t *w);
void lh_window_fini(lh_window_t *w);

/* Appends a copy of ev (its label copied). Returns 0 or LH_ENOMEM. */
int lh_window_push(lh_window_t *w, const lh_event_t *ev, uint64_t seq, uint64_t idx);

/* lh_window_push in two steps, for a decoder that writes the event in place (no copy):
 * lh_window_room makes room for k more entries and returns the next (NULL when memory is
 * short); once its ev is filled, lh_window_commit appends it (its label copied; 0 or
 * LH_ENOMEM) and the entry after it, when room was made for it, is next. */
lh_pending_t *lh_window_room_slow(lh_window_t *w, size_t k);
int lh_window_commit_label(lh_window_t *w, uint64_t seq, uint64_t idx);

/* Inline: a call each was 24 instructions an event (callgrind, churn). */
static inline lh_pending_t *
lh_window_room(lh_window_t *w, size_t k)
{
    return w->n + k <= w->cap ? &w->v[w->n] : lh_window_room_slow(w, k);
}

static inline int
lh_window_commit(lh_window_t *w, uint64_t seq, uint64_t idx)
{
    lh_pending_t *p = &w->v[w->n];
    if (p->ev.label_len) {
        return lh_window_commit_label(w, seq, idx);
    }
    p->ev.label = NULL;
    p->seq = seq;
    p->idx = idx;
    w->n++;
    return 0;
}

/* Keeps the first n_pending undelivered entries and drops the rest (the events of a frame
 * that turned out corrupt). */
void lh_window_truncate(lh_window_t *w, size_t n_pending);

/* Makes the pending events stamped before ts ready (all of them when all is set), sorted.
 * Entries not yet delivered keep their place in the order. */
void lh_window_release(lh_window_t *w, uint64_t ts, int all);

/* Makes the oldest k pending events ready regardless of SYNC records (the fallback that
 * bounds memory when a trace has none). */
void lh_window_release_oldest(lh_window_t *w, size_t k);

/* Pops the next ready event into *ev. The label's ownership moves to *label (free() it);
 * Returns 1, or 0 when nothing is ready. */
static inline int
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

/* Events not yet delivered. */
static inline size_t
lh_window_pending(const lh_window_t *w)
{
    return w->n - w->pos;
}

#endif /* LH_WINDOW_H */
