/* leakhound - SPDX-License-Identifier: MIT
 *
 * preinit.h: blocks allocated before recording started, kept and replayed.
 *
 * Between the moment the hooks know the real functions and the agent's constructor, other
 * libraries' constructors and the loader already allocate (libstdc++'s 71 KiB emergency
 * exception pool, OpenSSL's and locale tables): blocks that live to the exit and that
 * Valgrind counts. The hooks note each such block (address, size, kind) in a fixed table
 * and drop it again when it is freed; when recording starts, the blocks still there become
 * ALLOC events with no stack (site 0), so the live set at any snapshot is the
 * process's whole heap. What does not fit in the table, or comes in sampling mode, is only
 * counted (pre_init_allocs in the trailer), as before.
 *
 * Every function is AS-safe (a spin lock around a static table, no allocation). The real
 * allocator's call for a block that is noted runs under that lock, so that a free in
 * another thread never passes the replay of its block.
 */
#ifndef LH_PREINIT_H
#define LH_PREINIT_H

#include <stdatomic.h>
#include <stddef.h>

/* 1 once the table has been replayed (or given up): the hooks record as usual. */
extern atomic_int lh_preinit_closed;

/* Before recording: note block p (just allocated, kind LH_AK_*). Returns 1 when noted or
 * counted, 0 when recording started meanwhile (the caller records it). */
int lh_preinit_alloc(void *p, size_t n, int kind);
/* Before the real free of p: drop it. Returns 1 when done, 0 when recording started
 * meanwhile (the caller records the free). */
int lh_preinit_free(void *p);
/* realloc before recording: calls real(p, n) and notes what it did. Returns 1 with *out
 * set when done, 0 (real not called) when recording started meanwhile. */
int lh_preinit_realloc(void *(*real)(void *, size_t), void *p, size_t n, int kind, void **out);
/* Recording has just been switched on by the caller, which holds the guard: writes the
 * noted blocks as ALLOC events and closes the table. with_blocks 0 (sampling mode): counts
 * them instead. */
void lh_preinit_replay(int with_blocks);

#endif /* LH_PREINIT_H */
