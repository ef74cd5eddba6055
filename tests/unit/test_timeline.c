/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_timeline.c: the analyses over time on synthetic event sequences: boundaries and
 * specs, differential leaks, growth (slope, the transient-peak rule), counts, temporaries,
 * RSS against heap; and one synthetic trace read end to end through the reader.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "timeline.h"
#include "trace.h"
#include "trace_builder.h"

typedef struct fx {
    lh_replay_t *r;
    lh_timeline_t *tl;
} fx_t;

static void
fx_new(fx_t *f, const lh_timeline_opts_t *o)
{
    lh_err_t err;
    assert_int_equal(lh_replay_new(&f->r, &err), 0);
    assert_int_equal(lh_timeline_new(o, &f->tl, &err), 0);
}

static void
fx_free(fx_t *f)
{
    lh_timeline_free(f->tl);
    lh_replay_free(f->r);
}

static void
ev(fx_t *f, uint8_t type, uint64_t ts, uint64_t addr, uint64_t size, uint32_t stack)
{
    lh_event_t e = {0};
    lh_err_t err;
    e.type = type;
    e.ts_ns = ts;
    e.addr = addr;
    e.size = size;
    e.stack_id = stack;
    e.tid = 1;
    assert_int_equal(lh_replay_event(f->r, &e, &err), 0);
    assert_int_equal(lh_timeline_event(f->tl, f->r, &e, &err), 0);
}

static void
alloc(fx_t *f, uint64_t ts, uint64_t addr, uint64_t size, uint32_t stack)
{
    ev(f, LH_REC_ALLOC, ts, addr, size, stack);
}

static void
dealloc(fx_t *f, uint64_t ts, uint64_t addr)
{
    ev(f, LH_REC_FREE, ts, addr, 0, 0);
}

static void
label_ev(fx_t *f, uint8_t type, uint64_t ts, const char *label, uint8_t trigger)
{
    lh_event_t e = {0};
    lh_err_t err;
    e.type = type;
    e.ts_ns = ts;
    e.kind = trigger;
    e.label = label;
    e.label_len = strlen(label);
    assert_int_equal(lh_replay_event(f->r, &e, &err), 0);
    assert_int_equal(lh_timeline_event(f->tl, f->r, &e, &err), 0);
}

static void
mark(fx_t *f, uint64_t ts, const char *label)
{
    label_ev(f, LH_REC_MARK, ts, label, 0);
}

static void
snapshot(fx_t *f, uint64_t ts, const char *label, uint8_t trigger)
{
    label_ev(f, LH_REC_SNAPSHOT, ts, label, trigger);
}

static const lh_diff_site_t *
diff_site(const lh_diff_t *d, uint32_t stack)
{
    for (size_t i = 0; i < d->n_sites; i++) {
        if (d->sites[i].stack_id == stack) {
            return &d->sites[i];
        }
    }
    return NULL;
}

/* Marks at 100..500; interval i is [100(i+1), 100(i+2)). */
static void
five_marks(fx_t *f)
{
    lh_timeline_opts_t o = {0};
    o.diff = 1;
    o.series = 1;
    fx_new(f, &o);
    alloc(f, 50, 0x10, 7, 4);            /* before the first mark: in no interval */
    for (int i = 0; i < 5; i++) {
        mark(f, 100 * (uint64_t)(i + 1), "tick");
        if (i < 4) {
            alloc(f, 100 * (uint64_t)(i + 1) + 10, 0x1000 + 0x10 * (uint64_t)i, 64, 1);
        }
        if (i == 1) {
            alloc(f, 220, 0x2000, 100, 2);  /* freed at 420, before `to`: no leak */
        }
        if (i == 2) {
            alloc(f, 330, 0x3000, 30, 3);   /* freed at 600, after `to`: a leak */
        }
        if (i == 3) {
            dealloc(f, 420, 0x2000);
        }
    }
    alloc(f, 550, 0x5000, 9, 5);          /* after the last mark: in no interval */
    dealloc(f, 600, 0x3000);
    dealloc(f, 610, 0x10);
}

/* Six snapshots: a site leaks 64 B in each interval up to #4 (the heap peaks there), then
 * teardown frees everything over #5 and #6. The default end is #4, found in the one pass:
 * the blocks freed after #4 (not after #6) are its leaks. */
static void
test_diff_teardown_one_pass(void **state)
{
    (void)state;
    fx_t f;
    lh_diff_t d;
    lh_err_t err;
    lh_timeline_opts_t o = {0};
    o.diff = 1;
    o.series = 1;
    fx_new(&f, &o);
    for (uint64_t i = 0; i < 4; i++) {
        snapshot(&f, 100 * (i + 1), "tick", LH_SNAP_PERIOD);
        alloc(&f, 100 * (i + 1) + 10, 0x1000 + 0x100 * i, 64, 1);
        alloc(&f, 100 * (i + 1) + 20, 0x8000 + 0x100 * i, 8, 2);
        if (i) { /* live at one snapshot only: freed before #4, or born after it */
            dealloc(&f, 100 * (i + 1) + 30, 0x8000 + 0x100 * (i - 1));
        }
    }
    dealloc(&f, 440, 0x8300);
    dealloc(&f, 450, 0x1000);
    dealloc(&f, 460, 0x1100);
    snapshot(&f, 500, "tick", LH_SNAP_PERIOD);
    dealloc(&f, 510, 0x1200);
    snapshot(&f, 600, "tick", LH_SNAP_PERIOD);
    dealloc(&f, 610, 0x1300);
    snapshot(&f, 700, "exit", LH_SNAP_EXIT);
    /* 0x8200 (born in #3, freed after #4) leaks; 0x8300 (born after #4) does not */
    lh_diff_opts_t dopts = {LH_BOUND_AUTO, NULL, 0};
    assert_int_equal(lh_timeline_diff(f.tl, f.r, &dopts, &d, &err), 0);
    assert_int_equal(d.kind, LH_BOUND_SNAPSHOTS);
    assert_int_equal(d.to, 3);
    assert_int_equal(d.to_before_teardown, 1);
    assert_int_equal(d.n_last, 5);
    assert_int_equal(d.n_intervals, 3);
    assert_int_equal(d.n_sites, 2);
    assert_int_equal(d.sites[0].stack_id, 1);
    assert_int_equal(d.sites[0].total_blocks, 3); /* born in #1..#3, live at #4 */
    assert_int_equal(d.sites[0].leaked_intervals, 3);
    assert_int_equal(d.sites[1].stack_id, 2);
    assert_int_equal(d.sites[1].total_blocks, 1);
    assert_int_equal(d.total_bytes, 3 * 64 + 8);
    lh_diff_fini(&d);
    fx_free(&f);
    /* the same trace with --to '#6': the last point, nothing moved, nothing live there */
    o.diff_to = "#6";
    fx_new(&f, &o);
    for (uint64_t i = 0; i < 6; i++) {
        if (i >= 4) {
            dealloc(&f, 100 * (i + 1) - 20, 0x1000 + 0x100 * (i - 4));
            dealloc(&f, 100 * (i + 1) - 10, 0x1000 + 0x100 * (i - 2));
        }
        snapshot(&f, 100 * (i + 1), "tick", LH_SNAP_PERIOD);
        if (i < 4) {
            alloc(&f, 100 * (i + 1) + 10, 0x1000 + 0x100 * i, 64, 1);
        }
    }
    assert_int_equal(lh_timeline_diff(f.tl, f.r, &dopts, &d, &err), 0);
    assert_int_equal(d.to, 5);
    assert_int_equal(d.to_before_teardown, 0);
    assert_int_equal(d.n_sites, 0);
    lh_diff_fini(&d);
    fx_free(&f);
}

static void
test_diff_intervals(void **state)
{
    (void)state;
    fx_t f;
    lh_diff_t d;
    lh_err_t err;
    five_marks(&f);
    lh_diff_opts_t o = {LH_BOUND_AUTO, NULL, 0};
    assert_int_equal(lh_timeline_diff(f.tl, f.r, &o, &d, &err), 0);
    assert_int_equal(d.kind, LH_BOUND_MARKS);
    assert_int_equal(d.n_bounds, 5);
    assert_int_equal(d.from, 0);
    assert_int_equal(d.to, 4);
    assert_int_equal(d.n_intervals, 4);
    assert_int_equal(d.n_marks, 4);
    assert_int_equal(d.n_sites, 2);
    const lh_diff_site_t *s1 = diff_site(&d, 1), *s3 = diff_site(&d, 3);
    assert_non_null(s1);
    assert_non_null(s3);
    assert_null(diff_site(&d, 2));
    assert_null(diff_site(&d, 4));
    assert_null(diff_site(&d, 5));
    assert_int_equal(s1->total_blocks, 4);
    assert_int_equal(s1->total_bytes, 256);
    assert_int_equal(s1->leaked_intervals, 4);
    assert_true(s1->share == 1.0);
    assert_true(s1->score == 256.0);
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(s1->blocks[i], 1);
    }
    assert_int_equal(s3->total_blocks, 1);
    assert_int_equal(s3->bytes[2], 30);
    assert_int_equal(s3->leaked_intervals, 1);
    assert_true(s3->score == 30.0 * 0.25);
    assert_ptr_equal(&d.sites[0], s1); /* ranked by score */
    assert_int_equal(d.total_blocks, 5);
    lh_diff_fini(&d);

    /* The default skips the first interval. */
    o.skip = -1;
    assert_int_equal(lh_timeline_diff(f.tl, f.r, &o, &d, &err), 0);
    assert_int_equal(d.skip, 1);
    assert_int_equal(d.first, 1);
    assert_int_equal(d.n_intervals, 3);
    assert_int_equal(diff_site(&d, 1)->total_blocks, 3);
    lh_diff_fini(&d);

    /* --from #3: blocks from interval 2 on, no default skip. */
    o.from = "#3";
    assert_int_equal(lh_timeline_diff(f.tl, f.r, &o, &d, &err), 0);
    assert_int_equal(d.skip, 0);
    assert_int_equal(d.n_intervals, 2);
    assert_int_equal(diff_site(&d, 1)->total_blocks, 2);
    assert_int_equal(diff_site(&d, 3)->total_blocks, 1);
    lh_diff_fini(&d);

    o.from = "nosuch";
    assert_int_equal(lh_timeline_diff(f.tl, f.r, &o, &d, &err), LH_EINVAL);
    assert_non_null(strstr(err.msg, "start 'nosuch'"));
    assert_int_equal(d.why, LH_WHY_FROM);
    assert_non_null(strstr(err.msg, "'tick' (5)"));
    o.from = "#5";
    assert_int_equal(lh_timeline_diff(f.tl, f.r, &o, &d, &err), LH_EINVAL);
    assert_non_null(strstr(err.msg, "empty range"));
    o.from = NULL;
    o.skip = 4;
    assert_int_equal(lh_timeline_diff(f.tl, f.r, &o, &d, &err), LH_EINVAL);
    assert_non_null(strstr(err.msg, "skip 4 leaves no interval"));
    assert_int_equal(d.why, LH_WHY_SKIP);
    fx_free(&f);
}

/* --to fixed while streaming: frees after it still count as live there. */
static void
test_diff_to(void **state)
{
    (void)state;
    fx_t f;
    lh_diff_t d;
    lh_err_t err;
    lh_timeline_opts_t o = {0};
    o.diff = 1;
    o.diff_to = "b#2";
    fx_new(&f, &o);
    mark(&f, 100, "a");
    alloc(&f, 110, 0x100, 10, 1);
    mark(&f, 200, "b");
    alloc(&f, 210, 0x200, 20, 1);
    mark(&f, 300, "b");              /* `to` */
    alloc(&f, 310, 0x300, 40, 1);    /* after `to` */
    dealloc(&f, 320, 0x100);         /* after `to`: still a leak of interval 0 */
    mark(&f, 400, "b");
    dealloc(&f, 410, 0x200);
    lh_diff_opts_t dopts = {LH_BOUND_AUTO, NULL, 0};
    assert_int_equal(lh_timeline_diff(f.tl, f.r, &dopts, &d, &err), 0);
    assert_int_equal(d.to, 2);
    assert_int_equal(d.n_intervals, 2);
    assert_int_equal(d.n_sites, 1);
    assert_int_equal(d.sites[0].blocks[0], 1);
    assert_int_equal(d.sites[0].blocks[1], 1);
    assert_int_equal(d.sites[0].total_bytes, 30);
    lh_diff_fini(&d);
    fx_free(&f);

    /* A bare label: its last use; an unknown one: the labels are listed. */
    o.diff_to = "b";
    fx_new(&f, &o);
    mark(&f, 100, "a");
    mark(&f, 200, "b");
    mark(&f, 300, "b");
    mark(&f, 400, "c");
    assert_int_equal(lh_timeline_diff(f.tl, f.r, &dopts, &d, &err), 0);
    assert_int_equal(d.to, 2);
    lh_diff_fini(&d);
    fx_free(&f);
    o.diff_to = "zzz";
    fx_new(&f, &o);
    mark(&f, 100, "a");
    mark(&f, 200, "b");
    assert_int_equal(lh_timeline_diff(f.tl, f.r, &dopts, &d, &err), LH_EINVAL);
    assert_string_equal(err.msg, "end 'zzz': no such mark; the trace's marks are: 'a' (1), "
                                 "'b' (1)");
    assert_int_equal(d.why, LH_WHY_TO);
    fx_free(&f);
}

static void
test_bound_find(void **state)
{
    (void)state;
    lh_boundary_t b[5] = {{0}};
    const char *labels[5] = {"start", "req", "req", "x#1", "req"};
    for (int i = 0; i < 5; i++) {
        b[i].label = (char *)labels[i];
    }
    assert_int_equal(lh_bound_find(b, 5, "req", 0), 1);
    assert_int_equal(lh_bound_find(b, 5, "req", 1), 4);
    assert_int_equal(lh_bound_find(b, 5, "req#2", 0), 2);
    assert_int_equal(lh_bound_find(b, 5, "req#4", 0), -1);
    assert_int_equal(lh_bound_find(b, 5, "#1", 1), 0);
    assert_int_equal(lh_bound_find(b, 5, "#6", 1), -1);
    assert_int_equal(lh_bound_find(b, 5, "x#1", 0), 3); /* an exact label wins */
    assert_int_equal(lh_bound_find(b, 5, "nope", 0), -1);
    char buf[128];
    lh_bound_labels(b, 5, buf, sizeof buf);
    assert_string_equal(buf, "'start' (1), 'req' (3), 'x#1' (1)");
    /* fed one at a time, as a pass sees them, the last hit is the answer for the whole list
     * (an end moves with every later match, an exact one never with #N after it) */
    const char *specs[] = {"req", "req#2", "#4", "x#1", "start", "nope"};
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        for (int for_to = 0; for_to < 2; for_to++) {
            lh_bound_spec_t sp;
            lh_bound_cursor_t cur = {0};
            long last = -1;
            lh_bound_spec_parse(specs[k], &sp);
            for (long i = 0; i < 5; i++) {
                last = lh_bound_step(&sp, &cur, b[i].label, for_to) ? i : last;
            }
            assert_int_equal(last, lh_bound_find(b, 5, specs[k], for_to));
        }
    }
    /* the same rule over another shape of list */
    struct snap {
        int n;
        char *label;
    } snaps[3] = {{1, "a"}, {2, "b"}, {3, "a"}};
    assert_int_equal(lh_bound_find_in(snaps, 3, sizeof *snaps, offsetof(struct snap, label),
                                      "a", 1), 2);
    assert_int_equal(lh_bound_find_in(snaps, 3, sizeof *snaps, offsetof(struct snap, label),
                                      "a", 0), 0);
    assert_int_equal(lh_bound_find_in(snaps, 3, sizeof *snaps, offsetof(struct snap, label),
                                      "#2", 0), 1);
}

/* Snapshots taken while running win over marks; the exit snapshot is not the default end. */
static void
test_diff_snapshots(void **state)
{
    (void)state;
    fx_t f;
    lh_diff_t d;
    lh_err_t err;
    lh_timeline_opts_t o = {0};
    o.diff = 1;
    fx_new(&f, &o);
    mark(&f, 50, "m");
    snapshot(&f, 100, "signal-1", LH_SNAP_SIGNAL);
    alloc(&f, 110, 0x100, 10, 1);
    mark(&f, 150, "m");
    snapshot(&f, 200, "signal-2", LH_SNAP_SIGNAL);
    alloc(&f, 210, 0x200, 10, 2);    /* after the last running snapshot */
    dealloc(&f, 290, 0x100);         /* shutdown frees everything */
    dealloc(&f, 291, 0x200);
    snapshot(&f, 300, "exit", LH_SNAP_EXIT);
    lh_diff_opts_t dopts = {LH_BOUND_AUTO, NULL, -1};
    assert_int_equal(lh_timeline_diff(f.tl, f.r, &dopts, &d, &err), 0);
    assert_int_equal(d.kind, LH_BOUND_SNAPSHOTS);
    assert_int_equal(d.n_bounds, 3);
    assert_int_equal(d.to, 1);
    assert_int_equal(d.skip, 0); /* a range of one interval is not skipped */
    assert_int_equal(d.n_marks, 1);
    assert_int_equal(d.n_sites, 1);
    assert_int_equal(d.sites[0].stack_id, 1);
    lh_diff_fini(&d);
    dopts.kind = LH_BOUND_MARKS;
    assert_int_equal(lh_timeline_diff(f.tl, f.r, &dopts, &d, &err), 0);
    assert_int_equal(d.kind, LH_BOUND_MARKS);
    assert_int_equal(d.n_sites, 1);
    assert_int_equal(d.sites[0].stack_id, 1); /* born 110, live at the mark at 150 */
    lh_diff_fini(&d);
    fx_free(&f);

    /* No marks, only the exit snapshot: nothing to cut the run with. */
    fx_new(&f, &o);
    alloc(&f, 10, 0x100, 10, 1);
    snapshot(&f, 300, "exit", LH_SNAP_EXIT);
    dopts.kind = LH_BOUND_AUTO;
    assert_int_equal(lh_timeline_diff(f.tl, f.r, &dopts, &d, &err), LH_EINVAL);
    assert_non_null(strstr(err.msg, "no marks and no snapshots"));
    fx_free(&f);
    fx_new(&f, &o);
    mark(&f, 10, "only");
    assert_int_equal(lh_timeline_diff(f.tl, f.r, &dopts, &d, &err), LH_EINVAL);
    /* the analysis's words only: the CLI adds the advice naming its commands (pass.c) */
    assert_string_equal(err.msg, "the trace has 1 mark: differential leaks need at least 2 "
                        "(one interval)");
    assert_int_equal(d.why, LH_WHY_FEW);
    fx_free(&f);
}

/* ---------------------------------------------------------------------------------------
 * Growth
 * ------------------------------------------------------------------------------------- */

static void
stats_of(const uint64_t *bytes, size_t n, lh_growth_site_t *s)
{
    static uint64_t blocks[64];
    static uint64_t b[64];
    memcpy(b, bytes, n * sizeof *b);
    for (size_t i = 0; i < n; i++) {
        blocks[i] = bytes[i] / 8;
    }
    memset(s, 0, sizeof *s);
    s->bytes = b;
    s->blocks = blocks;
    lh_growth_site_stats(s, n);
}

static void
test_growth_rule(void **state)
{
    (void)state;
    lh_growth_site_t s;
    const uint64_t linear[] = {0, 64, 128, 192, 256, 320};
    stats_of(linear, 6, &s);
    assert_true(s.slope_bytes == 64.0); /* exact */
    assert_true(s.slope_blocks == 8.0);
    assert_int_equal(s.grew_intervals, 5);
    assert_int_equal(s.intervals, 5);
    assert_true(s.growing);

    /* A late transient peak: positive slope, but back to where it started. */
    const uint64_t peak[] = {100, 100, 100, 100, 5000, 9000, 100, 100};
    stats_of(peak, 8, &s);
    assert_true(s.slope_bytes > 0);
    assert_false(s.growing);
    /* ... and one that does not quite come back: it gave back most of what it gained. */
    const uint64_t peak2[] = {100, 100, 100, 5000, 9000, 200, 200};
    stats_of(peak2, 7, &s);
    assert_true(s.slope_bytes > 0);
    assert_false(s.growing);

    /* A slow leak: one step in many intervals still grows. */
    uint64_t slow[40];
    for (size_t i = 0; i < 40; i++) {
        slow[i] = 1000 + 48 * (i / 10);
    }
    stats_of(slow, 40, &s);
    assert_int_equal(s.grew_intervals, 3);
    assert_true(s.growing);
    assert_true(s.slope_bytes > 4.0 && s.slope_bytes < 5.5);

    /* Noisy growth (up 3, down 1): keeps half of what it gains. */
    const uint64_t noisy[] = {0, 30, 20, 50, 40, 70, 60, 90};
    stats_of(noisy, 8, &s);
    assert_true(s.growing);
    assert_int_equal(s.grew_intervals, 4);

    const uint64_t flat[] = {10, 10, 10};
    stats_of(flat, 3, &s);
    assert_false(s.growing);
    assert_true(s.slope_bytes == 0.0);
    const uint64_t down[] = {30, 20, 10};
    stats_of(down, 3, &s);
    assert_false(s.growing);
}

static void
test_growth_series(void **state)
{
    (void)state;
    fx_t f;
    lh_growth_t g;
    lh_err_t err;
    lh_timeline_opts_t o = {0};
    o.series = 1;
    fx_new(&f, &o);
    /* Site 1 grows 64 B per mark; site 2 peaks and comes back; site 3 churns. */
    for (uint64_t i = 0; i < 10; i++) {
        uint64_t t = 1000 * (i + 1);
        mark(&f, t, "request");
        alloc(&f, t + 1, 0x10000 + 0x100 * i, 64, 1);
        if (i >= 5 && i < 8) {
            alloc(&f, t + 2, 0x20000 + 0x100 * i, 100000, 2);
        }
        if (i == 8) {
            for (uint64_t k = 5; k < 8; k++) {
                dealloc(&f, t + 3 + k, 0x20000 + 0x100 * k);
            }
        }
        alloc(&f, t + 20, 0x30000, 10, 3);
        dealloc(&f, t + 21, 0x30000);
    }
    lh_growth_opts_t go = {LH_BOUND_AUTO, 0};
    assert_int_equal(lh_timeline_growth(f.tl, &go, &g, &err), 0);
    assert_int_equal(g.kind, LH_BOUND_MARKS);
    assert_int_equal(g.n_points, 10);
    assert_int_equal(g.n_active, 2); /* site 3 is never live at a mark */
    assert_int_equal(g.n_growing, 1);
    assert_int_equal(g.n_sites, 1);
    assert_int_equal(g.sites[0].stack_id, 1);
    assert_true(g.sites[0].slope_bytes == 64.0);
    assert_int_equal(g.sites[0].bytes[0], 0);
    assert_int_equal(g.sites[0].bytes[9], 576);
    assert_int_equal(g.sites[0].blocks[3], 3);
    lh_growth_fini(&g);

    go.every_site = 1;
    assert_int_equal(lh_timeline_growth(f.tl, &go, &g, &err), 0);
    assert_int_equal(g.n_sites, 2);
    assert_int_equal(g.sites[1].stack_id, 2);
    assert_false(g.sites[1].growing);
    assert_int_equal(g.sites[1].bytes[8], 300000); /* at mark 9, before the frees */
    assert_int_equal(g.sites[1].bytes[9], 0);
    lh_growth_fini(&g);

    /* Counts, by site and by a grouping of sites. */
    lh_counts_t c;
    assert_int_equal(lh_timeline_counts(f.tl, LH_BOUND_AUTO, NULL, 0, 0, &c, &err), 0);
    assert_int_equal(c.n_groups, 2);
    assert_int_equal(c.groups[0].group, 1);
    assert_int_equal(c.groups[0].final, 9);
    assert_int_equal(c.groups[0].counts[4], 4);
    assert_int_equal(c.groups[1].final, 0);
    lh_counts_fini(&c);
    uint32_t group_of[64] = {0};
    group_of[1] = 0;
    group_of[2] = 0;
    group_of[3] = 1;
    assert_true(lh_timeline_n_sites(f.tl) <= 64);
    assert_int_equal(lh_timeline_counts(f.tl, LH_BOUND_AUTO, group_of, 2, 1, &c, &err), 0);
    assert_int_equal(c.n_groups, 1);
    assert_int_equal(c.n_shown, 1);
    assert_int_equal(c.groups[0].n_sites, 2);
    assert_int_equal(c.groups[0].counts[8], 8 + 3);
    lh_counts_fini(&c);
    fx_free(&f);
}

/* Sites live before the first mark, one back at 0 by then, a zero-size block, then marks
 * (with feed_marks) as in test_growth_series. */
static void
feed_points(fx_t *f, int feed_marks)
{
    alloc(f, 10, 0x1000, 64, 1);
    alloc(f, 11, 0x1100, 64, 1);
    alloc(f, 12, 0x1200, 64, 1);
    dealloc(f, 13, 0x1100);
    alloc(f, 14, 0x4000, 32, 4);
    dealloc(f, 15, 0x4000);
    alloc(f, 16, 0x5000, 0, 5);
    alloc(f, 17, 0x6000, 500, 6);
    for (uint64_t i = 0; feed_marks && i < 6; i++) {
        uint64_t t = 1000 * (i + 1);
        mark(f, t, "request");
        alloc(f, t + 1, 0x10000 + 0x100 * i, 64, 1);
        if (i == 2) {
            dealloc(f, t + 2, 0x6000);
        }
    }
    snapshot(f, 9000, "exit", LH_SNAP_EXIT);
}

static void
test_growth_points_only(void **state)
{
    (void)state;
    lh_growth_t g[2];
    lh_err_t err;
    lh_growth_opts_t go = {LH_BOUND_AUTO, 1};
    for (int po = 0; po < 2; po++) {
        fx_t f;
        lh_timeline_opts_t o = {0};
        o.series = 1;
        o.points_only = po;
        fx_new(&f, &o);
        feed_points(&f, 1);
        assert_int_equal(lh_timeline_growth(f.tl, &go, &g[po], &err), 0);
        fx_free(&f);
    }
    /* the same listing either way: the sites live before the first mark counted there */
    for (int po = 0; po < 2; po++) {
        assert_int_equal(g[po].kind, LH_BOUND_MARKS);
        assert_int_equal(g[po].n_points, 6);
        assert_int_equal(g[po].n_active, 3); /* 1, 5 (one block of 0 bytes) and 6 */
        assert_int_equal(g[po].n_growing, 1);
        assert_int_equal(g[po].n_sites, 3);
        assert_int_equal(g[po].sites[0].stack_id, 1);
        assert_true(g[po].sites[0].slope_bytes == 64.0);
        assert_int_equal(g[po].sites[0].bytes[0], 128);
        assert_int_equal(g[po].sites[0].blocks[0], 2);
        assert_int_equal(g[po].sites[0].bytes[5], 128 + 5 * 64);
        for (size_t i = 1; i < 3; i++) {
            uint32_t id = g[po].sites[i].stack_id;
            assert_int_equal(id, i == 1 ? 5 : 6); /* slope 0, then falling */
            assert_int_equal(g[po].sites[i].blocks[0], 1);
            assert_int_equal(g[po].sites[i].bytes[0], id == 5 ? 0 : 500);
            assert_int_equal(g[po].sites[i].blocks[5], id == 5 ? 1 : 0);
        }
    }
    lh_growth_fini(&g[0]);
    lh_growth_fini(&g[1]);
    /* without marks: no survivors' growth to fall back to */
    fx_t f;
    lh_timeline_opts_t o = {0};
    o.series = 1;
    o.points_only = 1;
    fx_new(&f, &o);
    feed_points(&f, 0);
    lh_growth_t a;
    assert_int_equal(lh_timeline_growth(f.tl, NULL, &a, &err), LH_EINVAL);
    assert_int_equal(a.why, LH_WHY_NO_POINTS);
    fx_free(&f);
    fx_new(&f, &o);
    mark(&f, 10, "only");
    assert_int_equal(lh_timeline_growth(f.tl, NULL, &a, &err), LH_EINVAL);
    assert_string_equal(err.msg, "the trace has 1 mark: growth needs at least 2");
    assert_int_equal(a.why, LH_WHY_FEW);
    fx_free(&f);
}

/* ---------------------------------------------------------------------------------------
 * Temporaries and RSS
 * ------------------------------------------------------------------------------------- */

static void
test_temporary(void **state)
{
    (void)state;
    fx_t f;
    lh_temp_t t;
    lh_err_t err;
    lh_timeline_opts_t o = {0};
    o.temporary = 1;
    o.temp_threshold_ns = 1000;
    fx_new(&f, &o);
    for (uint64_t i = 0; i < 5; i++) {
        alloc(&f, 10000 * i, 0x100, 32, 1);
        dealloc(&f, 10000 * i + 1000, 0x100); /* exactly the threshold: temporary */
    }
    alloc(&f, 60000, 0x200, 8, 2);
    dealloc(&f, 61001, 0x200);                /* just over */
    alloc(&f, 70000, 0x300, 8, 3);            /* realloc'd away: not a temporary */
    lh_event_t e = {0};
    e.type = LH_REC_REALLOC;
    e.ts_ns = 70010;
    e.old_addr = 0x300;
    e.addr = 0x400;
    e.size = 16;
    e.stack_id = 3;
    assert_int_equal(lh_replay_event(f.r, &e, &err), 0);
    assert_int_equal(lh_timeline_event(f.tl, f.r, &e, &err), 0);
    assert_int_equal(lh_timeline_temporary(f.tl, f.r, &t, &err), 0);
    assert_int_equal(t.n_sites, 1);
    assert_int_equal(t.sites[0].stack_id, 1);
    assert_int_equal(t.sites[0].n_temp, 5);
    assert_int_equal(t.sites[0].temp_bytes, 160);
    assert_int_equal(t.sites[0].n_allocs, 5);
    assert_int_equal(t.sites[0].lifetime_ns, 5000);
    assert_int_equal(t.n_temp, 5);
    lh_temp_fini(&t);
    fx_free(&f);
}

static void
test_rss_cmp(void **state)
{
    (void)state;
    lh_rss_cmp_t c = {0};
    lh_event_t e = {0};
    e.type = LH_REC_RSS;
    e.size = 10 << 20;
    lh_rss_cmp_event(&c, &e, 1 << 20);
    assert_false(lh_rss_cmp_suspicious(&c)); /* one sample */
    e.size = 50 << 20;
    lh_rss_cmp_event(&c, &e, 3 << 20);
    assert_int_equal(c.n_samples, 2);
    assert_int_equal(c.first_rss, 10 << 20);
    assert_int_equal(c.last_heap, 3 << 20);
    assert_true(lh_rss_cmp_suspicious(&c)); /* +40 MiB RSS, +2 MiB heap */
    lh_rss_cmp_t d = c;
    d.last_heap = d.first_heap + (30 << 20); /* the heap explains most of it */
    assert_false(lh_rss_cmp_suspicious(&d));
    d = c;
    d.last_rss = d.first_rss + (3 << 20); /* small: allocator noise */
    d.last_heap = d.first_heap;
    assert_false(lh_rss_cmp_suspicious(&d));
    e.type = LH_REC_MARK;
    lh_rss_cmp_event(&c, &e, 0);
    assert_int_equal(c.n_samples, 2);
}

/* A synthetic trace through the real reader: marks, snapshots (with triggers), RSS. */
static void
test_trace_end_to_end(void **state)
{
    (void)state;
    char path[] = "/tmp/lh_test_timeline_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    lh_tb_t *tb = lh_tb_new();
    lh_tb_info_clock(tb, 1000, 0);
    lh_tb_frame_begin(tb, 7, 1000);
    lh_tb_rss(tb, 1100, 8 << 20);
    for (uint64_t i = 0; i < 4; i++) {
        uint64_t t = 2000 + 1000 * i;
        lh_tb_snapshot(tb, t, i % 2 ? "period-1" : "growth-1",
                       i % 2 ? LH_SNAP_PERIOD : LH_SNAP_GROWTH);
        lh_tb_alloc(tb, t + 10, 0x1000 + 0x40 * i, 48, 1, LH_AK_MALLOC);
        lh_tb_alloc(tb, t + 20, 0x9000, 1000, 2, LH_AK_MALLOC);
        lh_tb_free_rec(tb, t + 30, 0x9000);
    }
    lh_tb_rss(tb, 6500, 60 << 20);
    lh_tb_snapshot(tb, 7000, "exit", LH_SNAP_EXIT);
    lh_tb_end(tb, 7100, LH_EXIT_NORMAL, 0);
    lh_tb_frame_end(tb, LH_CODEC_ZSTD, 0);
    lh_tb_write(tb, path, SIZE_MAX);
    lh_tb_free(tb);

    lh_trace_t *t;
    lh_err_t err;
    lh_event_t e;
    fx_t f;
    lh_timeline_opts_t o = {0};
    o.diff = 1;
    o.series = 1;
    assert_int_equal(lh_trace_open(path, NULL, &t, &err), 0);
    fx_new(&f, &o);
    int rc;
    while ((rc = lh_trace_next(t, &e, &err)) > 0) {
        assert_int_equal(lh_replay_event(f.r, &e, &err), 0);
        assert_int_equal(lh_timeline_event(f.tl, f.r, &e, &err), 0);
    }
    assert_int_equal(rc, 0);
    size_t n;
    const lh_boundary_t *b = lh_timeline_bounds(f.tl, LH_BOUND_SNAPSHOTS, &n);
    assert_int_equal(n, 5);
    assert_string_equal(b[0].label, "growth-1");
    assert_int_equal(b[0].trigger, LH_SNAP_GROWTH);
    assert_int_equal(b[1].trigger, LH_SNAP_PERIOD);
    assert_int_equal(b[4].trigger, LH_SNAP_EXIT);
    assert_int_equal(b[2].heap_bytes, 96); /* two 48-byte blocks live at the third */
    lh_diff_t d;
    lh_diff_opts_t dopts = {LH_BOUND_AUTO, NULL, 0};
    assert_int_equal(lh_timeline_diff(f.tl, f.r, &dopts, &d, &err), 0);
    assert_int_equal(d.kind, LH_BOUND_SNAPSHOTS);
    assert_int_equal(d.n_intervals, 3);
    assert_int_equal(d.n_sites, 1);
    assert_int_equal(d.sites[0].stack_id, 1);
    assert_int_equal(d.sites[0].total_bytes, 144);
    lh_diff_fini(&d);
    lh_growth_t g;
    assert_int_equal(lh_timeline_growth(f.tl, NULL, &g, &err), 0);
    assert_int_equal(g.kind, LH_BOUND_SNAPSHOTS);
    assert_int_equal(g.n_points, 4); /* the exit snapshot is not a point */
    assert_true(g.sites[0].slope_bytes == 48.0);
    lh_growth_fini(&g);
    const lh_rss_cmp_t *rss = lh_timeline_rss(f.tl);
    assert_int_equal(rss->n_samples, 2);
    assert_int_equal(rss->last_heap, 192);
    assert_true(lh_rss_cmp_suspicious(rss));
    fx_free(&f);
    lh_trace_close(t);
    unlink(path);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diff_intervals),
        cmocka_unit_test(test_diff_teardown_one_pass), cmocka_unit_test(test_diff_to),
        cmocka_unit_test(test_bound_find),     cmocka_unit_test(test_diff_snapshots),
        cmocka_unit_test(test_growth_rule),    cmocka_unit_test(test_growth_series),
        cmocka_unit_test(test_growth_points_only),
        cmocka_unit_test(test_temporary),      cmocka_unit_test(test_rss_cmp),
        cmocka_unit_test(test_trace_end_to_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
