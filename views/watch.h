/* leakhound - SPDX-License-Identifier: MIT
 *
 * watch.h: the result of `leakhound watch` (memory samples of a process tree taken while
 * load was applied, the fitted growth and the verdict) and its two renderings.
 *
 * Text: a header naming the target, a table (round, loads so far, RSS, PSS, RSS delta),
 * the growth line and "verdict: <verdict>: <reason>".
 *
 * JSON, one document followed by a newline:
 *   {"target": {"pid", "command": [..] | null, "started": bool, "exited": bool,
 *               "exit_note": str | null},
 *    "mode": "load" | "time", "metric": "rss" | "pss",
 *    "load": {"command", "per_round", "rounds", "warmup", "failures"} | null,
 *    "samples": [{"round", "loads", "rss_bytes", "pss_bytes" (null when unreadable),
 *                 "anon_bytes", "n_processes", "t_s"}, ...],
 *    "slope_bytes_per_load" | "slope_bytes_per_second", "ci95_low", "ci95_high", "r2"
 *    (all null when there were too few samples to fit),
 *    "tail": {"first_sample", "slope", "ci95_low", "ci95_high"} | null (the later half's
 *    fit, see analysis/linfit.h), "threshold_bytes", "growth_bytes",
 *    "verdict": "leak" | "no leak" | "inconclusive", "reason"}
 * Field names are a contract: fields may be added, never renamed or removed.
 *
 * Renderers format only; everything is computed by the caller (analysis/linfit.h).
 */
#ifndef LH_VIEW_WATCH_H
#define LH_VIEW_WATCH_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "err.h"
#include "linfit.h"

/* The memory of the watched process tree at one sample (filled by cli/procmem.h). */
typedef struct lh_watch_mem {
    uint64_t rss_bytes;  /* resident set, summed over the tree */
    uint64_t pss_bytes;  /* proportional set size, summed; valid if has_pss */
    uint64_t anon_bytes; /* anonymous resident memory, summed */
    int has_pss;         /* smaps_rollup was readable for every process counted */
    unsigned n_procs;    /* processes counted: the root and its live descendants */
} lh_watch_mem_t;

typedef struct lh_watch_sample {
    unsigned round;         /* 0 is the baseline after warm-up (load mode) or at t = 0 */
    unsigned long loads;    /* load commands run since warm-up (load mode), else 0 */
    double t_s;             /* seconds since the watch began */
    lh_watch_mem_t mem;
} lh_watch_sample_t;

typedef struct lh_watch_result {
    pid_t pid;
    char **command;         /* the started command (NULL-terminated), NULL for -p */
    int is_started;         /* leakhound started the target */
    const char *exit_note;  /* "process 1234 exited after round 5", or NULL */
    int by_load;            /* x is load commands (else seconds) */
    const char *metric;     /* "rss" or "pss": what was fitted */
    const char *load_cmd;   /* NULL without --load */
    unsigned long loads_per_round;
    unsigned long rounds;
    unsigned long warmup;
    unsigned long load_failures; /* load commands that exited non-zero */
    const lh_watch_sample_t *samples;
    size_t n_samples;
    lh_judgement_t judgement; /* the fits (whole series and tail) and the verdict */
} lh_watch_result_t;

/* Writes the result as text. Returns 0, or LH_EIO when writing failed. */
int lh_view_watch_text(FILE *out, const lh_watch_result_t *res, lh_err_t *err);

/* Writes the result as one JSON document. Returns 0, or LH_EIO when writing failed. */
int lh_view_watch_json(FILE *out, const lh_watch_result_t *res, lh_err_t *err);

#endif /* LH_VIEW_WATCH_H */
