/* leakhound - SPDX-License-Identifier: MIT
 *
 * target.h: a running process that `leakhound attach` or `leakhound snapshot -p` is about
 * to stop (target.c): the checks that keep it safe (it exists, is alive, we may trace it,
 * no seccomp filter, glibc's malloc is its allocator) and what the commands need to know
 * of it (its name, its libc). Everything is read from /proc and the module files; nothing
 * here stops or touches the process.
 */
#ifndef LH_TARGET_H
#define LH_TARGET_H

#include <sys/types.h>

#include "err.h"

typedef struct lh_target {
    pid_t pid;
    char comm[64];    /* /proc/PID/comm */
    char exe[4096];   /* /proc/PID/exe */
    char libc[4096];  /* path of its libc.so.6 */
    unsigned long libc_base; /* start of the libc mapping at file offset 0 */
} lh_target_t;

/* Reads what pid is and checks that it may be stopped and have its allocator followed:
 * returns 0, or a negative LH_E* code with one line in err naming the reason (no such
 * process, zombie, another user's, already traced, seccomp, ptrace_scope, static binary,
 * another allocator such as jemalloc, already recorded by leakhound). what names the
 * command for the messages ("attach", "snapshot -p"). */
int lh_target_check(pid_t pid, const char *what, lh_target_t *t, lh_err_t *err);

/* Nonzero while pid exists and is not a zombie. */
int lh_target_alive(pid_t pid);

#endif /* LH_TARGET_H */
