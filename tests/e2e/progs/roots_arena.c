/* leakhound - SPDX-License-Identifier: MIT
 *
 * roots_arena.c (e2e, issue 11): four threads allocate 50 blocks of 64 bytes each
 * (arena_block), so glibc gives each thread a malloc arena of its own; the only pointers
 * to the blocks are in a global array. While the threads wait, main takes the snapshot
 * "arenas"; then they exit and the program ends. All 200 blocks are reachable in both
 * snapshots, wherever the kernel placed the arenas (one may follow another's reserved
 * tail, the shape of a thread stack below its guard page).
 */
#define LH_WEAK_API
#include <leakhound.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define BLOCKS 50

static void *g_blocks[THREADS][BLOCKS];
static pthread_barrier_t ready, done;

__attribute__((noinline)) static void *
arena_block(void)
{
    return malloc(64); /* SITE: arena_block */
}

static void *
worker(void *arg)
{
    int t = (int)(long)arg;
    for (int i = 0; i < BLOCKS; i++) {
        g_blocks[t][i] = arena_block();
        memset(g_blocks[t][i], 0, 64);
    }
    pthread_barrier_wait(&ready);
    pthread_barrier_wait(&done);
    return NULL;
}

int
main(void)
{
    pthread_t th[THREADS];
    pthread_barrier_init(&ready, NULL, THREADS + 1);
    pthread_barrier_init(&done, NULL, THREADS + 1);
    for (long t = 0; t < THREADS; t++) {
        if (pthread_create(&th[t], NULL, worker, (void *)t) != 0) {
            return 1;
        }
    }
    pthread_barrier_wait(&ready);
    if (lh_snapshot) {
        lh_snapshot("arenas");
    }
    pthread_barrier_wait(&done);
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
    }
    return 0;
}
