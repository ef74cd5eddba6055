/* leakhound - SPDX-License-Identifier: MIT
 *
 * timeline_view.h: text and JSON renderings of the analyses over time (analysis/timeline.h,
 * analysis/history.h): `leakhound leaks`, `report --growth`, `report --temporary`,
 * `counts` and `log`. They format, never compute.
 *
 * Every renderer takes the model and, for its sites, an array of symbolized sites
 * (lh_site_t, frames as `report` builds them): sites[i] belongs to the model's i-th site
 * (for the log: the distinct stacks of its entries, sorted by stack id). JSON documents
 * are one object followed by a newline; their field names are a contract (fields may be
 * added, never renamed or removed):
 *
 * leaks:     {"summary": {"trace", "program", "boundaries": "marks"|"snapshots", "from",
 *             "to", "skip", "intervals", "marks", "leaked_bytes", "leaked_blocks",
 *             "leak_sites", "to_before_teardown"}, "bounds": [{"index", "label", "time_s",
 *             "trigger"}], "sites": [{"stack_id", "trend", "score", "leaked_intervals", "intervals", "share",
 *             "leaked_bytes", "leaked_blocks", "bytes_per_interval", "blocks_per_interval",
 *             "bytes_per_mark", "blocks_per_mark", "interval_blocks": [...],
 *             "interval_bytes": [...], "location", "frames"}]}
 * growth:    {"summary": {..., "boundaries", "points", "all_points", "end_before_teardown",
 *             "growing_sites", "active_sites", "step_sites", "saturated_sites",
 *             "peak_sites"}, "bounds": [...], "sites": [{"stack_id", "growing", "trend",
 *             "trend_z", "growth_bytes_per_mark",
 *             "growth_blocks_per_mark", "grew_intervals", "intervals", "first_bytes",
 *             "last_bytes", "live_bytes": [...], "live_blocks": [...], "location",
 *             "frames"}]}
 * temporary: {"summary": {..., "threshold_ns", "temporary_blocks", "temporary_bytes",
 *             "allocations"}, "sites": [{"stack_id", "temporary_blocks", "temporary_bytes",
 *             "allocations", "mean_lifetime_ns", "location", "frames"}]}
 * counts:    {"summary": {..., "by": "site"|"function", "boundaries", "points", "groups"},
 *             "bounds": [...], "groups": [{"stack_id", "trend" | "function", "final_blocks",
 *             "final_bytes", "counts": [...], "deltas": [...], "location", "frames"}]}
 * log:       {"summary": {..., "matched", "shown"}, "events": [{"time_s", "tid", "event",
 *             "address", "old_address", "size", "site", "freed_size", "freed_site",
 *             "lived_ns", "label"}], "sites": {"<id>": {"location", "frames"}}}
 */
#ifndef LH_VIEW_TIMELINE_H
#define LH_VIEW_TIMELINE_H

#include <stdio.h>

#include "err.h"
#include "history.h"
#include "report.h"
#include "timeline.h"
#include "trace.h"

typedef struct lh_tl_view {
    const char *trace_path;
    const lh_trace_info_t *info;
    uint64_t start_ns;      /* times are shown relative to this */
    const char *cwd;        /* text: source paths under it are shown relative */
    size_t max_frames;      /* text: frames per site (0: all) */
    int json;
} lh_tl_view_t;

int lh_view_leaks(FILE *out, const lh_tl_view_t *v, const lh_diff_t *d, const lh_site_t *sites,
                  size_t n_shown, lh_err_t *err);
int lh_view_growth(FILE *out, const lh_tl_view_t *v, const lh_growth_t *g,
                   const lh_site_t *sites, size_t n_shown, lh_err_t *err);
int lh_view_temporary(FILE *out, const lh_tl_view_t *v, const lh_temp_t *t,
                      const lh_site_t *sites, size_t n_shown, lh_err_t *err);
/* names: for --by function, the function name of each shown group (NULL: by site). rows:
 * text rows to show at most (evenly spread, always the first and last point; 0: all). */
int lh_view_counts(FILE *out, const lh_tl_view_t *v, const lh_counts_t *c,
                   const lh_site_t *sites, const char *const *names, size_t rows,
                   lh_err_t *err);
int lh_view_log(FILE *out, const lh_tl_view_t *v, const lh_history_t *h, const lh_site_t *sites,
                size_t n_sites, lh_err_t *err);

#endif /* LH_VIEW_TIMELINE_H */
