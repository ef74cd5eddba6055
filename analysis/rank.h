/* leakhound - SPDX-License-Identifier: MIT
 *
 * rank.h: the order of every ranked listing (sites by leaked bytes, by score, by peak,
 * groups by count): a first key descending, then a second descending, then the id
 * ascending, so that ties print in the same order on every run.
 */
#ifndef LH_RANK_H
#define LH_RANK_H

#include <stdint.h>

/* qsort-style: < 0 when (a1, a2, ida) ranks before (b1, b2, idb). Byte counts convert to
 * double exactly below 2^53 (8 PiB). */
static inline int
lh_rank_order(double a1, double b1, uint64_t a2, uint64_t b2, uint64_t ida, uint64_t idb)
{
    if (a1 != b1) {
        return a1 > b1 ? -1 : 1;
    }
    if (a2 != b2) {
        return a2 > b2 ? -1 : 1;
    }
    return ida < idb ? -1 : ida > idb;
}

/* An id with its two keys, and the qsort comparator of lh_rank_order over them. */
typedef struct lh_rank {
    uint32_t id;
    uint64_t key1, key2;
} lh_rank_t;

static inline int
lh_rank_cmp(const void *a, const void *b)
{
    const lh_rank_t *x = a, *y = b;
    return lh_rank_order((double)x->key1, (double)y->key1, x->key2, y->key2, x->id, y->id);
}

#endif /* LH_RANK_H */
