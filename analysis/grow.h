/* leakhound - SPDX-License-Identifier: MIT
 *
 * grow.h: growable arrays. An array is a pointer and a capacity (in elements) kept by its
 * owner; lh_grow_to makes room, doubling the capacity from a first size so that filling
 * an array of n elements costs O(n) copies.
 */
#ifndef LH_GROW_H
#define LH_GROW_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "hugepages.h"

/* Makes *(T **)pv hold at least need elements of elem bytes; *cap is its capacity, first
 * the capacity of a new array. An array of LH_HUGEPAGES_MIN or more is hinted to huge
 * pages. Returns 0, or LH_ENOMEM (the array unchanged). */
static inline int
lh_grow_to(void *pv, size_t *cap, size_t need, size_t elem, size_t first)
{
    if (need <= *cap) {
        return 0;
    }
    size_t c = *cap ? *cap : first;
    while (c < need) {
        c *= 2;
    }
    if (c > SIZE_MAX / elem) {
        return LH_ENOMEM;
    }
    void *p = realloc(*(void **)pv, c * elem);
    if (!p) {
        return LH_ENOMEM;
    }
    lh_hugepages_hint(p, c * elem);
    *(void **)pv = p;
    *cap = c;
    return 0;
}

/* Makes room for one more element after the n in *(T **)pv. */
static inline int
lh_grow(void *pv, size_t *cap, size_t n, size_t elem, size_t first)
{
    return lh_grow_to(pv, cap, n + 1, elem, first);
}

/* lh_grow_to, with the elements it adds (from the old capacity to the new) zeroed: for
 * arrays indexed by an id, where an unused slot must read as empty. */
static inline int
lh_grow_zeroed(void *pv, size_t *cap, size_t need, size_t elem, size_t first)
{
    size_t old = *cap;
    if (lh_grow_to(pv, cap, need, elem, first) < 0) {
        return LH_ENOMEM;
    }
    if (*cap > old) {
        memset((char *)*(void **)pv + old * elem, 0, (*cap - old) * elem);
    }
    return 0;
}

/* Element id of the array *(T **)pv indexed by id, grown zeroed (lh_grow_zeroed) to hold
 * it; NULL without memory. A slot never written reads as all zero. */
static inline void *
lh_grow_slot(void *pv, size_t *cap, size_t id, size_t elem, size_t first)
{
    if (lh_grow_zeroed(pv, cap, id + 1, elem, first) < 0) {
        return NULL;
    }
    return (char *)*(void **)pv + id * elem;
}

/* lh_grow, then the new element (index n) zeroed: for appending a record whose fields are
 * then set one by one. Returns it, or NULL without memory (the array unchanged). */
static inline void *
lh_push_zeroed(void *pv, size_t *cap, size_t n, size_t elem, size_t first)
{
    if (lh_grow(pv, cap, n, elem, first) < 0) {
        return NULL;
    }
    return memset((char *)*(void **)pv + n * elem, 0, elem);
}

/* Leaves out of the array rows (*n elements of elem bytes), the others keeping their order,
 * each element for which drop(ctx, element, err) says 1, having released what it owns and
 * taken its part out of any totals; 0 keeps it. A negative answer stops the walk: the
 * elements not looked at yet are kept, and it is returned. Returns 0, or drop's error. */
static inline int
lh_drop_rows(void *rows, size_t *n, size_t elem, int (*drop)(void *ctx, void *row, lh_err_t *err),
             void *ctx, lh_err_t *err)
{
    size_t k = 0, i = 0;
    int rc = 0;
    for (; i < *n; i++) {
        char *row = (char *)rows + i * elem;
        if ((rc = drop(ctx, row, err)) < 0) {
            break;
        }
        if (!rc && k++ != i) {
            memmove((char *)rows + (k - 1) * elem, row, elem);
        }
    }
    if (i < *n && k != i) {
        memmove((char *)rows + k * elem, (char *)rows + i * elem, (*n - i) * elem);
    }
    *n = k + (*n - i);
    return rc < 0 ? rc : 0;
}

/* The sum of the uint64_t at byte offset off in each of the n elements (elem bytes) at rows:
 * a total over a listing's rows (LH_ROWS_SUM names the field). */
static inline uint64_t
lh_rows_sum(const void *rows, size_t n, size_t elem, size_t off)
{
    uint64_t sum = 0, v;
    for (size_t i = 0; i < n; i++) {
        memcpy(&v, (const char *)rows + i * elem + off, sizeof v);
        sum += v;
    }
    return sum;
}
#define LH_ROWS_SUM(rows, n, type, field)                                                    \
    lh_rows_sum((rows), (n), sizeof(type), offsetof(type, field))

#endif /* LH_GROW_H */
