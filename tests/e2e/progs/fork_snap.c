/* leakhound - SPDX-License-Identifier: MIT
 *
 * fork_snap.c (e2e): snapshots in a forked child. The parent keeps 4 blocks of 100 bytes
 * and takes snapshot "parent"; the child (fork, no exec) keeps 6 blocks of 200 bytes,
 * takes "child-1", frees 2 of them, takes "child-2" and exits. A fork child opens its own
 * trace only when it first writes: its snapshots must still have their contents files,
 * named after its trace. Prints "child PID" on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define LH_WEAK_API
#include "leakhound.h"

static void *g_keep[16];

int
main(void)
{
    for (int i = 0; i < 4; i++) {
        g_keep[i] = malloc(100);
    }
    lh_snapshot("parent");
    pid_t child = fork();
    if (child < 0) {
        return 1;
    }
    if (child == 0) {
        for (int i = 4; i < 10; i++) {
            g_keep[i] = malloc(200);
        }
        lh_snapshot("child-1");
        free(g_keep[8]);
        free(g_keep[9]);
        g_keep[8] = g_keep[9] = NULL;
        lh_snapshot("child-2");
        exit(0);
    }
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status)) {
        return 1;
    }
    char line[32]; /* not printf: its stdout buffer would be a block at exit */
    int n = snprintf(line, sizeof line, "child %d\n", (int)child);
    return write(1, line, (size_t)n) == n ? 0 : 1;
}
