/* leakhound - SPDX-License-Identifier: MIT
 *
 * snapshot.h: heap snapshots with contents (--snapshot-contents none|pointers|full).
 *
 * A snapshot is a SNAPSHOT record in the trace (the analyzer rebuilds the live set at its
 * time from the events) plus, unless the mode is none, a contents file written by a
 * copy-on-write child: the process is cloned (no atfork handlers, no SIGCHLD), the parent
 * runs on at once (its pause is the clone itself), and the child, which uses raw system
 * calls only, reads /proc/self/maps, scans the heap and the roots (module data and bss;
 * each live thread's stack, TLS and specific data from threads.h, the capturing thread's
 * from where the program called the agent, its registers pushed there), writes the .lhs
 * file and exits. The agent's own memory is never scanned.
 */
#ifndef LH_SNAPSHOT_H
#define LH_SNAPSHOT_H

#include <stdint.h>

/* Reserves what a capture needs. Not AS-safe: at init. */
int lh_snapshot_init(int mode);

/* Takes a snapshot now: writes its SNAPSHOT record (into the caller's slot when in_slot,
 * else as an agent frame) and starts the contents child. The guard must be held. */
void lh_snapshot_take(const char *label, int trigger, int in_slot);
/* The same, for a program thread that called the agent: its stack is scanned from
 * program_sp up (where the program's frames and its saved registers are), not from inside
 * the agent; 0 = not known (from the agent's own frame, registers spilled there). */
void lh_snapshot_take_at(const char *label, int trigger, int in_slot, uintptr_t program_sp);

/* Reaps finished contents children; with wait, waits for all (bounded), e.g. at exit. */
void lh_snapshot_reap(int wait);
/* Called by the set*uid shims before the effective uid leaves root: opens the trace if it
 * is not open yet and creates the contents file of the next snapshot now, while the
 * directory still lets us (a worker that becomes nobody could not later). Nothing when no
 * snapshot would use it (contents none, no exit snapshot). Program threads only; never in
 * a malloc hook (it locks and opens files). */
void lh_snapshot_before_setuid(void);
/* Just before an exec: contents files reserved by lh_snapshot_before_setuid and not used
 * are closed and, where the process may, removed (setpriv drops root, then execs the
 * program: the new image reserves its own). */
void lh_snapshot_before_exec(void);
/* In a fork child (atfork): the lock of captures is free again (a thread that held it in
 * the parent does not exist here) and the parent's children are not this process's. */
void lh_snapshot_after_fork(void);

#endif /* LH_SNAPSHOT_H */
