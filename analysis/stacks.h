/* leakhound - SPDX-License-Identifier: MIT
 *
 * stacks.h: the table of interned call stacks of a trace (LH_REC_STACK records).
 *
 * Stack ids are small dense integers >= 1 chosen by the agent; the table is a growable
 * array indexed by id. A stack record may arrive after the first event that uses its id
 * (from another thread's frame), so lookups of unknown ids simply return NULL.
 */
#ifndef LH_STACKS_H
#define LH_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Limits against hostile files: ids above this, or deeper stacks, are malformed. */
/* The agent assigns at most 2^20 stack ids (agent/recorder.c: lh_stacks_init); twice that
 * leaves room and keeps a hostile id from sizing per-stack tables to gigabytes. */
#define LH_STACK_ID_MAX (1u << 21)
#define LH_STACK_DEPTH_MAX 1024u

typedef struct lh_stack {
    uint64_t *ips; /* return addresses, innermost first; NULL for an unknown id */
    uint32_t n_ips;
    uint64_t epoch;
} lh_stack_t;

typedef struct lh_stacks {
    lh_stack_t *v; /* indexed by id; v[0] unused */
    size_t cap;
    size_t n_known;
} lh_stacks_t;

void lh_stacks_init(lh_stacks_t *t);
void lh_stacks_fini(lh_stacks_t *t);

/* Stores stack id (copying ips). A second record for a known id is ignored. Returns 0,
 * LH_EFORMAT for id 0 or id > LH_STACK_ID_MAX or n > LH_STACK_DEPTH_MAX, LH_ENOMEM. */
int lh_stacks_put(lh_stacks_t *t, uint32_t id, uint64_t epoch, const uint64_t *ips, size_t n);

/* The stack with this id, or NULL when it was never recorded. */
const lh_stack_t *lh_stacks_get(const lh_stacks_t *t, uint32_t id);

#endif /* LH_STACKS_H */
