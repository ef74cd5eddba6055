/* leakhound - SPDX-License-Identifier: MIT
 *
 * growth.h: the one growth model. Every view that says a site "grows" (report --growth,
 * leaks, counts, plot, html, the flame graph's growth metric, the SQLite export) asks this
 * module, with the live bytes of the site at each boundary (marks, else the snapshots
 * taken while the program ran) up to the end of the main work (lh_trend_main_end).
 *
 * The model, its statistics and its classes are stated once, in docs/GROWTH.md: Mann-
 * Kendall over at most LH_TREND_SAMPLES evenly spread boundaries, a step test (the largest
 * rise taken out), a tail test (still growing in the last third), and the order in which
 * peak, flat, step, saturated and growing are decided.
 */
#ifndef LH_GROWTH_H
#define LH_GROWTH_H

#include <stddef.h>
#include <stdint.h>

#define LH_TREND_SAMPLES 32

typedef enum lh_trend {
    LH_TREND_NONE = 0,
    LH_TREND_GROWING = 1,
    LH_TREND_STEP = 2,
    LH_TREND_SATURATED = 3,
    LH_TREND_PEAK = 4,
} lh_trend_t;

typedef struct lh_trend_stats {
    lh_trend_t kind;
    double z;               /* Mann-Kendall z over the samples (0 when S <= 0) */
    double p;               /* its one-sided p-value */
    uint64_t first, last;   /* live bytes at the first and the last point */
    uint64_t max;           /* the most at any sampled point */
    uint64_t step;          /* the largest rise between consecutive samples */
    int tail_growing;       /* still growing in the last third */
    size_t n_samples;
} lh_trend_stats_t;

/* The index among n points of sample k of lh_trend_n_samples(n). */
size_t lh_trend_n_samples(size_t n);
size_t lh_trend_sample_index(size_t k, size_t n);

/* Classifies the series y[0..n) (sampling it as above). Pure; no allocation. */
void lh_trend_classify(const uint64_t *y, size_t n, lh_trend_stats_t *out);
/* The same on samples already taken (s[k] = y[lh_trend_sample_index(k, n)], m =
 * lh_trend_n_samples(n)). */
void lh_trend_classify_samples(const uint64_t *s, size_t m, lh_trend_stats_t *out);

/* "growing", "step", "saturated", "peak", "flat" (NONE). */
const char *lh_trend_name(lh_trend_t t);

/* The end of the main work among n boundaries with heap[i] live bytes at each: the last
 * boundary before the trailing run of falling heap (teardown), when that run spans 2
 * intervals or more, fell by at least a tenth and leaves 2 boundaries or more before it
 * (one fall at the last boundary is a transient freed, not a teardown); else n - 1. */
size_t lh_trend_main_end(const uint64_t *heap, size_t n);

#endif /* LH_GROWTH_H */
