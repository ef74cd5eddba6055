/* leakhound - SPDX-License-Identifier: MIT
 *
 * ptstop.h: holding every thread of a running process still for a moment, from outside,
 * with ptrace (PTRACE_SEIZE + PTRACE_INTERRUPT: no signal is sent to the process, nothing
 * is written into it), reading each thread's registers, and letting it go.
 *
 * Safety: if leakhound dies while the process is held, the kernel detaches it and it runs
 * on. A signal that arrives for a thread while it is held is handed back to it at the
 * release (PTRACE_DETACH with that signal), so it is delayed, never lost. SIGINT, SIGTERM,
 * SIGHUP and SIGQUIT of leakhound are blocked between stop and release so that a Ctrl-C
 * cannot leave a thread stopped half-way. Not thread-safe.
 */
#ifndef LH_CLI_PTSTOP_H
#define LH_CLI_PTSTOP_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "err.h"

typedef struct lh_pthread_regs {
    pid_t tid;
    int pending_sig;             /* a signal stop seen while held: re-sent at the release */
    struct user_regs_struct regs;
} lh_pthread_regs_t;

typedef struct lh_ptstop {
    pid_t pid;
    lh_pthread_regs_t *threads;
    size_t n;
    uint64_t t_stop_ns, t_release_ns; /* CLOCK_MONOTONIC: first seize, last detach */
    sigset_t saved_mask;
    int held;
} lh_ptstop_t;

/* Seizes and interrupts every thread of pid (re-reading /proc/PID/task until no new one
 * appears) and reads their registers. Returns 0, or a negative LH_E* code with one line in
 * err; on failure every thread seized so far has been released. */
int lh_ptstop_stop(lh_ptstop_t *s, pid_t pid, lh_err_t *err);

/* Releases every thread (idempotent). */
void lh_ptstop_release(lh_ptstop_t *s);

void lh_ptstop_fini(lh_ptstop_t *s);

#endif /* LH_CLI_PTSTOP_H */
