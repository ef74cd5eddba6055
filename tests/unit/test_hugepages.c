/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_hugepages.c: huge pages under large arrays (analysis/hugepages.h): a large zeroed
 * array is mapped on a 2 MiB boundary and marked for huge pages, a small one is not, an
 * array grown past the threshold by grow.h is marked, and the heap model keeps its answers
 * with its live set in such an array. The mark is read back from /proc/self/smaps
 * ("hg" among the mapping's VmFlags).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "grow.h"
#include "hugepages.h"
#include "replay.h"

/* 1: the mapping holding addr is marked for huge pages, 0: it is not, -1: not found. */
static int
marked(const void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int in = 0, rc = -1;
    uintptr_t a = (uintptr_t)addr;
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) { /* a mapping's first line */
            in = a >= lo && a < hi;
        } else if (in && strncmp(line, "VmFlags:", 8) == 0) {
            rc = strstr(line, " hg") != NULL;
            break;
        }
    }
    fclose(f);
    return rc;
}

/* Whether this kernel takes the hint at all (CONFIG_TRANSPARENT_HUGEPAGE). */
static int
thp_kernel(void)
{
    size_t len = (size_t)4 << 20;
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    int ok = madvise(m, len, MADV_HUGEPAGE) == 0;
    munmap(m, len);
    return ok;
}

static void
test_large_calloc(void **state)
{
    (void)state;
    size_t n = (size_t)5 << 20; /* not a whole number of huge pages */
    unsigned char *p = lh_hugepages_calloc(n);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % ((uintptr_t)2 << 20), 0);
    for (size_t i = 0; i < n; i += 4093) {
        assert_int_equal(p[i], 0);
    }
    assert_int_equal(p[n - 1], 0);
    memset(p, 0xa5, n);
    assert_int_equal(p[n - 1], 0xa5);
    if (thp_kernel()) {
        assert_int_equal(marked(p), 1);
        assert_int_equal(marked(p + n - 1), 1);
    }
    lh_hugepages_free(p, n);
}

static void
test_small_calloc(void **state)
{
    (void)state;
    size_t n = LH_HUGEPAGES_MIN - 1;
    unsigned char *p = lh_hugepages_calloc(n);
    assert_non_null(p);
    assert_int_equal(p[0], 0);
    assert_int_equal(p[n - 1], 0);
    if (thp_kernel()) {
        assert_int_equal(marked(p + n / 2), 0); /* calloc's, unmarked */
    }
    lh_hugepages_free(p, n);
    lh_hugepages_free(NULL, 1 << 30);
}

static void
test_grow_marks(void **state)
{
    (void)state;
    uint64_t *v = NULL;
    size_t cap = 0;
    assert_int_equal(lh_grow_to(&v, &cap, 1000, sizeof *v, 64), 0);
    assert_int_equal(cap, 1024);
    if (thp_kernel()) {
        assert_int_equal(marked(v), 0); /* 8 KiB: left alone */
    }
    assert_int_equal(lh_grow_to(&v, &cap, LH_HUGEPAGES_MIN / sizeof *v, sizeof *v, 64), 0);
    assert_int_equal(cap, LH_HUGEPAGES_MIN / sizeof *v);
    v[cap - 1] = 7;
    if (thp_kernel()) {
        assert_int_equal(marked(v + cap / 2), 1);
    }
    free(v);
}

/* The live set grows through several huge-page tables: every answer stays the same. */
static void
test_replay_large(void **state)
{
    (void)state;
    lh_replay_t *r = NULL;
    lh_err_t err;
    lh_live_block_t b;
    const uint64_t n = 300000; /* 2^20 slots of 32 bytes at the end: 32 MiB */
    assert_int_equal(lh_replay_new(&r, &err), 0);
    for (uint64_t i = 1; i <= n; i++) {
        lh_event_t ev = {0};
        ev.type = LH_REC_ALLOC;
        ev.ts_ns = i;
        ev.addr = i * 32;
        ev.size = i % 100 + 1;
        ev.stack_id = (uint32_t)(i % 3);
        assert_int_equal(lh_replay_event(r, &ev, &err), 0);
    }
    for (uint64_t i = 3; i <= n; i += 3) {
        lh_event_t ev = {0};
        ev.type = LH_REC_FREE;
        ev.ts_ns = n + i;
        ev.addr = i * 32;
        assert_int_equal(lh_replay_event(r, &ev, &err), 0);
    }
    const lh_replay_totals_t *t = lh_replay_totals(r);
    assert_int_equal(t->heap_blocks, 200000);
    assert_int_equal(t->n_unmatched_frees, 0);
    assert_int_equal(lh_replay_stack(r, 0)->live_blocks, 0);
    assert_int_equal(lh_replay_stack(r, 1)->live_blocks, 100000);
    assert_int_equal(lh_replay_stack(r, 2)->live_blocks, 100000);
    assert_int_equal(lh_replay_lookup(r, 299997 * 32, &b), 0); /* a multiple of 3: freed */
    assert_int_equal(lh_replay_lookup(r, 299998 * 32, &b), 1);
    assert_int_equal(b.size, 299998 % 100 + 1);
    assert_int_equal(b.ts_ns, 299998);
    assert_int_equal(b.stack_id, 299998 % 3);
    size_t cursor = 0, live = 0;
    while (lh_replay_live_next(r, &cursor, &b)) {
        live++;
    }
    assert_int_equal(live, 200000);
    lh_replay_free(r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_large_calloc),
        cmocka_unit_test(test_small_calloc),
        cmocka_unit_test(test_grow_marks),
        cmocka_unit_test(test_replay_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
