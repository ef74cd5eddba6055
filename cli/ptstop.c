/* leakhound - SPDX-License-Identifier: MIT
 *
 * ptstop.c: stop every thread with PTRACE_SEIZE + PTRACE_INTERRUPT (see ptstop.h).
 */
#include "ptstop.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>

#include "cmd.h"
#include "grow.h"

#define STOP_WAIT_NS (2ull * 1000000000u)

static int
known(const lh_ptstop_t *s, pid_t tid)
{
    for (size_t i = 0; i < s->n; i++) {
        if (s->threads[i].tid == tid) {
            return 1;
        }
    }
    return 0;
}

/* Waits for tid's stop after PTRACE_INTERRUPT, at most STOP_WAIT_NS: a thread in an
 * uninterruptible sleep (state D: a hung NFS server, a device) stops only when it leaves
 * it, and the other threads must not stay held meanwhile. A signal-delivery stop may come
 * first: the thread is stopped all the same; the signal is remembered and re-sent at the
 * release. Returns 0 (stopped), -1 (it exited) or -2 (it did not stop in time). */
static int
wait_stop(lh_pthread_regs_t *t)
{
    uint64_t deadline = lh_cli_clock_ns(CLOCK_MONOTONIC) + STOP_WAIT_NS;
    for (;;) {
        int st;
        pid_t r = waitpid(t->tid, &st, __WALL | WNOHANG);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            return -1;
        }
        if (r == 0) {
            if (lh_cli_clock_ns(CLOCK_MONOTONIC) > deadline) {
                return -2;
            }
            struct timespec ts = {0, 200 * 1000};
            nanosleep(&ts, NULL);
            continue;
        }
        if (WIFEXITED(st) || WIFSIGNALED(st)) {
            return -1; /* the thread ended meanwhile */
        }
        if (!WIFSTOPPED(st)) {
            continue;
        }
        int sig = WSTOPSIG(st);
        int event = st >> 16;
        if (event == 0 && sig != SIGTRAP) {
            t->pending_sig = sig;
        }
        return 0; /* the interrupt, a group stop, or a signal stop */
    }
}

int
lh_ptstop_stop(lh_ptstop_t *s, pid_t pid, lh_err_t *err)
{
    memset(s, 0, sizeof *s);
    s->pid = pid;
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigaddset(&block, SIGQUIT);
    sigprocmask(SIG_BLOCK, &block, &s->saved_mask);
    s->held = 1;
    s->t_stop_ns = lh_cli_clock_ns(CLOCK_MONOTONIC);
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
    size_t cap = 0;
    for (int round = 0; round < 100; round++) {
        DIR *d = opendir(dir);
        if (!d) {
            lh_ptstop_release(s);
            return lh_err_set(err, LH_ENOENT, "snapshot -p: process %d has exited", (int)pid);
        }
        int added = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
            pid_t tid = (pid_t)atoi(de->d_name);
            if (tid <= 0 || known(s, tid)) {
                continue;
            }
            if (lh_grow(&s->threads, &cap, s->n, sizeof *s->threads, 16) < 0) {
                closedir(d);
                lh_ptstop_release(s);
                return lh_err_set(err, LH_ENOMEM, "out of memory");
            }
            lh_pthread_regs_t *t = &s->threads[s->n];
            memset(t, 0, sizeof *t);
            t->tid = tid;
            if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0) {
                int e = errno;
                if (e == ESRCH) {
                    continue; /* it exited between readdir and now */
                }
                closedir(d);
                lh_ptstop_release(s);
                return lh_err_set(err, LH_EINVAL,
                                  "snapshot -p: cannot trace thread %d of process %d: %s; the "
                                  "process was not touched",
                                  (int)tid, (int)pid, strerror(e));
            }
            s->n++;
            added = 1;
            int ws = ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0 ? -1 : wait_stop(t);
            if (ws == -2) {
                /* Not stopped: PTRACE_DETACH cannot release it; it is released when
                 * leakhound exits (the kernel detaches a dead tracer's tracees and drops
                 * the pending interrupt), right after this error. */
                s->n--;
                closedir(d);
                lh_ptstop_release(s);
                return lh_err_set(err, LH_EINVAL,
                                  "snapshot -p: thread %d of process %d did not stop within 2 s "
                                  "(an uninterruptible sleep, state D?): try again later; the "
                                  "other threads were released", (int)tid, (int)pid);
            }
            if (ws < 0) {
                /* Gone meanwhile: forget it (a seized thread that exits is reaped here). */
                ptrace(PTRACE_DETACH, tid, NULL, NULL);
                s->n--;
                continue;
            }
            if (ptrace(PTRACE_GETREGS, tid, NULL, &t->regs) < 0) {
                int e = errno;
                closedir(d);
                lh_ptstop_release(s);
                return lh_err_set(err, LH_EIO,
                                  "snapshot -p: cannot read the registers of thread %d: %s",
                                  (int)tid, strerror(e));
            }
        }
        closedir(d);
        if (!added) {
            break; /* every thread is held: none can start another */
        }
    }
    if (s->n == 0) {
        lh_ptstop_release(s);
        return lh_err_set(err, LH_ENOENT, "snapshot -p: process %d has exited", (int)pid);
    }
    return 0;
}

void
lh_ptstop_release(lh_ptstop_t *s)
{
    if (!s->held) {
        return;
    }
    for (size_t i = 0; i < s->n; i++) {
        ptrace(PTRACE_DETACH, s->threads[i].tid, NULL,
               (void *)(uintptr_t)s->threads[i].pending_sig);
    }
    s->t_release_ns = lh_cli_clock_ns(CLOCK_MONOTONIC);
    s->held = 0;
    sigprocmask(SIG_SETMASK, &s->saved_mask, NULL);
}

void
lh_ptstop_fini(lh_ptstop_t *s)
{
    lh_ptstop_release(s);
    free(s->threads);
    s->threads = NULL;
    s->n = 0;
}
