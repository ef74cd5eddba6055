/* leakhound - SPDX-License-Identifier: MIT
 *
 * linfit.h: least-squares line through memory samples, its 95% confidence interval, and
 * the rule that turns the fit into a verdict (leak, no leak, inconclusive) for
 * `leakhound watch`.
 *
 * Pure functions: no I/O, no allocation, no global state; thread-safe.
 *
 * The verdict rule (lh_linfit_judge). The fit gives a slope b (bytes per x unit, where x is
 * load commands run or seconds) and its 95% interval [lo, hi] (Student t, n-2 degrees of
 * freedom). Over the watched span S (last x minus first x) that is a growth of b*S, at
 * least lo*S and at most hi*S. The threshold T is the larger of rule->min_bytes (256 KiB by
 * default) and rule->start_frac (1%) of the first sample, so allocator noise and a few
 * pages of lazily touched memory never count as a leak. The "tail" is the later half of
 * the samples (the last ceil(n/2), at least 3), fitted on its own. Then, in this order:
 *   1. fewer than rule->min_points samples: inconclusive;
 *   2. hi*S < T: no leak (even the worst case the data allows stays under the threshold;
 *      this includes a flat or shrinking series);
 *   3. the tail's hi*S < T: no leak, the growth stopped (memory rose once, early, and then
 *      stayed flat: warm-up, a cache filling up, an allocator threshold; a leak keeps
 *      growing under load, so its tail cannot pass this);
 *   4. lo > 0 and b*S >= T: leak (memory grows for sure, and by more than the threshold);
 *   5. otherwise inconclusive: a steady growth still too small to call over this span
 *      (lo > 0), or too noisy (the interval includes 0 and also growth above T).
 * A leak smaller than T over the whole watch is therefore reported as no leak: watch more
 * rounds (or more loads per round) to see smaller leaks.
 */
#ifndef LH_LINFIT_H
#define LH_LINFIT_H

#include <stddef.h>

#include "err.h"

typedef struct lh_linfit {
    size_t n;         /* number of points */
    double slope;     /* y units per x unit */
    double intercept; /* y at x = 0 */
    double se_slope;  /* standard error of the slope (0 when the points are exactly on a line) */
    double t95;       /* the two-sided 95% Student t quantile used, n-2 degrees of freedom */
    double ci95_low;  /* slope - t95 * se_slope */
    double ci95_high; /* slope + t95 * se_slope */
    double r2;        /* coefficient of determination; 1 when every y is equal */
} lh_linfit_t;

/* Fits y = intercept + slope * x through the n points (x[i], y[i]) by least squares.
 * Returns 0, or LH_EINVAL (message in err, which may be NULL) when n < 3 (no degrees of
 * freedom left for an interval), when every x is equal, or when a value is not finite;
 * *out is zeroed then, except for n. */
int lh_linfit(const double *x, const double *y, size_t n, lh_linfit_t *out, lh_err_t *err);

/* The 0.975 quantile of Student's t with dof degrees of freedom (the half-width factor of a
 * two-sided 95% interval): exact to 3 decimals for dof 1..30, interpolated in 1/dof
 * between 30, 40, 60, 120 and infinity (1.960) above that. dof 0 gives +infinity. */
double lh_linfit_t975(size_t dof);

typedef enum lh_verdict {
    LH_VERDICT_NO_LEAK = 0,
    LH_VERDICT_LEAK = 1,
    LH_VERDICT_INCONCLUSIVE = 2,
} lh_verdict_t;

typedef struct lh_verdict_rule {
    double min_bytes;  /* floor of the threshold T, in bytes (default 256 KiB) */
    double start_frac; /* T is at least this fraction of the first sample (default 0.01) */
    size_t min_points; /* fewer samples are inconclusive (default 4; at least 3) */
} lh_verdict_rule_t;

#define LH_VERDICT_RULE_DEFAULT {256.0 * 1024.0, 0.01, 4}

typedef struct lh_judgement {
    lh_verdict_t verdict;
    int has_fit;            /* fit is valid (enough points with a spread in x) */
    lh_linfit_t fit;        /* the whole series */
    int has_tail;           /* tail is valid */
    lh_linfit_t tail;       /* the later half of the series */
    size_t tail_from;       /* index of the tail's first sample */
    double threshold_bytes; /* T */
    double span;            /* S: last x minus first x */
    double growth_bytes;    /* slope * S */
    double growth_low;      /* ci95_low * S */
    double growth_high;     /* ci95_high * S */
    char reason[400];       /* one sentence, no trailing newline */
} lh_judgement_t;

/* Fits the n samples (x[i], y[i]) (x increasing, y in bytes), and judges the fit by the
 * rule above; x_unit names one x step in the reason ("load", "second"), rule NULL means
 * LH_VERDICT_RULE_DEFAULT. n may be 0. Always fills *out; returns out->verdict. */
lh_verdict_t lh_linfit_judge(const double *x, const double *y, size_t n, const char *x_unit,
                             const lh_verdict_rule_t *rule, lh_judgement_t *out);

/* "leak", "no leak" or "inconclusive". */
const char *lh_verdict_str(lh_verdict_t v);

#endif /* LH_LINFIT_H */
