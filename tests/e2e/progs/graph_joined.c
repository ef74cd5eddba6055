/* leakhound - SPDX-License-Identifier: MIT
 *
 * graph_joined.c (e2e, the exit snapshot's LEAK SUMMARY): three threads are started and
 * joined before exit. glibc keeps their stacks for the next thread, descriptor and DTV
 * included (its stack cache), so the DTV pthread_create calloc'd for each thread
 * (joined_start) is glibc's, not a leak the program made: it must not be "definitely
 * lost" (Valgrind, which frees the cache before its check, does not report it at all).
 * Each thread also leaves a 100-byte block known only by its own __thread variable
 * (joined_tls), which is lost once the thread has ended, and a 200-byte block in a global
 * array (joined_kept), which is reachable.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define N_THREADS 3

static __thread char *t_buf;
static void *g_kept[N_THREADS];

static void *
worker(void *arg)
{
    int idx = (int)(intptr_t)arg;
    t_buf = malloc(100); /* SITE: joined_tls */
    memset(t_buf, 1, 100);
    g_kept[idx] = malloc(200); /* SITE: joined_kept */
    return NULL;
}

int
main(void)
{
    pthread_t t[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        int rc = pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i); /* SITE: joined_start */
        if (rc != 0) {
            return 1;
        }
    }
    /* joined only now: no stack is cached before all three run, each has its own */
    for (int i = 0; i < N_THREADS; i++) {
        pthread_join(t[i], NULL);
    }
    return 0;
}
