/* leakhound - SPDX-License-Identifier: MIT
 *
 * growth.c: the one growth model (growth.h): Mann-Kendall over sampled boundaries, and the
 * step / saturation / peak tests.
 */
#include "growth.h"

#include <math.h>
#include <stdint.h>

size_t
lh_trend_n_samples(size_t n)
{
    return n < LH_TREND_SAMPLES ? n : LH_TREND_SAMPLES;
}

size_t
lh_trend_sample_index(size_t k, size_t n)
{
    size_t m = lh_trend_n_samples(n);
    if (m < 2) {
        return 0;
    }
    /* round(k (n-1) / (m-1)) in integers */
    return (k * (n - 1) * 2 + (m - 1)) / (2 * (m - 1));
}

/* Mann-Kendall z of s[0..m) (0 when S <= 0). Signed: a series with its largest rise
 * taken out may go below its start. */
static double
mann_kendall_z(const int64_t *s, size_t m)
{
    long long S = 0;
    double ties = 0;
    for (size_t i = 0; i < m; i++) {
        size_t t = 0; /* equal values: counted once, at the first of each group */
        int first_of_group = 1;
        for (size_t j = 0; j < m; j++) {
            if (s[j] == s[i]) {
                t++;
                if (j < i) {
                    first_of_group = 0;
                }
            }
            if (j > i) {
                S += s[j] > s[i] ? 1 : s[j] < s[i] ? -1 : 0;
            }
        }
        if (first_of_group && t > 1) {
            ties += (double)t * (double)(t - 1) * (double)(2 * t + 5);
        }
    }
    double md = (double)m;
    double var = (md * (md - 1) * (2 * md + 5) - ties) / 18.0;
    if (S <= 0 || var <= 0) {
        return 0.0;
    }
    return ((double)S - 1.0) / sqrt(var);
}

/* Upward with confidence: z >= 1.645 (one-sided 5%). */
#define Z_95 1.645

const char *
lh_trend_name(lh_trend_t t)
{
    switch (t) {
    case LH_TREND_GROWING:
        return "growing";
    case LH_TREND_STEP:
        return "step";
    case LH_TREND_SATURATED:
        return "saturated";
    case LH_TREND_PEAK:
        return "peak";
    default:
        return "flat";
    }
}

void
lh_trend_classify_samples(const uint64_t *s, size_t m, lh_trend_stats_t *o)
{
    *o = (lh_trend_stats_t){0};
    o->n_samples = m;
    o->p = 1.0;
    if (m == 0) {
        return;
    }
    o->first = s[0];
    o->last = s[m - 1];
    size_t jump_at = 0;
    for (size_t k = 0; k < m; k++) {
        o->max = s[k] > o->max ? s[k] : o->max;
        if (k && s[k] > s[k - 1] && s[k] - s[k - 1] > o->step) {
            o->step = s[k] - s[k - 1];
            jump_at = k;
        }
    }
    int64_t v[LH_TREND_SAMPLES];
    for (size_t k = 0; k < m; k++) {
        v[k] = (int64_t)(s[k] >> 1); /* halved: a difference of two never overflows */
    }
    o->z = mann_kendall_z(v, m);
    o->p = 0.5 * erfc(o->z / sqrt(2.0));
    if (o->max > o->first && o->max - o->last > (o->max - o->first) / 2) {
        o->kind = LH_TREND_PEAK;
        return;
    }
    if (m < 3 || o->last <= o->first) {
        return;
    }
    uint64_t gain = o->last - o->first;
    /* the tail: the last third, at least 2 intervals */
    size_t tail = (m - 1) / 3 < 2 ? 2 : (m - 1) / 3;
    uint64_t t0 = s[m - 1 - tail];
    o->tail_growing = o->last > t0 &&
                      (double)(o->last - t0) * 4.0 * (double)(m - 1) >= (double)gain * (double)tail;
    if (m == 3) {
        if (5 * o->step >= 4 * gain) {
            o->kind = LH_TREND_STEP;
        } else if (s[1] > s[0] && s[2] > s[1]) {
            o->kind = LH_TREND_GROWING;
        }
        return;
    }
    /* Without its largest rise, when that rise is half the gain or more: a step when
     * nothing trends upward is left. */
    int64_t *rest = v, half_step = (int64_t)(o->step >> 1);
    for (size_t k = jump_at; k < m; k++) {
        rest[k] -= half_step;
    }
    uint64_t rest_gain = rest[m - 1] > rest[0] ? 2 * (uint64_t)(rest[m - 1] - rest[0]) : 0;
    if (2 * o->step >= gain && (mann_kendall_z(rest, m) < Z_95 || 5 * rest_gain < gain)) {
        /* a step is flat on both sides of it; churn that ends higher by chance is not */
        int64_t lo = rest[0], hi = rest[0];
        for (size_t k = 1; k < m; k++) {
            lo = rest[k] < lo ? rest[k] : lo;
            hi = rest[k] > hi ? rest[k] : hi;
        }
        o->kind = 4 * (uint64_t)(hi - lo) <= o->step ? LH_TREND_STEP : LH_TREND_NONE;
        return;
    }
    if (o->z < Z_95) {
        return;
    }
    o->kind = o->tail_growing ? LH_TREND_GROWING : LH_TREND_SATURATED;
}

void
lh_trend_classify(const uint64_t *y, size_t n, lh_trend_stats_t *out)
{
    uint64_t s[LH_TREND_SAMPLES];
    size_t m = lh_trend_n_samples(n);
    for (size_t k = 0; k < m; k++) {
        s[k] = y[lh_trend_sample_index(k, n)];
    }
    lh_trend_classify_samples(s, m, out);
}

size_t
lh_trend_main_end(const uint64_t *heap, size_t n)
{
    if (n < 3) {
        return n ? n - 1 : 0;
    }
    size_t p = n - 1;
    while (p > 0 && heap[p - 1] > heap[p]) {
        p--;
    }
    size_t fell = n - 1 - p;
    if (fell == 0 || p < 1) {
        return n - 1;
    }
    if (fell >= 2 && (heap[p] - heap[n - 1]) / 10 >= heap[p] / 100) {
        return p;
    }
    return n - 1;
}
