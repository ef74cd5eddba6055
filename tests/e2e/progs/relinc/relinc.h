/* leakhound - SPDX-License-Identifier: MIT
 *
 * relinc/relinc.h (e2e): the header relinc.c finds through a relative -I (see relinc.c),
 * not in its own directory (a quoted include looks there first); its
 * inline function allocates the block that leaks.
 */
#ifndef RELINC_H
#define RELINC_H

#include <stdlib.h>
#include <string.h>

static inline __attribute__((always_inline)) void *
relinc_make(size_t n)
{
    void *p = malloc(n); /* the leak */
    memset(p, 0, n);
    return p;
}

#endif /* RELINC_H */
