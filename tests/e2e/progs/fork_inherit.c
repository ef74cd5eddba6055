/* leakhound - SPDX-License-Identifier: MIT
 *
 * fork_inherit.c (e2e): a pre-fork server's worker. The parent allocates 100 blocks of 64
 * bytes, then forks; the child frees the even-numbered 50 of them (blocks it inherited),
 * leaks 7 new blocks of 300 bytes and exits, the other 50 inherited blocks still live. The
 * parent waits for it, then frees its 100 blocks. Prints "parent PID child PID".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N_INHERITED 100
#define N_LEAKED 7

static void *g_blocks[N_INHERITED];
static void *volatile g_sink;

static void
build_table(void)
{
    for (int i = 0; i < N_INHERITED; i++) {
        g_blocks[i] = malloc(64); /* SITE: inherit_table */
    }
}

static void
leak_in_child(void)
{
    for (int i = 0; i < N_LEAKED; i++) {
        g_sink = malloc(300); /* LEAK: inherit_child_leak */
    }
}

int
main(void)
{
    build_table();
    pid_t child = fork();
    if (child < 0) {
        return 1;
    }
    if (child == 0) {
        for (int i = 0; i < N_INHERITED; i += 2) {
            free(g_blocks[i]);
            g_blocks[i] = NULL;
        }
        leak_in_child();
        g_sink = NULL;
        exit(0);
    }
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        return 1;
    }
    for (int i = 0; i < N_INHERITED; i++) {
        free(g_blocks[i]);
    }
    char line[64];
    int n = snprintf(line, sizeof(line), "parent %d child %d\n", (int)getpid(), (int)child);
    return write(1, line, (size_t)n) == n ? 0 : 1;
}
