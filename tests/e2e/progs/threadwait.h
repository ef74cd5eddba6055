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

/* Sets *flag and wakes whoever waits for it. */
static void
tw_set(int *flag)
{
    pthread_mutex_lock(&tw_lock);
    *flag = 1;
    pthread_cond_broadcast(&tw_cond);
    pthread_mutex_unlock(&tw_lock);
}

/* Sleeps until *flag is set. */
static void
tw_wait_for(const int *flag)
{
    pthread_mutex_lock(&tw_lock);
    while (!*flag) {
        pthread_cond_wait(&tw_cond, &tw_lock);
    }
    pthread_mutex_unlock(&tw_lock);
}

/* In the thread: tells main it is ready, then sleeps until tw_release. */
static void
tw_hold(void)
{
    tw_set(&tw_ready);
    tw_wait_for(&tw_go);
}

/* In main: sleeps until the thread is in tw_hold. */
static void
tw_wait_ready(void)
{
    tw_wait_for(&tw_ready);
}

/* In main: wakes the thread up from tw_hold. */
static void
tw_release(void)
{
    tw_set(&tw_go);
}

#endif /* LH_TEST_THREADWAIT_H */
