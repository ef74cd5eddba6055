/* leakhound - SPDX-License-Identifier: MIT
 *
 * json.h: the leak report as one JSON document, for scripts and CI.
 *
 *   {"summary": {"program", "argv", "pid", "duration_s", "total_events",
 *                "total_allocations", "total_frees", "total_reallocs", "peak_bytes",
 *                "peak_time_s", "leaked_bytes", "leaked_blocks", "clean_exit",
 *                "exit_kind": "exit"|"_exit"|"exec"|"detach"|"killed_in_teardown"|"signal"|
 *                "none", "exit_status" (the signal's number for "signal"), "exit_signal"
 *                ("SIGTERM": only for "signal"), ...,
 *                "rss": {"samples", "first_bytes", "last_bytes", "heap_first_bytes",
 *                        "heap_last_bytes", "outside_heap"} (only with 2+ RSS samples)},
 *    "sites": [{"leaked_bytes", "leaked_blocks", "allocations", "allocated_bytes",
 *               "stack_id", "location",
 *               "frames": [{"function", "file", "line", "module", "inlined"}, ...]}, ...]}
 *
 * These field names are a contract: fields may be added, never renamed or removed. Sites
 * are ordered by leaked bytes, frames innermost first; "function" and "file" are null and
 * "line" 0 when unknown. Strings are escaped, invalid UTF-8 becomes U+FFFD.
 */
#ifndef LH_VIEW_JSON_H
#define LH_VIEW_JSON_H

#include <stdio.h>

#include "err.h"
#include "report.h"

/* Writes the report to out, followed by a newline. Returns 0, or LH_EIO. */
int lh_view_json(FILE *out, const lh_report_t *rep, lh_err_t *err);

/* The members `"location": {...}|null, "frames": [...]` of a site object, as the report
 * writes them (no surrounding braces). */
void lh_json_site_frames(FILE *out, const lh_site_t *site);

/* A double with up to 6 decimals, trailing zeros dropped ("64", "0.48", "0.009505"). */
void lh_json_num(FILE *out, double x);
/* The members of a site's figures in growth listing g, as report --growth writes them (no
 * braces): "growing", "trend", "trend_z", "growth_bytes_per_mark", ..., "last_blocks". */
void lh_json_growth(FILE *out, const lh_growth_site_t *s, const lh_growth_t *g);

/* Writes s[0..len) as a JSON string literal, quotes included. */
void lh_json_string(FILE *out, const char *s, size_t len);
/* Writes the NUL-terminated s as a JSON string literal, or null when s is NULL. */
void lh_json_str(FILE *out, const char *s);

#endif /* LH_VIEW_JSON_H */
