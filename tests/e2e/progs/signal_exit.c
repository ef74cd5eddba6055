/* leakhound - SPDX-License-Identifier: MIT
 *
 * signal_exit.c: asks the agent for a snapshot by signal and ends at once, before the
 * ticker's next tick: the signal snapshot must still be in the trace, with its contents.
 *
 *   signal_exit SIG exit|_exit    keep 7 blocks of 123 bytes, raise(SIG), end that way
 *   signal_exit SIG wait          keep 7 blocks, say "ready PID" on stdout, and run until
 *                                 SIGTERM (the test sends its snapshot signals meanwhile)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *kept[64];

static void
keep(int i)
{
    kept[i] = malloc(123); /* signal_exit: kept */
    memset(kept[i], 0x5a, 123);
}

int
main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: signal_exit SIG exit|_exit|wait\n");
        return 2;
    }
    int sig = atoi(argv[1]);
    for (int i = 0; i < 7; i++) {
        keep(i);
    }
    if (strcmp(argv[2], "wait") == 0) {
        sigset_t set, old;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigprocmask(SIG_BLOCK, &set, &old);
        printf("ready %d\n", (int)getpid());
        fflush(stdout);
        /* The test sends SIGTERM after its N snapshot signals have all been served. */
        int got;
        sigwait(&set, &got);
        return 0;
    }
    raise(sig);
    if (strcmp(argv[2], "_exit") == 0) {
        _exit(0);
    }
    exit(0);
}
