/* leakhound - SPDX-License-Identifier: MIT
 *
 * stacktab.h: the agent's stack table. Each distinct call stack (a list of return addresses,
 * innermost first) gets a small dense id >= 1, so events carry an id and each stack is
 * written to the trace once per file.
 *
 * Lookups are lock-free (readers probe an open-addressing table of published entry
 * indices); inserts take a spinlock. All memory comes from lazily touched anonymous
 * mappings reserved at init, never from the host's heap. Entries are keyed by the module
 * "epoch" too: after a dlclose the same address may belong to another library, so a stack
 * seen again after an unload gets a new id.
 */
#ifndef LH_AGENT_STACKTAB_H
#define LH_AGENT_STACKTAB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct lh_stacktab_entry {
    uint64_t hash;
    const uint64_t *ips;
    uint32_t n;
    uint32_t epoch;
    _Atomic uint32_t emitted_gen; /* trace-file generation that has this stack's record */
    uint32_t pad;
} lh_stacktab_entry_t;

/* Claims the record of a stack (or a script frame) for trace-file generation gen: 1 for the
 * one caller that moves *emitted from another generation to gen (it writes the record), 0
 * for every other. Lock-free, no allocation. */
static inline int
lh_claim_gen(_Atomic uint32_t *emitted, uint32_t gen)
{
    uint32_t old = atomic_load_explicit(emitted, memory_order_relaxed);
    while (old != gen) {
        if (atomic_compare_exchange_weak(emitted, &old, gen)) {
            return 1;
        }
    }
    return 0;
}

typedef struct lh_stacktab {
    _Atomic uint32_t *slots; /* entry index + 1, 0 = empty */
    uint32_t slot_mask;
    lh_stacktab_entry_t *entries;
    uint32_t max_entries;
    _Atomic uint32_t n_entries;
    uint64_t *arena;
    uint64_t arena_words;
    uint64_t arena_used;
    atomic_flag lock;
    size_t map_slots_len, map_entries_len, map_arena_len;
} lh_stacktab_t;

/* Reserves the table (address space only). Returns 0 or -1. Not AS-safe (mmap is, but call
 * it once at init). */
int lh_stacktab_init(lh_stacktab_t *t, uint32_t max_entries, uint64_t arena_words);
void lh_stacktab_fini(lh_stacktab_t *t);

/* Returns the id of ips[0..n) in epoch, inserting it if new; 0 when the table is full.
 * Sets *emit to 1 when the caller is the one that must write the stack's record into trace
 * generation gen (exactly one caller per id and generation). AS-safe, lock-free for stacks
 * already present. */
uint32_t lh_stacktab_intern(lh_stacktab_t *t, const uint64_t *ips, uint32_t n, uint32_t epoch,
                          uint32_t gen, int *emit);

/* The entry for id (>= 1), or NULL. AS-safe. */
const lh_stacktab_entry_t *lh_stacktab_get(const lh_stacktab_t *t, uint32_t id);

/* In a fork child: the insert lock may have been held by a thread that no longer exists. */
void lh_stacktab_after_fork(lh_stacktab_t *t);

#endif /* LH_AGENT_STACKTAB_H */
