/* leakhound - SPDX-License-Identifier: MIT
 *
 * event.h: one decoded trace event, as the trace reader delivers it in global time order,
 * and the figures (count, first and last time) of a stream of them.
 */
#ifndef LH_EVENT_H
#define LH_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

/* A REALLOC record is delivered as two events, both of type LH_REC_REALLOC with old_addr,
 * addr, size and stack_id set: first the free of the old block at the record's time (taken
 * before the real call), then the allocation of the new block at ts + dt_alloc (after it
 * returned). Each is ordered on its own, so another thread's reuse of the old address, or
 * its earlier free of the new one, cannot be ordered wrongly. */
enum lh_event_half {
    LH_HALF_NONE = 0,  /* not a REALLOC */
    LH_HALF_FREE = 1,  /* REALLOC: old_addr is freed now */
    LH_HALF_ALLOC = 2, /* REALLOC: addr is allocated now */
};

typedef struct lh_event {
    uint8_t type;       /* LH_REC_*: ALLOC, FREE, REALLOC, MARK, SNAPSHOT, RSS, TAG, THREAD,
                           THREAD_END, MODULE, MODULE_UNLOAD, EXEC */
    uint8_t kind;       /* ALLOC: LH_AK_*; SNAPSHOT: LH_SNAP_*; otherwise 0 */
    uint8_t half;       /* REALLOC: LH_HALF_FREE or LH_HALF_ALLOC */
    uint32_t tid;       /* thread whose frame held the record (THREAD*: the named thread) */
    uint32_t stack_id;  /* ALLOC, REALLOC: interned stack (0: none recorded) */
    uint64_t ts_ns;     /* CLOCK_MONOTONIC */
    uint64_t addr;      /* ALLOC, FREE, TAG: the block; REALLOC: the new block (0: freed);
                           SNAPSHOT: the snapshot number (0: not recorded) */
    uint64_t old_addr;  /* REALLOC: the old block (0: realloc(NULL, n)) */
    uint64_t size;      /* ALLOC, REALLOC: bytes; RSS: rss bytes; MODULE*: load bias;
                           SNAPSHOT: pause_ns */
    uint64_t epoch;     /* MODULE, MODULE_UNLOAD: module epoch; SNAPSHOT: contents mode
                           (LH_CONTENTS_*) */
    uint64_t sample_rate; /* ALLOC of a sampled trace: mean bytes between samples (the
                             block stands for 1 / (1 - exp(-size / rate)) allocations) */
    const char *label;  /* MARK, SNAPSHOT: label; TAG: type; THREAD: name; MODULE*, EXEC:
                           path. Not NUL-terminated; valid until the next lh_trace_next() */
    size_t label_len;
    const char *file;   /* SNAPSHOT: the contents file's name (in the trace's directory),
                           NUL-terminated, owned by the trace until lh_trace_close; NULL when
                           the snapshot has none */
} lh_event_t;

/* Counts ev into the figures of a stream of events: *n_events (a REALLOC's two halves
 * once), *first_ts_ns (the first event's time; *seen is set then) and *last_ts_ns (the
 * latest time). The trace reader and the heap model each keep them. */
static inline void
lh_event_count(const lh_event_t *ev, int *seen, uint64_t *n_events, uint64_t *first_ts_ns,
               uint64_t *last_ts_ns)
{
    if (!*seen) {
        *seen = 1;
        *first_ts_ns = ev->ts_ns;
    }
    if (ev->ts_ns > *last_ts_ns) {
        *last_ts_ns = ev->ts_ns;
    }
    if (ev->half != LH_HALF_ALLOC) {
        (*n_events)++;
    }
}

#endif /* LH_EVENT_H */
