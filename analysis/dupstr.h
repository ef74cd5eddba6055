/* leakhound - SPDX-License-Identifier: MIT
 *
 * dupstr.h: C strings from bytes. A NUL-terminated copy of a counted string (labels, names
 * and paths in the trace's records are counted, not NUL-terminated; the analyses keep them
 * as C strings), bytes as lower-case hex (build ids), and the freeing of an array of
 * such copies.
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

#endif /* LH_DUPSTR_H */
