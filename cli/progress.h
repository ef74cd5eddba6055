/* leakhound - SPDX-License-Identifier: MIT
 *
 * progress.h: a progress bar on standard error for long trace loads, driven by the bytes
 * of the file read so far.
 *
 * It shows only when standard error is a terminal, --quiet was not given, and the load has
 * taken more than half a second (short loads never flash a bar; the environment variable
 * LEAKHOUND_PROGRESS_AFTER_MS changes that delay, for tests); it redraws at most ten
 * times a second and erases itself when done, so the command's own output is unchanged.
 */
#ifndef LH_CLI_PROGRESS_H
#define LH_CLI_PROGRESS_H

#include <stdint.h>

typedef struct lh_progress {
    int enabled;
    int shown;
    double start_s;
    double last_s;
    double after_s;    /* shown only after this long ($LEAKHOUND_PROGRESS_AFTER_MS, 500) */
    const char *what;  /* e.g. the file name */
} lh_progress_t;

/* Prepares a bar labelled what (borrowed); quiet disables it. */
void lh_progress_init(lh_progress_t *p, const char *what, int quiet);
/* The lh_collect_opts_t.on_progress callback: ctx is the lh_progress_t. */
void lh_progress_update(void *ctx, uint64_t done_bytes, uint64_t total_bytes);
/* Erases the bar if it was shown. */
void lh_progress_done(lh_progress_t *p);

#endif /* LH_CLI_PROGRESS_H */
