/* leakhound - SPDX-License-Identifier: MIT
 *
 * close_fds.c (e2e.closefds): what daemons do at their start (dnsmasq): close every
 * descriptor but 0, 1 and 2, by walking /proc/self/fd (argument "walk") or with
 * close_range(3, ~0U, 0) (argument "range"). Then the program opens its own file, which
 * gets descriptor 3, writes 1000 lines to it, allocates and leaks 4 blocks of 777 bytes,
 * and exits. Its file must hold exactly its lines (the agent's trace, once given the same
 * number, wrote its frames there), and the trace must be whole.
 * Argument "dup2": nothing is closed; the program puts its file on descriptors 3 to 9 with
 * dup2, as a shell's `exec 3>file` does, and writes through 3 (the agent's trace, once at
 * 3, was replaced by the program's file and its frames went there).
 * The raw ways to do the same (the agent keeps its own at 768 or above): "sysclose" walks
 * /proc/self/fd and closes through syscall(SYS_close, fd), "sysrange" calls
 * syscall(SYS_close_range, 3, ~0U, 0), "closefrom" glibc's closefrom(3) (sshd's way: glibc
 * calls its close_range inside the library), "duphigh" puts its file on every descriptor
 * from 10 to 1023 with dup2 and writes through the first; it prints the descriptors dup2
 * refused with EBADF, one a line ("refused N").
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void
close_walk(int raw)
{
    int fds[1024], n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d) {
        exit(3);
    }
    struct dirent *e;
    while ((e = readdir(d)) && n < 1024) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] != '.' && fd > 2 && fd != dirfd(d)) {
            fds[n++] = fd;
        }
    }
    closedir(d);
    for (int i = 0; i < n; i++) {
        if (raw) {
            syscall(SYS_close, fds[i]);
        } else {
            close(fds[i]);
        }
    }
}

int
main(int argc, char **argv)
{
    if (argc < 3) {
        return 2;
    }
    const char *how = argv[1];
    int dup = strcmp(how, "dup2") == 0, duphigh = strcmp(how, "duphigh") == 0;
    if (strcmp(how, "walk") == 0 || strcmp(how, "sysclose") == 0) {
        close_walk(how[0] == 's');
    } else if (strcmp(how, "sysrange") == 0) {
        if (syscall(SYS_close_range, 3, ~0U, 0) != 0) {
            return 4;
        }
    } else if (strcmp(how, "closefrom") == 0) {
        closefrom(3);
    } else if (!dup && !duphigh && close_range(3, ~0U, 0) != 0) {
        return 4;
    }
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        return 5;
    }
    for (int to = 10; duphigh && to < 1024; to++) {
        if (to != fd && dup2(fd, to) != to) {
            if (errno != EBADF) {
                return 7;
            }
            printf("refused %d\n", to);
        }
    }
    for (int to = 3; dup && to <= 9; to++) {
        if (to != fd && dup2(fd, to) != to) {
            return 7;
        }
    }
    if (dup && fd != 3) {
        close(fd);
        fd = 3;
    }
    static void *keep[4];
    for (int i = 0; i < 1000; i++) {
        char line[64];
        int n = snprintf(line, sizeof line, "line %d\n", i);
        if (write(fd, line, (size_t)n) != n) {
            return 6;
        }
        if (i % 250 == 0) {
            keep[i / 250] = malloc(777); /* SITE: closefds_block */
            memset(keep[i / 250], i, 777);
        }
    }
    close(fd);
    for (int i = 0; i < 4; i++) {
        keep[i] = NULL; /* lost */
    }
    return 0;
}
