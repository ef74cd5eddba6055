/* leakhound - SPDX-License-Identifier: MIT
 *
 * stacks.c: the stack table.
 */
#include "stacks.h"

#include <stdlib.h>
#include <string.h>

void
lh_stacks_init(lh_stacks_t *t)
{
    t->v = NULL;
    t->cap = 0;
    t->n_known = 0;
}

void
lh_stacks_fini(lh_stacks_t *t)
{
    for (size_t i = 0; i < t->cap; i++) {
        free(t->v[i].ips);
    }
    free(t->v);
    lh_stacks_init(t);
}

int
lh_stacks_put(lh_stacks_t *t, uint32_t id, uint64_t epoch, const uint64_t *ips, size_t n)
{
    if (id == 0 || id > LH_STACK_ID_MAX || n > LH_STACK_DEPTH_MAX) {
        return LH_EFORMAT;
    }
    if (id >= t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap <= id) {
            cap *= 2;
        }
        lh_stack_t *v = realloc(t->v, cap * sizeof *v);
        if (!v) {
            return LH_ENOMEM;
        }
        memset(v + t->cap, 0, (cap - t->cap) * sizeof *v);
        t->v = v;
        t->cap = cap;
    }
    lh_stack_t *s = &t->v[id];
    if (s->ips) {
        return 0;
    }
    s->ips = malloc((n ? n : 1) * sizeof *ips);
    if (!s->ips) {
        return LH_ENOMEM;
    }
    if (n) {
        memcpy(s->ips, ips, n * sizeof *ips);
    }
    s->n_ips = (uint32_t)n;
    s->epoch = epoch;
    t->n_known++;
    return 0;
}

const lh_stack_t *
lh_stacks_get(const lh_stacks_t *t, uint32_t id)
{
    if (id == 0 || id >= t->cap || !t->v[id].ips) {
        return NULL;
    }
    return &t->v[id];
}
