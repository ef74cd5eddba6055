/* leakhound - SPDX-License-Identifier: MIT
 *
 * priv_drop.c (e2e, privileges): run as root, drops to nobody the way setpriv and
 * libcap-ng do, with per-thread capability changes between glibc's all-thread calls:
 *   PR_SET_KEEPCAPS, setresuid(nobody) (the permitted set kept, the effective one
 *   emptied), capset raising CAP_SETGID again on this thread only, setgroups and
 *   setresgid to nogroup (glibc repeats both on every thread and aborts if one fails),
 *   then capset dropping every capability.
 * Then it leaks 3 blocks of 777 bytes (definitely lost), holds 2 of 555 in a global, and
 * prints, for every thread of the process (/proc/self/task), whether its uid, gid, groups
 * and capability sets are the main thread's: "threads N same" or "threads N differ".
 * Exits 0. "norun" as argument: only the leaks (not root: the test is skipped).
 * "jail DIR": forks a child that chroots into DIR (where the trace's directory does not
 * exist: sshd's pre-authentication child in /run/sshd), makes the same leaks and exits 0;
 * prints "child PID".
 */
#include <dirent.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* glibc's (declared by libcap's headers, not the C library's). */
int capset(cap_user_header_t header, const cap_user_data_t data);
int capget(cap_user_header_t header, cap_user_data_t data);

static void *held[2];

__attribute__((noinline)) static void
leak_some(void)
{
    for (int i = 0; i < 3; i++) {
        void *volatile p = malloc(777); /* SITE: priv_lost */
        memset(p, 1, 777);
        p = NULL;
    }
}

__attribute__((noinline)) static void
hold_some(void)
{
    for (int i = 0; i < 2; i++) {
        held[i] = malloc(555); /* SITE: priv_held */
        memset(held[i], 2, 555);
    }
}

__attribute__((noinline)) static void
scrub(void)
{
    volatile char pad[16384];
    memset((char *)pad, 0, sizeof pad);
}

static int
set_caps(unsigned effective, unsigned permitted)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof d);
    d[0].effective = effective;
    d[0].permitted = permitted;
    return capset(&h, d);
}

static void
die(const char *what)
{
    perror(what);
    exit(2);
}

/* The lines of a thread's status that say what it may do. */
static void
creds_of(const char *task, char *out, size_t len)
{
    char path[128], line[256];
    snprintf(path, sizeof path, "/proc/self/task/%s/status", task);
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) {
        return;
    }
    static const char *keys[] = {"Uid:", "Gid:", "Groups:", "CapInh:", "CapPrm:",
                                 "CapEff:", "CapBnd:", "CapAmb:"};
    while (fgets(line, sizeof line, f)) {
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
            if (strncmp(line, keys[i], strlen(keys[i])) == 0) {
                strncat(out, line, len - strlen(out) - 1);
            }
        }
    }
    fclose(f);
}

static void
compare_threads(void)
{
    char mine[1024], other[1024], self[32];
    snprintf(self, sizeof self, "%d", (int)getpid());
    creds_of(self, mine, sizeof mine);
    DIR *d = opendir("/proc/self/task");
    if (!d) {
        die("opendir");
    }
    int n = 0, same = 1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') {
            continue;
        }
        n++;
        creds_of(e->d_name, other, sizeof other);
        same &= strcmp(mine, other) == 0 && mine[0] != '\0';
    }
    closedir(d);
    printf("threads %d %s\n", n, same ? "same" : "differ");
}

static int
jail(const char *dir)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (chroot(dir) != 0 || chdir("/") != 0) {
            _exit(3);
        }
        leak_some();
        hold_some();
        scrub();
        exit(0);
    }
    int status = -1;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        return 1;
    }
    printf("child %d\n", (int)pid);
    return status == 0 ? 0 : 2;
}

int
main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "jail") == 0) {
        return jail(argv[2]);
    }
    leak_some();
    hold_some();
    scrub();
    if (argc > 1 && strcmp(argv[1], "norun") == 0) {
        return 0;
    }
    const unsigned setgid_bit = 1u << CAP_SETGID, setuid_bit = 1u << CAP_SETUID;
    if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) {
        die("PR_SET_KEEPCAPS");
    }
    if (setresuid(65534, 65534, 65534) != 0) {
        die("setresuid");
    }
    /* Kept in the permitted set, not in force: raised again here, on this thread. */
    if (set_caps(setgid_bit, setgid_bit | setuid_bit) != 0) {
        die("capset raise");
    }
    gid_t nogroup = 65534;
    if (setgroups(1, &nogroup) != 0) {
        die("setgroups");
    }
    if (setresgid(65534, 65534, 65534) != 0) {
        die("setresgid");
    }
    if (set_caps(0, 0) != 0) {
        die("capset drop");
    }
    printf("uid %d gid %d\n", (int)getuid(), (int)getgid());
    compare_threads();
    return 0;
}
