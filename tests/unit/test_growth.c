/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_growth.c: the growth model (analysis/growth.c) on series built by hand: a steady
 * leak, a staircase leak, a one-time step, per-thread buffers, a bounded cache, a
 * transient peak, a leak hidden by teardown; the sampling and the statistics.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "growth.h"

#define N 200

static lh_trend_t
kind_of(const uint64_t *y, size_t n)
{
    lh_trend_stats_t st;
    lh_trend_classify(y, n, &st);
    return st.kind;
}

static void
test_steady_and_staircase(void **state)
{
    (void)state;
    uint64_t y[N];
    for (size_t i = 0; i < N; i++) {
        y[i] = 1000 + 64 * i; /* 64 bytes kept per iteration */
    }
    lh_trend_stats_t st;
    lh_trend_classify(y, N, &st);
    assert_int_equal(st.kind, LH_TREND_GROWING);
    assert_true(st.tail_growing);
    assert_true(st.z > 7.0 && st.p < 1e-9);
    assert_int_equal(st.first, 1000);
    assert_int_equal(st.last, 1000 + 64 * (N - 1));
    assert_int_equal(st.n_samples, LH_TREND_SAMPLES);
    /* one 4 KiB block every tenth iteration, with churn of +-100 bytes */
    for (size_t i = 0; i < N; i++) {
        y[i] = 4096 * (i / 10) + (i % 2 ? 100 : 0);
    }
    assert_int_equal(kind_of(y, N), LH_TREND_GROWING);
    /* a leak that starts half-way (after a warm-up) */
    for (size_t i = 0; i < N; i++) {
        y[i] = i < N / 2 ? 5000 : 5000 + 32 * (i - N / 2);
    }
    assert_int_equal(kind_of(y, N), LH_TREND_GROWING);
}

static void
test_step(void **state)
{
    (void)state;
    uint64_t y[N];
    /* 0 B -> 29 KiB in one interval of the run, flat since: a one-time step */
    for (size_t i = 0; i < N; i++) {
        y[i] = i < 40 ? 0 : 29 * 1024;
    }
    lh_trend_stats_t st;
    lh_trend_classify(y, N, &st);
    assert_int_equal(st.kind, LH_TREND_STEP);
    assert_int_equal(st.step, 29 * 1024);
    /* the step at the very end is a step too */
    for (size_t i = 0; i < N; i++) {
        y[i] = i < N - 1 ? 100 : 100 + 29 * 1024;
    }
    assert_int_equal(kind_of(y, N), LH_TREND_STEP);
    /* the 6-interval case of the issue: 0 B -> 29 KiB in 1 of 6 intervals */
    uint64_t six[7] = {0, 0, 0, 29696, 29696, 29696, 29696};
    assert_int_equal(kind_of(six, 7), LH_TREND_STEP);
    /* per-thread buffers: 4 threads each make a 64 KiB buffer in the first tenth */
    for (size_t i = 0; i < N; i++) {
        y[i] = 65536 * (i < 5 ? 1 : i < 10 ? 2 : i < 15 ? 3 : 4);
    }
    assert_int_not_equal(kind_of(y, N), LH_TREND_GROWING);
}

static void
test_saturated(void **state)
{
    (void)state;
    uint64_t y[N];
    /* an LRU cache of 500 entries of 128 bytes filling over the first half, then full */
    for (size_t i = 0; i < N; i++) {
        y[i] = 128 * (i < N / 2 ? 5 * i : 500);
    }
    lh_trend_stats_t st;
    lh_trend_classify(y, N, &st);
    assert_int_equal(st.kind, LH_TREND_SATURATED);
    assert_false(st.tail_growing);
    assert_true(st.z > 1.645);
}

static void
test_peak_and_flat(void **state)
{
    (void)state;
    uint64_t y[N];
    /* up to 1 MiB in the middle of the run, then back to 10 KiB */
    for (size_t i = 0; i < N; i++) {
        y[i] = i < N / 2 ? 10240 + 10000 * i : 10240 + 10000 * (N - i) / 50;
    }
    assert_int_equal(kind_of(y, N), LH_TREND_PEAK);
    for (size_t i = 0; i < N; i++) {
        y[i] = 4096 + (i % 3) * 512; /* churn, no trend */
    }
    assert_int_equal(kind_of(y, N), LH_TREND_NONE);
    for (size_t i = 0; i < N; i++) {
        y[i] = 100000 - 100 * i; /* shrinking */
    }
    assert_int_equal(kind_of(y, N), LH_TREND_NONE);
    uint64_t two[2] = {0, 100};
    assert_int_equal(kind_of(two, 2), LH_TREND_NONE); /* no confidence with 2 points */
    uint64_t three[3] = {0, 100, 200};
    assert_int_equal(kind_of(three, 3), LH_TREND_GROWING);
    assert_string_equal(lh_trend_name(LH_TREND_SATURATED), "saturated");
    assert_string_equal(lh_trend_name(LH_TREND_NONE), "flat");
}

static void
test_sampling(void **state)
{
    (void)state;
    /* the samples include both ends and are evenly spread */
    assert_int_equal(lh_trend_n_samples(10), 10);
    assert_int_equal(lh_trend_sample_index(9, 10), 9);
    assert_int_equal(lh_trend_n_samples(1000), LH_TREND_SAMPLES);
    assert_int_equal(lh_trend_sample_index(0, 1000), 0);
    assert_int_equal(lh_trend_sample_index(LH_TREND_SAMPLES - 1, 1000), 999);
    assert_int_equal(lh_trend_sample_index(1, 1000), 32); /* round(999 / 31) */
    /* the samples give what the series gives */
    uint64_t y[1000], s[LH_TREND_SAMPLES];
    for (size_t i = 0; i < 1000; i++) {
        y[i] = 3 * i + (i % 7);
    }
    for (size_t k = 0; k < LH_TREND_SAMPLES; k++) {
        s[k] = y[lh_trend_sample_index(k, 1000)];
    }
    lh_trend_stats_t a, b;
    lh_trend_classify(y, 1000, &a);
    lh_trend_classify_samples(s, LH_TREND_SAMPLES, &b);
    assert_memory_equal(&a, &b, sizeof a);
}

static void
test_main_end(void **state)
{
    (void)state;
    /* growth, then three snapshots in teardown: the end is the last before the fall */
    uint64_t h[10] = {10, 20, 30, 40, 50, 60, 70, 40, 20, 5};
    assert_int_equal(lh_trend_main_end(h, 10), 6);
    /* a small dip at the end is not teardown */
    uint64_t d[6] = {10, 20, 30, 40, 50, 48};
    assert_int_equal(lh_trend_main_end(d, 6), 5);
    /* nor is one fall, however deep: a transient freed before the last boundary */
    uint64_t f[6] = {10, 20, 30, 40, 50, 20};
    assert_int_equal(lh_trend_main_end(f, 6), 5);
    /* a heap that only falls has no main work to find: keep the end */
    uint64_t g[4] = {50, 40, 30, 20};
    assert_int_equal(lh_trend_main_end(g, 4), 3);
    /* the leak hidden by teardown is growing up to the main end */
    uint64_t y[N];
    for (size_t i = 0; i < N; i++) {
        y[i] = i < N - 5 ? 1000 * i : 1000 * (N - i);
    }
    assert_int_equal(lh_trend_main_end(y, N), N - 6);
    assert_int_equal(kind_of(y, N - 5), LH_TREND_GROWING);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steady_and_staircase),
        cmocka_unit_test(test_step),
        cmocka_unit_test(test_saturated),
        cmocka_unit_test(test_peak_and_flat),
        cmocka_unit_test(test_sampling),
        cmocka_unit_test(test_main_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
