/* leakhound - SPDX-License-Identifier: MIT
 *
 * reg_race.c (e2e, run_growth.py reg_race): forks and snapshots while the agent's ticker
 * holds the registry of the agent's mappings (LEAKHOUND_TEST_REG_HOLD_MS with
 * LEAKHOUND_RSS_MS=1: held most of the time). argv[1] rounds: snapshot "p" (a clone), then
 * fork a child that allocates, takes snapshot "c" of its own and exits; the parent waits
 * for it. A child handed the registry locked spins forever in the agent's first map or
 * unmap (its snapshot's compressor frees memory): the round never ends. Prints "rounds N".
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define LH_WEAK_API
#include "leakhound.h"

static void *g_keep[64];

int
main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    for (int r = 0; r < rounds; r++) {
        g_keep[r % 64] = malloc(1000 + (size_t)r);
        lh_snapshot("p");
        pid_t pid = fork();
        if (pid < 0) {
            return 1;
        }
        if (pid == 0) {
            void *p = malloc(5000);
            lh_snapshot("c");
            free(p);
            _exit(0);
        }
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            return 2;
        }
    }
    printf("rounds %d\n", rounds);
    return 0;
}
