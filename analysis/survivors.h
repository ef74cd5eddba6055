/* leakhound - SPDX-License-Identifier: MIT
 *
 * survivors.h: growth without boundaries. A server run under `leakhound run`, loaded, then
 * stopped has no marks and no snapshots taken while it ran, so the growth model
 * (growth.h) has no points to compare. What the trace does have is when every block still
 * live at the end was allocated. Sliced by the program's own activity, that says what each
 * part of the run left behind for good: a leak leaves blocks in every slice of the work, a
 * start-up table in the first one, a bounded cache only until it is full.
 *
 * The slices are equal shares of the run's allocations (ALLOC and REALLOC events), not of
 * its time, so that a server idle before it was stopped (or waiting for its load to start)
 * is not read as one that stopped growing. Point p (p = 0 .. LH_SURV_SLICES) is the moment
 * the p-th share had been made; a site's series is the bytes (and blocks) of its surviving
 * blocks allocated at or before each point: it only rises, and the growth model classifies
 * it as for marks (docs/GROWTH.md, "Without marks or snapshots"). A block moved or grown by
 * realloc is one block of the site that created it (replay.h), counted when it took its
 * final size (its last realloc).
 *
 * A leak keeps a steady share of what its site allocates; a bounded cache or queue keeps
 * only its newest entries, so its survivors, too, rise at the end of every run. The two are
 * told apart by the share the site kept of what it allocated in each of the run's last
 * LH_SURV_EPOCHS "epochs" (epoch E: allocations 2^E .. 2^(E+1) - 1, so the last four cover
 * the last 15/16 of the run): a site whose series grows but which, in an earlier one of
 * those epochs, kept less than a quarter of the share it kept in the last (both with 8
 * allocations or more) is a structure that recycles its entries: SATURATED, not growth.
 *
 * Use: lh_activity_event as a consumer of the one pass (stream.h), then, with the replay at
 * the end of the pass, lh_activity_growth; lh_activity_fini. Memory: at most
 * 2 * LH_ACTIVITY_CHECKPOINTS checkpoints whatever the length of the run, 40 bytes per
 * stack, and the series of the surviving sites.
 */
#ifndef LH_SURVIVORS_H
#define LH_SURVIVORS_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "event.h"
#include "replay.h"
#include "timeline.h"

#define LH_SURV_SLICES 20
#define LH_ACTIVITY_CHECKPOINTS 256
#define LH_SURV_EPOCHS 4

typedef struct lh_activity {
    /* The time and live heap at every `every`-th allocation (thinned to every other one,
     * `every` doubled, when 2 * LH_ACTIVITY_CHECKPOINTS are kept). */
    struct lh_activity_cp {
        uint64_t ts_ns, heap_bytes, heap_blocks;
    } cp[2 * LH_ACTIVITY_CHECKPOINTS];
    size_t n_cp;
    uint64_t every;
    uint64_t next;                    /* allocation count of the next checkpoint */
    uint64_t since_ns;                /* a fork child's inherited heap comes before: not its
                                         activity (events before this are not counted) */
    int since_set;
    uint64_t n_allocs;                /* ALLOC and REALLOC events counted */
    /* Epoch E holds allocations 2^E .. 2^(E+1) - 1 (counted from 1); when each began. */
    uint64_t epoch_ts[64];
    unsigned epoch;                   /* epochs begun */
    struct lh_activity_site {         /* per stack id: its allocations in its last epochs */
        uint64_t made[LH_SURV_EPOCHS]; /* made[k]: in epoch `epoch` - k */
        unsigned epoch;
    } *site;
    size_t cap_site;
    int oom;                          /* a per-stack table could not grow: no recycle test */
    lh_boundary_t bounds[LH_SURV_SLICES + 1]; /* the points, after lh_activity_growth */
    char labels[LH_SURV_SLICES + 1][8];
} lh_activity_t;

void lh_activity_init(lh_activity_t *a);
void lh_activity_fini(lh_activity_t *a);

/* Consumer (stream.h): notes the checkpoints and the epochs; in a fork child seeded with its
 * inherited heap (trace.h), from the fork on: the inherited blocks still live fall in the
 * first share, with the child's start-up. Returns 0 (out of memory for
 * the per-stack table only turns the recycle test off). */
int lh_activity_event(void *a, const lh_trace_t *t, const lh_replay_t *r, const lh_event_t *ev,
                      lh_err_t *err);

/* The growth of the blocks live in r (the end of the pass) over the run's activity slices,
 * in g as lh_timeline_growth fills it (kind LH_BOUND_ACTIVITY, bounds owned by a): the
 * growing sites by slope, or every surviving site with o->every_site. LH_EINVAL (why
 * LH_WHY_NO_POINTS) when the run allocated too little to slice; LH_ENOMEM. */
int lh_activity_growth(lh_activity_t *a, const lh_replay_t *r, const lh_growth_opts_t *o,
                       lh_growth_t *g, lh_err_t *err);

#endif /* LH_SURVIVORS_H */
