/* leakhound - SPDX-License-Identifier: MIT
 *
 * recorder.h: the recorder core, between a front-end that sees the program's allocations
 * (shims.c + preload.c: LD_PRELOAD interposition at start) and everything that records
 * them (slots, output, stacks, modules, ticker, snapshots). A front-end fills lh_g.cfg,
 * calls lh_recorder_init then lh_recorder_begin, reports each call of the malloc family
 * (lh_recorder_wants_* first: they are the cheap tests), and ends with lh_recorder_finish.
 *
 * Hook-side functions: the caller does not hold the guard; they take it, call only AS-safe
 * code, and keep errno. free is recorded before the real free, an allocation after the real
 * call returned (an address is never seen reused before it was freed).
 */
#ifndef LH_RECORDER_H
#define LH_RECORDER_H

#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "agent.h"
#include "sample.h"

/* Resolves identity, reserves memory, opens the trace. lh_g.cfg must be filled. Returns 0,
 * or -1 with the agent stopped for good (said why). Guard held, not AS-safe. */
int lh_recorder_init(void);
/* Starts recording: fork handlers, state RECORDING, modules, ticker. Guard held. */
void lh_recorder_begin(void);
/* After lh_recorder_begin, with the guard held, before the program's code runs: writes
 * the program's embedded LeakSanitizer suppressions, if it has any (lsansupp.h), into the
 * trace. */
void lh_recorder_lsan_supp(void);
/* A second start in the same process (after lh_recorder_detach): reuses the memory of the
 * first, opens a new trace. lh_g.cfg must be filled. Returns 0 or -1 (said why). */
int lh_recorder_restart(void);
/* Ends an attach: like lh_recorder_finish (END says detached), then stops the ticker and
 * closes the file; the process runs on. Returns 0, or -1 if the ticker did not stop. */
int lh_recorder_detach(void);
/* Stops recording for good: flushes, final RSS and snapshot, END record. Bounded. */
void lh_recorder_finish(int exit_kind, int status);
/* The same with the exit snapshot's capturing thread scanned from program_sp up (0: where
 * the program called exit, or the agent's own frame): a stop signal's interrupted context. */
void lh_recorder_finish_at(int exit_kind, int status, uintptr_t program_sp);
/* The process dies of signal sig after its trace ended (exit, _exit): takes the writer
 * lock for good (lh_output_hold) and writes END again, as killed by it (unless the END is
 * a script's: killed in its interpreter's teardown). AS-safe. */
void lh_recorder_killed(int sig);
/* Where the end of the trace is: 0 not begun (recording, or stopped by a failure), 1 a
 * thread is in lh_recorder_finish past its start, 2 its END is written. AS-safe. */
int lh_recorder_end_state(void);
/* Nonzero on the thread that is ending the trace (state 1 or 2). AS-safe. */
int lh_recorder_finishing_here(void);
/* At the process's exit (exit_kind LH_EXIT_NORMAL, or _exit), after lh_recorder_finish:
 * when the trace already ended at a script's end (LH_EXIT_SCRIPT: before its interpreter's
 * teardown), or with this kind and another status, writes END again with this kind and
 * status (readers keep the last END). */
void lh_recorder_exit_status(int exit_kind, int status);
/* The process is about to exec path: flush and write END (superseded if exec fails). */
void lh_recorder_exec(const char *path);
/* A module may be loaded or unloaded: record the module map now (no agent lock held). */
void lh_recorder_modules_changed(void);
/* Stops recording (not the program), saying why in one line. AS-safe. */
void lh_disable(const char *why, const char *detail);
/* Nonzero when this process is the one recording (not a vfork child sharing our memory). */
int lh_recorder_own_process(void);

extern int lh_recorder_sampling; /* LEAKHOUND_SAMPLE_RATE > 0; set by lh_recorder_init */

/* Nonzero when a hook must record: while recording, and before it started (the block is
 * noted for the replay, preinit.h). AS-safe. */
static inline int
lh_recorder_should_record(void)
{
    int st = atomic_load_explicit(&lh_g.state, memory_order_relaxed);
    if (__builtin_expect(st == LH_ST_RECORDING, 1)) {
        return !lh_tls.guard;
    }
    return st == LH_ST_RESOLVED && !lh_tls.guard;
}

/* An allocation the hook must record: every one, or in sampling mode the sampled ones. */
static inline int
lh_recorder_wants_alloc(size_t n)
{
    if (!lh_recorder_should_record()) {
        return 0;
    }
    return !lh_recorder_sampling || lh_sample_take(n);
}

/* A free the hook must record: every one, or in sampling mode those of sampled blocks. */
static inline int
lh_recorder_wants_free(const void *p)
{
    if (!lh_recorder_should_record()) {
        return 0;
    }
    return !lh_recorder_sampling || lh_sample_unmark(p);
}

/* The size of the block pvalloc(n) returns: glibc rounds n up to whole pages, and the
 * block is that big (LeakSanitizer records the same); n itself when that overflows
 * (pvalloc fails with ENOMEM). getpagesize reads the loader's value: no malloc. */
static inline size_t
lh_recorder_pvalloc_size(size_t n)
{
    size_t page = (size_t)getpagesize();
    size_t up;
    if (__builtin_add_overflow(n, page - 1, &up)) {
        return n;
    }
    return up & ~(page - 1);
}

/* Records block p of size bytes, just returned by the real allocator (LH_AK_* kind). */
void lh_recorder_alloc(void *p, size_t size, int kind);
/* The same from a hook that knows its own frame (__builtin_frame_address(0) of the function
 * the program called, whose return address is the program's): spares the stack cache the
 * walk of the agent's frames (record.h). The frame must still be live. */
void lh_recorder_alloc_from(void *p, size_t size, int kind, uintptr_t entry_fp);
/* Records the free of p; call it before the real free. */
void lh_recorder_free(void *p);
/* Calls real_realloc(p, n) and records what it did (free, alloc or both). */
void *lh_recorder_realloc(void *(*real_realloc)(void *, size_t), void *p, size_t n, int kind);

#endif /* LH_RECORDER_H */
