/* leakhound - SPDX-License-Identifier: MIT
 *
 * reexec_master.c (e2e): the shape of haproxy -W: started without arguments, it forks a
 * worker, then re-executes itself (same pid) as "master", which waits for the worker. The
 * worker leaks 3 blocks of 96 bytes and exits 0; the first image leaks 1 block of 40 bytes
 * before the fork (inherited by the worker), the master 2 of 24.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *g_keep[3];

int
main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "master") == 0) {
        for (int i = 0; i < 2; i++) {
            g_keep[i] = malloc(24); /* LEAK: reexec_master */
        }
        int status = 1;
        if (waitpid(-1, &status, 0) < 0 || !WIFEXITED(status)) {
            return 1;
        }
        return WEXITSTATUS(status);
    }
    g_keep[0] = malloc(40); /* LEAK: reexec_first */
    pid_t pid = fork();
    if (pid < 0) {
        return 1;
    }
    if (pid == 0) {
        for (int i = 0; i < 3; i++) {
            g_keep[i] = malloc(96); /* LEAK: reexec_worker */
        }
        return 0;
    }
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
    if (n <= 0) {
        return 1;
    }
    path[n] = '\0';
    char *args[] = {path, "master", NULL};
    execv(path, args);
    return 1;
}
