/* leakhound - SPDX-License-Identifier: MIT
 *
 * fork.c: the pthread_atfork handlers. prepare takes the writer lock so that no frame is
 * half-written when the address space is copied, and the registry of the agent's mappings
 * (sys.h); parent releases them; the child resets the
 * lock and every buffer (the other threads do not exist in it: their records are the
 * parent's), bumps the trace generation so that stacks and modules are written again into
 * its own file, and starts its own ticker.
 */
#include <pthread.h>
#include <unistd.h>

#include "fork.h"

#include "agent.h"
#include "maps.h"
#include "output.h"
#include "sample.h"
#include "script.h"
#include "slots.h"
#include "snapshot.h"
#include "sys.h"
#include "ticker.h"

LH_REALIGN static void
fork_prepare(void)
{
    if (lh_recording()) {
        pthread_mutex_lock(&lh_g.wlock);
    }
    lh_sys_reg_hold(); /* last: a leaf lock */
}

LH_REALIGN static void
fork_parent(void)
{
    lh_sys_reg_release();
    if (lh_recording()) {
        pthread_mutex_unlock(&lh_g.wlock);
    }
}

LH_REALIGN static void
fork_child(void)
{
    lh_sys_reg_release();
    lh_sample_after_fork();
    lh_snapshot_after_fork();
    if (!lh_recording()) {
        return;
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
    lh_ticker_start();
}

void
lh_fork_install(void)
{
    static int installed;
    if (!installed) {
        installed = pthread_atfork(fork_prepare, fork_parent, fork_child) == 0;
    }
}
