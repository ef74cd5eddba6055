/* leakhound - SPDX-License-Identifier: MIT
 *
 * fork.c: the pthread_atfork handlers. prepare takes the writer lock so that no frame is
 * half-written when the address space is copied, and the registry of the agent's mappings
 * (sys.h); parent releases them; the child resets the
 * lock and every buffer (the other threads do not exist in it: their records are the
 * parent's), bumps the trace generation so that stacks and modules are written again into
 * its own file, and starts its own ticker.
 *
 * The child's trace names the trace that holds its inherited heap (INFO_PARENT: the fork's
 * time, that trace's file and writer), so a reader seeds the child with the blocks live at
 * the fork (docs/FORMAT.md, "Fork children"). A fork child that recorded events but has no
 * file yet opens it in prepare (one open and the module records copied from the table, no
 * flush of buffered events), so that its own children can name it; one that recorded
 * nothing passes on the trace its own heap came from, and the time of that earlier fork.
 */
#include <pthread.h>
#include <unistd.h>

#include "fork.h"

#include "agent.h"
#include "maps.h"
#include "mmaps.h"
#include "output.h"
#include "sample.h"
#include "script.h"
#include "slots.h"
#include "snapshot.h"
#include "stopsig.h"
#include "sys.h"
#include "ticker.h"

/* The guard is held from prepare to parent or child: the writer lock is this thread's
 * meanwhile, and a stop signal (stopsig.c) must wait for its release. */
static __thread int fork_guard __attribute__((tls_model("initial-exec")));

/* The time of the fork, read in prepare (the last handler to run before the clone: the
 * agent's is registered first) and inherited by the child as memory. Not read in the
 * child's handler: the child may first run milliseconds later, after the parent has freed
 * blocks the child still holds (haproxy -W frees its pollers and re-executes itself while
 * its worker waits for a CPU), and a reader would seed the child without them. */
static uint64_t fork_ts_ns;
static int mmaps_taken; /* the parent's: lh_mmaps_hold's answer */

LH_REALIGN static void
fork_prepare(void)
{
    fork_guard = lh_tls.guard;
    lh_tls.guard = 1;
    fork_ts_ns = lh_sys_now_ns();
    if (lh_recording()) {
        pthread_mutex_lock(&lh_g.wlock);
        if (lh_g.fd < 0 && !lh_g.open_failed && lh_events_total() > 0) {
            (void)lh_output_open_locked();
        }
    }
    mmaps_taken = lh_mmaps_hold();
    lh_sys_reg_hold(); /* last: a leaf lock */
}

LH_REALIGN static void
fork_parent(void)
{
    lh_sys_reg_release();
    lh_mmaps_release(mmaps_taken);
    if (lh_recording()) {
        pthread_mutex_unlock(&lh_g.wlock);
    }
    if (fork_guard) {
        lh_tls.guard = fork_guard;
    } else {
        lh_guard_leave();
    }
}

LH_REALIGN static void
fork_child(void)
{
    lh_sys_reg_release();
    lh_mmaps_after_fork();
    lh_tls.guard = fork_guard;
    lh_tls.stop_sig = 0; /* a stop signal of the parent's, not this process's */
    lh_stopsig_after_fork();
    lh_sample_after_fork();
    lh_snapshot_after_fork();
    if (!lh_recording()) {
        return;
    }
    if (lh_g.fd >= 0) {
        lh_sys_strlcpy(lh_g.seed_path, lh_g.path, sizeof lh_g.seed_path);
        lh_g.seed_pid = lh_g.pid;
        lh_g.seed_ts_ns = fork_ts_ns;
    } else if (!lh_g.seed_path[0] || lh_events_total() > 0) {
        lh_g.seed_path[0] = '\0'; /* no trace holds this heap */
        lh_g.seed_pid = 0;
        lh_g.seed_ts_ns = fork_ts_ns;
    }
    lh_output_after_fork();
    lh_g.parent_pid = lh_g.pid;
    lh_g.pid = getpid();
    lh_g.ppid = getppid();
    lh_ticker_after_fork();
    lh_slots_after_fork();
    atomic_fetch_add(&lh_g.gen, 1); /* stacks and modules are written again */
    lh_stacktab_after_fork(&lh_g.stacks);
    lh_script_after_fork();
    lh_maps_after_fork();
    lh_ticker_begin();
}

void
lh_fork_install(void)
{
    static int installed;
    if (!installed) {
        installed = pthread_atfork(fork_prepare, fork_parent, fork_child) == 0;
    }
}
