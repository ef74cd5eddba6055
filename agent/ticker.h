/* leakhound - SPDX-License-Identifier: MIT
 *
 * ticker.h: the agent's periodic thread (ticker.c): module scans, snapshot triggers, RSS
 * samples, flushes and SYNC frames.
 */
#ifndef LH_TICKER_H
#define LH_TICKER_H

#include <stdatomic.h>

/* Starts the ticker with every signal blocked, on a stack of agent memory. Sets
 * lh_g.ticker_running; lh_g.ticker_stop ends it at its next wake-up. Not AS-safe. */
void lh_ticker_start(void);

/* Starts recording's periodic work: the ticker, or in sampling mode while the program has
 * one thread and no periodic or growth snapshot is asked for, nothing yet (lh_ticker_poll
 * does the work). Not AS-safe; guard held. */
void lh_ticker_begin(void);

/* Nonzero while the ticker's work is left to lh_ticker_poll. */
extern atomic_int lh_ticker_deferred;

/* The program's thread, after recording a sampled event, with no agent lock held: serves
 * snapshot signals received, does a period's work when one has passed, and starts the
 * ticker once the program has a second thread. Not AS-safe; guard held. */
void lh_ticker_poll(void);

/* Stops the ticker and waits (at most 2 s) until its thread is gone. Returns 0, or -1 when
 * it is still running. Not AS-safe; guard held. */
int lh_ticker_stop(void);

/* Around a call that changes the program's credentials, capabilities or namespaces (the
 * setuid and setgid families, setgroups, initgroups, capset, unshare, setns; shims.c): a
 * new user namespace wants a process of one thread. begin stops the ticker (at most
 * 10 s while it finishes a snapshot; after that it runs on), end starts it again from the
 * calling thread, which it inherits them from (ticker.c says why). begin returns what end
 * is to be given. Not AS-safe; called outside the agent (a call of the agent's own, guard
 * set, is left alone). */
int lh_ticker_follow_begin(void);
void lh_ticker_follow_end(int held);

/* Signal-side request for a snapshot: counts it and wakes the ticker, which takes it at
 * once (not at its next tick). AS-safe: an atomic add and a sem_post. */
void lh_request_snapshot(void);

/* Takes one "signal-N" snapshot per request not yet served. Called by the ticker when woken,
 * and by the exit path before the exit snapshot, so that a request made just before the
 * program ended is not lost. Not AS-safe; guard held. */
void lh_serve_snapshot_requests(void);
/* The exit path's: serves what is pending, then waits (at most ~2 s) until a request another
 * thread took has been captured, so that a signal's snapshot is never lost to the exit (the
 * ticker had taken the request, exit stopped recording, the capture was dropped) and comes
 * before the exit snapshot. Not AS-safe; guard held. */
void lh_settle_snapshot_requests(void);

/* One RSS sample (statm, plus smaps_rollup when full) as an agent frame. Not AS-safe. */
void lh_write_rss(int full);

/* Fork child: the ticker did not survive the fork; the next SYNC is written afresh. */
void lh_ticker_after_fork(void);

#endif /* LH_TICKER_H */
