/* leakhound - SPDX-License-Identifier: MIT
 *
 * progress.c: the load progress bar.
 */
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"

#define BAR_WIDTH 30

static double
now_s(void)
{
    return (double)lh_cli_clock_ns(CLOCK_MONOTONIC) / 1e9;
}

void
lh_progress_init(lh_progress_t *p, const char *what, int quiet)
{
    memset(p, 0, sizeof *p);
    p->enabled = !quiet && isatty(STDERR_FILENO);
    p->what = what;
    p->start_s = now_s();
    /* test seam: LEAKHOUND_PROGRESS_AFTER_MS=0 shows the bar at once */
    const char *after = getenv("LEAKHOUND_PROGRESS_AFTER_MS");
    p->after_s = after && *after ? atof(after) / 1000.0 : 0.5;
}

void
lh_progress_update(void *ctx, uint64_t done_bytes, uint64_t total_bytes)
{
    lh_progress_t *p = ctx;
    if (!p || !p->enabled || total_bytes == 0) {
        return;
    }
    double t = now_s();
    if (t - p->start_s < p->after_s || (p->shown && t - p->last_s < 0.1)) {
        return;
    }
    double frac = (double)done_bytes / (double)total_bytes;
    if (frac > 1) {
        frac = 1;
    }
    int fill = (int)(frac * BAR_WIDTH);
    char bar[BAR_WIDTH + 1];
    for (int i = 0; i < BAR_WIDTH; i++) {
        bar[i] = i < fill ? '#' : '.';
    }
    bar[BAR_WIDTH] = '\0';
    double rate = (double)done_bytes / (t - p->start_s) / 1048576.0;
    const char *base = strrchr(p->what, '/');
    fprintf(stderr, "\r\033[Kreading %.40s [%s] %3d%%  %.1f MiB/s", base ? base + 1 : p->what,
            bar, (int)(frac * 100), rate);
    fflush(stderr);
    p->shown = 1;
    p->last_s = t;
}

void
lh_progress_done(lh_progress_t *p)
{
    if (p->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        p->shown = 0;
    }
}
