/* leakhound - SPDX-License-Identifier: MIT
 *
 * mmaps.c: the program's own anonymous mappings (see mmaps.h). A sorted table of
 * disjoint ranges in the agent's bss (never scanned), under a spinlock.
 */
#include "mmaps.h"

#include <stdatomic.h>
#include <string.h>

#define MAX_MMAPS 16384 /* beyond: a mapping is not listed, and stays heap as before */

static struct range {
    uintptr_t lo, hi;
} tab[MAX_MMAPS];
static int n_tab;
static atomic_flag lock = ATOMIC_FLAG_INIT;
static __thread int held; /* this thread holds the lock: a signal handler's call skips */

static int
take(void)
{
    if (held) {
        return 0;
    }
    held = 1;
    while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire)) {
    }
    return 1;
}

static void
release(void)
{
    atomic_flag_clear_explicit(&lock, memory_order_release);
    held = 0;
}

/* Removes [lo, hi) from the table, splitting a range that contains it. Lock held. */
static void
cut(uintptr_t lo, uintptr_t hi)
{
    for (int i = 0; i < n_tab; i++) {
        struct range *r = &tab[i];
        if (r->hi <= lo || r->lo >= hi) {
            continue;
        }
        if (r->lo < lo && r->hi > hi) { /* a hole in the middle: two ranges */
            if (n_tab == MAX_MMAPS) {
                r->hi = lo; /* no room: the tail is dropped (heap, as before) */
                continue;
            }
            memmove(r + 2, r + 1, (size_t)(n_tab - i - 1) * sizeof *r);
            tab[i + 1] = (struct range){hi, r->hi};
            r->hi = lo;
            n_tab++;
            return;
        }
        if (r->lo < lo) {
            r->hi = lo;
        } else if (r->hi > hi) {
            r->lo = hi;
        } else { /* wholly inside: removed */
            memmove(r, r + 1, (size_t)(n_tab - i - 1) * sizeof *r);
            n_tab--;
            i--;
        }
    }
}

void
lh_mmaps_add(uintptr_t lo, size_t len)
{
    uintptr_t hi = lo + ((len + 4095) & ~(size_t)4095);
    if (!len || hi < lo || !take()) {
        return;
    }
    cut(lo, hi); /* MAP_FIXED over an earlier mapping */
    int i = 0;
    while (i < n_tab && tab[i].lo < lo) {
        i++;
    }
    if (n_tab < MAX_MMAPS) {
        memmove(&tab[i + 1], &tab[i], (size_t)(n_tab - i) * sizeof tab[0]);
        tab[i] = (struct range){lo, hi};
        n_tab++;
    }
    release();
}

void
lh_mmaps_remove(uintptr_t lo, size_t len)
{
    uintptr_t hi = lo + ((len + 4095) & ~(size_t)4095);
    if (!len || hi < lo || !take()) {
        return;
    }
    cut(lo, hi);
    release();
}

int
lh_mmaps_listed(uintptr_t a)
{
    if (!take()) {
        return 0;
    }
    int found = 0;
    for (int i = 0; i < n_tab && !found; i++) {
        found = tab[i].lo <= a && tab[i].hi > a;
    }
    release();
    return found;
}

int
lh_mmaps_range(int i, uintptr_t *lo, uintptr_t *hi)
{
    /* The i-th of the merged ranges: a walk from the start (a snapshot asks in order). */
    static int last_i = -1, last_k;
    int k = 0, j = 0;
    if (i == last_i + 1 && last_i >= 0) {
        k = last_k;
        j = i;
    }
    while (k < n_tab) {
        uintptr_t a = tab[k].lo, b = tab[k].hi;
        k++;
        while (k < n_tab && tab[k].lo == b) {
            b = tab[k++].hi;
        }
        if (j == i) {
            *lo = a;
            *hi = b;
            last_i = i;
            last_k = k;
            return 1;
        }
        j++;
    }
    last_i = -1;
    return 0;
}

int
lh_mmaps_hold(void)
{
    return take();
}

void
lh_mmaps_release(int taken)
{
    if (taken) {
        release();
    }
}

void
lh_mmaps_after_fork(void)
{
    atomic_flag_clear(&lock);
    held = 0;
}
