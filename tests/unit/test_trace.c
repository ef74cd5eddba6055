/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_trace.c: the trace reader on synthetic traces: info block, decoding, the global
 * order across threads' frames, unknown records, and every kind of damage.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "enc.h"
#include "replay.h"
#include "stream.h"
#include "timeline.h"
#include "trace.h"
#include "trace_builder.h"

static char dir[] = "/tmp/lh_test_trace_XXXXXX";
static char path[256];

static int
setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir)) {
        return -1;
    }
    snprintf(path, sizeof path, "%s/t.lht", dir);
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    unlink(path);
    rmdir(dir);
    return 0;
}

typedef struct got {
    lh_event_t ev[64];
    char labels[64][32];
    int n;
    int rc; /* of the last lh_trace_next */
} got_t;

/* Reads every event; the trace stays open in *tp for more checks. */
static void
read_all(const char *p, int salvage, lh_trace_t **tp, got_t *g, lh_err_t *err)
{
    lh_trace_opts_t opts = {.salvage = salvage};
    memset(g, 0, sizeof *g);
    assert_int_equal(lh_trace_open(p, &opts, tp, err), 0);
    while ((g->rc = lh_trace_next(*tp, &g->ev[g->n], err)) > 0) {
        lh_event_t *ev = &g->ev[g->n];
        size_t n = ev->label_len < 31 ? ev->label_len : 31;
        if (n) {
            memcpy(g->labels[g->n], ev->label, n);
        }
        ev->label = NULL;
        assert_true(g->n < 63);
        g->n++;
    }
}

/* Replays the events read: no free of an unknown block, and the heap left. */
static void
check_replay(const got_t *g, uint64_t blocks, uint64_t bytes)
{
    lh_replay_t *r;
    lh_err_t err;
    assert_int_equal(lh_replay_new(&r, &err), 0);
    for (int i = 0; i < g->n; i++) {
        assert_int_equal(lh_replay_event(r, &g->ev[i], &err), 0);
    }
    const lh_replay_totals_t *tot = lh_replay_totals(r);
    assert_int_equal(tot->n_unmatched_frees, 0);
    assert_int_equal(tot->heap_blocks, blocks);
    assert_int_equal(tot->heap_bytes, bytes);
    lh_replay_free(r);
}

static void
basic_trace(lh_tb_t *tb, uint8_t codec)
{
    static const char *argv[] = {"./prog", "--flag", "x y"};
    static const uint64_t ips[] = {0x401000, 0x401234, 0x7f0000001000};
    lh_tb_info_pid(tb, 4242, 1);
    lh_tb_info_exe(tb, "/usr/bin/prog");
    lh_tb_info_cmdline(tb, 3, argv);
    lh_tb_info_clock(tb, 1000, 1700000000000000000ull);
    lh_tb_frame_begin(tb, 4242, 1000);
    lh_tb_thread(tb, 1001, 4242, "main");
    lh_tb_stack(tb, 1, 0, ips, 3);
    lh_tb_alloc(tb, 1100, 0x5000, 64, 1, LH_AK_MALLOC);
    lh_tb_alloc(tb, 1200, 0x4000, 32, 1, LH_AK_CALLOC);
    lh_tb_free_rec(tb, 1300, 0x5000);
    lh_tb_mark(tb, 1400, "phase 2");
    lh_tb_end(tb, 1500, LH_EXIT_NORMAL, 3);
    lh_tb_frame_end(tb, codec, 0);
}

static void
check_basic(lh_trace_t *t, const got_t *g)
{
    assert_int_equal(g->rc, 0);
    assert_int_equal(g->n, 5);
    assert_int_equal(g->ev[0].type, LH_REC_THREAD);
    assert_string_equal(g->labels[0], "main");
    assert_int_equal(g->ev[1].type, LH_REC_ALLOC);
    assert_int_equal(g->ev[1].ts_ns, 1100);
    assert_int_equal(g->ev[1].addr, 0x5000);
    assert_int_equal(g->ev[1].size, 64);
    assert_int_equal(g->ev[1].stack_id, 1);
    assert_int_equal(g->ev[1].tid, 4242);
    assert_int_equal(g->ev[2].addr, 0x4000); /* a negative address delta */
    assert_int_equal(g->ev[2].kind, LH_AK_CALLOC);
    assert_int_equal(g->ev[3].type, LH_REC_FREE);
    assert_int_equal(g->ev[3].addr, 0x5000);
    assert_int_equal(g->ev[4].type, LH_REC_MARK);
    assert_string_equal(g->labels[4], "phase 2");

    const lh_trace_info_t *in = &lh_trace_parts(t)->info;
    assert_int_equal(in->pid, 4242);
    assert_int_equal(in->ppid, 1);
    assert_string_equal(in->exe, "/usr/bin/prog");
    assert_int_equal(in->argc, 3);
    assert_string_equal(in->argv[2], "x y");
    assert_null(in->argv[3]);
    assert_true(in->has_clock);
    assert_int_equal(in->mono_start_ns, 1000);

    const lh_trace_end_t *end = &lh_trace_parts(t)->end;
    assert_true(end->present);
    assert_int_equal(end->kind, LH_EXIT_NORMAL);
    assert_int_equal(end->status, 3);
    assert_int_equal(end->ts_ns, 1500);

    const lh_stack_t *st = lh_stacks_get(&lh_trace_parts(t)->stacks, 1);
    assert_non_null(st);
    assert_int_equal(st->n_ips, 3);
    assert_true(st->ips[2] == 0x7f0000001000ull);
    assert_null(lh_stacks_get(&lh_trace_parts(t)->stacks, 2));
    assert_string_equal(lh_trace_thread_name(t, 4242), "main");
    assert_int_equal(lh_trace_parts(t)->stats.n_frames, 1);
    assert_int_equal(lh_trace_parts(t)->stats.n_events, 5);
    assert_int_equal(lh_trace_parts(t)->warnings.n, 0);
}

static void
test_basic_zstd(void **state)
{
    (void)state;
    lh_tb_t *tb = lh_tb_new();
    lh_trace_t *t;
    lh_err_t err;
    got_t g;
    basic_trace(tb, LH_CODEC_ZSTD);
    lh_tb_write(tb, path, SIZE_MAX);
    read_all(path, 0, &t, &g, &err);
    check_basic(t, &g);
    lh_trace_close(t);
    lh_tb_free(tb);
}

/* SUPPRESSIONS (minor 5): the program's embedded rules are kept whole (the last record
 * wins), are no event, and move no time stamp; a trace without one has none. */
static void
test_suppressions(void **state)
{
    (void)state;
    lh_tb_t *tb = lh_tb_new();
    lh_trace_t *t;
    lh_err_t err;
    got_t g;
    lh_tb_info_pid(tb, 7, 1);
    lh_tb_frame_begin(tb, 0, 1000);
    lh_tb_suppressions(tb, 1000, "leak:old\n");
    lh_tb_suppressions(tb, 1010, "leak:foo\nleak:^bar$\n");
    lh_tb_frame_end(tb, LH_CODEC_RAW, 0);
    lh_tb_frame_begin(tb, 7, 1000);
    lh_tb_mark(tb, 1400, "m");
    lh_tb_end(tb, 1500, LH_EXIT_NORMAL, 0);
    lh_tb_frame_end(tb, LH_CODEC_RAW, 0);
    lh_tb_write(tb, path, SIZE_MAX);
    read_all(path, 0, &t, &g, &err);
    assert_int_equal(g.rc, 0);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.ev[0].type, LH_REC_MARK);
    assert_int_equal(g.ev[0].ts_ns, 1400);
    assert_string_equal(lh_trace_parts(t)->lsan_supp, "leak:foo\nleak:^bar$\n");
    lh_trace_close(t);
    lh_tb_free(tb);

    tb = lh_tb_new();
    basic_trace(tb, LH_CODEC_RAW);
    lh_tb_write(tb, path, SIZE_MAX);
    read_all(path, 0, &t, &g, &err);
    assert_null(lh_trace_parts(t)->lsan_supp);
    lh_trace_close(t);
    lh_tb_free(tb);
}

static void
test_basic_raw(void **state)
{
    (void)state;
    lh_tb_t *tb = lh_tb_new();
    lh_trace_t *t;
    lh_err_t err;
    got_t g;
    basic_trace(tb, LH_CODEC_RAW);
    lh_tb_write(tb, path, SIZE_MAX);
    read_all(path, 0, &t, &g, &err);
    check_basic(t, &g);
    lh_trace_close(t);
    lh_tb_free(tb);
}

/* Thread B frees a block that thread A allocated earlier, but A's frame comes later in the
 * file; events after a SYNC's time wait for the next SYNC. */
static void
test_merge_order(void **state)
{
    (void)state;
    lh_tb_t *tb = lh_tb_new();
    lh_trace_t *t;
    lh_err_t err;
    got_t g;
    lh_tb_frame_begin(tb, 2, 20); /* thread B */
    lh_tb_free_rec(tb, 20, 0x1000);
    lh_tb_frame_end(tb, LH_CODEC_ZSTD, 0);
    lh_tb_frame_begin(tb, 1, 10); /* thread A, flushed later */
    lh_tb_alloc(tb, 10, 0x1000, 100, 1, LH_AK_MALLOC);
    lh_tb_alloc(tb, 50, 0x2000, 200, 1, LH_AK_MALLOC); /* after the first SYNC */
    lh_tb_frame_end(tb, LH_CODEC_ZSTD, 0);
    lh_tb_frame_begin(tb, 0, 30); /* the ticker */
    lh_tb_sync(tb, 30);
    lh_tb_frame_end(tb, LH_CODEC_RAW, LH_FRAME_F_SYNC);
    lh_tb_frame_begin(tb, 2, 40); /* thread B again: stamped after 30, before 50 */
    lh_tb_alloc(tb, 40, 0x3000, 300, 2, LH_AK_MALLOC);
    lh_tb_frame_end(tb, LH_CODEC_ZSTD, 0);
    lh_tb_frame_begin(tb, 0, 60);
    lh_tb_sync(tb, 60);
    lh_tb_frame_end(tb, LH_CODEC_RAW, LH_FRAME_F_SYNC);
    lh_tb_write(tb, path, SIZE_MAX);

    read_all(path, 0, &t, &g, &err);
    assert_int_equal(g.rc, 0);
    assert_int_equal(g.n, 4);
    assert_int_equal(g.ev[0].ts_ns, 10);
    assert_int_equal(g.ev[0].tid, 1);
    assert_int_equal(g.ev[1].ts_ns, 20);
    assert_int_equal(g.ev[1].type, LH_REC_FREE);
    assert_int_equal(g.ev[2].ts_ns, 40); /* not 50: the first SYNC held 50 back */
    assert_int_equal(g.ev[3].ts_ns, 50);
    assert_int_equal(lh_trace_parts(t)->stats.n_syncs, 2);
    assert_false(lh_trace_parts(t)->end.present); /* no END record: killed */

    check_replay(&g, 2, 500);
    lh_trace_close(t);
    lh_tb_free(tb);
}

/* Equal times: file order (frame seq, then index in frame) decides. */
static void
test_equal_times_stable(void **state)
{
    (void)state;
    lh_tb_t *tb = lh_tb_new();
    lh_trace_t *t;
    lh_err_t err;
    got_t g;
    lh_tb_frame_begin(tb, 1, 5);
    lh_tb_alloc(tb, 5, 0x100, 1, 0, 0);
    lh_tb_alloc(tb, 5, 0x200, 2, 0, 0);
    lh_tb_frame_end(tb, LH_CODEC_RAW, 0);
    lh_tb_frame_begin(tb, 2, 5);
    lh_tb_alloc(tb, 5, 0x300, 3, 0, 0);
    lh_tb_frame_end(tb, LH_CODEC_RAW, 0);
    lh_tb_write(tb, path, SIZE_MAX);
    read_all(path, 0, &t, &g, &err);
    assert_int_equal(g.n, 3);
    assert_int_equal(g.ev[0].size, 1);
    assert_int_equal(g.ev[1].size, 2);
    assert_int_equal(g.ev[2].size, 3);
    lh_trace_close(t);
    lh_tb_free(tb);
}

/* A realloc's halves are ordered separately: thread B frees Y (which it allocated) while A's
 * realloc is in flight, and the realloc returns Y afterwards. */
static void
test_realloc_halves(void **state)
{
    (void)state;
    lh_tb_t *tb = lh_tb_new();
    lh_trace_t *t;
    lh_replay_t *r;
    lh_err_t err;
    got_t g;
    lh_tb_frame_begin(tb, 1, 1);
    lh_tb_alloc(tb, 1, 0xA000, 10, 1, 0);
    lh_tb_realloc(tb, 10, 0xA000, 0xB000, 20, 2, 10); /* old freed at 10, new at 20 */
    lh_tb_alloc(tb, 25, 0xC000, 30, 1, 0);            /* delta from 20 */
    lh_tb_frame_end(tb, LH_CODEC_ZSTD, 0);
    lh_tb_frame_begin(tb, 2, 5);
    lh_tb_alloc(tb, 5, 0xB000, 40, 3, 0);
    lh_tb_free_rec(tb, 15, 0xB000);
    lh_tb_frame_end(tb, LH_CODEC_ZSTD, 0);
    lh_tb_write(tb, path, SIZE_MAX);
    read_all(path, 0, &t, &g, &err);
    assert_int_equal(g.rc, 0);
    assert_int_equal(g.n, 6);
    assert_int_equal(g.ev[2].type, LH_REC_REALLOC);
    assert_int_equal(g.ev[2].half, LH_HALF_FREE);
    assert_int_equal(g.ev[2].ts_ns, 10);
    assert_int_equal(g.ev[3].type, LH_REC_FREE);
    assert_int_equal(g.ev[4].type, LH_REC_REALLOC);
    assert_int_equal(g.ev[4].half, LH_HALF_ALLOC);
    assert_int_equal(g.ev[4].ts_ns, 20);
    assert_int_equal(g.ev[4].old_addr, 0xA000);
    assert_int_equal(g.ev[4].addr, 0xB000);
    assert_int_equal(g.ev[5].ts_ns, 25);
    assert_int_equal(g.ev[5].addr, 0xC000);
    assert_int_equal(lh_trace_parts(t)->stats.n_events, 5); /* the realloc counts once */

    assert_int_equal(lh_replay_new(&r, &err), 0);
    for (int i = 0; i < g.n; i++) {
        assert_int_equal(lh_replay_event(r, &g.ev[i], &err), 0);
    }
    const lh_replay_totals_t *tot = lh_replay_totals(r);
    assert_int_equal(tot->n_reallocs, 1);
    assert_int_equal(tot->n_missed_frees, 0);
    assert_int_equal(tot->n_unmatched_frees, 0);
    assert_int_equal(tot->heap_blocks, 2);
    assert_int_equal(tot->heap_bytes, 50);
    lh_live_block_t b;
    assert_int_equal(lh_replay_lookup(r, 0xB000, &b), 1);
    assert_int_equal(b.stack_id, 1); /* the block realloc moved is still stack 1's */
    uint32_t grower;
    assert_int_equal(lh_replay_growers(r, 1, &grower, 1), 1);
    assert_int_equal(grower, 2);
    lh_replay_free(r);
    lh_trace_close(t);
    lh_tb_free(tb);
}

/* EVENTS records (minor 4): allocations and frees without a record each, the stack id
 * carried from one allocation to the next within a frame (and reset at a frame's start);
 * the payloads are written out byte by byte here, as docs/FORMAT.md spells them. */
static void
test_events_record(void **state)
{
    (void)state;
    lh_tb_t *tb = lh_tb_new();
    lh_trace_t *t;
    lh_err_t err;
    got_t g;
    static const uint8_t r1[] = {
        0x2a, 0x80, 0x28, 0x40, 0x03, 0x01, /* +10 ns, code 2: 0x5000, 64 B, stack 3, calloc */
        0x15, 0x40, 0xc8, 0x01,             /* +5 ns, code 1: +0x100, 200 B (stack 3, malloc) */
        0x00, 0x3e,                         /* +0 ns, code 0: free -0x100 (0x5000) */
    };
    static const uint8_t r2[] = {0xb1, 0x09, 0x00, 0x10}; /* +300 ns, code 1: 0x5000, 16 B */
    static const uint8_t r3[] = {0x01, 0x80, 0x38, 0x08}; /* frame start, code 1: 0x7000, 8 B */
    lh_tb_frame_begin(tb, 7, 1000);
    lh_tb_raw(tb, LH_REC_EVENTS, r1, sizeof r1);
    lh_tb_raw(tb, LH_REC_EVENTS, r2, sizeof r2);
    lh_tb_frame_end(tb, LH_CODEC_ZSTD, 0);
    lh_tb_frame_begin(tb, 8, 2000);
    lh_tb_raw(tb, LH_REC_EVENTS, r3, sizeof r3);
    lh_tb_frame_end(tb, LH_CODEC_RAW, 0);
    lh_tb_write(tb, path, SIZE_MAX);

    read_all(path, 0, &t, &g, &err);
    assert_int_equal(g.rc, 0);
    assert_int_equal(g.n, 5);
    assert_int_equal(g.ev[0].type, LH_REC_ALLOC);
    assert_int_equal(g.ev[0].ts_ns, 1010);
    assert_int_equal(g.ev[0].addr, 0x5000);
    assert_int_equal(g.ev[0].size, 64);
    assert_int_equal(g.ev[0].stack_id, 3);
    assert_int_equal(g.ev[0].kind, LH_AK_CALLOC);
    assert_int_equal(g.ev[0].tid, 7);
    assert_int_equal(g.ev[1].type, LH_REC_ALLOC);
    assert_int_equal(g.ev[1].ts_ns, 1015);
    assert_int_equal(g.ev[1].addr, 0x5100);
    assert_int_equal(g.ev[1].size, 200);
    assert_int_equal(g.ev[1].stack_id, 3);
    assert_int_equal(g.ev[1].kind, LH_AK_MALLOC);
    assert_int_equal(g.ev[2].type, LH_REC_FREE);
    assert_int_equal(g.ev[2].ts_ns, 1015); /* same time: file order */
    assert_int_equal(g.ev[2].addr, 0x5000);
    assert_int_equal(g.ev[3].type, LH_REC_ALLOC);
    assert_int_equal(g.ev[3].ts_ns, 1315);
    assert_int_equal(g.ev[3].addr, 0x5000);
    assert_int_equal(g.ev[3].size, 16);
    assert_int_equal(g.ev[3].stack_id, 3); /* carried into the frame's next record */
    assert_int_equal(g.ev[4].ts_ns, 2000);
    assert_int_equal(g.ev[4].addr, 0x7000);
    assert_int_equal(g.ev[4].stack_id, 0); /* a new frame starts with none */
    assert_int_equal(g.ev[4].tid, 8);
    assert_int_equal(lh_trace_parts(t)->stats.n_events, 5);
    assert_int_equal(lh_trace_parts(t)->stats.n_records, 3);
    assert_int_equal(lh_trace_parts(t)->warnings.n, 0);

    check_replay(&g, 3, 224);
    lh_trace_close(t);
    lh_tb_free(tb);
}

/* An EVENTS record with code 3, or cut inside an event: malformed, like a short ALLOC. */
static void
test_events_malformed(void **state)
{
    (void)state;
    static const uint8_t code3[] = {0x01, 0x00, 0x10, 0x0b, 0x00}; /* a malloc, then code 3 */
    static const uint8_t cut[] = {0x01, 0x00, 0x10, 0x0a, 0x00, 0x10, 0x03}; /* no kind */
    const struct {
        const uint8_t *p;
        size_t n;
    } bad[] = {{code3, sizeof code3}, {cut, sizeof cut}};
    for (size_t i = 0; i < 2; i++) {
        lh_tb_t *tb = lh_tb_new();
        lh_trace_t *t;
        lh_err_t err = {{0}};
        got_t g;
        lh_tb_frame_begin(tb, 1, 100);
        lh_tb_alloc(tb, 100, 0x10, 8, 0, 0);
        lh_tb_raw(tb, LH_REC_EVENTS, bad[i].p, bad[i].n);
        lh_tb_frame_end(tb, LH_CODEC_ZSTD, 0);
        lh_tb_write(tb, path, SIZE_MAX);
        read_all(path, 0, &t, &g, &err);
        assert_int_equal(g.rc, LH_EFORMAT);
        assert_non_null(strstr(err.msg, "malformed record 1 (type 0x43)"));
        assert_int_equal(g.n, 0);
        lh_trace_close(t);
        lh_tb_free(tb);
    }
}

static void
test_unknown_records_skipped(void **state)
{
    (void)state;
    lh_tb_t *tb = lh_tb_new();
    lh_trace_t *t;
    lh_err_t err;
    got_t g;
    static const uint8_t junk[] = {1, 2, 3, 0xff, 0xff};
    lh_tb_info_raw(tb, 0x0f, junk, sizeof junk);
    lh_tb_frame_begin(tb, 1, 100);
    lh_tb_raw(tb, 0x7e, junk, sizeof junk);
    lh_tb_alloc(tb, 110, 0x10, 8, 0, 0);
    lh_tb_raw(tb, 0xee, NULL, 0);
    /* A known record with trailing bytes of a later minor version: ignored. */
    uint8_t free_ext[] = {5, 0x04, 0x99, 0x01}; /* ts +5, addr +0x10 (aligned: zigzag(1) << 1), extra */
    lh_tb_raw(tb, LH_REC_FREE, free_ext, sizeof free_ext);
    lh_tb_frame_end(tb, LH_CODEC_ZSTD, 0);
    lh_tb_write(tb, path, SIZE_MAX);
    read_all(path, 0, &t, &g, &err);
    assert_int_equal(g.rc, 0);
    assert_int_equal(g.n, 2);
    assert_int_equal(g.ev[0].type, LH_REC_ALLOC);
    assert_int_equal(g.ev[1].type, LH_REC_FREE);
    assert_int_equal(g.ev[1].addr, 0x20);
    assert_int_equal(g.ev[1].ts_ns, 115);
    assert_int_equal(lh_trace_parts(t)->stats.n_unknown, 3);
    lh_trace_close(t);
    lh_tb_free(tb);
}

/* Three frames; the third one will be damaged by the tests. Thanks to the SYNC in the
 * second, the first frame's events are delivered before the damage is found. */
static lh_tb_t *
three_frames(void)
{
    lh_tb_t *tb = lh_tb_new();
    lh_tb_frame_begin(tb, 1, 100);
    lh_tb_alloc(tb, 100, 0x10, 8, 0, 0);
    lh_tb_alloc(tb, 101, 0x20, 8, 0, 0);
    lh_tb_frame_end(tb, LH_CODEC_ZSTD, 0);
    lh_tb_frame_begin(tb, 0, 150);
    lh_tb_sync(tb, 150);
    lh_tb_frame_end(tb, LH_CODEC_RAW, LH_FRAME_F_SYNC);
    lh_tb_frame_begin(tb, 1, 200);
    for (int i = 0; i < 50; i++) {
        lh_tb_alloc(tb, 200 + (uint64_t)i, 0x1000 + 16 * (uint64_t)i, 8, 0, 0);
    }
    lh_tb_frame_end(tb, LH_CODEC_ZSTD, 0);
    return tb;
}

static void
expect_error(int salvage, int code, const char *needle)
{
    lh_trace_t *t;
    lh_err_t err = {{0}};
    got_t g;
    read_all(path, salvage, &t, &g, &err);
    assert_int_equal(g.rc, code);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, needle));
    assert_int_equal(g.n, 2); /* the first frame's events came out before the error */
    lh_event_t ev;
    assert_int_equal(lh_trace_next(t, &ev, &err), code); /* sticky */
    lh_trace_close(t);
}

static void
test_truncated(void **state)
{
    (void)state;
    lh_tb_t *tb = three_frames();
    size_t len;
    lh_tb_data(tb, &len);
    lh_tb_write(tb, path, len - 7); /* inside the last payload */
    expect_error(0, LH_ETRUNC, "truncated at offset");
    lh_tb_write(tb, path, lh_tb_frame_offset(tb, 2) + 20); /* inside the frame header */
    expect_error(0, LH_ETRUNC, "frame 2 incomplete");
    lh_tb_free(tb);
}

static void
test_bad_payload_crc(void **state)
{
    (void)state;
    lh_tb_t *tb = three_frames();
    size_t len;
    const uint8_t *d = lh_tb_data(tb, &len);
    uint8_t *copy = malloc(len);
    memcpy(copy, d, len);
    copy[lh_tb_payload_offset(tb, 2) + 3] ^= 0x40;
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(copy, 1, len, f), len);
    fclose(f);
    expect_error(0, LH_EFORMAT, "checksum");
    /* A bad frame header too. */
    memcpy(copy, d, len);
    copy[lh_tb_frame_offset(tb, 2) + 13] ^= 1;
    f = fopen(path, "wb");
    assert_int_equal(fwrite(copy, 1, len, f), len);
    fclose(f);
    expect_error(0, LH_EFORMAT, "frame 2");
    free(copy);
    lh_tb_free(tb);
}

static void
test_salvage(void **state)
{
    (void)state;
    lh_tb_t *tb = three_frames();
    lh_trace_t *t;
    lh_err_t err = {{0}};
    got_t g;
    size_t len;
    lh_tb_data(tb, &len);
    lh_tb_write(tb, path, len - 7);
    read_all(path, 1, &t, &g, &err);
    assert_int_equal(g.rc, 0);
    assert_int_equal(g.n, 2);
    assert_true(lh_trace_parts(t)->stats.salvaged);
    const lh_warnings_t *w = &lh_trace_parts(t)->warnings;
    assert_int_equal(w->n, 1);
    assert_non_null(strstr(w->msgs[0], "truncated"));
    assert_non_null(strstr(w->msgs[0], "salvaged"));
    lh_trace_close(t);
    lh_tb_free(tb);
}

static void
write_bytes(const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    fclose(f);
}

static void
test_bad_files(void **state)
{
    (void)state;
    lh_trace_t *t = NULL;
    lh_err_t err = {{0}};
    lh_tb_t *tb = lh_tb_new();
    size_t len;

    write_bytes("GIF89a this is not a trace", 26);
    assert_int_equal(lh_trace_open(path, NULL, &t, &err), LH_EFORMAT);
    assert_null(t);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "bad magic"));

    write_bytes("", 0);
    assert_int_equal(lh_trace_open(path, NULL, &t, &err), LH_EFORMAT);
    assert_non_null(strstr(err.msg, "empty"));

    write_bytes("LHTRACE\0\1", 9);
    assert_int_equal(lh_trace_open(path, NULL, &t, &err), LH_ETRUNC);

    lh_tb_version(tb, LH_FORMAT_MAJOR + 1, 0);
    lh_tb_write(tb, path, SIZE_MAX);
    assert_int_equal(lh_trace_open(path, NULL, &t, &err), LH_EVERSION);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "newer"));

    /* A newer minor version is fine. */
    lh_tb_version(tb, LH_FORMAT_MAJOR, LH_FORMAT_MINOR + 3);
    lh_tb_write(tb, path, SIZE_MAX);
    assert_int_equal(lh_trace_open(path, NULL, &t, &err), 0);
    lh_trace_close(t);

    /* An info block cut short. */
    lh_tb_version(tb, LH_FORMAT_MAJOR, LH_FORMAT_MINOR);
    lh_tb_info_exe(tb, "/bin/true");
    lh_tb_data(tb, &len);
    lh_tb_write(tb, path, len - 2);
    assert_int_equal(lh_trace_open(path, NULL, &t, &err), LH_ETRUNC);

    assert_int_equal(lh_trace_open("/nonexistent/dir/x.lht", NULL, &t, &err), LH_ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent/dir/x.lht"));
    lh_tb_free(tb);
}

static void
test_malformed_record(void **state)
{
    (void)state;
    lh_tb_t *tb = lh_tb_new();
    lh_trace_t *t;
    lh_err_t err = {{0}};
    got_t g;
    static const uint8_t short_alloc[] = {1, 2}; /* ts, addr, then nothing */
    lh_tb_frame_begin(tb, 1, 100);
    lh_tb_alloc(tb, 100, 0x10, 8, 0, 0);
    lh_tb_raw(tb, LH_REC_ALLOC, short_alloc, sizeof short_alloc);
    lh_tb_frame_end(tb, LH_CODEC_ZSTD, 0);
    lh_tb_write(tb, path, SIZE_MAX);
    read_all(path, 0, &t, &g, &err);
    assert_int_equal(g.rc, LH_EFORMAT);
    assert_non_null(strstr(err.msg, "malformed record 1"));
    assert_int_equal(g.n, 0); /* the frame's events are not delivered */
    lh_trace_close(t);
    /* Salvage drops the whole damaged frame. */
    read_all(path, 1, &t, &g, &err);
    assert_int_equal(g.rc, 0);
    assert_int_equal(g.n, 0);
    lh_trace_close(t);
    lh_tb_free(tb);
}

static void
test_stack_limits(void **state)
{
    (void)state;
    lh_tb_t *tb = lh_tb_new();
    lh_trace_t *t;
    lh_err_t err = {{0}};
    got_t g;
    lh_tb_frame_begin(tb, 1, 100);
    lh_tb_alloc(tb, 100, 0x10, 8, LH_STACK_ID_MAX + 1, 0);
    lh_tb_frame_end(tb, LH_CODEC_RAW, 0);
    lh_tb_write(tb, path, SIZE_MAX);
    read_all(path, 0, &t, &g, &err);
    assert_int_equal(g.rc, LH_EFORMAT);
    lh_trace_close(t);
    lh_tb_free(tb);

    /* A stack record claiming a huge depth. */
    tb = lh_tb_new();
    uint8_t huge[] = {1, 0, 0xff, 0xff, 0x03};
    lh_tb_frame_begin(tb, 1, 100);
    lh_tb_raw(tb, LH_REC_STACK, huge, sizeof huge);
    lh_tb_frame_end(tb, LH_CODEC_RAW, 0);
    lh_tb_write(tb, path, SIZE_MAX);
    read_all(path, 0, &t, &g, &err);
    assert_int_equal(g.rc, LH_EFORMAT);
    lh_trace_close(t);
    lh_tb_free(tb);
}

static void
test_modules(void **state)
{
    (void)state;
    lh_tb_t *tb = lh_tb_new();
    lh_trace_t *t;
    lh_err_t err = {{0}};
    got_t g;
    static const uint8_t bid[] = {0xde, 0xad, 0xbe, 0xef};
    lh_tb_frame_begin(tb, 1, 100);
    lh_tb_module(tb, 100, 0, 0x400000, "/bin/prog", bid, sizeof bid, 0, 0x1000);
    lh_tb_module(tb, 110, 1, 0x7f0000000000, "/lib/libplugin.so", NULL, 0, 0, 0x2000);
    lh_tb_module_unload(tb, 120, 2, 0x7f0000000000, "/lib/libplugin.so");
    lh_tb_module(tb, 130, 3, 0x7f0000000000, "/lib/libother.so", NULL, 0, 0, 0x2000);
    lh_tb_frame_end(tb, LH_CODEC_ZSTD, 0);
    lh_tb_write(tb, path, SIZE_MAX);
    read_all(path, 0, &t, &g, &err);
    assert_int_equal(g.rc, 0);
    assert_int_equal(g.n, 4);
    assert_int_equal(g.ev[0].type, LH_REC_MODULE);
    assert_string_equal(g.labels[0], "/bin/prog");
    const lh_modules_t *m = &lh_trace_parts(t)->modules;
    assert_int_equal(m->n, 3);
    assert_int_equal(m->mods[0].build_id_len, 4);
    assert_int_equal(m->mods[1].epoch_unloaded, 2);
    assert_true(m->mods[2].epoch_unloaded == LH_EPOCH_NEVER);
    /* The same range belongs to the plugin at epochs 1 and the other library from 3. */
    assert_int_equal(lh_modules_find(m, 0x7f0000000100, 0), -1);
    assert_int_equal(lh_modules_find(m, 0x7f0000000100, 1), 1);
    assert_int_equal(lh_modules_find(m, 0x7f0000000100, 2), -1);
    assert_int_equal(lh_modules_find(m, 0x7f0000000100, 3), 2);
    assert_int_equal(lh_modules_find(m, 0x400fff, 5), 0);
    assert_int_equal(lh_modules_find(m, 0x401000, 5), -1);
    lh_trace_close(t);
    lh_tb_free(tb);
}

/* A fork child's INFO_PARENT (minor 3): varint parent pid, fork ts, parent trace, its pid. */
static void
info_parent(lh_tb_t *tb, uint64_t ppid, uint64_t fork_ts, const char *parent)
{
    uint8_t buf[512];
    lh_enc_t e;
    lh_enc_init(&e, buf, sizeof buf);
    lh_enc_varint(&e, ppid);
    lh_enc_varint(&e, fork_ts);
    lh_enc_str(&e, parent);
    lh_enc_varint(&e, ppid);
    lh_tb_info_raw(tb, LH_REC_INFO_PARENT, buf, (size_t)(e.p - buf));
}

/* Writes the child's trace at path (pid 41, forked by 40 at ts 1000, parent trace named
 * parent) with one event, the free of 0x2000 at ts 1500, and reads it whole into *g. */
static lh_trace_t *
read_child(const char *parent, got_t *g)
{
    lh_tb_t *tb = lh_tb_new();
    lh_tb_info_pid(tb, 41, 40);
    info_parent(tb, 40, 1000, parent);
    lh_tb_frame_begin(tb, 41, 1500);
    lh_tb_free_rec(tb, 1500, 0x2000);
    lh_tb_frame_end(tb, LH_CODEC_RAW, 0);
    lh_tb_write(tb, path, SIZE_MAX);
    lh_tb_free(tb);
    lh_trace_t *t = NULL;
    lh_err_t err;
    read_all(path, 0, &t, g, &err);
    return t;
}

/* The child is seeded with the parent's blocks live at the fork (ts 1000): 0x2000 (the
 * other one was freed before, 0x3000 allocated after), with its stack, before its own
 * events; its free of 0x2000 matches. */
static void
test_fork_seed(void **state)
{
    (void)state;
    static const uint64_t ips[] = {0x401000, 0x401234};
    char ppath[300];
    snprintf(ppath, sizeof ppath, "%s/parent.lht", dir);
    lh_tb_t *tb = lh_tb_new();
    lh_tb_info_pid(tb, 40, 1);
    lh_tb_frame_begin(tb, 40, 100);
    lh_tb_stack(tb, 7, 0, ips, 2);
    lh_tb_alloc(tb, 100, 0x1000, 32, 7, LH_AK_MALLOC);
    lh_tb_alloc(tb, 200, 0x2000, 48, 7, LH_AK_MALLOC);
    lh_tb_free_rec(tb, 300, 0x1000);
    lh_tb_alloc(tb, 2000, 0x3000, 16, 7, LH_AK_MALLOC);
    lh_tb_frame_end(tb, LH_CODEC_RAW, 0);
    lh_tb_write(tb, ppath, SIZE_MAX);
    lh_tb_free(tb);

    got_t g;
    lh_trace_t *t = read_child("parent.lht", &g); /* found beside the child */
    const lh_trace_info_t *in = &lh_trace_parts(t)->info;
    assert_int_equal(in->inherited, 1);
    assert_string_equal(in->inherited_from, ppath);
    assert_int_equal(in->inherited_blocks, 1);
    assert_int_equal(in->inherited_bytes, 48);
    assert_int_equal(g.n, 2);
    assert_int_equal(g.ev[0].type, LH_REC_ALLOC);
    assert_int_equal(g.ev[0].ts_ns, 200);
    assert_int_equal(g.ev[0].addr, 0x2000);
    assert_int_equal(g.ev[0].size, 48);
    assert_int_equal(g.ev[0].stack_id, 7);
    assert_int_equal(g.ev[1].type, LH_REC_FREE);
    const lh_stack_t *st = lh_stacks_get(&lh_trace_parts(t)->stacks, 7);
    assert_non_null(st);
    assert_int_equal(st->n_ips, 2);
    assert_int_equal(st->ips[1], 0x401234);
    assert_int_equal(lh_trace_parts(t)->warnings.n, 0);
    lh_trace_close(t);
    unlink(ppath);
}

/* A parent trace that is no regular file (a FIFO would block) or missing: the child alone,
 * one warning. */
static void
test_fork_seed_unreadable(void **state)
{
    (void)state;
    char fifo[300];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    static const char *const names[] = {"fifo", "missing.lht"};
    static const char *const why[] = {"not a regular file", "No such file"};
    for (int k = 0; k < 2; k++) {
        got_t g;
        lh_trace_t *t = read_child(names[k], &g);
        assert_int_equal(lh_trace_parts(t)->info.inherited, 0);
        assert_int_equal(g.n, 1);
        const lh_warnings_t *w = &lh_trace_parts(t)->warnings;
        assert_int_equal(w->n, 1);
        assert_non_null(strstr(w->msgs[0], why[k]));
        assert_non_null(strstr(w->msgs[0], "analyzed alone"));
        lh_trace_close(t);
    }
    unlink(fifo);
}

typedef struct seen {
    uint8_t types[16];
    uint64_t heap_blocks[16]; /* the heap model's live blocks as each event came */
    int n;
} seen_t;

static int
see(void *ctx, const lh_trace_t *t, const lh_replay_t *r, const lh_event_t *ev, lh_err_t *err)
{
    seen_t *s = ctx;
    (void)t;
    (void)err;
    if (s->n < 16) {
        s->types[s->n] = ev->type;
        s->heap_blocks[s->n] = lh_replay_totals(r)->heap_blocks;
    }
    s->n++;
    return 0;
}

/* A consumer with skip_heap is not called for ALLOC, REALLOC and FREE events, one without
 * sees every event, and the heap model applies them all either way; the plain report's
 * timeline (no series, differences or temporaries) is such a consumer, one with a series
 * is not. */
static void
test_stream_skip_heap(void **state)
{
    (void)state;
    lh_tb_t *tb = lh_tb_new();
    lh_trace_t *t = NULL;
    lh_replay_t *r = NULL;
    lh_err_t err;
    seen_t all = {0}, some = {0};
    basic_trace(tb, LH_CODEC_ZSTD); /* THREAD, ALLOC, ALLOC, FREE, MARK */
    lh_tb_write(tb, path, SIZE_MAX);
    lh_consumer_t cs[2] = {{see, &all, 0}, {see, &some, 1}};
    lh_stream_opts_t so = {0, cs, 2, NULL, NULL};
    assert_int_equal(lh_stream_run(path, &so, &t, &r, &err), 0);
    assert_int_equal(all.n, 5);
    assert_int_equal(all.types[1], LH_REC_ALLOC);
    assert_int_equal(all.types[3], LH_REC_FREE);
    assert_int_equal(all.heap_blocks[2], 2);
    assert_int_equal(some.n, 2);
    assert_int_equal(some.types[0], LH_REC_THREAD);
    assert_int_equal(some.types[1], LH_REC_MARK);
    assert_int_equal(some.heap_blocks[0], 0);
    assert_int_equal(some.heap_blocks[1], 1); /* two allocations and a free applied */
    assert_int_equal(lh_replay_totals(r)->n_allocs, 2);
    lh_replay_free(r);
    lh_trace_close(t);
    lh_tb_free(tb);

    lh_timeline_t *tl = NULL;
    lh_timeline_opts_t o = {0};
    assert_int_equal(lh_timeline_new(NULL, &tl, &err), 0);
    assert_int_equal(lh_timeline_consumer(tl).skip_heap, 1);
    lh_timeline_free(tl);
    o.series = 1;
    assert_int_equal(lh_timeline_new(&o, &tl, &err), 0);
    assert_int_equal(lh_timeline_consumer(tl).skip_heap, 0);
    lh_timeline_free(tl);
    o.series = 0;
    o.temporary = 1;
    assert_int_equal(lh_timeline_new(&o, &tl, &err), 0);
    assert_int_equal(lh_timeline_consumer(tl).skip_heap, 0);
    lh_timeline_free(tl);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic_zstd),
        cmocka_unit_test(test_stream_skip_heap),
        cmocka_unit_test(test_basic_raw),
        cmocka_unit_test(test_suppressions),
        cmocka_unit_test(test_merge_order),
        cmocka_unit_test(test_equal_times_stable),
        cmocka_unit_test(test_realloc_halves),
        cmocka_unit_test(test_events_record),
        cmocka_unit_test(test_events_malformed),
        cmocka_unit_test(test_unknown_records_skipped),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_bad_payload_crc),
        cmocka_unit_test(test_salvage),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_malformed_record),
        cmocka_unit_test(test_stack_limits),
        cmocka_unit_test(test_modules),
        cmocka_unit_test(test_fork_seed),
        cmocka_unit_test(test_fork_seed_unreadable),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
