/* leakhound - SPDX-License-Identifier: MIT
 *
 * attach_static.c: a process `leakhound attach` must refuse and leave alone
 * (tests/e2e/run_attach.py): linked statically; with the argument "seccomp", also under a
 * seccomp filter (one that allows everything). Prints "ready", then sleeps until killed.
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "seccomp") == 0) {
        struct sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
        struct sock_fprog prog = {1, allow};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
            perror("attach_static: seccomp");
            return 1;
        }
    }
    puts("ready");
    fflush(stdout);
    for (;;) {
        pause();
    }
}
