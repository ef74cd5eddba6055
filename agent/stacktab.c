/* leakhound - SPDX-License-Identifier: MIT
 *
 * stacktab.c: lock-free-read stack interning (see stacktab.h).
 */
#include "stacktab.h"

#include <string.h>

#include "sys.h"

static uint64_t
hash_stack(const uint64_t *ips, uint32_t n, uint32_t epoch)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ ((uint64_t)n << 32) ^ epoch;
    for (uint32_t i = 0; i < n; i++) {
        h = (h ^ ips[i]) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h | 1; /* never 0 */
}

int
lh_stacktab_init(lh_stacktab_t *t, uint32_t max_entries, uint64_t arena_words)
{
    uint32_t n_slots = 1024;
    memset(t, 0, sizeof *t);
    while (n_slots < max_entries * 2u && n_slots < (1u << 30)) {
        n_slots <<= 1;
    }
    t->map_slots_len = (size_t)n_slots * sizeof(uint32_t);
    t->map_entries_len = (size_t)max_entries * sizeof(lh_stacktab_entry_t);
    t->map_arena_len = (size_t)arena_words * sizeof(uint64_t);
    t->slots = lh_sys_map(t->map_slots_len);
    t->entries = lh_sys_map(t->map_entries_len);
    t->arena = lh_sys_map(t->map_arena_len);
    if (!t->slots || !t->entries || !t->arena) {
        lh_stacktab_fini(t);
        return -1;
    }
    t->slot_mask = n_slots - 1;
    t->max_entries = max_entries;
    t->arena_words = arena_words;
    atomic_flag_clear(&t->lock);
    return 0;
}

void
lh_stacktab_fini(lh_stacktab_t *t)
{
    lh_sys_unmap(t->slots, t->map_slots_len);
    lh_sys_unmap(t->entries, t->map_entries_len);
    lh_sys_unmap(t->arena, t->map_arena_len);
    memset(t, 0, sizeof *t);
}

static int
entry_matches(const lh_stacktab_entry_t *e, uint64_t h, const uint64_t *ips, uint32_t n,
              uint32_t epoch)
{
    return e->hash == h && e->n == n && e->epoch == epoch &&
           memcmp(e->ips, ips, n * sizeof *ips) == 0;
}

/* Probes for (h, ips); returns the entry index + 1, or 0 with *free_slot at the first empty
 * slot of the probe sequence. */
static uint32_t
probe(lh_stacktab_t *t, uint64_t h, const uint64_t *ips, uint32_t n, uint32_t epoch,
      uint32_t *free_slot)
{
    uint32_t i = (uint32_t)h & t->slot_mask;
    for (uint32_t step = 0; step <= t->slot_mask; step++) {
        uint32_t v = atomic_load_explicit(&t->slots[i], memory_order_acquire);
        if (v == 0) {
            *free_slot = i;
            return 0;
        }
        if (entry_matches(&t->entries[v - 1], h, ips, n, epoch)) {
            return v;
        }
        i = (i + 1) & t->slot_mask;
    }
    *free_slot = UINT32_MAX;
    return 0;
}

uint32_t
lh_stacktab_intern(lh_stacktab_t *t, const uint64_t *ips, uint32_t n, uint32_t epoch, uint32_t gen,
                 int *emit)
{
    uint64_t h = hash_stack(ips, n, epoch);
    uint32_t free_slot;
    *emit = 0;
    if (!t->slots) {
        return 0;
    }
    uint32_t v = probe(t, h, ips, n, epoch, &free_slot);
    if (v) {
        *emit = lh_claim_gen(&t->entries[v - 1].emitted_gen, gen);
        return v;
    }
    while (atomic_flag_test_and_set_explicit(&t->lock, memory_order_acquire)) {
        /* Inserts are rare (one per distinct stack); spin. */
    }
    v = probe(t, h, ips, n, epoch, &free_slot); /* another thread may have inserted it */
    if (!v) {
        uint32_t idx = atomic_load_explicit(&t->n_entries, memory_order_relaxed);
        if (free_slot == UINT32_MAX || idx >= t->max_entries ||
            t->arena_used + n > t->arena_words || idx + 1 > (t->slot_mask + 1) / 2) {
            atomic_flag_clear_explicit(&t->lock, memory_order_release);
            return 0;
        }
        uint64_t *dst = t->arena + t->arena_used;
        memcpy(dst, ips, n * sizeof *ips);
        t->arena_used += n;
        lh_stacktab_entry_t *e = &t->entries[idx];
        e->hash = h;
        e->ips = dst;
        e->n = n;
        e->epoch = epoch;
        atomic_store_explicit(&e->emitted_gen, 0, memory_order_relaxed);
        atomic_store_explicit(&t->n_entries, idx + 1, memory_order_release);
        v = idx + 1;
        atomic_store_explicit(&t->slots[free_slot], v, memory_order_release);
    }
    atomic_flag_clear_explicit(&t->lock, memory_order_release);
    *emit = lh_claim_gen(&t->entries[v - 1].emitted_gen, gen);
    return v;
}

const lh_stacktab_entry_t *
lh_stacktab_get(const lh_stacktab_t *t, uint32_t id)
{
    if (id == 0 || id > atomic_load_explicit(&((lh_stacktab_t *)t)->n_entries, memory_order_acquire)) {
        return NULL;
    }
    return &t->entries[id - 1];
}

void
lh_stacktab_after_fork(lh_stacktab_t *t)
{
    atomic_flag_clear(&t->lock);
}
