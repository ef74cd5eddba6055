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
#include "format.h"

/* Limits against hostile files: ids above this, or deeper stacks, are malformed. */
/* The agent assigns at most 2^20 stack ids (agent/recorder.c: lh_stacktab_init); twice that
 * leaves room and keeps a hostile id from sizing per-stack tables to gigabytes. */
#define LH_STACK_ID_MAX (1u << 21)
#define LH_STACK_DEPTH_MAX 1024u

/* One interned script frame (SFRAME record): a Perl sub or Python function at a line. */
typedef struct lh_sframe {
    uint32_t lang;  /* LH_LANG_* */
    uint32_t line;
    char *function; /* NUL-terminated copies; NULL for an id never recorded */
    char *file;
} lh_sframe_t;

/* The SFRAME table of a trace, indexed by sframe id (v[0] unused). */
typedef struct lh_sframes {
    lh_sframe_t *v;
    size_t cap;
} lh_sframes_t;

typedef struct lh_stack {
    uint64_t *ips; /* return addresses, innermost first; NULL for an unknown id */
    uint32_t n_ips;
    uint64_t epoch;
    /* Script frames of the stack (ids into *sframes), innermost first; n_script = 0 for a
     * purely native stack. sframes is the owning table's, resolved when the stack is
     * symbolized (an SFRAME record may come after the STACK that uses it). */
    uint32_t *script;
    uint32_t n_script;
    const lh_sframes_t *sframes;
} lh_stack_t;

typedef struct lh_stacks {
    lh_stack_t *v; /* indexed by id; v[0] unused */
    size_t cap;
    lh_sframes_t sframes;
} lh_stacks_t;

/* A zeroed table is empty; lh_stacks_fini frees one and leaves it so. */
void lh_stacks_fini(lh_stacks_t *t);

/* Stores stack id (copying ips). A second record for a known id is ignored. Returns 0,
 * LH_EFORMAT for id 0 or id > LH_STACK_ID_MAX or n > LH_STACK_DEPTH_MAX, LH_ENOMEM. */
int lh_stacks_put(lh_stacks_t *t, uint32_t id, uint64_t epoch, const uint64_t *ips, size_t n);

/* Adds script frame ids (innermost first) to the known stack id (after lh_stacks_put).
 * Returns 0, LH_EFORMAT for an unknown id or n > LH_SCRIPT_DEPTH_MAX, LH_ENOMEM. */
int lh_stacks_put_script(lh_stacks_t *t, uint32_t id, const uint32_t *script, size_t n);

/* Stores script frame id (copying the strings). A second record for a known id is ignored.
 * Returns 0, LH_EFORMAT for id 0 or id > LH_SFRAME_ID_MAX, LH_ENOMEM. */
int lh_stacks_put_sframe(lh_stacks_t *t, uint32_t id, uint32_t lang, const char *function,
                         size_t function_len, const char *file, size_t file_len,
                         uint32_t line);

/* The script frame with this id, or NULL when it was never recorded. */
const lh_sframe_t *lh_sframes_get(const lh_sframes_t *t, uint32_t id);

/* The stack with this id, or NULL when it was never recorded. */
const lh_stack_t *lh_stacks_get(const lh_stacks_t *t, uint32_t id);

#endif /* LH_STACKS_H */
