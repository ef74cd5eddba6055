/* leakhound - SPDX-License-Identifier: MIT
 *
 * st_fork.c (stress): fork from a threaded process. Four threads allocate and free
 * in short bursts while main forks FORKS times (default 8); each child allocates CHILD
 * blocks at st_child_alloc, frees half of them, frees a few blocks inherited from the
 * parent, prints its counts and exits with status 0. The parent waits for every child
 * (a child that deadlocks in the agent's fork handling would hang here: the runner's
 * timeout catches it) and prints its own counts.
 *
 * Output: "COUNT parent allocs=.. frees=.. reallocs=0" and, per child,
 * "COUNT child.<pid> allocs=.. frees=.. reallocs=0 inherited_frees=..".
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define N_INHERITED 16

static atomic_long g_allocs, g_frees;
static atomic_int g_stop;
static void *g_inherited[N_INHERITED];

NOINLINE static void *
st_parent_alloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        abort();
    }
    atomic_fetch_add(&g_allocs, 1);
    return p;
}

NOINLINE static void *
st_child_alloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        abort();
    }
    return p;
}

static void *
spinner(void *arg)
{
    size_t k = (size_t)arg;
    struct timespec pause = {0, 100000}; /* bursts of 50 pairs every 0.1 ms: busy, bounded */
    while (!atomic_load(&g_stop)) {
        for (int i = 0; i < 50; i++) {
            void *p = st_parent_alloc(24 + k * 8);
            free(p);
            atomic_fetch_add(&g_frees, 1);
        }
        nanosleep(&pause, NULL);
    }
    return NULL;
}

static void
child(int nblocks)
{
    void **v = malloc((size_t)nblocks * sizeof *v); /* libc-side bookkeeping: not counted */
    long allocs = 0, frees = 0;
    for (int i = 0; i < nblocks; i++) {
        v[i] = st_child_alloc(16 + (size_t)(i % 64) * 8);
        allocs++;
    }
    for (int i = 0; i < nblocks; i += 2) {
        free(v[i]);
        frees++;
    }
    for (int i = 0; i < N_INHERITED / 2; i++) {
        free(g_inherited[i]); /* blocks this trace never saw allocated */
        g_inherited[i] = NULL;
    }
    printf("COUNT child.%d allocs=%ld frees=%ld reallocs=0 inherited_frees=%d\n", (int)getpid(),
           allocs, frees, N_INHERITED / 2);
    fflush(stdout);
    exit(0); /* through atexit: the agent's destructor flushes the child's trace */
}

int
main(int argc, char **argv)
{
    int forks = argc > 1 ? atoi(argv[1]) : 8;
    int nblocks = argc > 2 ? atoi(argv[2]) : 5000;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 0; i < N_INHERITED; i++) {
        g_inherited[i] = st_parent_alloc(100);
    }
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        pthread_create(&t[i], NULL, spinner, (void *)(size_t)i);
    }
    int bad = 0;
    for (int f = 0; f < forks; f++) {
        usleep(20000);
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 1;
        }
        if (pid == 0) {
            child(nblocks);
        }
        int st = 0;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "child %d: status 0x%x\n", (int)pid, st);
            bad++;
        }
    }
    atomic_store(&g_stop, 1);
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
    }
    for (int i = 0; i < N_INHERITED; i++) {
        free(g_inherited[i]);
        atomic_fetch_add(&g_frees, 1);
    }
    printf("forks %d failed %d\n", forks, bad);
    printf("COUNT parent allocs=%ld frees=%ld reallocs=0\n", atomic_load(&g_allocs),
           atomic_load(&g_frees));
    return bad ? 1 : 0;
}
