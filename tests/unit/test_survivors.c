/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_survivors.c: growth without boundaries (analysis/survivors.c): the blocks live at
 * the end, by the share of the run's allocations in which they were made.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "survivors.h"

enum { STARTUP = 1, LEAK = 2, CHURN = 3, CACHE = 4, BUFFER = 5, LRU = 6 };

typedef struct run {
    lh_replay_t *r;
    lh_activity_t a;
    uint64_t ts, addr;
} run_t;

static void
feed(run_t *x, uint8_t type, uint64_t addr, uint64_t size, uint32_t stack)
{
    lh_event_t ev = {0};
    lh_err_t err;
    ev.type = type;
    ev.ts_ns = x->ts += 1000;
    ev.addr = addr;
    ev.size = size;
    ev.stack_id = stack;
    assert_int_equal(lh_replay_event(x->r, &ev, &err), 0);
    assert_int_equal(lh_activity_event(&x->a, NULL, x->r, &ev, &err), 0);
}

static uint64_t
alloc(run_t *x, uint64_t size, uint32_t stack)
{
    x->addr += 0x100;
    feed(x, LH_REC_ALLOC, x->addr, size, stack);
    return x->addr;
}

static void
start(run_t *x)
{
    lh_err_t err;
    memset(x, 0, sizeof *x);
    x->addr = 0x10000;
    assert_int_equal(lh_replay_new(&x->r, &err), 0);
    lh_activity_init(&x->a);
}

static const lh_growth_site_t *
site(const lh_growth_t *g, uint32_t id)
{
    for (size_t i = 0; i < g->n_sites; i++) {
        if (g->sites[i].stack_id == id) {
            return &g->sites[i];
        }
    }
    return NULL;
}

/* A server's run: a table made at start-up, a per-request leak, churn, a cache bounded at
 * 200 entries that fills during the first fifth of the requests, an LRU of 300 entries that
 * takes one per request and evicts the oldest (its survivors are all recent, as a leak's
 * newest are), then a long idle time before it is stopped (which slicing by activity must
 * not read as "stopped growing"). */
static void
test_server_classes(void **state)
{
    (void)state;
    run_t x;
    lh_growth_t g;
    lh_err_t err;
    lh_growth_opts_t every = {LH_BOUND_AUTO, 1};
    uint64_t lru[300];
    start(&x);
    for (int i = 0; i < 50; i++) {
        alloc(&x, 64, STARTUP);
    }
    for (int i = 0; i < 1000; i++) {
        alloc(&x, 48, LEAK);
        for (int k = 0; k < 3; k++) {
            feed(&x, LH_REC_FREE, alloc(&x, 100, CHURN), 0, 0);
        }
        if (i < 200) {
            alloc(&x, 32, CACHE);
        }
        if (i >= 300) {
            feed(&x, LH_REC_FREE, lru[i % 300], 0, 0);
        }
        lru[i % 300] = alloc(&x, 24, LRU);
    }
    x.ts += 60ull * 1000000000; /* idle a minute, then one last request */
    feed(&x, LH_REC_FREE, alloc(&x, 100, CHURN), 0, 0);

    assert_int_equal(lh_activity_growth(&x.a, x.r, &every, &g, &err), 0);
    assert_int_equal(g.kind, LH_BOUND_ACTIVITY);
    assert_int_equal(g.n_points, LH_SURV_SLICES + 1);
    assert_int_equal(g.n_active, 4); /* churn leaves nothing */
    assert_int_equal(g.n_growing, 1);
    assert_int_equal(g.sites[0].stack_id, LEAK); /* growing first */
    const lh_growth_site_t *leak = site(&g, LEAK), *boot = site(&g, STARTUP),
                           *cache = site(&g, CACHE);
    assert_non_null(leak);
    assert_non_null(boot);
    assert_non_null(cache);
    assert_int_equal(leak->trend.kind, LH_TREND_GROWING);
    assert_int_equal(leak->bytes[LH_SURV_SLICES], 48000);
    assert_int_equal(leak->blocks[LH_SURV_SLICES], 1000);
    assert_int_equal(leak->bytes[0], 0);
    assert_int_equal(boot->trend.kind, LH_TREND_STEP);
    assert_int_equal(boot->bytes[1], 50 * 64); /* all in the first share */
    assert_int_equal(cache->trend.kind, LH_TREND_SATURATED);
    assert_int_equal(cache->blocks[LH_SURV_SLICES], 200);
    const lh_growth_site_t *lru_site = site(&g, LRU);
    assert_non_null(lru_site);
    assert_int_equal(lru_site->blocks[LH_SURV_SLICES], 300);
    assert_int_equal(lru_site->blocks[LH_SURV_SLICES / 2], 0); /* only its newest survive */
    assert_int_equal(lru_site->trend.kind, LH_TREND_SATURATED);
    /* points in time order, labelled by share, the last at the end of the run */
    assert_string_equal(g.bounds[0].label, "0%");
    assert_string_equal(g.bounds[10].label, "50%");
    assert_string_equal(g.bounds[LH_SURV_SLICES].label, "100%");
    for (size_t p = 1; p <= LH_SURV_SLICES; p++) {
        assert_true(g.bounds[p].ts_ns >= g.bounds[p - 1].ts_ns);
        assert_true(g.bounds[p].is_slice);
    }
    assert_int_equal(g.bounds[LH_SURV_SLICES].ts_ns, x.ts);
    lh_growth_fini(&g);

    /* without every_site: the growing ones only */
    assert_int_equal(lh_activity_growth(&x.a, x.r, NULL, &g, &err), 0);
    assert_int_equal(g.n_sites, 1);
    assert_int_equal(g.sites[0].stack_id, LEAK);
    lh_growth_fini(&g);
    lh_activity_fini(&x.a);
    lh_replay_free(x.r);
}

/* A long run: the checkpoints are thinned to a bounded number, and the shares still split
 * the allocations evenly (a leak of one block per 10 allocations gains 1/20 of its blocks
 * per share, within the checkpoints' resolution). */
static void
test_thinning(void **state)
{
    (void)state;
    run_t x;
    lh_growth_t g;
    lh_err_t err;
    start(&x);
    for (int i = 0; i < 200000; i++) {
        if (i % 10 == 0) {
            alloc(&x, 16, LEAK);
        } else {
            feed(&x, LH_REC_FREE, alloc(&x, 16, CHURN), 0, 0);
        }
    }
    assert_true(x.a.n_cp <= 2 * LH_ACTIVITY_CHECKPOINTS);
    assert_true(x.a.n_cp >= LH_ACTIVITY_CHECKPOINTS);
    assert_int_equal(lh_activity_growth(&x.a, x.r, NULL, &g, &err), 0);
    assert_int_equal(g.n_sites, 1);
    const lh_growth_site_t *s = &g.sites[0];
    assert_int_equal(s->blocks[LH_SURV_SLICES], 20000);
    for (size_t p = 1; p <= LH_SURV_SLICES; p++) {
        uint64_t d = s->blocks[p] - s->blocks[p - 1];
        assert_in_range(d, 1000 - 100, 1000 + 100);
    }
    lh_growth_fini(&g);
    lh_activity_fini(&x.a);
    lh_replay_free(x.r);
}

/* A buffer grown by realloc is one block of the site that created it, counted when it took
 * its final size (its last realloc). */
static void
test_realloc_identity(void **state)
{
    (void)state;
    run_t x;
    lh_growth_t g;
    lh_err_t err;
    lh_growth_opts_t every = {LH_BOUND_AUTO, 1};
    start(&x);
    uint64_t buf = alloc(&x, 16, BUFFER);
    for (int i = 0; i < 400; i++) {
        lh_event_t ev = {0};
        ev.type = LH_REC_REALLOC;
        ev.ts_ns = x.ts += 1000;
        ev.old_addr = buf;
        ev.addr = buf = x.addr += 0x100;
        ev.size = 16 + 16 * (uint64_t)(i + 1);
        ev.stack_id = CHURN; /* the realloc's own stack: a grower, not the site */
        assert_int_equal(lh_replay_event(x.r, &ev, &err), 0);
        assert_int_equal(lh_activity_event(&x.a, NULL, x.r, &ev, &err), 0);
    }
    assert_int_equal(lh_activity_growth(&x.a, x.r, &every, &g, &err), 0);
    assert_int_equal(g.n_active, 1);
    assert_int_equal(g.sites[0].stack_id, BUFFER);
    assert_int_equal(g.sites[0].bytes[LH_SURV_SLICES - 1], 0);
    assert_int_equal(g.sites[0].bytes[LH_SURV_SLICES], 16 + 16 * 400);
    assert_int_equal(g.sites[0].trend.kind, LH_TREND_STEP);
    lh_growth_fini(&g);
    lh_activity_fini(&x.a);
    lh_replay_free(x.r);
}

/* Too few allocations to slice: the refusal callers turn into advice. */
static void
test_too_few(void **state)
{
    (void)state;
    run_t x;
    lh_growth_t g;
    lh_err_t err;
    start(&x);
    for (int i = 0; i < 2 * LH_SURV_SLICES - 1; i++) {
        alloc(&x, 8, LEAK);
    }
    assert_int_equal(lh_activity_growth(&x.a, x.r, NULL, &g, &err), LH_EINVAL);
    assert_int_equal(g.why, LH_WHY_NO_POINTS);
    assert_non_null(strstr(err.msg, "too few allocations (39)"));
    lh_activity_fini(&x.a);
    lh_replay_free(x.r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_classes),
        cmocka_unit_test(test_thinning),
        cmocka_unit_test(test_realloc_identity),
        cmocka_unit_test(test_too_few),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
