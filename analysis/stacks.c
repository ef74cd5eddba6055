/* leakhound - SPDX-License-Identifier: MIT
 *
 * stacks.c: the stack table.
 */
#include "stacks.h"

#include <stdlib.h>
#include <string.h>

#include "dupstr.h"
#include "grow.h"

void
lh_stacks_fini(lh_stacks_t *t)
{
    LH_FREE_EACH2(t->v, t->cap, lh_stack_t, ips, script);
    LH_FREE_EACH2(t->sframes.v, t->sframes.cap, lh_sframe_t, function, file);
    *t = (lh_stacks_t){0};
}

/* The slot of id (1..max) in a table indexed by id, grown as needed; NULL with *rc
 * LH_EFORMAT for an id out of range, LH_ENOMEM without memory. Stacks and script frames
 * are both numbered from 1 by the agent. */
static void *
id_slot(void *pv, size_t *cap, uint32_t id, uint32_t max, size_t elem, int *rc)
{
    if (id == 0 || id > max) {
        *rc = LH_EFORMAT;
        return NULL;
    }
    *rc = LH_ENOMEM;
    return lh_grow_slot(pv, cap, id, elem, 256);
}

int
lh_stacks_put(lh_stacks_t *t, uint32_t id, uint64_t epoch, const uint64_t *ips, size_t n)
{
    int rc = LH_EFORMAT;
    lh_stack_t *s = n > LH_STACK_DEPTH_MAX
                        ? NULL
                        : id_slot(&t->v, &t->cap, id, LH_STACK_ID_MAX, sizeof *t->v, &rc);
    if (!s || s->ips) {
        return s ? 0 : rc; /* a repeated record keeps the first */
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
    s->sframes = &t->sframes;
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

int
lh_stacks_put_script(lh_stacks_t *t, uint32_t id, const uint32_t *script, size_t n)
{
    if (id == 0 || id >= t->cap || !t->v[id].ips || n > LH_SCRIPT_DEPTH_MAX) {
        return LH_EFORMAT;
    }
    lh_stack_t *s = &t->v[id];
    if (s->script || n == 0) {
        return 0; /* a repeated record keeps the first */
    }
    s->script = malloc(n * sizeof *script);
    if (!s->script) {
        return LH_ENOMEM;
    }
    memcpy(s->script, script, n * sizeof *script);
    s->n_script = (uint32_t)n;
    return 0;
}

int
lh_stacks_put_sframe(lh_stacks_t *t, uint32_t id, uint32_t lang, const char *function,
                     size_t function_len, const char *file, size_t file_len, uint32_t line)
{
    lh_sframes_t *f = &t->sframes;
    int rc;
    lh_sframe_t *x = id_slot(&f->v, &f->cap, id, LH_SFRAME_ID_MAX, sizeof *f->v, &rc);
    if (!x || x->function) {
        return x ? 0 : rc; /* a repeated record keeps the first */
    }
    char *fn = lh_dupstr(function, function_len);
    char *fl = lh_dupstr(file, file_len);
    if (!fn || !fl) {
        free(fn);
        free(fl);
        return LH_ENOMEM;
    }
    *x = (lh_sframe_t){.function = fn, .file = fl, .lang = lang, .line = line};
    return 0;
}

const lh_sframe_t *
lh_sframes_get(const lh_sframes_t *t, uint32_t id)
{
    if (!t || id == 0 || id >= t->cap || !t->v[id].function) {
        return NULL;
    }
    return &t->v[id];
}
