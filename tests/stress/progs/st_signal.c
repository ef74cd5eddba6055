/* leakhound - SPDX-License-Identifier: MIT
 *
 * st_signal.c (stress): a SIGALRM handler that allocates, every millisecond
 * (setitimer), while the main loop allocates and frees. malloc is not async-signal-safe,
 * but programs do this; the agent must neither deadlock nor crash nor corrupt the trace.
 *
 * To keep the program itself well-defined under glibc, the handler and the main loop use
 * different size classes and keep at most one block of each alive, so both are always
 * served by the thread's tcache bin of their own size and never take the arena lock the
 * other may hold. A handler that interrupts one of the agent's hooks finds the guard set
 * and passes through unrecorded (docs/agent-safety.md, rule 14): its malloc and its free
 * are then both unrecorded, so recorded handler allocations always equal recorded
 * handler frees.
 *
 * Output: "COUNT st_main_alloc allocs=.. frees=.. reallocs=0" and
 *         "COUNT st_handler_alloc allocs=.. frees=.. reallocs=0 signals=..".
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define NOINLINE __attribute__((noinline))

static volatile sig_atomic_t g_handler_allocs, g_handler_frees, g_signals;

NOINLINE static void *
st_handler_alloc(void)
{
    return malloc(3000);
}

NOINLINE static void *
st_main_alloc(void)
{
    return malloc(40);
}

static void
on_alarm(int sig)
{
    (void)sig;
    g_signals++;
    void *p = st_handler_alloc();
    if (p) {
        g_handler_allocs++;
        memset(p, 0x5a, 64);
        free(p);
        g_handler_frees++;
    }
}

int
main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 200000;
    long allocs = 0, frees = 0;
    free(st_handler_alloc()); /* warm both tcache bins before the timer starts */
    free(st_main_alloc());
    allocs++, frees++;
    g_handler_allocs++, g_handler_frees++;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_REAL, &it, NULL);

    /* A fixed number of iterations, each with a few microseconds of work outside malloc,
     * so that about a thousand signals land, some inside the agent's hooks. */
    volatile unsigned sink = 0;
    for (long i = 0; i < iters; i++) {
        char *p = st_main_alloc();
        if (!p) {
            abort();
        }
        allocs++;
        memset(p, (int)i, 40);
        for (int k = 0; k < 1500; k++) {
            sink += (unsigned)p[k % 40] * 31u + (unsigned)k;
        }
        free(p);
        frees++;
    }

    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    signal(SIGALRM, SIG_IGN);
    printf("signals %d\n", (int)g_signals);
    printf("COUNT st_main_alloc allocs=%ld frees=%ld reallocs=0\n", allocs, frees);
    printf("COUNT st_handler_alloc allocs=%d frees=%d reallocs=0 signals=%d\n",
           (int)g_handler_allocs, (int)g_handler_frees, (int)g_signals);
    return 0;
}
