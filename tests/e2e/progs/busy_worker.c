/* leakhound - SPDX-License-Identifier: MIT
 *
 * busy_worker.c (e2e): allocation churn with a steady leak of one 32-byte block per 100
 * iterations.
 *   busy_worker --iterations N   runs N iterations and exits 0
 *   busy_worker --pidfile FILE   writes its pid to FILE, then runs until killed (at most
 *                                60 s, so a lost test cannot leave it behind forever)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *g_sink;

static int
write_pidfile(const char *path)
{
    char tmp[4096];
    char line[32];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    int n = snprintf(line, sizeof(line), "%d\n", (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, line, (size_t)n) != n || close(fd) != 0) {
        return -1;
    }
    return rename(tmp, path);
}

static void
work_once(unsigned long i)
{
    void *p = malloc(16 + (i * 7919) % 500); /* SITE: busy_churn */
    if (p == NULL) {
        abort();
    }
    memset(p, (int)i, 16);
    free(p);
    if (i % 100 == 0) {
        g_sink = malloc(32); /* LEAK: busy_leak */
    }
}

int
main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--iterations") == 0) {
        unsigned long n = strtoul(argv[2], NULL, 10);
        for (unsigned long i = 0; i < n; i++) {
            work_once(i);
        }
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "--pidfile") == 0) {
        if (write_pidfile(argv[2]) != 0) {
            return 1;
        }
        time_t start = time(NULL);
        for (unsigned long i = 0;; i++) {
            work_once(i);
            if (i % 100000 == 0 && time(NULL) - start > 60) {
                return 1;
            }
        }
    }
    fprintf(stderr, "usage: busy_worker --iterations N | --pidfile FILE\n");
    return 2;
}
