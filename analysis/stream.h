/* leakhound - SPDX-License-Identifier: MIT
 *
 * stream.h: the one pass over a trace. lh_stream_run() opens the trace (trace.h: frames
 * decompressed ahead by the prefetcher), applies every event to one heap model (replay.h)
 * and then hands it to each registered consumer in order: the timeline (timeline.h), the
 * collector (collect.h), the event history (history.h), a command's own hook. Consumers
 * therefore never apply an event themselves, and any set of them can share one pass.
 *
 * Errors are the reader's (a truncated or corrupt trace: LH_ETRUNC, LH_EFORMAT, with the
 * reader's message; the caller knows which option reads past them) or a consumer's.
 */
#ifndef LH_STREAM_H
#define LH_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "event.h"
#include "replay.h"
#include "trace.h"

typedef struct lh_consumer {
    /* Called with each event after r applied it. Returns 0, 1 to end the pass early (the
     * events after this one are not read), or a negative LH_E* code that stops it. */
    int (*event)(void *ctx, const lh_trace_t *t, const lh_replay_t *r, const lh_event_t *ev,
                 lh_err_t *err);
    void *ctx;
    /* 1: event does nothing with ALLOC, REALLOC and FREE events (most of a trace: a
     * python3 trace's 600k), so the stream does not call it for them; 0: every event. */
    int skip_heap;
} lh_consumer_t;

typedef struct lh_stream_opts {
    int salvage;                    /* accept a truncated or corrupt tail (trace.h) */
    const lh_consumer_t *consumers; /* in the order they see each event */
    size_t n_consumers;
    /* Called about every 64k events and at the end with the bytes of the file read so far
     * and its size (may be NULL): progress bars. */
    void (*on_progress)(void *ctx, uint64_t done_bytes, uint64_t total_bytes);
    void *progress_ctx;
} lh_stream_opts_t;

/* Opens path and streams its events through the replay to the consumers. On success (0)
 * the trace and the replay, past the last event read, are the caller's (lh_trace_close,
 * lh_replay_free); on failure nothing is left open and *t, *r are NULL. With r NULL the
 * events are read but not replayed, and there must be no consumers: what is wanted is the
 * trace's tables (modules, stacks, info, end) complete, as the shell's index needs them. */
int lh_stream_run(const char *path, const lh_stream_opts_t *o, lh_trace_t **t, lh_replay_t **r,
                  lh_err_t *err);

#endif /* LH_STREAM_H */
