/* leakhound - SPDX-License-Identifier: MIT
 *
 * ownfd.h: the agent's long-lived file descriptors (the trace, the snapshot files reserved
 * before a privilege drop, userfaultfd and pagemap), which the program must not close.
 *
 * Daemons close every descriptor they did not open (dnsmasq walks /proc/self/fd and closes
 * each one): the agent's trace was closed at its start, and its number given to the
 * program's next socket, into which the agent then wrote its frames (dnsmasq's
 * NETLINK_ROUTE socket, as root). The close, close_range, closefrom and syscall shims
 * (shims.c; dup2 and dup3 refuse to replace those at 64 or above) leave the
 * descriptors listed here open and tell the program they closed them, as Valgrind does for
 * its own. libunwind's memory-validation pipe, made by the agent's first unwind, is one. The agent closes its own with lh_ownfd_close, which bypasses the shim.
 *
 * A fixed table, no allocation; every function is AS-safe and thread-safe.
 */
#ifndef LH_OWNFD_H
#define LH_OWNFD_H

#include <stdint.h>

/* Adds fd (>= 0) to the table; -1 when the table is full (then fd is not protected). */
int lh_ownfd_add(int fd); /* AS-safe */
/* Moves fd (>= 0) to a number programs do not pick themselves (the lowest free at or above
 * three quarters of the descriptor limit, at most 768; unmoved under a limit below 64) and
 * adds it to the table; returns its number now. A shell's `exec 3>file` and a daemon's
 * dup2 onto 3, 4, ... replace whatever is there without asking: the trace at 3 was
 * replaced so, and its frames went into the program's file. */
int lh_ownfd_keep(int fd); /* AS-safe */
/* Whether fd is in the table. */
int lh_ownfd_has(int fd); /* AS-safe */
/* Whether the program may put another file on descriptor fd (dup2, dup3): not on one the
 * agent moved up (lh_ownfd_keep: at 64 or above); on one below 64 (libunwind's pipe, found
 * open after its first unwind: a shell's `exec 4>file` must still work) it may, and the
 * entry stays (libunwind, finding its pipe broken, closes it: that close must not close
 * the program's file). */
int lh_ownfd_may_replace(int fd); /* AS-safe */
/* Removes fd from the table (no-op when absent) and closes it with the raw syscall. */
void lh_ownfd_close(int fd); /* AS-safe */
/* Removes fd from the table without closing it (it is handed on: a snapshot's file). */
void lh_ownfd_forget(int fd); /* AS-safe */
/* The table's entries in [lo, hi], in increasing order, into out (at most n); the count. */
int lh_ownfd_in_range(unsigned lo, unsigned hi, int *out, int n); /* AS-safe */

/* Which of the descriptors 0..63 are open (bit fd), by fcntl(F_GETFD). */
uint64_t lh_ownfd_open_mask(void); /* AS-safe */
/* Adds each descriptor whose bit is set in mask. */
void lh_ownfd_add_mask(uint64_t mask); /* AS-safe */

#endif /* LH_OWNFD_H */
