/* leakhound - SPDX-License-Identifier: MIT
 *
 * bound.h: arrays of records ordered by a uint64_t key (an address, a time stamp): the
 * sort that orders them, and the binary search for the position where a key falls, as
 * C++'s lower_bound and upper_bound. One comparator and one loop for the live blocks,
 * pages, words, regions, objects, variables and events that are sorted and looked up by
 * address or time.
 */
#ifndef LH_BOUND_H
#define LH_BOUND_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The index of the first of the n records at base (size bytes apart, sorted by the
 * uint64_t at byte offset off) whose key is >= key (upper: > key); n when there is none. */
static inline size_t
lh_bound_u64(const void *base, size_t n, size_t size, size_t off, uint64_t key, int upper)
{
    const unsigned char *p = base;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t k;
        memcpy(&k, p + mid * size + off, sizeof k);
        if (upper ? k <= key : k < key) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* The first record of arr[0..n) whose field is >= key (LH_UPPER: > key). field must be a
 * uint64_t. */
#define LH_LOWER(arr, n, type, field, key)                                                 \
    lh_bound_u64((arr), (n), sizeof(type), offsetof(type, field), (key), 0)
#define LH_UPPER(arr, n, type, field, key)                                                 \
    lh_bound_u64((arr), (n), sizeof(type), offsetof(type, field), (key), 1)

/* qsort order of (x1, x2) against (y1, y2): ascending by the first key, ties by the
 * second. For comparators over keys that are not uint64_t fields (LH_SORT2's case). */
static inline int
lh_order2(uint64_t x1, uint64_t y1, uint64_t x2, uint64_t y2)
{
    if (x1 != y1) {
        return x1 < y1 ? -1 : 1;
    }
    return (x2 > y2) - (x2 < y2);
}

/* qsort_r's comparator for lh_sort_u64: the uint64_t keys at the byte offsets ctx holds
 * (a size_t[2]: the first key, then the one that breaks its ties). */
static inline int
lh_key_cmp(const void *a, const void *b, void *ctx)
{
    const size_t *off = ctx;
    for (int i = 0; i < 2; i++) {
        uint64_t x, y;
        memcpy(&x, (const unsigned char *)a + off[i], sizeof x);
        memcpy(&y, (const unsigned char *)b + off[i], sizeof y);
        if (x != y) {
            return x < y ? -1 : 1;
        }
    }
    return 0;
}

/* Sorts the n records at base (size bytes apart) ascending by the uint64_t at byte offset
 * off1, ties by the one at off2 (off2 == off1: one key). base may be NULL when n is 0
 * (qsort's may not: UBSan). Records equal in both keys are left in qsort's order. */
static inline void
lh_sort_u64(void *base, size_t n, size_t size, size_t off1, size_t off2)
{
    size_t off[2] = {off1, off2};
    if (n > 1) {
        qsort_r(base, n, size, lh_key_cmp, off);
    }
}

/* arr[0..n) sorted by field (LH_SORT2: then by field2); the fields must be uint64_t. */
#define LH_SORT(arr, n, type, field)                                                       \
    lh_sort_u64((arr), (n), sizeof(type), offsetof(type, field), offsetof(type, field))
#define LH_SORT2(arr, n, type, field, field2)                                              \
    lh_sort_u64((arr), (n), sizeof(type), offsetof(type, field), offsetof(type, field2))

#endif /* LH_BOUND_H */
