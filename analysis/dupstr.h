/* leakhound - SPDX-License-Identifier: MIT
 *
 * dupstr.h: a NUL-terminated copy of a counted string. Labels, names and paths in the
 * trace's records are counted, not NUL-terminated; the analyses keep them as C strings.
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

#endif /* LH_DUPSTR_H */
