/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_agent_stacktab.c: the agent's stack table and frame-pointer unwinder, without
 * LD_PRELOAD (linked from lh_agent_core).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "enc.h"
#include "stacktab.h"
#include "unwind.h"

static void
test_intern_dedup(void **state)
{
    (void)state;
    lh_stacktab_t t;
    assert_int_equal(lh_stacktab_init(&t, 1024, 65536), 0);
    uint64_t a[3] = {0x1000, 0x2000, 0x3000};
    uint64_t b[3] = {0x1000, 0x2000, 0x3001};
    int emit;
    uint32_t ia = lh_stacktab_intern(&t, a, 3, 0, 1, &emit);
    assert_int_equal(ia, 1);
    assert_int_equal(emit, 1);
    assert_int_equal(lh_stacktab_intern(&t, a, 3, 0, 1, &emit), ia);
    assert_int_equal(emit, 0); /* written once per generation */
    uint32_t ib = lh_stacktab_intern(&t, b, 3, 0, 1, &emit);
    assert_int_equal(ib, 2);
    assert_int_equal(emit, 1);
    /* A prefix is a different stack. */
    assert_int_equal(lh_stacktab_intern(&t, a, 2, 0, 1, &emit), 3);
    /* Same addresses in a later epoch (after a dlclose): a new id. */
    assert_int_equal(lh_stacktab_intern(&t, a, 3, 1, 1, &emit), 4);
    /* A new trace-file generation (fork child) re-emits, same id. */
    assert_int_equal(lh_stacktab_intern(&t, a, 3, 0, 2, &emit), ia);
    assert_int_equal(emit, 1);
    const lh_stacktab_entry_t *e = lh_stacktab_get(&t, ib);
    assert_non_null(e);
    assert_int_equal(e->n, 3);
    assert_memory_equal(e->ips, b, sizeof b);
    assert_null(lh_stacktab_get(&t, 0));
    assert_null(lh_stacktab_get(&t, 99));
    lh_stacktab_fini(&t);
}

static void
test_intern_full(void **state)
{
    (void)state;
    lh_stacktab_t t;
    assert_int_equal(lh_stacktab_init(&t, 8, 1024), 0);
    int emit;
    uint32_t last = 0;
    for (uint64_t i = 0; i < 8; i++) {
        uint64_t ip = 0x400000 + i;
        last = lh_stacktab_intern(&t, &ip, 1, 0, 1, &emit);
        assert_int_equal(last, i + 1);
    }
    uint64_t ip = 0x500000;
    assert_int_equal(lh_stacktab_intern(&t, &ip, 1, 0, 1, &emit), 0); /* full: unknown */
    lh_stacktab_fini(&t);
}

#define N_THREADS 4
#define N_STACKS 2000
static lh_stacktab_t shared;
static uint32_t ids[N_THREADS][N_STACKS];

static void *
intern_many(void *arg)
{
    int k = (int)(intptr_t)arg;
    for (int i = 0; i < N_STACKS; i++) {
        uint64_t ips[4] = {0x1000, (uint64_t)i, 0x3000, 0x4000};
        int emit;
        ids[k][i] = lh_stacktab_intern(&shared, ips, 4, 0, 1, &emit);
    }
    return NULL;
}

static void
test_intern_threads(void **state)
{
    (void)state;
    pthread_t th[N_THREADS];
    assert_int_equal(lh_stacktab_init(&shared, 1 << 14, 1 << 20), 0);
    for (int k = 0; k < N_THREADS; k++) {
        pthread_create(&th[k], NULL, intern_many, (void *)(intptr_t)k);
    }
    for (int k = 0; k < N_THREADS; k++) {
        pthread_join(th[k], NULL);
    }
    /* Every thread got the same id for the same stack, and ids are dense. */
    for (int i = 0; i < N_STACKS; i++) {
        for (int k = 1; k < N_THREADS; k++) {
            assert_int_equal(ids[k][i], ids[0][i]);
        }
        assert_in_range(ids[0][i], 1, N_STACKS);
    }
    assert_int_equal(shared.n_entries, N_STACKS);
    lh_stacktab_fini(&shared);
}

static int fp_n;
static uint64_t fp_ips[64];

__attribute__((noinline)) static void
leaf(uintptr_t hi)
{
    fp_n = lh_unwind_fp(fp_ips, NULL, 64, hi);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void
middle(uintptr_t hi)
{
    leaf(hi);
    __asm__ volatile("" ::: "memory");
}

static void
test_unwind_fp(void **state)
{
    (void)state;
    pthread_attr_t attr;
    void *addr;
    size_t size;
    assert_int_equal(pthread_getattr_np(pthread_self(), &attr), 0);
    assert_int_equal(pthread_attr_getstack(&attr, &addr, &size), 0);
    pthread_attr_destroy(&attr);
    middle((uintptr_t)addr + size);
    /* The unwinder's return into leaf, leaf's into middle, middle's into this function. */
    assert_true(fp_n >= 3);
    assert_true(fp_ips[0] > (uintptr_t)&leaf && fp_ips[0] < (uintptr_t)&leaf + 256);
    assert_true(fp_ips[1] > (uintptr_t)&middle && fp_ips[1] < (uintptr_t)&middle + 256);
    assert_true(fp_ips[2] > (uintptr_t)&test_unwind_fp &&
                fp_ips[2] < (uintptr_t)&test_unwind_fp + 512);
    /* The walk never reads at or beyond the given stack top: with this function's frame as
     * the top it stops after the three frames below it. */
    middle((uintptr_t)__builtin_frame_address(0));
    assert_int_equal(fp_n, 3);
}

static void
test_unwind_libunwind(void **state)
{
    (void)state;
    uint64_t ips[64];
    lh_unwind_init();
    int n = lh_unwind_libunwind(ips, 64);
    assert_true(n >= 2);
}

static void
test_crc32c_check_value(void **state)
{
    (void)state;
    /* The CRC-32C check value from the standard: "123456789" -> 0xE3069283. */
    assert_int_equal(lh_crc32c(0, "123456789", 9), 0xE3069283u);
    uint8_t big[1000];
    for (int i = 0; i < 1000; i++) {
        big[i] = (uint8_t)(i * 7);
    }
    /* Incremental equals one-shot. */
    assert_int_equal(lh_crc32c(lh_crc32c(0, big, 333), big + 333, 667), lh_crc32c(0, big, 1000));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intern_dedup),     cmocka_unit_test(test_intern_full),
        cmocka_unit_test(test_intern_threads),   cmocka_unit_test(test_unwind_fp),
        cmocka_unit_test(test_unwind_libunwind), cmocka_unit_test(test_crc32c_check_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
