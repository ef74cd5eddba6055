/* leakhound - SPDX-License-Identifier: MIT
 *
 * replay.h: replays allocation events into a heap model: the live set (address -> size,
 * stack, allocation time), per-stack aggregates and totals (peak heap and when).
 *
 * Rules: REALLOC is free(old) + alloc(new) (old 0: realloc(NULL, n); new 0: the block was
 * only freed), and the new block keeps the identity of the old one: it is attributed to the
 * stack that created the old block (a buffer grown by realloc is one object, at the site
 * that made it), and the realloc's stack is remembered as one that grew it
 * (lh_replay_growers); the trace reader delivers the two halves as separate events (event.h), and
 * an event with half LH_HALF_NONE does both at once. A FREE or REALLOC of an address that
 * is not live is counted as unmatched (allocated before the agent started, or in the parent
 * before fork), never an error.
 * An ALLOC of an address that is already live means a free was missed: the old block is
 * treated as freed and counted. At the end, the live blocks are the leaks.
 *
 * Memory is bounded by the live blocks and the number of stacks, not by the events. Not
 * thread-safe.
 */
#ifndef LH_REPLAY_H
#define LH_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "event.h"

typedef struct lh_replay lh_replay_t;

typedef struct lh_stack_stats {
    uint64_t n_allocs;     /* blocks created here (ALLOC, and REALLOC's new block) */
    uint64_t alloc_bytes;
    uint64_t n_frees;      /* of those, freed (or reallocated away) */
    uint64_t live_blocks;  /* still live: leaked, at the end */
    uint64_t live_bytes;
} lh_stack_stats_t;

typedef struct lh_replay_totals {
    uint64_t n_events;         /* events fed, of any type (a REALLOC's halves count once) */
    uint64_t n_allocs;         /* ALLOC events */
    uint64_t n_frees;          /* FREE events of non-NULL addresses */
    uint64_t n_reallocs;       /* REALLOC events */
    uint64_t alloc_bytes;      /* bytes of all blocks created (ALLOC + REALLOC) */
    uint64_t heap_bytes;       /* live now */
    uint64_t heap_blocks;
    uint64_t peak_bytes;       /* maximum of heap_bytes */
    uint64_t peak_ts_ns;       /* when it was first reached */
    uint64_t n_unmatched_frees; /* frees / reallocs of addresses that were not live */
    uint64_t n_missed_frees;   /* allocations of addresses that were still live */
    uint64_t first_ts_ns;      /* of the first and last event fed */
    uint64_t last_ts_ns;
} lh_replay_totals_t;

typedef struct lh_live_block {
    uint64_t addr;
    uint64_t size;
    uint64_t ts_ns;
    uint32_t stack_id;
} lh_live_block_t;

/* Returns 0 and a new, empty replay in *out, or LH_ENOMEM. */
int lh_replay_new(lh_replay_t **out, lh_err_t *err);
void lh_replay_free(lh_replay_t *r);

/* Applies one event (types other than ALLOC/FREE/REALLOC only count as events). Returns 0
 * or LH_ENOMEM. */
int lh_replay_event(lh_replay_t *r, const lh_event_t *ev, lh_err_t *err);
/* A hint that ev comes soon: starts loading the live set's slots its addresses hash to
 * (on python3's trace the live set is larger than the caches and three quarters of
 * lh_replay_event's time was waiting for that load). No effect on the model. */
void lh_replay_prefetch(const lh_replay_t *r, const lh_event_t *ev);
/* Whether the live set is large enough (1 MiB of slots) for lh_replay_prefetch to pay: a
 * smaller one stays in the caches, and the hint is then only instructions (on the server
 * trace's 1.2M events, 51 blocks live at most: +58M of 944M, callgrind). */
int lh_replay_prefetch_pays(const lh_replay_t *r);

const lh_replay_totals_t *lh_replay_totals(const lh_replay_t *r);

/* Stack ids run from 0 (no stack recorded) to lh_replay_n_stacks() - 1. */
size_t lh_replay_n_stacks(const lh_replay_t *r);
/* Aggregates of one stack; all zero for ids never seen. */
const lh_stack_stats_t *lh_replay_stack(const lh_replay_t *r, uint32_t stack_id);

/* The blocks the last lh_replay_event() call freed, as they were while live: 0, 1 or 2 (a
 * REALLOC's old block, plus a block whose free was missed at the new address). Lets an
 * analysis follow lifetimes without a second lookup. Valid until the next event. */
size_t lh_replay_freed(const lh_replay_t *r, const lh_live_block_t **blocks);

/* The stack the last ALLOC or REALLOC event's new block was attributed to: its own stack,
 * or for a REALLOC the stack that created the block it continues. */
uint32_t lh_replay_last_stack(const lh_replay_t *r);
/* The stacks that reallocated blocks created at stack origin, in order of first use: writes
 * at most max into out and returns how many there are. */
size_t lh_replay_growers(const lh_replay_t *r, uint32_t origin, uint32_t *out, size_t max);

/* Looks up a live block: returns 1 and fills *out, or 0. */
int lh_replay_lookup(const lh_replay_t *r, uint64_t addr, lh_live_block_t *out);
/* Iterates the live set in no particular order: start with *cursor = 0; returns 1 and a
 * block until the end (0). The replay must not change during the iteration. */
int lh_replay_live_next(const lh_replay_t *r, size_t *cursor, lh_live_block_t *out);

#endif /* LH_REPLAY_H */
