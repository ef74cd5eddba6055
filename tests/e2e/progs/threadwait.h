/* leakhound - SPDX-License-Identifier: MIT
 *
 * threadwait.h: for the test programs in which a thread holds a block while main takes a
 * snapshot (graph_thread.c, roots_exited.c, roots_mmap.c, roots_tls.c): the thread says it
 * is ready and sleeps in pthread_cond_wait (tw_hold) until main, having waited for it
 * (tw_wait_ready) and taken its snapshot, lets it go (tw_release).
 */
#ifndef LH_TEST_THREADWAIT_H
#define LH_TEST_THREADWAIT_H

#include <pthread.h>

static pthread_mutex_t tw_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tw_cond = PTHREAD_COND_INITIALIZER;
static int tw_ready, tw_go;

/* In the thread: tells main it is ready, then sleeps until tw_release. */
static void
tw_hold(void)
{
    pthread_mutex_lock(&tw_lock);
    tw_ready = 1;
    pthread_cond_broadcast(&tw_cond);
    while (!tw_go) {
        pthread_cond_wait(&tw_cond, &tw_lock);
    }
    pthread_mutex_unlock(&tw_lock);
}

/* In main: sleeps until the thread is in tw_hold. */
static void
tw_wait_ready(void)
{
    pthread_mutex_lock(&tw_lock);
    while (!tw_ready) {
        pthread_cond_wait(&tw_cond, &tw_lock);
    }
    pthread_mutex_unlock(&tw_lock);
}

/* In main: wakes the thread up from tw_hold. */
static void
tw_release(void)
{
    pthread_mutex_lock(&tw_lock);
    tw_go = 1;
    pthread_cond_broadcast(&tw_cond);
    pthread_mutex_unlock(&tw_lock);
}

#endif /* LH_TEST_THREADWAIT_H */
