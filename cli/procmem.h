/* leakhound - SPDX-License-Identifier: MIT
 *
 * procmem.h: the memory of a running process and all its descendants, read from /proc
 * (the outside view `leakhound watch` samples; no agent involved). A module of the watch
 * command, not of analysis/: it reads the live system, never a trace. The figures it fills
 * are the watch view's sample (lh_watch_mem_t, views/watch.h).
 *
 * For each process of the tree: RSS from /proc/PID/statm (resident pages), PSS and
 * anonymous memory from /proc/PID/smaps_rollup when it is readable (it needs ptrace-read
 * access: same user, or root), else anonymous from the RssAnon line of /proc/PID/status.
 * The tree is found by reading the parent pid of every /proc/PID/stat (works on every
 * kernel, unlike /proc/PID/task/TID/children which needs CONFIG_PROC_CHILDREN).
 *
 * The sums over a tree count a page shared between two processes twice in RSS (once in
 * PSS, which splits it). Not thread-safe only in that it reads a changing /proc: a process
 * that exits while the tree is walked is skipped.
 */
#ifndef LH_PROCMEM_H
#define LH_PROCMEM_H

#include <stdint.h>
#include <sys/types.h>

#include "err.h"
#include "watch.h"

/* Samples the tree rooted at pid into *out, and the root's start time (field 22 of stat,
 * to notice a reused pid) into *start_ticks when not NULL. Returns 0; LH_ENOENT when the
 * root does not exist or has exited (a zombie, or state X), with "process PID has exited"
 * or "no process with pid PID" in err; LH_EIO when /proc cannot be read. */
int lh_procmem_tree(pid_t pid, lh_watch_mem_t *out, unsigned long long *start_ticks,
                   lh_err_t *err);

/* Reads a small /proc file whole into buf (NUL-terminated): the /proc reader of watch and
 * attach. Returns the length, or -1 with errno set. */
ssize_t lh_proc_read_small(const char *path, char *buf, size_t len);
/* The same for /proc/PID/NAME. */
ssize_t lh_proc_read_pid(pid_t pid, const char *name, char *buf, size_t len);

/* Reads the root's start time (clock ticks after boot) and state character from
 * /proc/PID/stat. Returns 0, or LH_ENOENT when there is no such process. */
int lh_procmem_stat(pid_t pid, unsigned long long *start_ticks, char *state, lh_err_t *err);

#endif /* LH_PROCMEM_H */
