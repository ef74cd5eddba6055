/* leakhound - SPDX-License-Identifier: MIT
 *
 * snap_ring.c (e2e.growth.snap_ring): a ring of RING blocks, each replaced without pause
 * (free, then malloc of another size, so the new block is at another address) while the
 * agent takes SIGUSR2 snapshots: raise(SIGUSR2), then the loop runs on while the ticker
 * clones. Every block the trace says is live at a snapshot is held by the ring in the
 * snapshot's copy, so each snapshot has nothing lost.
 *
 * Usage: snap_ring SNAPSHOTS
 */
#include <signal.h>
#include <stdlib.h>

#define RING 1024
#define STEPS 50000

void *ring[RING];

int
main(int argc, char **argv)
{
    int snaps = argc > 1 ? atoi(argv[1]) : 8;
    unsigned long i = 0;
    for (int s = 0; s < snaps; s++) {
        raise(SIGUSR2);
        for (long j = 0; j < STEPS; j++, i++) {
            unsigned k = i % RING;
            free(ring[k]);
            ring[k] = malloc(32 + (i % 7) * 16);
        }
    }
    for (unsigned k = 0; k < RING; k++) {
        free(ring[k]);
    }
    return 0;
}
