/* leakhound - SPDX-License-Identifier: MIT
 *
 * snapwait.h: for the delta snapshot test programs (snap_delta.c, snap_wp.c): waiting until
 * the agent's snapshot children are done, so each snapshot can refer to the one before it
 * whatever the machine's load.
 */
#ifndef LH_TEST_SNAPWAIT_H
#define LH_TEST_SNAPWAIT_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Waits (at most 30 s) until no child of this process is running: the agent's contents
 * children are processes whose parent is this one (they stay zombies until reaped). */
static void
wait_snapshot_children(void)
{
    int me = (int)getpid();
    for (int tries = 0; tries < 3000; tries++) {
        int running = 0;
        DIR *d = opendir("/proc");
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            char path[300], buf[512];
            if (e->d_name[0] < '0' || e->d_name[0] > '9') {
                continue;
            }
            snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
            FILE *f = fopen(path, "r");
            if (!f) {
                continue;
            }
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            buf[n] = '\0';
            char *close = strrchr(buf, ')'); /* the name may hold spaces */
            char state;
            int ppid;
            if (close && sscanf(close + 1, " %c %d", &state, &ppid) == 2 && ppid == me &&
                state != 'Z') {
                running = 1;
            }
        }
        if (d) {
            closedir(d);
        }
        if (!running) {
            return;
        }
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
}

#endif /* LH_TEST_SNAPWAIT_H */
