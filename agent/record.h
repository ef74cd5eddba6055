/* leakhound - SPDX-License-Identifier: MIT
 *
 * record.h: event recording (record.c), turning one hook call into records in the calling
 * thread's slot. The caller holds the reentrancy guard. lh_rec_begin unwinds (when asked)
 * before it locks the slot and takes the time stamp; lh_rec_end unlocks.
 */
#ifndef LH_RECORD_H
#define LH_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "agent.h"

typedef struct lh_rec {
    lh_slot_t *slot;
    uint32_t stack_id;
    uint64_t ts; /* taken under the slot lock by lh_rec_begin */
} lh_rec_t;

/* Returns 0 with the slot locked, or -1 (no slot; nothing to end). */
int lh_rec_begin(lh_rec_t *r, int want_stack);
void lh_rec_alloc(lh_rec_t *r, const void *p, size_t size, int kind);
void lh_rec_free(lh_rec_t *r, const void *p);
void lh_rec_realloc(lh_rec_t *r, const void *old, const void *p, size_t size);
void lh_rec_label(lh_rec_t *r, uint8_t type, const char *label, int trigger);
void lh_rec_tag(lh_rec_t *r, const void *p, const char *type);
void lh_rec_snapshot(lh_rec_t *r, const char *label, int trigger, const char *file, int mode,
                     unsigned number, uint64_t pause_ns);
void lh_rec_end(lh_rec_t *r);

/* lh_rec_begin + lh_rec_alloc (with the stack) or lh_rec_free + lh_rec_end, in one call.
 * entry_fp: the frame address of the hook the program called, whose return address is the
 * program's (shims.c), or 0: the stack cache then finds it by walking the agent's frames. */
void lh_rec_alloc_event(const void *p, size_t size, int kind, uintptr_t entry_fp);
void lh_rec_free_event(const void *p);

/* The per-thread cache of known stacks (record.c): LH_UCACHE_WAYS entries of
 * lh_ucache_bytes(depth) / LH_UCACHE_WAYS bytes each, kept in the thread's slot. */
#define LH_UCACHE_WAYS 64
size_t lh_ucache_bytes(int depth);
/* Forgets every remembered stack (a slot taken again by another thread). */
void lh_ucache_clear(void *ucache, int depth);

#endif /* LH_RECORD_H */
