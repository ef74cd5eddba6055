/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_window.c: the trace reader's reorder window (analysis/window.c). Events arrive as
 * sorted runs (one per frame) and leave in (ts, seq, idx) order, whether the window merges
 * runs or falls back to sorting: checked against a plain sort of the same events, with
 * releases at SYNC times, partial deliveries and more runs than the merge takes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "window.h"

typedef struct key {
    uint64_t ts, seq, idx;
} key_t_;

static int
cmp_key(const void *a, const void *b)
{
    const key_t_ *x = a, *y = b;
    if (x->ts != y->ts) {
        return x->ts < y->ts ? -1 : 1;
    }
    if (x->seq != y->seq) {
        return x->seq < y->seq ? -1 : 1;
    }
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static uint64_t rng = 88172645463325252ull;

static uint64_t
next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* n_frames frames of up to per_frame events each, every frame in ts order from a random
 * start; a release at a random time after every few frames; everything out at the end.
 * The delivered order must be the sorted order of all events, ts never going back across
 * releases that were exact. */
static void
run_case(int n_frames, int per_frame, int frames_per_sync)
{
    lh_window_t w;
    lh_window_init(&w);
    size_t total = 0, cap = (size_t)n_frames * (size_t)per_frame;
    key_t_ *all = calloc(cap, sizeof *all);
    key_t_ *got = calloc(cap, sizeof *got);
    size_t n_got = 0;
    uint64_t floor_ts = 0; /* every event pushed later is stamped at or after it */
    for (int f = 0; f < n_frames; f++) {
        uint64_t ts = floor_ts + next() % 1000;
        int m = (int)(next() % (uint64_t)per_frame) + 1;
        for (int i = 0; i < m; i++) {
            lh_event_t ev;
            memset(&ev, 0, sizeof ev);
            ts += next() % 3; /* equal stamps too: seq and idx decide */
            ev.ts_ns = ts;
            ev.addr = total;
            assert_int_equal(lh_window_push(&w, &ev, (uint64_t)f, (uint64_t)i), 0);
            all[total++] = (key_t_){ts, (uint64_t)f, (uint64_t)i};
        }
        if ((f + 1) % frames_per_sync == 0) {
            /* A SYNC: nothing earlier than floor_ts + 500 comes later. */
            floor_ts += 500;
            lh_window_release(&w, floor_ts, 0);
            lh_event_t ev;
            char *label;
            /* deliver only part of what is ready now and then: the rest stays in order */
            size_t k = next() % 2 ? (size_t)-1 : next() % 50;
            while (k-- && lh_window_pop(&w, &ev, &label)) {
                got[n_got++] = all[ev.addr];
                free(label);
            }
        }
    }
    lh_window_release(&w, 0, 1);
    lh_event_t ev;
    char *label;
    while (lh_window_pop(&w, &ev, &label)) {
        got[n_got++] = all[ev.addr];
        free(label);
    }
    assert_int_equal(n_got, total);
    /* Events pushed before a release at T and stamped before T come out sorted among
     * themselves, and every event comes out exactly once; with floors that only grow and
     * frames starting at or after the floor, the whole sequence is sorted. */
    qsort(all, total, sizeof *all, cmp_key);
    for (size_t i = 0; i < total; i++) {
        assert_int_equal(got[i].ts, all[i].ts);
        assert_int_equal(got[i].seq, all[i].seq);
        assert_int_equal(got[i].idx, all[i].idx);
    }
    lh_window_fini(&w);
    free(all);
    free(got);
}

/* Pushes the frames given as (first ts, events, ts step) triples, each frame one run,
 * releases everything and checks the order against a plain sort. */
static void
run_frames(const uint64_t (*fr)[3], size_t n_frames)
{
    lh_window_t w;
    lh_window_init(&w);
    size_t total = 0, cap = 0;
    for (size_t f = 0; f < n_frames; f++) {
        cap += fr[f][1];
    }
    key_t_ *all = calloc(cap, sizeof *all);
    for (size_t f = 0; f < n_frames; f++) {
        for (uint64_t i = 0; i < fr[f][1]; i++) {
            lh_event_t ev;
            memset(&ev, 0, sizeof ev);
            ev.ts_ns = fr[f][0] + i * fr[f][2];
            ev.addr = total;
            assert_int_equal(lh_window_push(&w, &ev, (uint64_t)f, i), 0);
            all[total++] = (key_t_){ev.ts_ns, (uint64_t)f, i};
        }
    }
    lh_window_release(&w, 0, 1);
    qsort(all, total, sizeof *all, cmp_key);
    lh_event_t ev;
    char *label;
    size_t n_got = 0;
    while (lh_window_pop(&w, &ev, &label)) {
        assert_true(n_got < total);
        assert_int_equal(ev.ts_ns, all[n_got].ts);
        n_got++;
        free(label);
    }
    assert_int_equal(n_got, total);
    lh_window_fini(&w);
    free(all);
}

/* The shapes a merge trims: a long frame and a ticker's single record stamped inside it
 * (near its end, at its start, before it, after it), frames wholly before the previous
 * one, frames interleaved event by event, equal stamps decided by seq and idx. */
static void
test_overlap_shapes(void **state)
{
    (void)state;
    static const uint64_t inside_end[][3] = {{1000, 5000, 2}, {10990, 1, 1}};
    static const uint64_t inside_start[][3] = {{1000, 5000, 2}, {1001, 1, 1}};
    static const uint64_t before_all[][3] = {{1000, 5000, 2}, {10, 3, 1}};
    static const uint64_t after_all[][3] = {{1000, 5000, 2}, {20000, 3, 1}};
    static const uint64_t reversed[][3] = {{9000, 100, 1}, {5000, 100, 1}, {1000, 100, 1}};
    static const uint64_t interleaved[][3] = {{1000, 3000, 2}, {1001, 3000, 2}, {0, 7, 5000}};
    static const uint64_t equal[][3] = {{1000, 50, 0}, {1000, 50, 0}, {999, 3, 1}, {1000, 1, 0}};
    static const uint64_t big_small[][3] = {{100, 7, 1000}, {0, 20000, 1}, {5000, 2, 1}};
    run_frames(inside_end, 2);
    run_frames(inside_start, 2);
    run_frames(before_all, 2);
    run_frames(after_all, 2);
    run_frames(reversed, 3);
    run_frames(interleaved, 3);
    run_frames(equal, 4);
    run_frames(big_small, 3);
}

static void
test_few_runs(void **state)
{
    (void)state;
    run_case(40, 300, 4);
    run_case(7, 1000, 7);
    run_case(1, 5000, 1);
}

static void
test_many_runs(void **state)
{
    (void)state;
    run_case(2000, 3, 1000); /* more runs than the merge takes: sorted another way */
    run_case(600, 20, 3);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_few_runs),
        cmocka_unit_test(test_many_runs),
        cmocka_unit_test(test_overlap_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
