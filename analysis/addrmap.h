/* leakhound - SPDX-License-Identifier: MIT
 *
 * addrmap.h: a map from 64-bit keys (addresses, name hashes) to 32-bit values (indexes),
 * for the lookups of the heap decoders: Python objects and types by address, Perl arenas
 * and stashes, a snapshot's data roots. A set is a map whose values are not read.
 *
 * Open addressing with linear probing, kept at most half full: 12 bytes a slot, 2 to 4
 * slots a key. Key 0 marks an empty slot, so it is never stored (a caller whose keys may
 * be 0 adds 1). Nothing is removed. Not thread-safe; a zeroed map ({0}) is empty.
 */
#ifndef LH_ADDRMAP_H
#define LH_ADDRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct lh_addrmap {
    uint64_t *keys; /* 0: empty */
    uint32_t *vals; /* after the keys, in their block */
    size_t mask;    /* slots - 1 (0 before the first put) */
    size_t n;       /* keys held */
} lh_addrmap_t;

/* The value of key, or none when it is not there (key 0 never is). */
uint32_t lh_addrmap_get(const lh_addrmap_t *m, uint64_t key, uint32_t none);

/* Sets key's value. Returns 1 when key was added, 0 when it was there (its value replaced)
 * or is 0 (nothing stored), LH_ENOMEM (the map unchanged). */
int lh_addrmap_put(lh_addrmap_t *m, uint64_t key, uint32_t val);

/* Frees the map's memory and makes it empty. */
void lh_addrmap_fini(lh_addrmap_t *m);

#endif /* LH_ADDRMAP_H */
