/* leakhound - SPDX-License-Identifier: MIT
 *
 * graph_thread.c (e2e, `leakhound shell`): a 100000-byte block (worker_block) known only
 * by a local variable of a worker thread that sleeps in pthread_cond_wait while main takes
 * the snapshot "waiting": it is reachable, from that thread's stack. Afterwards the worker
 * is woken up, frees it and ends.
 */
#define LH_WEAK_API
#include <leakhound.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "threadwait.h"

__attribute__((noinline)) static void *
worker_block(void)
{
    return malloc(100000); /* SITE: worker_block */
}

static void *
worker(void *arg)
{
    (void)arg;
    void *volatile mine = worker_block();
    memset(mine, 1, 100000);
    tw_hold();
    free(mine);
    return NULL;
}

int
main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    tw_wait_ready();
    if (lh_snapshot) {
        lh_snapshot("waiting");
    }
    tw_release();
    pthread_join(t, NULL);
    return 0;
}
