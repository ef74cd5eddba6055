/* leakhound - SPDX-License-Identifier: MIT
 *
 * threadsp.h: the stack pointers of the program's sleeping threads at the moment a
 * snapshot's child is cloned, read from outside them without stopping them, so that the
 * child scans another thread's stack from its stack pointer up, as Valgrind and
 * LeakSanitizer do, and not the dead part below it.
 *
 * Why: below a thread's stack pointer lie the frames of the calls it has returned from
 * (the agent's own hooks among them, which hold the address of every block the thread
 * allocated). A pool thread blocked in epoll_wait or a condition variable would otherwise
 * keep "reachable" the blocks of requests it finished long ago, where the other tools say
 * definitely lost.
 *
 * How: /proc/self/task/TID/syscall gives the user stack pointer of a thread that is not
 * running (the kernel checks that it did not run while it read it; "running" otherwise),
 * and a thread of the same process may read it whatever ptrace restrictions apply.
 * Read once before the clone and once after: a thread whose stack pointer, program counter
 * and context-switch counts (/proc/self/task/TID/status) are the same both times did not
 * run in between, so at the clone its stack pointer was that one. Any other thread (it
 * ran, or a file could not be read) keeps its whole stack scanned, as before.
 * Its registers are still not read (docs/FORMAT.md, "Roots").
 */
#ifndef LH_THREADSP_H
#define LH_THREADSP_H

#include <stdint.h>

/* One thread's state, as read from /proc. */
typedef struct lh_threadsp {
    uint32_t tid;
    uintptr_t sp, pc;
    uint64_t switches; /* voluntary + involuntary context switches */
} lh_threadsp_t;

/* Reads thread tid of this process: 1 and *out when it is not running and both files
 * parse, 0 otherwise. No malloc (open/read only); one caller at a time (a static buffer:
 * the snapshot lock). */
int lh_threadsp_read(uint32_t tid, lh_threadsp_t *out);

/* Whether a and b are the same state of the same thread: it did not run between them. */
int lh_threadsp_same(const lh_threadsp_t *a, const lh_threadsp_t *b);

/* In the parent, under the snapshot lock, right before the clone: reads every thread of
 * the process but self (the capturing thread) from /proc/self/task; returns how many are
 * not running (at most LH_THREADSP_MAX; the others keep whole stacks). */
int lh_threadsp_before(uint32_t self);

/* In the parent, right after the clone: reads those threads again and writes to fd the
 * ones that did not run in between (a count, then {tid, sp} pairs), for the child. */
void lh_threadsp_after(int fd);

/* In the child: reads what lh_threadsp_after wrote to fd (waits at most 2 s for it;
 * nothing on a timeout or a short read). Returns how many threads it has. */
int lh_threadsp_receive(int fd);

/* In the child, after lh_threadsp_receive: the stack pointer thread tid had at the clone,
 * 0 when not known (it was running, or is not a thread of the process). */
uintptr_t lh_threadsp_of(uint32_t tid);

#define LH_THREADSP_MAX 1024

/* The bytes below a stack pointer that a leaf function may still use (the x86-64 ABI's
 * red zone): scanned with the live stack, as Valgrind does. */
#if defined(__x86_64__)
#define LH_THREADSP_RED_ZONE 128
#else
#define LH_THREADSP_RED_ZONE 0
#endif

#endif /* LH_THREADSP_H */
