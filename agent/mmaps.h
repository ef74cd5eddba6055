/* leakhound - SPDX-License-Identifier: MIT
 *
 * mmaps.h: the anonymous writable memory the program mapped itself (mmap, mremap, munmap
 * through the PLT: its own calls and its libraries'), a root of snapshots, as Valgrind has
 * it (all memory that is no heap block is a root there). A pool or arena a program carves
 * from mmap, a coroutine's stack, a table kept in a mapping: the pointers they hold to heap
 * blocks keep those blocks reachable; before, such blocks looked definitely lost.
 *
 * glibc maps its own memory (malloc's arenas and large chunks, thread stacks, the loader's
 * memory) with internal calls that do not go through the PLT, so none of it is listed
 * here: freed chunks and the stacks of exited threads, which hold stale pointers, stay
 * heap. Memory here that a heap block occupies stays that block's (an allocator such as
 * jemalloc, linked as the program's malloc, maps its extents through the PLT).
 */
#ifndef LH_MMAPS_H
#define LH_MMAPS_H

#include <stddef.h>
#include <stdint.h>

/* After a successful mmap (or mremap's new range): [lo, lo + len) is the program's. AS-safe
 * (a spinlock; a signal handler's mmap inside another mmap on the same thread is not
 * recorded). */
void lh_mmaps_add(uintptr_t lo, size_t len);
/* After a successful munmap (or mremap's old range): [lo, lo + len) is no longer mapped. */
void lh_mmaps_remove(uintptr_t lo, size_t len);
/* Whether address a lies in a listed range (locked; 0 when this thread holds the lock). */
int lh_mmaps_listed(uintptr_t a);
/* The i-th range, in *lo, *hi, adjacent ranges merged: 1, or 0 past the last. Not locked:
 * for the snapshot child, where no other thread runs. */
int lh_mmaps_range(int i, uintptr_t *lo, uintptr_t *hi);
/* Held across the snapshot's clone and a fork, so that a child never sees the table half
 * changed: returns whether this thread took it (not when it already held it: a snapshot
 * signal that arrived inside an mmap), to pass to lh_mmaps_release. */
int lh_mmaps_hold(void);
void lh_mmaps_release(int taken);
/* A fork child: the lock was held across the fork (unlocked for it). */
void lh_mmaps_after_fork(void);

#endif /* LH_MMAPS_H */
