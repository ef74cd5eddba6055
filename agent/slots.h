/* leakhound - SPDX-License-Identifier: MIT
 *
 * slots.h: per-thread event buffers (slots.c). A hook's thread finds its slot with
 * lh_thread_slot, locks it (cheap: see lh_slot_lock in slots.c), appends records, unlocks.
 * A full buffer goes to the ticker's queue or, when the ticker is behind, is written by the
 * thread itself. The ticker and the exit paths sweep every slot with lh_flush_all.
 * Lock order: slot lock, then writer lock (output.h), then the queue's lock.
 */
#ifndef LH_SLOTS_H
#define LH_SLOTS_H

#include <stddef.h>
#include <stdint.h>

#include "agent.h"

/* Maps the slot table, creates the thread-exit key and the ticker's wake-up semaphore.
 * Returns 0 or -1 (no memory). At init, not AS-safe. */
int lh_slots_init(void);

/* Takes a slot for the calling thread (lh_thread_slot's first call in a thread). */
lh_slot_t *lh_thread_slot_take(void);

/* The calling thread's slot, taken on its first event (and again in a fork child); NULL
 * when none is free. Guard held. Inline: every event asks. */
static inline lh_slot_t *
lh_thread_slot(void)
{
    unsigned gen = atomic_load_explicit(&lh_g.gen, memory_order_relaxed);
    if (__builtin_expect(lh_tls.registered && lh_tls.pid_gen == gen, 1)) {
        return lh_tls.slot;
    }
    return lh_thread_slot_take();
}

/* The slot lock (see slots.c for the asymmetric protocol). lh_slot_asym: membarrier is
 * registered, so the owner needs no fence. The common case is inline: a store, a compiler
 * fence and a load. */
extern int lh_slot_asym;
void lh_slot_lock_wait(lh_slot_t *s);

/* AS-safe for the owner thread. */
static inline void
lh_slot_lock(lh_slot_t *s)
{
    atomic_store_explicit(&s->busy, 1, memory_order_relaxed);
    if (__builtin_expect(lh_slot_asym, 1)) {
        atomic_signal_fence(memory_order_seq_cst);
    } else {
        atomic_thread_fence(memory_order_seq_cst);
    }
    if (__builtin_expect(atomic_load_explicit(&s->req, memory_order_acquire) != 0, 0)) {
        lh_slot_lock_wait(s);
    }
}

/* AS-safe. */
static inline void
lh_slot_unlock(lh_slot_t *s)
{
    atomic_store_explicit(&s->busy, 0, memory_order_release);
}
/* Make room for need bytes, flushing the slot (locked by the caller) when full. Returns 0,
 * or -1 when the records cannot fit even in an empty buffer. */
int lh_slot_reserve(lh_slot_t *s, size_t need);
/* Hands the slot's records to the ticker, or writes them now. Slot lock held. */
void lh_flush_slot_locked(lh_slot_t *s);

/* Moves every thread's pending records out and writes them. bounded: for the exit paths,
 * where a thread stuck inside a hook must not hang us (its records are counted dropped). */
void lh_flush_all(int bounded);
/* Holds every thread's slot for a snapshot's clone: on 1, no thread is between a record's
 * time stamp and its end, and none records until lh_slots_release, so the heap the clone
 * copies is the trace's up to any time stamp taken meanwhile. A thread inside a hook
 * longer than max_ns (stopped, or in a long realloc) makes it give up: 0, nothing held.
 * Not from inside a hook (the caller's own slot must be free); a thread that records
 * meanwhile waits in lh_slot_lock. */
int lh_slots_hold(uint64_t max_ns);
void lh_slots_release(void);
/* Events recorded so far, by released and live slots. */
uint64_t lh_events_total(void);

/* For the ticker: writes the buffers queued so far, in order. */
void lh_slots_drain(void);
/* For the ticker: waits until a buffer is queued (returns 1) or deadline_ns on the
 * monotonic clock passes (returns 0). */
int lh_slots_wait(uint64_t deadline_ns);

/* Wakes the ticker's lh_slots_wait now. AS-safe. */
void lh_slots_wake(void);

/* Fork child (and a new attach): no thread but this one, empty slots and queue, counters at zero. */
void lh_slots_after_fork(void);

#endif /* LH_SLOTS_H */
