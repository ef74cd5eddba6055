/* leakhound - SPDX-License-Identifier: MIT
 *
 * keyindex.h: the hash index of the shell's grouping tables: nonzero 64-bit hashes to
 * positions in the table's own array of groups (linear probing, at most half full). The
 * caller hashes and compares its keys; the index only finds where to look.
 */
#ifndef LH_SHELL_KEYINDEX_H
#define LH_SHELL_KEYINDEX_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "hash.h"

typedef struct lh_keyindex {
    uint64_t *hash; /* 0: empty slot */
    uint32_t *pos;
    size_t mask;
} lh_keyindex_t;

/* The first slot to probe for hash h. */
static inline size_t
lh_keyindex_start(const lh_keyindex_t *ix, uint64_t h)
{
    return (size_t)lh_hash_mix(h) & ix->mask;
}

/* Makes room for one more than n entries. Returns 0, or -1 when out of memory (the index
 * unchanged). */
static inline int
lh_keyindex_reserve(lh_keyindex_t *ix, size_t n)
{
    if ((n + 1) * 2 <= ix->mask + 1 && ix->hash) {
        return 0;
    }
    lh_keyindex_t nx = {NULL, NULL, ix->hash ? (ix->mask + 1) * 2 - 1 : 255};
    nx.hash = calloc(nx.mask + 1, sizeof *nx.hash);
    nx.pos = calloc(nx.mask + 1, sizeof *nx.pos);
    if (!nx.hash || !nx.pos) {
        free(nx.hash);
        free(nx.pos);
        return -1;
    }
    for (size_t i = 0; ix->hash && i <= ix->mask; i++) {
        if (ix->hash[i]) {
            size_t j = lh_keyindex_start(&nx, ix->hash[i]);
            while (nx.hash[j]) {
                j = (j + 1) & nx.mask;
            }
            nx.hash[j] = ix->hash[i];
            nx.pos[j] = ix->pos[i];
        }
    }
    free(ix->hash);
    free(ix->pos);
    *ix = nx;
    return 0;
}

static inline void
lh_keyindex_fini(lh_keyindex_t *ix)
{
    free(ix->hash);
    free(ix->pos);
}

#endif /* LH_SHELL_KEYINDEX_H */
