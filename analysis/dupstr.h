/* leakhound - SPDX-License-Identifier: MIT
 *
 * dupstr.h: C strings from bytes. A NUL-terminated copy of a counted string (labels, names
 * and paths in the trace's records are counted, not NUL-terminated; the analyses keep them
 * as C strings), bytes as lower-case hex (build ids), and the freeing of an array of
 * such copies, or of an array of records that own such copies, or of a list of arrays.
 */
#ifndef LH_DUPSTR_H
#define LH_DUPSTR_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A malloc'd copy of s[0..n) and a NUL (s may be NULL when n is 0), or NULL without
 * memory. */
static inline char *
lh_dupstr(const char *s, size_t n)
{
    char *r = malloc(n + 1);
    if (r) {
        if (n) {
            memcpy(r, s, n);
        }
        r[n] = '\0';
    }
    return r;
}

/* b[0..n) as lower-case hex into out (out_len bytes, NUL-terminated; cut at a whole byte
 * when it does not fit). */
static inline void
lh_hex(char *out, size_t out_len, const unsigned char *b, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    size_t k = 0;
    for (size_t i = 0; i < n && k + 2 < out_len; i++) {
        out[k++] = digits[b[i] >> 4];
        out[k++] = digits[b[i] & 15];
    }
    out[k] = '\0';
}

/* Frees the n strings of v (NULL ones are skipped) and v itself; v may be NULL. */
static inline void
lh_strv_free(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        free(v[i]);
    }
    free(v);
}

/* Frees, in each of the n records at base (size bytes apart), the pointers at the byte
 * offsets off[0..n_off), then base itself; base may be NULL. One loop for the tables whose
 * records own strings or arrays (stacks, rules, sites, threads, modules). */
static inline void
lh_free_records(void *base, size_t n, size_t size, const size_t *off, size_t n_off)
{
    for (size_t i = 0; base && i < n; i++) {
        for (size_t k = 0; k < n_off; k++) {
            void *p;
            memcpy(&p, (char *)base + i * size + off[k], sizeof p);
            free(p);
        }
    }
    free(base);
}

/* arr[0..n) of type, each record owning the pointer in field (LH_FREE_EACH2/3: and
 * field2, field3), and arr itself freed. */
#define LH_FREE_EACH(arr, n, type, field)                                                  \
    lh_free_records((arr), (n), sizeof(type), (const size_t[]){offsetof(type, field)}, 1)
#define LH_FREE_EACH2(arr, n, type, field, field2)                                         \
    lh_free_records((arr), (n), sizeof(type),                                              \
                    (const size_t[]){offsetof(type, field), offsetof(type, field2)}, 2)
#define LH_FREE_EACH3(arr, n, type, field, field2, field3)                                 \
    lh_free_records((arr), (n), sizeof(type),                                              \
                    (const size_t[]){offsetof(type, field), offsetof(type, field2),         \
                                     offsetof(type, field3)},                              \
                    3)

/* free() of each of the n pointers in v: the body of LH_FREE_ALL. */
static inline void
lh_free_ptrs(void *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i]);
    }
}

/* free() of each argument, in order (NULL ones are fine, as for free): an owner's arrays
 * in one list. The arguments must point to non-const objects (cast a const char * the
 * owner holds). */
#define LH_FREE_ALL(...)                                                                   \
    lh_free_ptrs((void *[]){__VA_ARGS__}, sizeof((void *[]){__VA_ARGS__}) / sizeof(void *))

#endif /* LH_DUPSTR_H */
