/* leakhound - SPDX-License-Identifier: MIT
 *
 * stopsig.h: the signals that stop a program (stopsig.c), and the program's view of every
 * signal the agent handles.
 *
 * A program stopped by SIGINT, SIGTERM or SIGHUP at their default disposition ends its
 * trace as one that exits does: final flush, exit snapshot, END (exit kind
 * LH_EXIT_SIGNAL, status the signal), and is then killed by the same signal, so its
 * parent sees the same status. The agent's handlers (these, and the snapshot signal's)
 * are installed only where the program's disposition is SIG_DFL, and the program never
 * sees them: sigaction, signal and their relatives are interposed (shims.c) to report
 * SIG_DFL for them and to install what the program asks for, for real.
 */
#ifndef LH_STOPSIG_H
#define LH_STOPSIG_H

#include <signal.h>

typedef int (*lh_sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef void (*lh_sighandler_fn)(int);
typedef lh_sighandler_fn (*lh_signal_fn)(int, lh_sighandler_fn); /* signal() */

/* Installs the agent's handlers where the program's disposition is SIG_DFL: the stop
 * signals (those of lh_stopsig_is_stop), and the snapshot signal sig (0: none).
 * real is the C library's sigaction. In the constructor, once recording began. */
void lh_stopsig_install(lh_sigaction_fn real, int snapshot_sig);

/* sigaction as the program sees it: real(sig, act, old) for a signal the agent does not
 * handle; for one it does, SIG_DFL asked for keeps (or puts back) the agent's handler and
 * is remembered as the program's disposition, anything else is installed for real, and
 * old is the program's view, never the agent's handler. AS-safe. */
int lh_stopsig_sigaction(lh_sigaction_fn real, int sig, const struct sigaction *act,
                         struct sigaction *old);
/* signal, bsd_signal, sysv_signal through the C library's function of that name (real):
 * as sigaction above; flags and self_mask are what that function installs SIG_DFL with
 * (SA_RESTART and the signal itself masked for signal, SA_RESETHAND|SA_NODEFER for
 * sysv_signal). AS-safe. */
lh_sighandler_fn lh_stopsig_signal(lh_signal_fn real, int sig,
                                   lh_sighandler_fn h, int flags, int self_mask);
/* sigset (System V): as the C library's, SIG_HOLD included. AS-safe. */
lh_sighandler_fn lh_stopsig_sigset(lh_signal_fn real, int sig,
                                   lh_sighandler_fn h);

/* A stop signal arrived while this thread was inside the agent (lh_tls.stop_sig): called
 * when it leaves (lh_guard_leave), with no agent lock held; ends the trace and the
 * process. Does not return. */
void lh_stopsig_deferred(void);
/* The end of lh_recorder_finish on a thread whose stop signal arrived during it: END
 * again, as killed by that signal, then the death. Does not return. */
void lh_stopsig_after_finish(void);
/* Fork child: a stop the parent was carrying out is not its own. */
void lh_stopsig_after_fork(void);
/* The ticker's, every period: a handled signal found at SIG_DFL for real (the program
 * called rt_sigaction itself, not sigaction or signal) gets the agent's handler again,
 * within a period; the program's view stays SIG_DFL. Not AS-safe. */
void lh_stopsig_recheck(void);
/* Nonzero for the signals whose default action is carried out by the agent's handler. */
int lh_stopsig_is_stop(int sig);

#endif /* LH_STOPSIG_H */
