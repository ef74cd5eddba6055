/* leakhound - SPDX-License-Identifier: MIT
 *
 * fread_count.h: reading a file while counting the bytes read (the readers of traces and
 * snapshot files report offsets in their messages).
 */
#ifndef LH_FREAD_COUNT_H
#define LH_FREAD_COUNT_H

#include <stdint.h>
#include <stdio.h>

/* Reads up to n bytes of f into buf and adds what it read to *count. Returns how many
 * (short only at end of file or on an error). */
static inline size_t
lh_fread_count(FILE *f, void *buf, size_t n, uint64_t *count)
{
    size_t got = n ? fread(buf, 1, n, f) : 0;
    *count += got;
    return got;
}

#endif /* LH_FREAD_COUNT_H */
