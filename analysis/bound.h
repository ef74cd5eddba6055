/* leakhound - SPDX-License-Identifier: MIT
 *
 * bound.h: binary search in an array of records sorted by a uint64_t key (an address, a
 * time stamp): the position where a key falls, as C++'s lower_bound and upper_bound.
 * One loop for the live blocks, pages, words, variables and events that are looked up
 * by address or time.
 */
#ifndef LH_BOUND_H
#define LH_BOUND_H

#include <stddef.h>
#include <stdint.h>
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

#endif /* LH_BOUND_H */
