/* leakhound - SPDX-License-Identifier: MIT
 *
 * timeline.h: the heap over time, in one streaming pass: the boundaries of the run (MARK
 * and SNAPSHOT records), each site's live blocks and bytes at every boundary, the
 * differential leak report, short-lived ("temporary") allocations, and RSS against heap.
 *
 * A timeline is a consumer of the one pass (stream.h): it sees each event after the replay
 * applied it and learns, from lh_replay_freed(), which blocks each free ended. Memory is
 * bounded by the live blocks plus, per site, what the enabled analyses keep:
 *   - series (growth, counts): one entry per site and boundary at which the site's live
 *     blocks or bytes differ from the previous boundary (a site that does nothing, or churns
 *     back to the same live set every interval, costs nothing);
 *   - differential leaks: the blocks freed after the `to` boundary that were born before
 *     it (at most the blocks live at that boundary); per-interval arrays are built at the
 *     end, and only for sites that leaked;
 *   - temporary: three counters per site.
 * Nothing is kept per event or per block and interval.
 *
 * Boundaries (boundary.h): marks and snapshots, kept per kind. Interval i of a kind lies
 * between its boundaries i and i + 1; a block belongs to the interval in which it was
 * allocated (time stamp t with b[i].ts <= t < b[i+1].ts). Blocks allocated before the first boundary or
 * after the last one belong to no interval.
 *
 * Boundary specs (the range's start and end) are resolved among the boundaries of the
 * kind, by boundary.h's one rule.
 *
 * Differential leaks (lh_timeline_diff). A block born in interval i that is still live at
 * every later boundary up to `to` leaks in interval i. Liveness is one unbroken span, so
 * that is the same as: born in [b[i], b[i+1]) and live at b[to]. Per site: blocks and bytes
 * per interval, the intervals in which it leaked, and
 *     score = leaked bytes x (leaked intervals / intervals)
 * which ranks a site that leaks a little in every interval above one that leaked a lot
 * once (start-up, a cache filling). By default the kind is snapshots when the trace has
 * any taken while running (exit snapshots do not count: they come after shutdown frees
 * everything), else marks; `to` is the last boundary that is not an exit snapshot (when a
 * single snapshot was taken while running, the exit snapshot: there is no other interval),
 * moved back to the end of the main work when the points after it are teardown
 * (lh_bound_main_end: to_before_teardown says so; the pass follows both candidates, so this
 * costs no second pass), `from` the first boundary, and the first `skip` intervals of the
 * range are start-up noise.
 *
 * Growth (lh_timeline_growth). Per site, the live blocks and bytes at each boundary
 * (marks by default, else running snapshots) up to the end of the main work (growth.h:
 * lh_trend_main_end, so that snapshots taken in teardown do not hide a leak), the
 * least-squares slope per boundary, in how many intervals its live bytes went up, and its
 * class in the one growth model (growth.h): growing, step, saturated, peak or flat. A site
 * is *growing* when that model says so.
 *
 * Not thread-safe.
 */
#ifndef LH_TIMELINE_H
#define LH_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "boundary.h"
#include "err.h"
#include "event.h"
#include "growth.h"
#include "replay.h"
#include "stream.h"

typedef struct lh_timeline lh_timeline_t;

/* What a pass records; everything off by default. */
typedef struct lh_timeline_opts {
    int series;              /* per-site live blocks/bytes at each boundary */
    /* With series, for a caller that asks only for lh_timeline_growth over marks or
     * snapshots (the plain report's ranking, which ignores the survivors' growth): no
     * survivors' activity, and no per-event work before the first boundary, which takes
     * every site live there. The growth is the same; lh_timeline_n_sites may be smaller. */
    int points_only;
    int diff;                /* differential leaks */
    const char *diff_to;     /* diff: the end spec (boundary.h), NULL for the default */
    int temporary;           /* count blocks freed within temp_threshold_ns */
    uint64_t temp_threshold_ns;
    int temp_immediate;      /* temporary: instead, blocks freed by their thread's next call
                                to the allocator (heaptrack's rule; the time does not count) */
} lh_timeline_opts_t;

/* RSS against heap, from the first and the last RSS sample. */
typedef struct lh_rss_cmp {
    uint64_t n_samples;
    uint64_t first_ts_ns, first_rss, first_heap;
    uint64_t last_ts_ns, last_rss, last_heap;
} lh_rss_cmp_t;

/* Feeds one event to c: RSS samples are compared with heap_bytes, the live heap at that
 * point. Other events are ignored. */
void lh_rss_cmp_event(lh_rss_cmp_t *c, const lh_event_t *ev, uint64_t heap_bytes);
/* 1 when RSS grew by much more than the heap explains: the difference is over 4 MiB and
 * over twice the heap's growth (first to last sample). */
int lh_rss_cmp_suspicious(const lh_rss_cmp_t *c);

/* opts may be NULL (boundaries and RSS only). Returns 0 or LH_ENOMEM. */
int lh_timeline_new(const lh_timeline_opts_t *opts, lh_timeline_t **out, lh_err_t *err);
void lh_timeline_free(lh_timeline_t *tl);

/* Records what the timeline needs of ev, which r has just applied (lh_replay_event). Feed
 * every event of the trace in order. Returns 0 or LH_ENOMEM. */
int lh_timeline_event(lh_timeline_t *tl, const lh_replay_t *r, const lh_event_t *ev,
                      lh_err_t *err);
/* The timeline as a consumer of the one pass (stream.h). */
lh_consumer_t lh_timeline_consumer(lh_timeline_t *tl);

/* Boundaries of one kind, in time order (exit snapshots included). */
const lh_boundary_t *lh_timeline_bounds(const lh_timeline_t *tl, lh_bound_kind_t kind,
                                        size_t *n);
/* Both kinds in time order (each one's global is its index): lh_bound_find resolves a spec
 * among all of them. */
const lh_boundary_t *lh_timeline_all_bounds(const lh_timeline_t *tl, size_t *n);
const lh_rss_cmp_t *lh_timeline_rss(const lh_timeline_t *tl);


/* ---------------------------------------------------------------------------------------
 * Differential leaks
 * ------------------------------------------------------------------------------------- */
typedef struct lh_diff_site {
    uint32_t stack_id;
    uint64_t *blocks;          /* per counted interval (n_intervals) */
    uint64_t *bytes;
    uint64_t total_blocks, total_bytes;
    size_t leaked_intervals;   /* intervals with at least one leaked block */
    double share;              /* leaked_intervals / n_intervals */
    double score;              /* total_bytes * share */
    lh_trend_t trend;          /* the site's class in the growth model (lh_diff_trends) */
} lh_diff_site_t;

typedef struct lh_diff {
    lh_bound_kind_t kind;
    const lh_boundary_t *bounds; /* of that kind; owned by the timeline */
    size_t n_bounds;
    size_t from, to;           /* boundary indices of the range */
    size_t skip;               /* intervals skipped at the start of the range */
    size_t first;              /* first counted interval: from + skip */
    size_t n_intervals;        /* counted: to - first */
    uint64_t n_marks;          /* marks from b[first] (inclusive) to b[to] (exclusive) */
    lh_diff_site_t *sites;     /* every site that leaked, by score, descending */
    size_t n_sites;
    uint64_t total_blocks, total_bytes;
    int to_before_teardown;    /* `to` is the default moved before teardown (growth.h) */
    size_t n_last;             /* then: the index of the last boundary, exit ones left out */
    lh_bound_why_t why;        /* after LH_EINVAL: the reason, for the caller's advice */
} lh_diff_t;

typedef struct lh_diff_opts {
    lh_bound_kind_t kind;      /* LH_BOUND_AUTO: see above */
    const char *from;          /* spec, NULL: the first boundary */
    long skip;                 /* intervals to skip; < 0: the default (1, or 0 with from) */
} lh_diff_opts_t;

/* Builds the differential report after the last event. The end spec is the one given in
 * the timeline's options. Returns 0; LH_EINVAL with a one-line message (and out->why) when
 * the trace has no boundaries, a spec names no boundary (the message lists the labels), the
 * range is empty or the skip leaves no interval; LH_ENOMEM. Release with lh_diff_fini. */
int lh_timeline_diff(const lh_timeline_t *tl, const lh_replay_t *r, const lh_diff_opts_t *o,
                     lh_diff_t *out, lh_err_t *err);
void lh_diff_fini(lh_diff_t *d);
/* Sets each site's trend from the growth model over the diff's kind (needs opts.series).
 * Returns 0, or LH_ENOMEM. */
int lh_diff_trends(const lh_timeline_t *tl, lh_diff_t *d, lh_err_t *err);

/* ---------------------------------------------------------------------------------------
 * Growth and counts (needs opts.series)
 * ------------------------------------------------------------------------------------- */
typedef struct lh_growth_site {
    uint32_t stack_id;
    uint64_t *blocks;          /* live at each boundary (n_points) */
    uint64_t *bytes;
    double slope_bytes;        /* least squares, per boundary */
    double slope_blocks;
    size_t grew_intervals;     /* intervals in which live bytes went up */
    size_t intervals;          /* n_points - 1 */
    uint64_t gained_bytes;     /* sum of the increases */
    lh_trend_stats_t trend;    /* the growth model's class and statistics */
    int growing;               /* trend.kind == LH_TREND_GROWING */
} lh_growth_site_t;

typedef struct lh_growth {
    lh_bound_kind_t kind;
    const lh_boundary_t *bounds; /* the points; owned by the timeline */
    size_t n_points;           /* up to the end of the main work */
    size_t n_all_points;       /* of the kind, exit snapshots left out */
    lh_growth_site_t *sites;   /* growing sites by slope_bytes, descending (all sites with
                                  every_site) */
    size_t n_sites;
    size_t n_growing;
    size_t n_trend[5];         /* active sites per lh_trend_t */
    size_t n_active;           /* sites live at some point */
    lh_bound_why_t why;        /* after LH_EINVAL: the reason, for the caller's advice */
} lh_growth_t;

typedef struct lh_growth_opts {
    lh_bound_kind_t kind;      /* LH_BOUND_AUTO: marks if any, else running snapshots */
    int every_site;            /* keep every site live at some point, growing or not (for
                                  counts); growing ones first */
} lh_growth_opts_t;

/* Returns 0; LH_EINVAL when there are fewer than 2 points; LH_ENOMEM. */
int lh_timeline_growth(const lh_timeline_t *tl, const lh_growth_opts_t *o, lh_growth_t *out,
                       lh_err_t *err);
void lh_growth_fini(lh_growth_t *g);

/* Removes the sites for which drop(ctx, stack id) says 1 (a suppressed site), with their
 * part of the counts. Returns 0, or drop's negative error. */
int lh_growth_filter(lh_growth_t *g, int (*drop)(void *ctx, uint32_t id, lh_err_t *err),
                     void *ctx, lh_err_t *err);
/* The growth class (lh_trend_t) of every site over a kind: lh_timeline_n_sites() entries,
 * freed by the caller; NULL with *rc 0 when there are fewer than 2 points, or with *rc
 * LH_ENOMEM. */
uint8_t *lh_timeline_trend_map(const lh_timeline_t *tl, lh_bound_kind_t kind, int *rc,
                               lh_err_t *err);

/* Counts site s (its statistics filled, n points) in g, and appends a copy of it (its own
 * series) when it grows or every_site; *cap is g->sites' capacity. Returns 0, or -1 out of
 * memory (g keeps what it had). The one way timeline and survivors (survivors.h) fill a
 * growth listing. */
int lh_growth_add(lh_growth_t *g, size_t *cap, const lh_growth_site_t *s, size_t n,
                  int every_site);
/* Puts g's sites in listing order: growing first, then by slope_bytes, descending, then by
 * stack id. */
void lh_growth_sort(lh_growth_t *g);

/* Fills the growth statistics of s from its series (exposed for the unit tests). */
void lh_growth_site_stats(lh_growth_site_t *s, size_t n_points);

/* ---------------------------------------------------------------------------------------
 * Counts (needs opts.series): live blocks per group of sites at each boundary
 * ------------------------------------------------------------------------------------- */
typedef struct lh_count_group {
    size_t group;              /* the group's index (the stack id when grouping by site) */
    uint64_t *counts;          /* live blocks at each point (n_points) */
    uint64_t final;            /* at the last point */
    uint64_t final_bytes;
    uint64_t max;              /* sum of the member sites' peaks (orders ties) */
    size_t n_sites;            /* member sites live at some point */
    uint32_t first_stack;      /* the member site with the smallest id */
    lh_trend_t trend;          /* grouped by site: its growth class (lh_counts_trends) */
} lh_count_group_t;

typedef struct lh_counts {
    lh_bound_kind_t kind;
    const lh_boundary_t *bounds; /* the points; owned by the timeline */
    size_t n_points;
    lh_count_group_t *groups;  /* by final count, descending; series for the first n_shown */
    size_t n_groups;
    size_t n_shown;
    lh_bound_why_t why;        /* after LH_EINVAL: the reason, for the caller's advice */
} lh_counts_t;

/* Stack ids run below lh_timeline_n_sites(); active ones had live blocks at some point. */
size_t lh_timeline_n_sites(const lh_timeline_t *tl);
int lh_timeline_site_active(const lh_timeline_t *tl, uint32_t id);

/* Groups sites: group_of[stack id] is the group (< n_groups) of each id below
 * lh_timeline_n_sites(), or NULL to group by site (stack id). Ranks groups by their live
 * blocks at the last point and keeps the series of the first top (0: all). Returns 0,
 * LH_EINVAL (fewer than 2 points), LH_ENOMEM. */
int lh_timeline_counts(const lh_timeline_t *tl, lh_bound_kind_t kind, const uint32_t *group_of,
                       size_t n_groups, size_t top, lh_counts_t *out, lh_err_t *err);
void lh_counts_fini(lh_counts_t *c);
/* For counts grouped by site (group = stack id): sets each group's trend from the growth
 * model over the counts' kind. Returns 0 or LH_ENOMEM. */
int lh_counts_trends(const lh_timeline_t *tl, lh_counts_t *c, lh_err_t *err);

/* Live bytes and blocks of the sites below n at the boundary with global index g (arrays of n
 * entries, overwritten; a binary search per site). Returns 0, or LH_EINVAL (no such
 * boundary, or no series). */
int lh_timeline_at(const lh_timeline_t *tl, size_t g, size_t n, uint64_t *bytes,
                   uint64_t *blocks);

/* ---------------------------------------------------------------------------------------
 * Temporary allocations (needs opts.temporary)
 * ------------------------------------------------------------------------------------- */
typedef struct lh_temp_site {
    uint32_t stack_id;
    uint64_t n_temp;           /* blocks freed (free, not realloc) within the threshold, or
                                  with temp_immediate, freed (free) by the thread that
                                  allocated them (malloc, calloc, ... or realloc's new block)
                                  with no allocation, free or realloc of its in between */
    uint64_t temp_bytes;
    uint64_t n_allocs;         /* all blocks of the site */
    uint64_t lifetime_ns;      /* sum of the temporary blocks' lifetimes */
} lh_temp_site_t;

typedef struct lh_temp {
    uint64_t threshold_ns;
    int immediate;             /* opts.temp_immediate: threshold_ns does not apply */
    lh_temp_site_t *sites;     /* sites with temporaries, by n_temp, descending */
    size_t n_sites;
    uint64_t n_temp, temp_bytes, n_allocs;
} lh_temp_t;

int lh_timeline_temporary(const lh_timeline_t *tl, const lh_replay_t *r, lh_temp_t *out,
                          lh_err_t *err);
void lh_temp_fini(lh_temp_t *t);

#endif /* LH_TIMELINE_H */
