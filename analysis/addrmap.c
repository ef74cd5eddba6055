/* leakhound - SPDX-License-Identifier: MIT
 *
 * addrmap.c: the 64-bit key map of addrmap.h.
 */
#include "addrmap.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "hash.h"

/* The slot of key: where it is, or the empty slot where it would go. */
static size_t
slot_of(const lh_addrmap_t *m, uint64_t key)
{
    size_t j = lh_hash_mix(key) & m->mask;
    while (m->keys[j] && m->keys[j] != key) {
        j = (j + 1) & m->mask;
    }
    return j;
}

uint32_t
lh_addrmap_get(const lh_addrmap_t *m, uint64_t key, uint32_t none)
{
    if (!m->keys || !key) {
        return none;
    }
    size_t j = slot_of(m, key);
    return m->keys[j] ? m->vals[j] : none;
}

int
lh_addrmap_put(lh_addrmap_t *m, uint64_t key, uint32_t val)
{
    if (!key) {
        return 0;
    }
    if ((m->n + 1) * 2 > (m->keys ? m->mask + 1 : 0)) {
        lh_addrmap_t g = {0};
        size_t cap = m->keys ? (m->mask + 1) * 2 : 64;
        /* one block: the keys, then the values */
        if (!(g.keys = calloc(cap, sizeof *g.keys + sizeof *g.vals))) {
            return LH_ENOMEM;
        }
        g.vals = (uint32_t *)(g.keys + cap);
        g.mask = cap - 1;
        g.n = m->n;
        for (size_t i = 0; m->keys && i <= m->mask; i++) {
            if (m->keys[i]) {
                size_t j = slot_of(&g, m->keys[i]);
                g.keys[j] = m->keys[i];
                g.vals[j] = m->vals[i];
            }
        }
        lh_addrmap_fini(m);
        *m = g;
    }
    size_t j = slot_of(m, key);
    int added = !m->keys[j];
    m->keys[j] = key;
    m->vals[j] = val;
    m->n += (size_t)added;
    return added;
}

void
lh_addrmap_fini(lh_addrmap_t *m)
{
    free(m->keys); /* and the values, in the same block */
    memset(m, 0, sizeof *m);
}
