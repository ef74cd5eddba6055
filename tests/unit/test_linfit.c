/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_linfit.c: least squares, the 95% interval and the watch verdict rule, on data whose
 * answers are known (worked by hand: see each test).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "linfit.h"

#define KIB 1024.0
#define MIB (1024.0 * 1024.0)

static void
assert_close(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol)) {
        print_error("got %.9g, want %.9g (+-%g)\n", got, want, tol);
        fail();
    }
}

/* The textbook example: x = 1..5, y = 2 4 5 4 5. Sxx = 10, Sxy = 6, so slope 0.6 and
 * intercept 2.2; SSres = 2.4, SStot = 6, R^2 = 0.6; se = sqrt(2.4 / 3 / 10) = 0.2828427;
 * t(3) = 3.182, half-width 0.9000055. */
static void
test_fit_textbook(void **state)
{
    (void)state;
    const double x[] = {1, 2, 3, 4, 5}, y[] = {2, 4, 5, 4, 5};
    lh_linfit_t f;
    assert_int_equal(lh_linfit(x, y, 5, &f, NULL), 0);
    assert_int_equal(f.n, 5);
    assert_close(f.slope, 0.6, 1e-12);
    assert_close(f.intercept, 2.2, 1e-12);
    assert_close(f.r2, 0.6, 1e-12);
    assert_close(f.se_slope, sqrt(0.08), 1e-12);
    assert_close(f.t95, 3.182, 1e-12);
    assert_close(f.ci95_low, 0.6 - 3.182 * sqrt(0.08), 1e-12);
    assert_close(f.ci95_high, 0.6 + 3.182 * sqrt(0.08), 1e-12);
}

/* Points exactly on y = 4096x + 1 MiB: slope exact, zero-width interval, R^2 = 1. Large
 * offsets must not cost precision (the fit centres before summing). */
static void
test_fit_exact_line(void **state)
{
    (void)state;
    double x[10], y[10];
    for (int i = 0; i < 10; i++) {
        x[i] = i;
        y[i] = 4096.0 * i + 1e9;
    }
    lh_linfit_t f;
    assert_int_equal(lh_linfit(x, y, 10, &f, NULL), 0);
    assert_close(f.slope, 4096.0, 1e-6);
    assert_close(f.intercept, 1e9, 1e-3);
    assert_close(f.se_slope, 0, 1e-9);
    assert_close(f.ci95_low, 4096.0, 1e-6);
    assert_close(f.ci95_high, 4096.0, 1e-6);
    assert_close(f.r2, 1.0, 1e-12);
    assert_close(f.t95, 2.306, 1e-12); /* 8 degrees of freedom */
}

/* y = 0 3 1 4 2 over x = 0..4: Sxx = 10, Sxy = 5, slope 0.5, intercept 1; residuals
 * -1 1.5 -1 1.5 -1 give SSres = 7.5 and SStot = 10, R^2 = 0.25; se = sqrt(7.5/3/10) = 0.5;
 * CI 0.5 +- 1.591. */
static void
test_fit_zigzag(void **state)
{
    (void)state;
    const double x[] = {0, 1, 2, 3, 4}, y[] = {0, 3, 1, 4, 2};
    lh_linfit_t f;
    assert_int_equal(lh_linfit(x, y, 5, &f, NULL), 0);
    assert_close(f.slope, 0.5, 1e-12);
    assert_close(f.intercept, 1.0, 1e-12);
    assert_close(f.r2, 0.25, 1e-12);
    assert_close(f.se_slope, 0.5, 1e-12);
    assert_close(f.ci95_low, 0.5 - 1.591, 1e-12);
    assert_close(f.ci95_high, 0.5 + 1.591, 1e-12);
}

static void
test_fit_flat_r2(void **state)
{
    (void)state;
    const double x[] = {0, 1, 2, 3}, y[] = {7, 7, 7, 7};
    lh_linfit_t f;
    assert_int_equal(lh_linfit(x, y, 4, &f, NULL), 0);
    assert_close(f.slope, 0, 0);
    assert_close(f.ci95_low, 0, 0);
    assert_close(f.ci95_high, 0, 0);
    assert_close(f.r2, 1.0, 0); /* documented: a flat line fits a flat series exactly */
}

static void
test_fit_rejects(void **state)
{
    (void)state;
    const double x[] = {1, 1, 1, 1}, y[] = {1, 2, 3, 4};
    const double xn[] = {0, 1, NAN}, yn[] = {0, 1, 2};
    lh_linfit_t f;
    lh_err_t err = {{0}};
    assert_int_equal(lh_linfit(x, y, 2, &f, &err), LH_EINVAL);
    assert_int_equal(f.n, 2);
    assert_non_null(strstr(err.msg, "3 points"));
    assert_int_equal(lh_linfit(x, y, 4, &f, &err), LH_EINVAL);
    assert_non_null(strstr(err.msg, "every x"));
    assert_int_equal(lh_linfit(xn, yn, 3, &f, NULL), LH_EINVAL);
    assert_close(f.slope, 0, 0);
}

static void
test_t_table(void **state)
{
    (void)state;
    assert_true(isinf(lh_linfit_t975(0)));
    assert_close(lh_linfit_t975(1), 12.706, 0);
    assert_close(lh_linfit_t975(2), 4.303, 0);
    assert_close(lh_linfit_t975(10), 2.228, 0);
    assert_close(lh_linfit_t975(30), 2.042, 0);
    assert_close(lh_linfit_t975(40), 2.021, 1e-12);
    assert_close(lh_linfit_t975(50), 2.0086, 0.001);  /* true value 2.00856 */
    assert_close(lh_linfit_t975(100), 1.9840, 0.001); /* true value 1.98397 */
    assert_close(lh_linfit_t975(120), 1.980, 1e-12);
    assert_close(lh_linfit_t975(1000000), 1.960, 0.0001);
    for (size_t d = 1; d < 500; d++) {
        assert_true(lh_linfit_t975(d + 1) <= lh_linfit_t975(d)); /* never increases */
    }
}

/* ---------------------------------------------------------------------------------------
 * Verdicts: 11 samples, x = loads 0..10, 10 MiB at the start (threshold 256 KiB).
 * ------------------------------------------------------------------------------------- */

static lh_verdict_t
judge_series(const double *y, size_t n, lh_judgement_t *j)
{
    double x[64];
    for (size_t i = 0; i < n; i++) {
        x[i] = (double)i;
    }
    return lh_linfit_judge(x, y, n, "load", NULL, j);
}

static void
test_verdict_flat(void **state)
{
    (void)state;
    double y[11];
    lh_judgement_t j;
    for (int i = 0; i < 11; i++) {
        y[i] = 10 * MIB;
    }
    assert_int_equal(judge_series(y, 11, &j), LH_VERDICT_NO_LEAK);
    assert_close(j.threshold_bytes, 256 * KIB, 0);
    assert_close(j.span, 10, 0);
    assert_non_null(strstr(j.reason, "did not grow"));
    /* A page that comes and goes is still no leak. */
    for (int i = 0; i < 11; i++) {
        y[i] = 10 * MIB + (i % 2) * 4096.0;
    }
    assert_int_equal(judge_series(y, 11, &j), LH_VERDICT_NO_LEAK);
    assert_non_null(strstr(j.reason, "at most"));
    assert_non_null(strstr(j.reason, "256.0 KiB threshold"));
}

static void
test_verdict_rising(void **state)
{
    (void)state;
    double y[11];
    lh_judgement_t j;
    /* 256 KiB per load plus a page of jitter. */
    for (int i = 0; i < 11; i++) {
        y[i] = 10 * MIB + 256 * KIB * i + ((i * 7) % 3) * 4096.0;
    }
    assert_int_equal(judge_series(y, 11, &j), LH_VERDICT_LEAK);
    assert_close(j.growth_bytes, 2560 * KIB, 8 * KIB);
    assert_true(j.growth_low > 0);
    assert_non_null(strstr(j.reason, "grew steadily"));
    assert_non_null(strstr(j.reason, "per load"));
}

static void
test_verdict_noisy(void **state)
{
    (void)state;
    /* Swings of several MiB with no trend: the interval spans 0 and large growth. */
    const double d[11] = {0, 3, -2, 4, -3, 1, 5, -4, 2, -1, 3};
    double y[11];
    lh_judgement_t j;
    for (int i = 0; i < 11; i++) {
        y[i] = 10 * MIB + d[i] * MIB;
    }
    assert_int_equal(judge_series(y, 11, &j), LH_VERDICT_INCONCLUSIVE);
    assert_true(j.growth_low < 0);
    assert_true(j.growth_high > j.threshold_bytes);
    assert_non_null(strstr(j.reason, "too noisy"));
}

static void
test_verdict_small_steady_growth(void **state)
{
    (void)state;
    /* 20 KiB per load, +-40 KiB jitter: certainly growing (CI about 10..30 KiB per load), but
     * 200 KiB over the watch is under the threshold while the upper end is over it. */
    double y[11];
    lh_judgement_t j;
    for (int i = 0; i < 11; i++) {
        y[i] = 10 * MIB + 20 * KIB * i + (i % 2 ? 40 : -40) * KIB;
    }
    assert_int_equal(judge_series(y, 11, &j), LH_VERDICT_INCONCLUSIVE);
    assert_true(j.growth_low > 0);
    assert_true(j.growth_bytes < j.threshold_bytes);
    assert_true(j.growth_high >= j.threshold_bytes);
    assert_non_null(strstr(j.reason, "grows steadily"));
    assert_non_null(strstr(j.reason, "more rounds"));
}

static void
test_verdict_shrinking(void **state)
{
    (void)state;
    double y[11];
    lh_judgement_t j;
    for (int i = 0; i < 11; i++) {
        y[i] = 10 * MIB - 64 * KIB * i;
    }
    assert_int_equal(judge_series(y, 11, &j), LH_VERDICT_NO_LEAK);
    assert_non_null(strstr(j.reason, "did not grow"));
}

static void
test_verdict_relative_threshold(void **state)
{
    (void)state;
    /* 100 MiB process: the threshold is 1% = 1 MiB, so a steady 512 KiB is no leak, 2 MiB is. */
    double y[11];
    lh_judgement_t j;
    for (int i = 0; i < 11; i++) {
        y[i] = 100 * MIB + 51.2 * KIB * i;
    }
    assert_int_equal(judge_series(y, 11, &j), LH_VERDICT_NO_LEAK);
    assert_close(j.threshold_bytes, 1 * MIB, 1);
    for (int i = 0; i < 11; i++) {
        y[i] = 100 * MIB + 204.8 * KIB * i;
    }
    assert_int_equal(judge_series(y, 11, &j), LH_VERDICT_LEAK);
    /* An explicit rule: a 64 KiB threshold and no relative part. */
    lh_verdict_rule_t rule = {64 * KIB, 0, 4};
    double x[11];
    for (int i = 0; i < 11; i++) {
        x[i] = i;
        y[i] = 100 * MIB + 8 * KIB * i;
    }
    assert_int_equal(lh_linfit_judge(x, y, 11, "load", &rule, &j), LH_VERDICT_LEAK);
    assert_close(j.threshold_bytes, 64 * KIB, 0);
}

/* One early step (glibc raising its mmap threshold after the first free, a cache filling
 * up), then flat: the whole-series fit is inconclusive, the flat tail makes it no leak. */
static void
test_verdict_step_then_flat(void **state)
{
    (void)state;
    double y[11];
    lh_judgement_t j;
    for (int i = 0; i < 11; i++) {
        y[i] = 10 * MIB + (i >= 1 ? 260 * KIB : 0);
    }
    assert_int_equal(judge_series(y, 11, &j), LH_VERDICT_NO_LEAK);
    assert_true(j.has_fit && j.has_tail);
    assert_true(j.growth_low < 0 && j.growth_high > j.threshold_bytes); /* alone: too noisy */
    assert_int_equal(j.tail_from, 5);
    assert_close(j.tail.ci95_high, 0, 1e-9);
    assert_non_null(strstr(j.reason, "growth stopped"));
    assert_non_null(strstr(j.reason, "+260.0 KiB"));
    /* Filling 1 MiB over five rounds, then flat: the fit alone says leak; it stopped. */
    for (int i = 0; i < 11; i++) {
        y[i] = 10 * MIB + (i < 5 ? i : 5) * 256 * KIB;
    }
    assert_int_equal(judge_series(y, 11, &j), LH_VERDICT_NO_LEAK);
    assert_true(j.growth_low > 0);
    /* Six samples (a target that exited): the tail is the last three. */
    assert_int_equal(judge_series(y + 4, 6, &j), LH_VERDICT_NO_LEAK);
    assert_int_equal(j.tail_from, 3);
    /* A leak that only starts late is still a leak: the tail grows. */
    for (int i = 0; i < 11; i++) {
        y[i] = 10 * MIB + (i < 4 ? 0 : i - 4) * 256 * KIB;
    }
    assert_int_equal(judge_series(y, 11, &j), LH_VERDICT_LEAK);
}

static void
test_verdict_too_few(void **state)
{
    (void)state;
    const double x[3] = {0, 1, 2}, y[3] = {1 * MIB, 2 * MIB, 3 * MIB};
    lh_judgement_t j;
    /* Not enough for a fit at all, and a fit below min_points (3 < 4). */
    assert_int_equal(judge_series(y, 2, &j), LH_VERDICT_INCONCLUSIVE);
    assert_false(j.has_fit);
    assert_non_null(strstr(j.reason, "only 2 samples"));
    assert_int_equal(judge_series(y, 3, &j), LH_VERDICT_INCONCLUSIVE);
    assert_non_null(strstr(j.reason, "at least 4"));
    assert_int_equal(lh_linfit_judge(x, y, 1, "load", NULL, &j), LH_VERDICT_INCONCLUSIVE);
    assert_non_null(strstr(j.reason, "only 1 sample;"));
    assert_int_equal(lh_linfit_judge(NULL, NULL, 0, "load", NULL, &j), LH_VERDICT_INCONCLUSIVE);
    assert_non_null(strstr(j.reason, "only 0 samples"));
    /* A rule asking for 3 points is fine with 3 exact ones. */
    lh_verdict_rule_t rule = {256 * KIB, 0, 3};
    assert_int_equal(lh_linfit_judge(x, y, 3, "load", &rule, &j), LH_VERDICT_LEAK);
}

static void
test_verdict_names(void **state)
{
    (void)state;
    assert_string_equal(lh_verdict_str(LH_VERDICT_LEAK), "leak");
    assert_string_equal(lh_verdict_str(LH_VERDICT_NO_LEAK), "no leak");
    assert_string_equal(lh_verdict_str(LH_VERDICT_INCONCLUSIVE), "inconclusive");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fit_textbook),
        cmocka_unit_test(test_fit_exact_line),
        cmocka_unit_test(test_fit_zigzag),
        cmocka_unit_test(test_fit_flat_r2),
        cmocka_unit_test(test_fit_rejects),
        cmocka_unit_test(test_t_table),
        cmocka_unit_test(test_verdict_flat),
        cmocka_unit_test(test_verdict_rising),
        cmocka_unit_test(test_verdict_noisy),
        cmocka_unit_test(test_verdict_small_steady_growth),
        cmocka_unit_test(test_verdict_shrinking),
        cmocka_unit_test(test_verdict_relative_threshold),
        cmocka_unit_test(test_verdict_step_then_flat),
        cmocka_unit_test(test_verdict_too_few),
        cmocka_unit_test(test_verdict_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
