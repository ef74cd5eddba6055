/* leakhound - SPDX-License-Identifier: MIT
 *
 * roots_exited.c (e2e, issue 11): a thread allocates a block of 333 bytes (exited_block),
 * keeps the only pointers to it deep in its own stack (4096 copies, below where its exit
 * path runs) and ends; main joins it. glibc keeps the stack of an ended thread for reuse,
 * pointers included, but nothing can reach the block any more: definitely lost, as
 * Valgrind and LeakSanitizer say. A second thread, started first so that it does not
 * reuse that stack, keeps a block of 444 bytes (live_block) on its stack while main takes
 * the snapshot "live": reachable there, from that thread's stack.
 */
#define LH_WEAK_API
#include <leakhound.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "threadwait.h"
#include "vg_check.h"


__attribute__((noinline)) static void *
exited_block(void)
{
    return malloc(333); /* SITE: exited_block */
}

__attribute__((noinline)) static void *
live_block(void)
{
    return malloc(444); /* SITE: live_block */
}

static void *
ends(void *arg)
{
    (void)arg;
    void *volatile copies[4096];
    void *p = exited_block();
    memset(p, 1, 333);
    for (int i = 0; i < 4096; i++) {
        copies[i] = p;
    }
    (void)copies;
    return NULL;
}

static void *
waits(void *arg)
{
    (void)arg;
    void *volatile mine = live_block();
    memset(mine, 2, 444);
    tw_hold();
    free(mine);
    return NULL;
}

int
main(void)
{
    pthread_t w, t;
    if (pthread_create(&w, NULL, waits, NULL) != 0) {
        return 1;
    }
    tw_wait_ready();
    if (pthread_create(&t, NULL, ends, NULL) != 0) {
        return 1;
    }
    pthread_join(t, NULL);
    if (lh_snapshot) {
        lh_snapshot("live");
    }
    vg_leak_check(); /* Valgrind's answer at the same moment */
    tw_release();
    pthread_join(w, NULL);
    return 0;
}
