/* leakhound - SPDX-License-Identifier: MIT
 *
 * reexec_master.c (e2e): the shape of haproxy -W: started without arguments, it forks a
 * worker, then re-executes itself (same pid) as "master", which waits for the worker. The
 * worker leaks 3 blocks of 96 bytes and exits 0; the first image leaks 1 block of 40 bytes
 * before the fork (inherited by the worker), the master 2 of 24. Both the first image and
 * the worker free a block of 56 bytes made before the fork: the first image at once (one
 * CPU for both: the parent runs on while the child waits to be scheduled), so the worker's
 * free matches only if its trace's fork time is the fork's, not the time the child first
 * ran (the parent's free lies between the two). Run as root, the first image becomes nobody
 * for a moment before its exec (seteuid), so the agent reserves contents files it never
 * uses: they must be gone after the exec.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <sched.h>
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
    void *shared = malloc(56); /* SITE: reexec_shared */
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
    (void)sched_setaffinity(0, sizeof one, &one);
    pid_t pid = fork();
    if (pid < 0) {
        return 1;
    }
    if (pid > 0) {
        free(shared);
    }
    if (pid == 0) {
        free(shared);
        for (int i = 0; i < 3; i++) {
            g_keep[i] = malloc(96); /* LEAK: reexec_worker */
        }
        return 0;
    }
    if (geteuid() == 0 && (seteuid(65534) != 0 || seteuid(0) != 0)) {
        return 1; /* as root, nobody for a moment: the agent reserves snapshot files */
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
