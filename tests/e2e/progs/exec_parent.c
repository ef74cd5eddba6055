/* leakhound - SPDX-License-Identifier: MIT
 *
 * exec_parent.c (e2e): leaks 2 blocks of 64 bytes, then execs exec_child from its own
 * directory, whose exit status (3) becomes the run's.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *g_keep[2];

int
main(void)
{
    for (int i = 0; i < 2; i++) {
        g_keep[i] = malloc(64); /* LEAK: before_exec */
    }
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
    if (n <= 0) {
        return 1;
    }
    path[n] = '\0';
    strcpy(strrchr(path, '/') + 1, "exec_child");
    char *args[] = {path, "from-parent", NULL};
    execv(path, args);
    return 1;
}
