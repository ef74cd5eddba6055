/* leakhound - SPDX-License-Identifier: MIT
 *
 * fault_prog.c (faults): targets for the fault-injection runner (run_faults.py).
 *
 *   fault_prog counter FILE SECONDS   allocates 32-byte blocks at fk_alloc (kept: they are
 *       the evidence), 100 per millisecond, and every 10 ms appends "<completed>
 *       <CLOCK_MONOTONIC ns>\n" to FILE: what had surely been allocated by then. The
 *       runner kills it with SIGKILL and compares with the trace.
 *   fault_prog churn N                N allocations at varied depths (distinct stacks),
 *       most freed; prints a checksum. Output independent of the agent.
 *   fault_prog forklate SECONDS       allocates for SECONDS; halfway it forks a child
 *       that allocates and exits 0; prints what happened.
 *   fault_prog secret MODE            puts a recognisable secret in a heap block, keeps a
 *       pointer to it, and exits (the exit snapshot scans it).
 *   fault_prog dropuid [N]            as a server's worker: allocates, becomes nobody
 *       (setuid 65534, when root), allocates again, raises SIGUSR2 N times (default 0;
 *       300 ms apart: a snapshot each when the agent was asked to take one on it) and exits.
 *       Only the contents file the agent made before the uid changed can still be written.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static uint64_t
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

NOINLINE static void *
fk_alloc(size_t n)
{
    return malloc(n);
}

static void **g_kept;

static int
counter(const char *file, double secs)
{
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    if (fd < 0) {
        perror(file);
        return 1;
    }
    size_t cap = 1u << 20, n = 0;
    g_kept = calloc(cap, sizeof *g_kept);
    uint64_t t0 = now_ns(), next = t0;
    struct timespec ms = {0, 1000000};
    while (now_ns() - t0 < (uint64_t)(secs * 1e9) && n + 100 <= cap) {
        for (int i = 0; i < 100; i++) {
            g_kept[n] = fk_alloc(32);
            n++; /* counted after malloc returned: the hook has recorded it */
        }
        uint64_t t = now_ns();
        if (t >= next) {
            char line[64];
            int len = snprintf(line, sizeof line, "%zu %llu\n", n, (unsigned long long)t);
            if (write(fd, line, (size_t)len) != len) {
                return 1;
            }
            next = t + 10000000; /* 10 ms */
        }
        nanosleep(&ms, NULL);
    }
    printf("allocated %zu\n", n);
    return 0;
}

NOINLINE static unsigned long
fk_deep(int depth, unsigned long seed)
{
    if (depth > 0) {
        return fk_deep(depth - 1, seed * 6364136223846793005ul + 1) + 1;
    }
    size_t n = 16 + seed % 4000;
    unsigned char *p = fk_alloc(n);
    p[0] = (unsigned char)seed;
    unsigned long r = p[0] + n;
    if (seed % 8) {
        free(p);
    }
    return r;
}

static int
churn(long n)
{
    unsigned long sum = 0;
    for (long i = 0; i < n; i++) {
        sum += fk_deep((int)(i % 24), (unsigned long)i * 2654435761u);
    }
    printf("churn %ld checksum %lu\n", n, sum);
    return 0;
}

static int
forklate(double secs)
{
    uint64_t t0 = now_ns();
    int forked = 0, status = -1;
    long n = 0;
    while (now_ns() - t0 < (uint64_t)(secs * 1e9)) {
        for (int i = 0; i < 100; i++) {
            free(fk_alloc(64));
            n++;
        }
        if (!forked && now_ns() - t0 > (uint64_t)(secs * 0.5e9)) {
            forked = 1;
            fflush(stdout);
            pid_t pid = fork();
            if (pid == 0) {
                for (int i = 0; i < 10000; i++) {
                    free(fk_alloc(100));
                }
                exit(0);
            }
            waitpid(pid, &status, 0);
        }
        usleep(1000);
    }
    printf("forked child exit status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    printf("allocation rounds done\n");
    (void)n;
    return 0;
}

static char *g_secret_block;

static int
secret(void)
{
    g_secret_block = malloc(256);
    strcpy(g_secret_block, "hunter2-SECRET-7f3a9c-do-not-leak");
    char *copy = malloc(64); /* a second live block pointing at the first */
    memcpy(copy, &g_secret_block, sizeof g_secret_block);
    printf("secret at %s\n", g_secret_block ? "a heap block" : "nowhere");
    return 0;
}

static int
dropuid(int n_signals)
{
    g_secret_block = malloc(100);
    struct timespec ts = {0, 300000000};
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) {
        return 1;
    }
    char *again = malloc(200);
    printf("euid %d\n", (int)geteuid());
    free(again);
    for (int i = 0; i < n_signals; i++) {
        raise(SIGUSR2);
        nanosleep(&ts, NULL);
    }
    return 0;
}

int
main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 4 && strcmp(argv[1], "counter") == 0) {
        return counter(argv[2], atof(argv[3]));
    }
    if (argc >= 3 && strcmp(argv[1], "churn") == 0) {
        return churn(atol(argv[2]));
    }
    if (argc >= 3 && strcmp(argv[1], "forklate") == 0) {
        return forklate(atof(argv[2]));
    }
    if (argc >= 2 && strcmp(argv[1], "secret") == 0) {
        return secret();
    }
    if (argc >= 2 && strcmp(argv[1], "dropuid") == 0) {
        return dropuid(argc >= 3 ? atoi(argv[2]) : 0);
    }
    fprintf(stderr, "usage: fault_prog counter FILE SECS | churn N | forklate SECS | secret | "
                    "dropuid\n");
    return 2;
}
