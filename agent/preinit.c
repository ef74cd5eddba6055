/* leakhound - SPDX-License-Identifier: MIT
 *
 * preinit.c: the blocks allocated before recording started (see preinit.h).
 */
#include "preinit.h"

#include <sched.h>
#include <stdint.h>

#include "agent.h"
#include "record.h"

#define PREINIT_MAX 4096

typedef struct pre_block {
    uintptr_t addr; /* 0: a free entry */
    uint64_t size;
    int kind;
} pre_block_t;

atomic_int lh_preinit_closed;
static atomic_flag busy = ATOMIC_FLAG_INIT;
static pre_block_t table[PREINIT_MAX];
static int n_used; /* entries [0, n_used) may be in use */

static void
lock(void)
{
    while (atomic_flag_test_and_set_explicit(&busy, memory_order_acquire)) {
        sched_yield();
    }
}

static void
unlock(void)
{
    atomic_flag_clear_explicit(&busy, memory_order_release);
}

static void
note(uintptr_t p, size_t n, int kind)
{
    for (int i = 0; i < PREINIT_MAX; i++) {
        if (!table[i].addr) {
            table[i] = (pre_block_t){p, n, kind};
            n_used = i + 1 > n_used ? i + 1 : n_used;
            return;
        }
    }
    atomic_fetch_add_explicit(&lh_g.n_pre_init, 1, memory_order_relaxed); /* full */
}

static void
drop(uintptr_t p)
{
    for (int i = 0; i < n_used; i++) {
        if (table[i].addr == p) {
            table[i].addr = 0;
            return;
        }
    }
}

int
lh_preinit_alloc(void *p, size_t n, int kind)
{
    lock();
    int open = !atomic_load_explicit(&lh_preinit_closed, memory_order_relaxed);
    if (open && p) {
        note((uintptr_t)p, n, kind);
    }
    unlock();
    return open;
}

int
lh_preinit_free(void *p)
{
    lock();
    int open = !atomic_load_explicit(&lh_preinit_closed, memory_order_relaxed);
    if (open) {
        drop((uintptr_t)p);
    }
    unlock();
    return open;
}

int
lh_preinit_realloc(void *(*real)(void *, size_t), void *p, size_t n, int kind, void **out)
{
    lock();
    int open = !atomic_load_explicit(&lh_preinit_closed, memory_order_relaxed);
    if (open) {
        /* Allocations inside the real call (an allocator starting a thread: its DTV) pass
         * through: noting them would take this lock again. */
        int guard = lh_tls.guard;
        lh_tls.guard = 1;
        void *q = real(p, n);
        lh_tls.guard = guard;
        if (p && (q || n == 0)) {
            drop((uintptr_t)p); /* moved, or freed by realloc(p, 0) */
        }
        if (q) {
            note((uintptr_t)q, n, kind);
        }
        *out = q;
    }
    unlock();
    return open;
}

void
lh_preinit_replay(int with_blocks)
{
    lock();
    for (int i = 0; i < n_used; i++) {
        if (!table[i].addr) {
            continue;
        }
        lh_rec_t r;
        if (with_blocks && lh_rec_begin(&r, 0) == 0) { /* stack id 0: none recorded */
            lh_rec_alloc(&r, (const void *)table[i].addr, table[i].size, table[i].kind);
            lh_rec_end(&r);
        } else {
            atomic_fetch_add_explicit(&lh_g.n_pre_init, 1, memory_order_relaxed);
        }
        table[i].addr = 0;
    }
    n_used = 0;
    atomic_store_explicit(&lh_preinit_closed, 1, memory_order_release);
    unlock();
}
