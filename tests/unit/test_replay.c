/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_replay.c: the heap model: live set, per-stack aggregates, totals, peak.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "replay.h"

static lh_replay_t *
new_replay(void)
{
    lh_replay_t *r = NULL;
    lh_err_t err;
    assert_int_equal(lh_replay_new(&r, &err), 0);
    return r;
}

static void
feed(lh_replay_t *r, uint8_t type, uint64_t ts, uint64_t addr, uint64_t size, uint32_t stack)
{
    lh_event_t ev = {0};
    lh_err_t err;
    ev.type = type;
    ev.ts_ns = ts;
    ev.addr = addr;
    ev.size = size;
    ev.stack_id = stack;
    assert_int_equal(lh_replay_event(r, &ev, &err), 0);
}

/* A REALLOC as the reader delivers it: two halves (or one event with half NONE). */
static void
feed_realloc(lh_replay_t *r, uint64_t ts, uint64_t old_addr, uint64_t new_addr, uint64_t size,
             uint32_t stack, int split)
{
    lh_event_t ev = {0};
    lh_err_t err;
    ev.type = LH_REC_REALLOC;
    ev.ts_ns = ts;
    ev.old_addr = old_addr;
    ev.addr = new_addr;
    ev.size = size;
    ev.stack_id = stack;
    if (!split) {
        assert_int_equal(lh_replay_event(r, &ev, &err), 0);
        return;
    }
    ev.half = LH_HALF_FREE;
    assert_int_equal(lh_replay_event(r, &ev, &err), 0);
    ev.half = LH_HALF_ALLOC;
    assert_int_equal(lh_replay_event(r, &ev, &err), 0);
}

static void
expect_live(lh_replay_t *r, uint64_t addr, uint64_t size, uint32_t stack)
{
    lh_live_block_t b;
    assert_int_equal(lh_replay_lookup(r, addr, &b), 1);
    assert_int_equal(b.addr, addr);
    assert_int_equal(b.size, size);
    assert_int_equal(b.stack_id, stack);
}

static void
test_alloc_free(void **state)
{
    (void)state;
    lh_replay_t *r = new_replay();
    lh_live_block_t b;
    feed(r, LH_REC_ALLOC, 1, 0x1000, 100, 1);
    feed(r, LH_REC_ALLOC, 2, 0x2000, 50, 2);
    feed(r, LH_REC_ALLOC, 3, 0x3000, 25, 1);
    feed(r, LH_REC_FREE, 4, 0x1000, 0, 0);
    feed(r, LH_REC_FREE, 5, 0, 0, 0); /* free(NULL): nothing */
    feed(r, LH_REC_MARK, 6, 0, 0, 0); /* other events only count */
    const lh_replay_totals_t *t = lh_replay_totals(r);
    assert_int_equal(t->n_events, 6);
    assert_int_equal(t->n_allocs, 3);
    assert_int_equal(t->n_frees, 1);
    assert_int_equal(t->alloc_bytes, 175);
    assert_int_equal(t->heap_bytes, 75);
    assert_int_equal(t->heap_blocks, 2);
    assert_int_equal(t->peak_bytes, 175);
    assert_int_equal(t->peak_ts_ns, 3);
    assert_int_equal(t->first_ts_ns, 1);
    assert_int_equal(t->last_ts_ns, 6);
    assert_int_equal(lh_replay_lookup(r, 0x1000, &b), 0);
    expect_live(r, 0x2000, 50, 2);
    expect_live(r, 0x3000, 25, 1);

    const lh_stack_stats_t *s1 = lh_replay_stack(r, 1);
    assert_int_equal(s1->n_allocs, 2);
    assert_int_equal(s1->alloc_bytes, 125);
    assert_int_equal(s1->n_frees, 1);
    assert_int_equal(s1->live_blocks, 1);
    assert_int_equal(s1->live_bytes, 25);
    const lh_stack_stats_t *s2 = lh_replay_stack(r, 2);
    assert_int_equal(s2->live_bytes, 50);
    assert_int_equal(lh_replay_stack(r, 999)->n_allocs, 0);
    assert_int_equal(lh_replay_n_stacks(r), 3);

    /* The iteration sees exactly the live set. */
    size_t cursor = 0, n = 0;
    uint64_t sum = 0;
    while (lh_replay_live_next(r, &cursor, &b)) {
        n++;
        sum += b.addr;
    }
    assert_int_equal(n, 2);
    assert_int_equal(sum, 0x5000);
    lh_replay_free(r);
}

static void
test_realloc_rules(void **state)
{
    (void)state;
    for (int split = 0; split <= 1; split++) {
        lh_replay_t *r = new_replay();
        lh_live_block_t b;
        /* The block keeps its identity through realloc: created at stack 1 by
         * realloc(NULL), grown at 2 and 3, it stays stack 1's, and 2 and 3 grew it. */
        feed_realloc(r, 1, 0, 0x1000, 10, 1, split);      /* realloc(NULL, 10) */
        feed_realloc(r, 2, 0x1000, 0x1000, 20, 2, split); /* grown in place */
        feed_realloc(r, 3, 0x1000, 0x5000, 40, 3, split); /* moved */
        feed_realloc(r, 4, 0x9000, 0x6000, 8, 3, split);  /* old block unknown */
        feed_realloc(r, 5, 0x6000, 0, 0, 3, split);       /* realloc(p, 0) freed it */
        const lh_replay_totals_t *t = lh_replay_totals(r);
        assert_int_equal(t->n_reallocs, 5);
        assert_int_equal(t->n_events, 5);
        assert_int_equal(t->n_allocs, 0);
        assert_int_equal(t->n_unmatched_frees, 1);
        assert_int_equal(t->n_missed_frees, 0);
        assert_int_equal(t->heap_blocks, 1);
        assert_int_equal(t->heap_bytes, 40);
        assert_int_equal(t->peak_bytes, 48);
        assert_int_equal(t->peak_ts_ns, 4);
        assert_int_equal(lh_replay_lookup(r, 0x1000, &b), 0);
        assert_int_equal(lh_replay_lookup(r, 0x6000, &b), 0);
        expect_live(r, 0x5000, 40, 1);
        assert_int_equal(lh_replay_stack(r, 1)->n_allocs, 3); /* each version of it */
        assert_int_equal(lh_replay_stack(r, 1)->n_frees, 2);
        assert_int_equal(lh_replay_stack(r, 1)->live_blocks, 1);
        assert_int_equal(lh_replay_stack(r, 1)->live_bytes, 40);
        assert_int_equal(lh_replay_stack(r, 2)->n_allocs, 0);
        assert_int_equal(lh_replay_stack(r, 2)->n_frees, 0);
        /* stack 3 made its own block of an unknown one, which realloc(p, 0) freed */
        assert_int_equal(lh_replay_stack(r, 3)->n_allocs, 1);
        assert_int_equal(lh_replay_stack(r, 3)->n_frees, 1);
        assert_int_equal(lh_replay_stack(r, 3)->live_blocks, 0);
        uint32_t g[4];
        assert_int_equal(lh_replay_growers(r, 1, g, 4), 2);
        assert_int_equal(g[0], 2);
        assert_int_equal(g[1], 3);
        assert_int_equal(lh_replay_growers(r, 3, g, 4), 0);
        lh_replay_free(r);
    }
}

static void
test_unmatched_and_missed(void **state)
{
    (void)state;
    lh_replay_t *r = new_replay();
    feed(r, LH_REC_FREE, 1, 0x7000, 0, 0);         /* allocated before the agent */
    feed(r, LH_REC_ALLOC, 2, 0x1000, 10, 1);
    feed(r, LH_REC_ALLOC, 3, 0x1000, 30, 2);       /* the free of the first was missed */
    feed(r, LH_REC_ALLOC, 4, 0, 10, 1);            /* failed allocation */
    const lh_replay_totals_t *t = lh_replay_totals(r);
    assert_int_equal(t->n_unmatched_frees, 1);
    assert_int_equal(t->n_missed_frees, 1);
    assert_int_equal(t->heap_blocks, 1);
    assert_int_equal(t->heap_bytes, 30);
    assert_int_equal(lh_replay_stack(r, 1)->live_blocks, 0);
    assert_int_equal(lh_replay_stack(r, 1)->n_frees, 1);
    expect_live(r, 0x1000, 30, 2);
    lh_replay_free(r);
}

static void
test_peak(void **state)
{
    (void)state;
    lh_replay_t *r = new_replay();
    feed(r, LH_REC_ALLOC, 10, 0x1000, 100, 1);
    feed(r, LH_REC_ALLOC, 20, 0x2000, 100, 1);   /* peak 200 at 20 */
    feed(r, LH_REC_FREE, 30, 0x1000, 0, 0);
    feed(r, LH_REC_ALLOC, 40, 0x3000, 100, 1);   /* back to 200: not a new peak */
    feed(r, LH_REC_FREE, 50, 0x2000, 0, 0);
    const lh_replay_totals_t *t = lh_replay_totals(r);
    assert_int_equal(t->peak_bytes, 200);
    assert_int_equal(t->peak_ts_ns, 20);
    feed(r, LH_REC_ALLOC, 60, 0x4000, 101, 1);   /* 201 */
    assert_int_equal(t->peak_bytes, 201);
    assert_int_equal(t->peak_ts_ns, 60);
    lh_replay_free(r);
}

/* Many blocks: the table grows, and deletions keep every probe chain intact. */
static void
test_many_blocks(void **state)
{
    (void)state;
    lh_replay_t *r = new_replay();
    lh_live_block_t b;
    const uint64_t n = 20000;
    for (uint64_t i = 1; i <= n; i++) {
        feed(r, LH_REC_ALLOC, i, i * 16, i, (uint32_t)(i % 7));
    }
    for (uint64_t i = 1; i <= n; i += 2) {
        feed(r, LH_REC_FREE, n + i, i * 16, 0, 0);
    }
    const lh_replay_totals_t *t = lh_replay_totals(r);
    assert_int_equal(t->heap_blocks, n / 2);
    assert_int_equal(t->n_unmatched_frees, 0);
    for (uint64_t i = 1; i <= n; i++) {
        assert_int_equal(lh_replay_lookup(r, i * 16, &b), (int)(i % 2 == 0));
    }
    uint64_t live = 0;
    for (uint32_t s = 0; s < 7; s++) {
        live += lh_replay_stack(r, s)->live_blocks;
    }
    assert_int_equal(live, n / 2);
    lh_replay_free(r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_free),
        cmocka_unit_test(test_realloc_rules),
        cmocka_unit_test(test_unmatched_and_missed),
        cmocka_unit_test(test_peak),
        cmocka_unit_test(test_many_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
