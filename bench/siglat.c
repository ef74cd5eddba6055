/* leakhound - SPDX-License-Identifier: MIT
 *
 * siglat.c: a heap of MB megabytes (1 KiB blocks, all kept), then "ready PID" on stdout
 * and idle until SIGTERM: bench/siglat.py times snapshot signals sent to it.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
    long mb = argc > 1 ? atol(argv[1]) : 100;
    long n = mb * 1024;
    void **kept = malloc((size_t)n * sizeof *kept);
    for (long i = 0; kept && i < n; i++) {
        kept[i] = malloc(1024);
        memset(kept[i], (int)i, 1024);
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_BLOCK, &set, NULL);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    int got;
    sigwait(&set, &got);
    return 0;
}
