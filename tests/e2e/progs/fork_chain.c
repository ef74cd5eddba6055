/* leakhound - SPDX-License-Identifier: MIT
 *
 * fork_chain.c (e2e): a grandchild frees what its parent and grandparent allocated. The
 * parent allocates 10 blocks of 64 bytes and forks; the child allocates 10 blocks of 96
 * bytes (buffered: its trace file is not open yet) and forks; the grandchild frees all 20
 * and exits. Prints "child PID grandchild PID".
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void *g_old[10], *g_mid[10];

int
main(void)
{
    for (int i = 0; i < 10; i++) {
        g_old[i] = malloc(64);
    }
    pid_t child = fork();
    if (child < 0) {
        return 1;
    }
    if (child == 0) {
        for (int i = 0; i < 10; i++) {
            g_mid[i] = malloc(96);
        }
        pid_t grandchild = fork();
        if (grandchild == 0) {
            for (int i = 0; i < 10; i++) {
                free(g_old[i]);
                free(g_mid[i]);
            }
            exit(0);
        }
        int st = 0;
        if (grandchild < 0 || waitpid(grandchild, &st, 0) != grandchild) {
            exit(1);
        }
        printf("child %d grandchild %d\n", (int)getpid(), (int)grandchild);
        fflush(stdout);
        exit(0);
    }
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        return 1;
    }
    return 0;
}
