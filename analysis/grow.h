/* leakhound - SPDX-License-Identifier: MIT
 *
 * grow.h: growable arrays. An array is a pointer and a capacity (in elements) kept by its
 * owner; lh_grow_to makes room, doubling the capacity from a first size so that filling
 * an array of n elements costs O(n) copies. Also the freeing of what owners hold: a list
 * of arrays (LH_FREE_ALL) and a pointer field of each record of an array (LH_FREE_FIELD),
 * the two shapes every _free and _fini of the analyses is made of.
 */
#ifndef LH_GROW_H
#define LH_GROW_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

/* Makes *(T **)pv hold at least need elements of elem bytes; *cap is its capacity, first
 * the capacity of a new array. Returns 0, or LH_ENOMEM (the array unchanged). */
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

/* free() of each of the n pointers in v: the body of LH_FREE_ALL. */
static inline void
lh_free_each(void *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i]);
    }
}

/* free() of each argument, in order (NULL ones are fine, as for free). The arguments must
 * point to non-const objects; cast a const char * that the owner holds. */
#define LH_FREE_ALL(...)                                                                   \
    lh_free_each((void *[]){__VA_ARGS__}, sizeof((void *[]){__VA_ARGS__}) / sizeof(void *))

/* free() of the pointer at byte offset off in each of the n records at base (size bytes
 * apart); base may be NULL (an array never allocated). The array itself is not freed. */
static inline void
lh_free_field(void *base, size_t n, size_t size, size_t off)
{
    for (size_t i = 0; base && i < n; i++) {
        void *p;
        memcpy(&p, (char *)base + i * size + off, sizeof p);
        free(p);
    }
}

/* free() of arr[i].field for i in [0, n); field must be a (non-const) object pointer. */
#define LH_FREE_FIELD(arr, n, type, field)                                                 \
    lh_free_field((arr), (n), sizeof(type), offsetof(type, field))

#endif /* LH_GROW_H */
