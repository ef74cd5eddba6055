/* leakhound - SPDX-License-Identifier: MIT
 *
 * linfit.c: least squares with a Student t interval, and the watch verdict rule (the rule
 * itself is described in linfit.h).
 */
#include "linfit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------
 * Student t, 0.975 quantile (two-sided 95%).
 * ------------------------------------------------------------------------------------- */

static const double t975_small[31] = {
    INFINITY, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201,    2.179,  2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080,
    2.074,    2.069,  2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
};

/* Above 30 degrees of freedom t is close to linear in 1/dof (the usual table interpolation). */
static const struct {
    double dof;
    double t;
} t975_large[] = {{30, 2.042}, {40, 2.021}, {60, 2.000}, {120, 1.980}, {INFINITY, 1.960}};

double
lh_linfit_t975(size_t dof)
{
    if (dof <= 30) {
        return t975_small[dof];
    }
    double inv = 1.0 / (double)dof;
    for (size_t i = 0; i + 1 < sizeof t975_large / sizeof t975_large[0]; i++) {
        double d0 = t975_large[i].dof, d1 = t975_large[i + 1].dof;
        if ((double)dof <= d1) {
            double i0 = 1.0 / d0, i1 = isinf(d1) ? 0.0 : 1.0 / d1;
            double f = (i0 - inv) / (i0 - i1);
            return t975_large[i].t + f * (t975_large[i + 1].t - t975_large[i].t);
        }
    }
    return 1.960;
}

/* ---------------------------------------------------------------------------------------
 * The fit.
 * ------------------------------------------------------------------------------------- */

int
lh_linfit(const double *x, const double *y, size_t n, lh_linfit_t *out, lh_err_t *err)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    if (n < 3) {
        return lh_err_set(err, LH_EINVAL, "a fit with an interval needs 3 points, got %zu", n);
    }
    double xm = 0, ym = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i])) {
            return lh_err_set(err, LH_EINVAL, "point %zu is not a finite number", i);
        }
        xm += x[i];
        ym += y[i];
    }
    xm /= (double)n;
    ym /= (double)n;
    /* Two passes over centred values: no cancellation from large RSS values. */
    double sxx = 0, sxy = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        double dx = x[i] - xm, dy = y[i] - ym;
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    if (!(sxx > 0)) {
        return lh_err_set(err, LH_EINVAL, "every x is the same: no slope to fit");
    }
    double slope = sxy / sxx;
    double intercept = ym - slope * xm;
    double ssres = 0;
    for (size_t i = 0; i < n; i++) {
        double r = y[i] - (intercept + slope * x[i]);
        ssres += r * r;
    }
    /* Rounding may leave a tiny residual on an exact line; anything below 1e-12 of the
     * spread is that. */
    if (ssres <= 1e-12 * syy) {
        ssres = 0;
    }
    out->slope = slope;
    out->intercept = intercept;
    out->se_slope = sqrt(ssres / (double)(n - 2) / sxx);
    out->t95 = lh_linfit_t975(n - 2);
    out->ci95_low = slope - out->t95 * out->se_slope;
    out->ci95_high = slope + out->t95 * out->se_slope;
    out->r2 = syy > 0 ? 1.0 - ssres / syy : 1.0;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * The verdict.
 * ------------------------------------------------------------------------------------- */

const char *
lh_verdict_str(lh_verdict_t v)
{
    switch (v) {
    case LH_VERDICT_LEAK:
        return "leak";
    case LH_VERDICT_NO_LEAK:
        return "no leak";
    default:
        return "inconclusive";
    }
}

/* Bytes in binary units with a sign when asked ("+1.5 MiB", "-12 KiB", "0 B"). */
static const char *
human(char *buf, size_t len, double bytes, int with_sign)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double a = fabs(bytes);
    size_t u = 0;
    while (a >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
        a /= 1024.0;
        u++;
    }
    const char *sign = bytes < 0 ? "-" : (with_sign && bytes > 0 ? "+" : "");
    if (u == 0) {
        snprintf(buf, len, "%s%.0f B", sign, a);
    } else {
        snprintf(buf, len, "%s%.1f %s", sign, a, units[u]);
    }
    return buf;
}

/* "10 loads", "1 load", "29.5 seconds". */
static const char *
span_words(char *buf, size_t len, double span, const char *unit)
{
    if (span == floor(span)) {
        snprintf(buf, len, "%.0f %s%s", span, unit, span == 1.0 ? "" : "s");
    } else {
        snprintf(buf, len, "%.1f %ss", span, unit);
    }
    return buf;
}

lh_verdict_t
lh_linfit_judge(const double *x, const double *y, size_t n, const char *x_unit,
                const lh_verdict_rule_t *rule, lh_judgement_t *out)
{
    static const lh_verdict_rule_t def = LH_VERDICT_RULE_DEFAULT;
    char t[32], g[32], lo[32], hi[32], per[32], sp[48], step[32];
    if (!rule) {
        rule = &def;
    }
    size_t min_points = rule->min_points < 3 ? 3 : rule->min_points;
    memset(out, 0, sizeof *out);
    out->verdict = LH_VERDICT_INCONCLUSIVE;
    out->threshold_bytes = rule->min_bytes;
    if (n && y[0] > 0 && rule->start_frac * y[0] > out->threshold_bytes) {
        out->threshold_bytes = rule->start_frac * y[0];
    }
    human(t, sizeof t, out->threshold_bytes, 0);
    out->span = n ? x[n - 1] - x[0] : 0;
    out->has_fit = n >= min_points && lh_linfit(x, y, n, &out->fit, NULL) == 0;
    if (!out->has_fit || !(out->span > 0)) {
        out->has_fit = 0;
        snprintf(out->reason, sizeof out->reason,
                 "only %zu sample%s; at least %zu are needed to see a trend", n,
                 n == 1 ? "" : "s", min_points);
        return out->verdict;
    }
    out->tail_from = n / 2;
    out->has_tail = lh_linfit(x + out->tail_from, y + out->tail_from, n - out->tail_from,
                              &out->tail, NULL) == 0;

    const lh_linfit_t *fit = &out->fit;
    double span = out->span;
    out->growth_bytes = fit->slope * span;
    out->growth_low = fit->ci95_low * span;
    out->growth_high = fit->ci95_high * span;
    human(g, sizeof g, out->growth_bytes, 1);
    human(lo, sizeof lo, fit->ci95_low, 1);
    human(hi, sizeof hi, fit->ci95_high, 1);
    human(per, sizeof per, fit->slope, 1);
    span_words(sp, sizeof sp, span, x_unit);

    if (out->growth_high < out->threshold_bytes) {
        out->verdict = LH_VERDICT_NO_LEAK;
        if (fit->ci95_high <= 0) {
            snprintf(out->reason, sizeof out->reason,
                     "memory did not grow: %s per %s (95%% CI %s to %s) over %s", per, x_unit,
                     lo, hi, sp);
        } else {
            human(g, sizeof g, out->growth_high, 1);
            snprintf(out->reason, sizeof out->reason,
                     "growth over %s is at most %s (upper end of the 95%% CI, %s per %s), "
                     "under the %s threshold",
                     sp, g, hi, x_unit, t);
        }
    } else if (out->has_tail && out->tail.ci95_high * span < out->threshold_bytes) {
        out->verdict = LH_VERDICT_NO_LEAK;
        human(step, sizeof step, y[out->tail_from] - y[0], 1);
        human(hi, sizeof hi, out->tail.ci95_high, 1);
        snprintf(out->reason, sizeof out->reason,
                 "growth stopped: memory rose by %s over the first %zu samples, then stayed "
                 "flat; over the last %zu it grows at most %s per %s (upper end of the 95%% "
                 "CI), under the %s threshold even over all %s",
                 step, out->tail_from + 1, n - out->tail_from, hi, x_unit, t, sp);
    } else if (fit->ci95_low > 0 && out->growth_bytes >= out->threshold_bytes) {
        out->verdict = LH_VERDICT_LEAK;
        snprintf(out->reason, sizeof out->reason,
                 "memory grew steadily: %s per %s (95%% CI %s to %s, entirely above 0), "
                 "%s over %s, more than the %s threshold",
                 per, x_unit, lo, hi, g, sp, t);
    } else if (fit->ci95_low > 0) {
        snprintf(out->reason, sizeof out->reason,
                 "memory grows steadily (%s per %s, 95%% CI %s to %s) but only %s over %s, "
                 "under the %s threshold; watch more rounds to tell",
                 per, x_unit, lo, hi, g, sp, t);
    } else {
        snprintf(out->reason, sizeof out->reason,
                 "too noisy: the 95%% CI of the slope, %s to %s per %s, includes 0 but also "
                 "growth above the %s threshold over %s (R^2 %.2f); watch more rounds or "
                 "more loads per round",
                 lo, hi, x_unit, t, sp, fit->r2);
    }
    return out->verdict;
}
