/* leakhound - SPDX-License-Identifier: MIT
 *
 * fork_leak.c (e2e): fork without exec. The child leaks 5 blocks of 222 bytes and exits;
 * the parent waits for it, then leaks 3 blocks of 111 bytes. Each leak is made after the
 * fork, so it belongs to exactly one trace. Prints "parent PID child PID" on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *g_keep[8];

static void
leak_in_child(void)
{
    for (int i = 0; i < 5; i++) {
        g_keep[i] = malloc(222); /* LEAK: child_leak */
    }
}

static void
leak_in_parent(void)
{
    for (int i = 0; i < 3; i++) {
        g_keep[i] = malloc(111); /* LEAK: parent_leak */
    }
}

int
main(void)
{
    pid_t child = fork();
    if (child < 0) {
        return 1;
    }
    if (child == 0) {
        leak_in_child();
        memset(g_keep, 0, sizeof(g_keep));
        exit(0);
    }
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        return 1;
    }
    leak_in_parent();
    memset(g_keep, 0, sizeof(g_keep));
    char line[64];
    int n = snprintf(line, sizeof(line), "parent %d child %d\n", (int)getpid(), (int)child);
    return write(1, line, (size_t)n) == n ? 0 : 1;
}
