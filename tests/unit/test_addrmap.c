/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_addrmap.c: the 64-bit key map (addrmap.h), and the sort by uint64_t keys (bound.h)
 * that orders the same decoders' arrays.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "addrmap.h"
#include "bound.h"
#include "err.h"

/* Keys 16-byte aligned like heap addresses, with values that name them. */
static void
test_put_get_grow(void **state)
{
    (void)state;
    lh_addrmap_t m = {0};
    assert_int_equal(lh_addrmap_get(&m, 0x1000, 7), 7); /* empty map */
    for (uint32_t i = 1; i <= 5000; i++) {
        assert_int_equal(lh_addrmap_put(&m, 0x7f0000000000ull + 16ull * i, i), 1);
    }
    assert_int_equal(m.n, 5000);
    assert_int_equal(m.mask + 1, 16384); /* doubled from 64 while at most half full */
    for (uint32_t i = 1; i <= 5000; i++) {
        assert_int_equal(lh_addrmap_get(&m, 0x7f0000000000ull + 16ull * i, 0), i);
    }
    assert_int_equal(lh_addrmap_get(&m, 0x7f0000000000ull + 8, 99), 99);
    assert_int_equal(lh_addrmap_get(&m, 0x7f0000000000ull + 16ull * 5001, 99), 99);
    lh_addrmap_fini(&m);
    assert_null(m.keys);
    assert_int_equal(m.n, 0);
}

/* A second put replaces the value and says the key was there; key 0 is never stored. */
static void
test_replace_and_zero(void **state)
{
    (void)state;
    lh_addrmap_t m = {0};
    assert_int_equal(lh_addrmap_put(&m, 42, 1), 1);
    assert_int_equal(lh_addrmap_put(&m, 42, 2), 0);
    assert_int_equal(lh_addrmap_get(&m, 42, 0), 2);
    assert_int_equal(lh_addrmap_put(&m, 0, 5), 0);
    assert_int_equal(lh_addrmap_get(&m, 0, 9), 9);
    assert_int_equal(m.n, 1);
    lh_addrmap_fini(&m);
}

typedef struct rec {
    uint32_t tag;
    uint64_t addr, seq;
} rec_t;

/* LH_SORT by one key; LH_SORT2 breaks its ties by the second; an empty NULL array is fine. */
static void
test_sort(void **state)
{
    (void)state;
    rec_t v[5] = {{0, 30, 2}, {1, 10, 9}, {2, 30, 1}, {3, 20, 0}, {4, 10, 3}};
    LH_SORT2(v, 5, rec_t, addr, seq);
    const uint32_t want2[5] = {4, 1, 3, 2, 0};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(v[i].tag, want2[i]);
    }
    LH_SORT(v, 5, rec_t, seq);
    const uint32_t want1[5] = {3, 2, 0, 4, 1};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(v[i].tag, want1[i]);
    }
    LH_SORT((rec_t *)NULL, 0, rec_t, addr);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_get_grow),
        cmocka_unit_test(test_replace_and_zero),
        cmocka_unit_test(test_sort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
