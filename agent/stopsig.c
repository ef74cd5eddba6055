/* leakhound - SPDX-License-Identifier: MIT
 *
 * stopsig.c: a program stopped with Ctrl-C, `kill` or a closed terminal gives the answers
 * of one that exited (stopsig.h), and the program sees its own signal dispositions only.
 *
 * The stop signals are SIGINT, SIGTERM and SIGHUP: the ones that end a program on purpose
 * (a terminal's Ctrl-C, a service manager's stop, a closed session), with no core dump.
 * Not SIGQUIT, SIGXCPU and the other core-dumping signals: a core is for looking at the
 * program as the signal found it, and the final flush and exit snapshot would run first
 * (and put the agent's frames on top of the dumped stack; at SIGXCPU the process is over
 * its CPU limit, and the kernel's SIGKILL at the hard limit may cut the work short
 * anyway). Not SIGPIPE, SIGALRM, SIGUSR1 or the real-time signals either: their default
 * action kills too, but as an accident of a program that did not expect them, not as a
 * way to stop it; their deaths stay as before (a trace without END).
 *
 * The handler of a stop signal, on the thread the kernel chose:
 * - outside the agent's code (lh_tls.guard clear): no agent lock is held by this thread,
 *   so it ends the trace as exit does (lh_recorder_finish: flush every thread's buffer,
 *   exit snapshot scanned from the interrupted context up, END) while the other threads
 *   run on, as they do at exit;
 * - inside the agent's code (a hook: its slot, the writer lock, a table may be held right
 *   here): notes the signal and returns; the hook finishes (microseconds: no program code
 *   runs in between) and lh_guard_leave, with every lock released, does the same;
 * then it holds the writer lock for good (no thread starts a frame it could not finish),
 * puts SIG_DFL back, sends the signal to its own thread and unblocks it: the process dies
 * of it, as it would have without the agent. A second stop signal on another thread
 * meanwhile waits for the first to end the process. Every wait is bounded (sweeps in
 * lh_flush_all, the capture's lock, the writer lock here): what cannot be had in time is
 * given up, and the process still dies of its signal.
 *
 * What the program sees. A disposition the agent holds (one of its handlers installed for
 * real) is reported as the program's own last SIG_DFL (or the one found at start). SIG_DFL
 * asked for a handled signal installs the agent's handler again (python asks for it before
 * killing itself with SIGINT after an uncaught KeyboardInterrupt). Anything else (a
 * handler, SIG_IGN) is installed for real, so the program's choice is what happens; the
 * kernel, not a table, says which is in force: SA_RESETHAND's return to SIG_DFL, and the
 * reset of handlers at exec, are seen as they are.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "stopsig.h"

#include "agent.h"
#include "format.h"
#include "output.h"
#include "recorder.h"
#include "sys.h"
#include "ticker.h"

#define MAX_SIG 65 /* signals 1..64 */

enum { KIND_NONE = 0, KIND_STOP = 1, KIND_SNAPSHOT = 2 };

static lh_sigaction_fn real_sigaction;
static unsigned char kind[MAX_SIG];    /* what the agent does with each signal */
static struct sigaction view[MAX_SIG]; /* the program's disposition while the agent's holds */
static atomic_int stopping;            /* the stop signal being carried out, 0 = none */
/* SA_RESETHAND handlers of the program (on_oneshot in force for real): the program's
 * action, and 1 until its first run claims it (the kernel's reset, carried out here). */
static struct sigaction oneshot[MAX_SIG];
static atomic_int oneshot_armed[MAX_SIG];

int
lh_stopsig_is_stop(int sig)
{
    return sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
}

/* -------------------------------------------------------------------------------------
 * The handlers
 * ----------------------------------------------------------------------------------- */
/* Puts SIG_DFL back and dies of sig on this thread (the handler runs with every signal
 * blocked: sent to the thread, it stays pending until unblocked). */
/* The process dying of a stop signal (die): the ticker's recheck must not put the
 * agent's handler back over the SIG_DFL that carries the death out. A pid, not a flag: a
 * vfork child dying shares this memory. */
static atomic_int dying_pid;

__attribute__((noreturn)) static void
die(int sig)
{
    atomic_store(&dying_pid, (int)getpid());
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    if (real_sigaction) {
        real_sigaction(sig, &dfl, NULL);
    }
    syscall(SYS_tgkill, getpid(), lh_sys_gettid(), sig);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    /* Not reached: the default action of a stop signal ends the process. */
    syscall(SYS_exit_group, 128 + sig);
    __builtin_unreachable();
}

static void
sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Recording stopped before the signal: the trace is ending, or ended (an exit on this
 * thread or another, a script's end), or recording failed. The process dies of sig once
 * the END is written, which then says so (lh_recorder_killed). Returns only when this
 * thread is the one ending the trace, inside it: its tail carries the signal out
 * (lh_stopsig_after_finish). */
static void
after_stop(int sig)
{
    if (lh_recorder_end_state() == 1) {
        if (lh_recorder_finishing_here()) {
            if (!lh_tls.stop_sig) {
                lh_tls.stop_sig = sig;
            }
            return;
        }
        /* Another thread writes the final flush and the exit snapshot (the snapshot
         * child's end is waited for there, up to a minute): not cut short. */
        for (int i = 0; i < 70000 && lh_recorder_end_state() == 1; i++) {
            sleep_ms(1);
        }
    }
    if (lh_recorder_end_state() == 2) {
        lh_recorder_killed(sig);
    }
    lh_output_hold(100);
    die(sig);
}

/* Ends the trace as exit does, on a thread that holds no agent lock, then the process. */
__attribute__((noreturn)) static void
stop_now(int sig, uintptr_t program_sp)
{
    int expect = 0;
    if (!atomic_compare_exchange_strong(&stopping, &expect, sig)) {
        /* Another thread is ending the trace (a second signal): it ends the process. */
        for (int i = 0; i < 120000; i++) {
            sleep_ms(1);
        }
        die(sig);
    }
    lh_recorder_finish_at(LH_EXIT_SIGNAL, sig, program_sp);
    lh_output_hold(1000);
    die(sig);
}

LH_REALIGN static void
on_stop(int sig, siginfo_t *info, void *ucv)
{
    (void)info;
    if (!lh_recorder_own_process()) {
        die(sig); /* a vfork child sharing our memory, or a snapshot's contents child */
    }
    if (!lh_recording()) {
        after_stop(sig);
        return;
    }
    if (lh_tls.guard) {
        /* Inside the agent: its locks may be held by this very thread. Done when the hook
         * leaves (lh_guard_leave). The first signal wins; the kernel merges repeats. */
        if (!lh_tls.stop_sig) {
            lh_tls.stop_sig = sig;
        }
        return;
    }
    /* The saved registers and everything above them: the program's state at the signal. */
    stop_now(sig, (uintptr_t)ucv);
}

void
lh_stopsig_deferred(void)
{
    int sig = lh_tls.stop_sig;
    lh_tls.stop_sig = 0;
    if (!lh_recording()) {
        after_stop(sig); /* returns only inside lh_recorder_finish, which never leaves the
                            guard past its start: not reached */
        die(sig);
    }
    stop_now(sig, 0);
}

void
lh_stopsig_after_finish(void)
{
    int sig = lh_tls.stop_sig;
    lh_tls.stop_sig = 0;
    atomic_store(&stopping, sig);
    lh_recorder_killed(sig);
    die(sig);
}

void
lh_stopsig_after_fork(void)
{
    atomic_store(&stopping, 0); /* the parent's stop, if any, is not this process's */
}

LH_REALIGN static void
on_snapshot(int sig)
{
    (void)sig;
    lh_request_snapshot(); /* AS-safe: the ticker writes the record */
}

static int hold_default(int sig, const struct sigaction *act, int as_set);

/* A program's handler installed with SA_RESETHAND (sigaction, sysv_signal). The kernel
 * would put SIG_DFL back as it delivers the signal, and the next one would end the process
 * with no END in the trace: so this runs in its place, puts the agent's handler back (the
 * program sees SIG_DFL, as after the kernel's reset), then calls the program's handler
 * with the same arguments, under the mask and flags it asked for. A second signal that
 * reached this before the reset (another thread) is the SIG_DFL one. */
LH_REALIGN static void
on_oneshot(int sig, siginfo_t *info, void *ucv)
{
    int one = 1;
    if (!atomic_compare_exchange_strong(&oneshot_armed[sig], &one, 0)) {
        if (kind[sig] == KIND_STOP) {
            on_stop(sig, info, ucv);
        } else {
            on_snapshot(sig);
        }
        return;
    }
    struct sigaction prog = oneshot[sig];
    struct sigaction reset = prog;
    reset.sa_handler = SIG_DFL; /* what the kernel leaves: the flags stay */
    int saved = errno;
    hold_default(sig, &reset, 0);
    errno = saved;
    if (prog.sa_flags & SA_SIGINFO) {
        prog.sa_sigaction(sig, info, ucv);
    } else {
        prog.sa_handler(sig);
    }
}

/* The program took the snapshot signal for itself (its handler, SIG_IGN, or either found
 * at start): what it chose is what happens, and no snapshot is taken on that signal while
 * it lasts. Said once per process, on stderr, so a user who sends it and gets no snapshot
 * knows why. AS-safe (one write). */
static void
snapshot_signal_taken(int sig, int ignored)
{
    static atomic_int said;
    if (atomic_exchange(&said, 1)) {
        return;
    }
    static const struct {
        int sig;
        const char *name;
    } names[] = {{SIGUSR1, "SIGUSR1"}, {SIGUSR2, "SIGUSR2"}, {SIGHUP, "SIGHUP"},
                 {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGTERM, "SIGTERM"},
                 {SIGWINCH, "SIGWINCH"}, {SIGPWR, "SIGPWR"}, {SIGURG, "SIGURG"}};
    char name[32] = "signal ";
    name[7 + lh_sys_fmt_u64(name + 7, (uint64_t)sig)] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        if (names[i].sig == sig) {
            lh_sys_strlcpy(name, names[i].name, sizeof name);
        }
    }
    char line[512], num[21];
    num[lh_sys_fmt_u64(num, (uint64_t)getpid())] = '\0';
    size_t n = lh_sys_strlcpy(line, lh_g.progname[0] ? lh_g.progname : "the program",
                              sizeof line);
    n += lh_sys_strlcpy(line + n, " (pid ", sizeof line - n);
    n += lh_sys_strlcpy(line + n, num, sizeof line - n);
    n += lh_sys_strlcpy(line + n, ignored ? ") ignores " : ") has its own handler of ",
                        sizeof line - n);
    lh_sys_strlcpy(line + n, name, sizeof line - n);
    lh_sys_log(line, ": the program's choice is kept, and that signal takes no snapshot ",
               "(--snapshot-signal picks another)");
}

/* -------------------------------------------------------------------------------------
 * The program's view
 * ----------------------------------------------------------------------------------- */
static int
handled(int sig)
{
    return sig > 0 && sig < MAX_SIG && kind[sig] != KIND_NONE && real_sigaction;
}

static int
is_agent_handler(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_SIGINFO)
               ? sa->sa_sigaction == on_stop || sa->sa_sigaction == on_oneshot
               : sa->sa_handler == on_snapshot;
}

/* What signal, bsd_signal, sysv_signal and sigset return: the handler in force before. */
static int
is_agent_fn(lh_sighandler_fn f)
{
    return (uintptr_t)f == (uintptr_t)on_snapshot || (uintptr_t)f == (uintptr_t)on_stop ||
           (uintptr_t)f == (uintptr_t)on_oneshot;
}

static void
agent_action(int sig, struct sigaction *sa)
{
    memset(sa, 0, sizeof *sa);
    if (kind[sig] == KIND_STOP) {
        sa->sa_sigaction = on_stop;
        sa->sa_flags = SA_SIGINFO | SA_RESTART;
    } else {
        sa->sa_handler = on_snapshot;
        sa->sa_flags = SA_RESTART;
    }
    sigfillset(&sa->sa_mask);
}

/* The disposition in force, as the program is to see it. */
static void
program_view(int sig, const struct sigaction *k, struct sigaction *out)
{
    *out = is_agent_handler(k) ? view[sig] : *k;
}

/* The agent's handler for sig, and act (SIG_DFL) as the program's view of it. as_set: act
 * is what the program asked for, kept as the kernel would report it back (the C library's
 * restorer added, SIGKILL and SIGSTOP never masked); else it is what the kernel reported. */
static int
hold_default(int sig, const struct sigaction *act, int as_set)
{
    struct sigaction mine, now;
    agent_action(sig, &mine);
    struct sigaction want = *act; /* act may be the caller's old as well */
    if (real_sigaction(sig, &mine, NULL) != 0) {
        return -1;
    }
    if (as_set && real_sigaction(sig, NULL, &now) == 0) {
        want.sa_restorer = now.sa_restorer;
        want.sa_flags |= now.sa_flags & ~(mine.sa_flags);
    }
    sigdelset(&want.sa_mask, SIGKILL);
    sigdelset(&want.sa_mask, SIGSTOP);
    view[sig] = want;
    return 0;
}

/* The program's SA_RESETHAND handler act, run by on_oneshot (the rest of its action as
 * asked: mask, SA_NODEFER, SA_RESTART, SA_ONSTACK); the view is act as the kernel would
 * report it. */
static int
set_oneshot(lh_sigaction_fn real, int sig, const struct sigaction *act, struct sigaction *old)
{
    struct sigaction tramp = *act, k;
    tramp.sa_sigaction = on_oneshot;
    tramp.sa_flags = (act->sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
    atomic_store(&oneshot_armed[sig], 0); /* a signal meanwhile: the agent's, as SIG_DFL */
    oneshot[sig] = *act;
    if (real(sig, &tramp, &k) != 0) {
        return -1;
    }
    struct sigaction prev;
    program_view(sig, &k, &prev);
    struct sigaction now;
    if (real(sig, NULL, &now) == 0) {
        oneshot[sig].sa_restorer = now.sa_restorer;
    }
    struct sigaction shown = oneshot[sig];
    shown.sa_flags |= now.sa_flags & ~(tramp.sa_flags);
    sigdelset(&shown.sa_mask, SIGKILL);
    sigdelset(&shown.sa_mask, SIGSTOP);
    view[sig] = shown;
    atomic_store(&oneshot_armed[sig], 1);
    if (kind[sig] == KIND_SNAPSHOT) {
        snapshot_signal_taken(sig, 0); /* its first one, at least */
    }
    if (old) {
        *old = prev;
    }
    return 0;
}

int
lh_stopsig_sigaction(lh_sigaction_fn real, int sig, const struct sigaction *act,
                     struct sigaction *old)
{
    if (!handled(sig)) {
        return real(sig, act, old);
    }
    struct sigaction k;
    if (act && (act->sa_flags & SA_RESETHAND) && act->sa_handler != SIG_DFL &&
        act->sa_handler != SIG_IGN) {
        return set_oneshot(real, sig, act, old);
    }
    if (!act || act->sa_handler != SIG_DFL) {
        /* A query, or the program's own handler or SIG_IGN: in force for real. */
        if (real(sig, act, &k) != 0) {
            return -1;
        }
        if (act && kind[sig] == KIND_SNAPSHOT) {
            snapshot_signal_taken(sig, act->sa_handler == SIG_IGN);
        }
        if (old) {
            program_view(sig, &k, old);
        }
        return 0;
    }
    int saved = errno;
    if (real(sig, NULL, &k) != 0) {
        return -1;
    }
    struct sigaction prev;
    program_view(sig, &k, &prev);
    if (hold_default(sig, act, 1) != 0) {
        return -1;
    }
    if (old) {
        *old = prev;
    }
    errno = saved;
    return 0;
}

/* SIG_DFL set for sig as the C library's one-argument functions set it (flags, and the
 * signal itself in the mask when self_mask): the handler in force before, as the program
 * sees it, or SIG_ERR. */
static lh_sighandler_fn
set_default(int sig, int flags, int self_mask)
{
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = SIG_DFL;
    sigemptyset(&act.sa_mask);
    if (self_mask) {
        sigaddset(&act.sa_mask, sig);
    }
    act.sa_flags = flags;
    if (lh_stopsig_sigaction(real_sigaction, sig, &act, &old) != 0) {
        return SIG_ERR;
    }
    return old.sa_handler;
}

/* A disposition other than SIG_DFL (or for a signal the agent does not handle), through
 * the C library's own function: the handler it returns, as the program sees it. */
static lh_sighandler_fn
set_other(lh_signal_fn real, int sig, lh_sighandler_fn h)
{
    lh_sighandler_fn prev = real(sig, h);
    if (handled(sig) && kind[sig] == KIND_SNAPSHOT && prev != SIG_ERR && h != SIG_HOLD) {
        snapshot_signal_taken(sig, h == SIG_IGN);
    }
    return is_agent_fn(prev) ? view[sig].sa_handler : prev;
}

lh_sighandler_fn
lh_stopsig_signal(lh_signal_fn real, int sig, lh_sighandler_fn h, int flags, int self_mask)
{
    if (handled(sig) && (flags & SA_RESETHAND) && h != SIG_DFL && h != SIG_IGN &&
        h != SIG_ERR && h != SIG_HOLD) {
        /* sysv_signal's handler, reset as it runs: through on_oneshot. */
        struct sigaction act, prev;
        memset(&act, 0, sizeof act);
        act.sa_handler = h;
        act.sa_flags = flags;
        sigemptyset(&act.sa_mask);
        if (self_mask) {
            sigaddset(&act.sa_mask, sig);
        }
        return set_oneshot(real_sigaction, sig, &act, &prev) == 0 ? prev.sa_handler : SIG_ERR;
    }
    if (!handled(sig) || h != SIG_DFL) {
        return set_other(real, sig, h);
    }
    return set_default(sig, flags, self_mask);
}

lh_sighandler_fn
lh_stopsig_sigset(lh_signal_fn real, int sig, lh_sighandler_fn h)
{
    if (!handled(sig) || h != SIG_DFL) {
        return set_other(real, sig, h); /* SIG_HOLD (which only blocks) included */
    }
    /* As the C library's: SIG_DFL with no flags and an empty mask, the signal unblocked,
     * and SIG_HOLD returned when it was blocked. */
    lh_sighandler_fn prev = set_default(sig, 0, 0);
    sigset_t one, was;
    sigemptyset(&one);
    sigaddset(&one, sig);
    if (prev == SIG_ERR || sigprocmask(SIG_UNBLOCK, &one, &was) != 0) {
        return SIG_ERR;
    }
    return sigismember(&was, sig) ? SIG_HOLD : prev;
}

/* -------------------------------------------------------------------------------------
 * Start
 * ----------------------------------------------------------------------------------- */
static void
install_one(int sig, int what)
{
    struct sigaction k;
    if (sig <= 0 || sig >= MAX_SIG || real_sigaction(sig, NULL, &k) != 0) {
        return;
    }
    /* Only where the program (so far) has no use for the signal. */
    if (!(k.sa_flags & SA_SIGINFO) && k.sa_handler == SIG_DFL) {
        kind[sig] = (unsigned char)what;
        if (hold_default(sig, &k, 0) != 0) {
            kind[sig] = KIND_NONE;
        }
    } else if (what == KIND_SNAPSHOT) {
        snapshot_signal_taken(sig, k.sa_handler == SIG_IGN); /* SIG_IGN kept across exec */
    }
}

void
lh_stopsig_recheck(void)
{
    if (!lh_recording() || atomic_load(&stopping) || atomic_load(&dying_pid) == (int)getpid()) {
        return;
    }
    for (int sig = 1; sig < MAX_SIG; sig++) {
        struct sigaction k, mine, was;
        if (!handled(sig) || real_sigaction(sig, NULL, &k) != 0 || k.sa_handler != SIG_DFL) {
            continue;
        }
        /* SIG_DFL in force: set by the system call itself (the C library's functions would
         * have left the agent's handler), or the kernel's reset of a handler set so with
         * SA_RESETHAND. Held again, unless the program changed it meanwhile. */
        sigdelset(&k.sa_mask, SIGKILL);
        sigdelset(&k.sa_mask, SIGSTOP);
        view[sig] = k;
        agent_action(sig, &mine);
        if (real_sigaction(sig, &mine, &was) == 0 && was.sa_handler != SIG_DFL) {
            real_sigaction(sig, &was, NULL);
        }
    }
}

void
lh_stopsig_install(lh_sigaction_fn real, int snapshot_sig)
{
    if (!real) {
        return;
    }
    real_sigaction = real;
    static const int stops[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof stops / sizeof *stops; i++) {
        if (stops[i] != snapshot_sig) {
            install_one(stops[i], KIND_STOP);
        }
    }
    if (snapshot_sig) {
        install_one(snapshot_sig, KIND_SNAPSHOT);
    }
}
