/* leakhound - SPDX-License-Identifier: MIT
 *
 * unwind.h: stack capture for the hooks. Both back-ends return raw return addresses,
 * innermost first, including the agent's own frames (the caller drops those).
 */
#ifndef LH_UNWIND_H
#define LH_UNWIND_H

#include <stdint.h>

/* Frame-pointer walk from the caller's frame. Every frame address is checked against
 * [current frame, hi) (hi: the thread's stack top) before it is read, so a binary without
 * frame pointers yields a short stack, never a fault. Returns the number of addresses
 * stored; when fps is not NULL, fps[i] is the address of the frame record that held ips[i].
 * AS-safe. */
int lh_unwind_fp(uint64_t *ips, uintptr_t *fps, int max, uintptr_t hi);

/* DWARF unwinding through libunwind's unw_backtrace (per-thread caching enabled by
 * lh_unwind_init). Returns the number of addresses stored. Safe inside hooks once
 * lh_unwind_init has run (libunwind uses its own mmap pools; dl_iterate_phdr takes the
 * loader lock, so never call it holding an agent lock). */
int lh_unwind_libunwind(uint64_t *ips, int max);

/* The same through libunwind's step API, also giving for each frame i > 0 the stack address
 * where its return address was found (x86-64; 0 elsewhere or when unknown), which lets the
 * caller recognise the same stack again by reading those slots (record.c). */
int lh_unwind_libunwind_slots(uint64_t *ips, uintptr_t *slots, int max);

/* Sets libunwind's caching policy and unwinds once so its lazy allocations happen now,
 * with the reentrancy guard held, not inside a later hook. */
void lh_unwind_init(void);

#endif /* LH_UNWIND_H */
