/* leakhound - SPDX-License-Identifier: MIT
 *
 * sampled_ticker.c (e2e, run with --sample-rate 8K): in sampling mode a single-threaded
 * program runs with no agent thread (glibc's malloc locks on every call once a process has
 * two threads), and its own thread serves a snapshot signal at its next sampled event.
 * Blocks of 1 MiB are sampled with certainty at 8K. Prints the agent threads ("leakhound"
 * in /proc/self/task/N/comm) seen while single-threaded and after a thread of its own has
 * allocated: 0, then 1. The signal's snapshot is taken at the allocation that follows the
 * raise, so it holds the 8 kept blocks and that one: 9 live blocks.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIB (1 << 20)

static void *volatile g_sink;

static int
agent_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) {
        return -1;
    }
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[300], comm[64] = {0};
        if (e->d_name[0] == '.') {
            continue;
        }
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        int fd = open(path, O_RDONLY);
        if (fd >= 0) {
            ssize_t k = read(fd, comm, sizeof comm - 1);
            close(fd);
            n += k > 0 && strncmp(comm, "leakhound\n", 10) == 0;
        }
    }
    closedir(d);
    return n;
}

static void *
worker(void *arg)
{
    (void)arg;
    void *p = malloc(MIB); /* sampled: the agent's next poll sees a second thread */
    g_sink = p;
    free(p);
    return NULL;
}

int
main(void)
{
    void *kept[8];
    for (int i = 0; i < 8; i++) {
        kept[i] = malloc(MIB);
    }
    usleep(150 * 1000); /* past a period: the next sampled event does the ticker's work */
    raise(SIGUSR2);
    void *t = malloc(MIB); /* the snapshot is taken here: 9 blocks live */
    g_sink = t;
    int before = agent_threads();
    pthread_t th;
    if (pthread_create(&th, NULL, worker, NULL) != 0 || pthread_join(th, NULL) != 0) {
        return 2;
    }
    void *u = malloc(MIB); /* in case the worker's poll raced with its own start */
    g_sink = u;
    int after = agent_threads();
    for (int i = 0; i < 200 && after == 0; i++) {
        usleep(10 * 1000); /* the new thread names itself when it first runs */
        after = agent_threads();
    }
    for (int i = 0; i < 8; i++) {
        free(kept[i]);
    }
    free(t);
    free(u);
    printf("agent threads: %d single-threaded, %d after a thread\n", before, after);
    return 0;
}
