/* leakhound - SPDX-License-Identifier: MIT
 *
 * snap_race.c: snapshots taken from a thread while the main thread exits (e2e.growth.
 * snap_race). A second thread calls lh_snapshot("t-N") in a loop; once it has taken
 * argv[1] of them, main returns while the thread is still at it (and the ticker takes its
 * periodic ones, LEAKHOUND_SNAPSHOT_EVERY_MS). Whatever was taking a snapshot when the
 * program left, every contents file the trace names must be whole when `leakhound run`
 * returns.
 */
#define LH_WEAK_API
#include <leakhound.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_int taken;
void *g_keep[7];

static void *
snapper(void *arg)
{
    (void)arg;
    char label[32];
    for (int i = 1;; i++) {
        snprintf(label, sizeof label, "t-%d", i);
        lh_snapshot(label);
        atomic_store(&taken, i);
    }
    return NULL;
}

int
main(int argc, char **argv)
{
    int want = argc > 1 ? atoi(argv[1]) : 3;
    for (int i = 0; i < 7; i++) {
        g_keep[i] = malloc(123);
    }
    pthread_t t;
    if (pthread_create(&t, NULL, snapper, NULL) != 0) {
        return 1;
    }
    while (atomic_load(&taken) < want) {
        sched_yield();
    }
    return 0;
}
