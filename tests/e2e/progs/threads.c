/* leakhound - SPDX-License-Identifier: MIT
 *
 * threads.c (e2e): four threads churn and leak. Thread i (0..3) leaks i + 1 blocks of
 * 256 bytes from the same line, so the site holds 10 blocks, 2560 bytes, of 10
 * allocations. Each thread also allocates and frees 2000 blocks correctly.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define N_THREADS 4

static void *g_kept[N_THREADS][N_THREADS];

static void *
worker(void *arg)
{
    int idx = (int)(intptr_t)arg;
    for (int i = 0; i < 2000; i++) {
        char *p = malloc((size_t)(16 + (i % 7) * 24)); /* SITE: thread_churn */
        if (p == NULL) {
            abort();
        }
        p[0] = (char)i;
        free(p);
    }
    for (int i = 0; i <= idx; i++) {
        g_kept[idx][i] = malloc(256); /* LEAK: thread_block */
    }
    return NULL;
}

int
main(void)
{
    pthread_t tids[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        if (pthread_create(&tids[i], NULL, worker, (void *)(intptr_t)i) != 0) {
            return 1;
        }
    }
    for (int i = 0; i < N_THREADS; i++) {
        pthread_join(tids[i], NULL);
    }
    /* Forget the pointers so the blocks are definitely lost. */
    memset(g_kept, 0, sizeof(g_kept));
    return 0;
}
