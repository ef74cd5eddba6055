/* leakhound - SPDX-License-Identifier: MIT
 *
 * collect.h: a consumer of the one pass over a trace (stream.h) that keeps what the
 * pictures, the per-function attribution, the call trees and the exports need, and nothing per event:
 *
 *   - per stack: allocations and bytes allocated, live blocks and bytes at the end, and
 *     live blocks and bytes at the moment of the global heap peak (the first time the
 *     maximum was reached, as replay.h counts it);
 *   - the heap over time in columns of equal width (the evolution chart): each column keeps
 *     the stacks whose live bytes changed in it, with their values at its end, and the
 *     total heap; the width starts at 1 ms and doubles (merging pairs of columns) so that
 *     there are never more than 2 x opts.n_columns of them;
 *   - through the timeline it feeds in the same pass (timeline.h, series on): the
 *     boundaries (MARK and SNAPSHOT records), per-stack live bytes at any of them, growth;
 *   - RSS samples.
 *
 * Peak per stack without a second pass: a stack's value at the latest peak is saved lazily,
 * the first time the stack changes after that peak (a generation counter per stack); a
 * stack that never changed since holds it still. Memory is bounded by the stacks, the live
 * blocks (in the replay), and the stacks that change per column or boundary.
 *
 * Afterwards, lh_collect_site() symbolizes stacks on demand (cached): frames with the
 * agent's dropped and the site location (report.h's rule). Not thread-safe.
 */
#ifndef LH_COLLECT_H
#define LH_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include "boundary.h"
#include "err.h"
#include "event.h"
#include "growth.h"
#include "replay.h"
#include "report.h"
#include "stream.h"
#include "symbolize.h"
#include "timeline.h"
#include "trace.h"

typedef struct lh_collect lh_collect_t;

typedef struct lh_collect_opts {
    int salvage;          /* accept a truncated or corrupt tail (trace.h) */
    size_t n_columns;     /* target number of time columns (at most 2x); 0: none */
    /* Called for every event after it was applied (may be NULL): for exports that want
     * the events themselves. A negative return stops the pass with that error. */
    int (*on_event)(void *ctx, const lh_event_t *ev, lh_err_t *err);
    void *event_ctx;
    /* Called about every 64k events and at the end with the bytes of the file read so far
     * and its size (may be NULL): progress bars. */
    void (*on_progress)(void *ctx, uint64_t done_bytes, uint64_t total_bytes);
    void *progress_ctx;
} lh_collect_opts_t;

typedef struct lh_cstack {
    uint64_t n_allocs;
    uint64_t alloc_bytes;
    uint64_t live_blocks; /* at the end: leaked */
    uint64_t live_bytes;
    uint64_t peak_blocks; /* at the global heap peak */
    uint64_t peak_bytes;
} lh_cstack_t;

typedef struct lh_ccolumn {
    uint64_t end_ns;      /* the column covers [end_ns - width, end_ns) */
    uint64_t heap_bytes;  /* live heap at its end */
} lh_ccolumn_t;

typedef struct lh_rss_sample {
    uint64_t ts_ns;
    uint64_t rss_bytes;
} lh_rss_sample_t;

/* Runs the one pass over path (stream.h) with the collector as its consumer and closes
 * nothing: the trace, replay and symbolizer stay available until lh_collect_free. Returns
 * 0, or a negative LH_E* code (message in err; LH_ETRUNC, LH_EFORMAT: the trace's tail is
 * truncated or corrupt, and opts.salvage would read the events before it). */
int lh_collect_run(const char *path, const lh_collect_opts_t *opts, lh_collect_t **out,
                   lh_err_t *err);
void lh_collect_free(lh_collect_t *c);

const lh_trace_t *lh_collect_trace(const lh_collect_t *c);
const lh_replay_t *lh_collect_replay(const lh_collect_t *c);
lh_symbolizer_t *lh_collect_symbolizer(lh_collect_t *c);
/* Agent start (INFO_CLOCK), else the first event; and the end (END, else the last event). */
uint64_t lh_collect_start_ns(const lh_collect_t *c);
uint64_t lh_collect_end_ns(const lh_collect_t *c);

/* Stack ids run from 0 to lh_collect_n_stacks() - 1; unseen ids are all zero. */
size_t lh_collect_n_stacks(const lh_collect_t *c);
const lh_cstack_t *lh_collect_stack(const lh_collect_t *c, uint32_t id);

/* The symbolized site of stack id (stats filled from the replay), cached. Returns 0 with
 * *out pointing into the collector, or LH_ENOMEM. */
int lh_collect_site(lh_collect_t *c, uint32_t id, const lh_site_t **out, lh_err_t *err);

/* The timeline the same pass fed (series on): the boundaries (lh_timeline_all_bounds: both
 * kinds in time order), every stack's live set at each (lh_timeline_at), per-site series,
 * growth and trends (timeline.h) for the pictures, the attribution and the exports. */
const lh_timeline_t *lh_collect_timeline(const lh_collect_t *c);

size_t lh_collect_n_columns(const lh_collect_t *c);
const lh_ccolumn_t *lh_collect_column(const lh_collect_t *c, size_t i);
/* Live bytes of the n stacks ids[] at the end of every column: out[col * n + k]
 * (lh_collect_n_columns() x n entries). Also, when max_bytes is not NULL, each stack's
 * maximum over the columns, for all stacks (lh_collect_n_stacks() entries). Returns 0. */
int lh_collect_columns(const lh_collect_t *c, const uint32_t *ids, size_t n, uint64_t *out,
                       uint64_t *max_bytes);

size_t lh_collect_n_rss(const lh_collect_t *c);
const lh_rss_sample_t *lh_collect_rss(const lh_collect_t *c);

#endif /* LH_COLLECT_H */
