/* leakhound - SPDX-License-Identifier: MIT
 *
 * snap_vfork.c: a process in an uninterruptible sleep (state D): its only thread waits
 * in vfork() for a child that sleeps 4 s (raw system calls only, as a vfork child must).
 * `leakhound snapshot -p` cannot stop it and must give up after its 2 s bound without
 * harming it (run_snapshot.py case badtargets): it exits 0 once the child is done.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int
main(void)
{
    void *p = malloc(100);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    pid_t c = vfork();
    if (c == 0) {
        struct timespec ts = {4, 0};
        syscall(SYS_nanosleep, &ts, NULL);
        syscall(SYS_exit, 0);
    }
    free(p);
    return c < 0;
}
