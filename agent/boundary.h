/* leakhound - SPDX-License-Identifier: MIT
 *
 * boundary.h: where the exiting thread's live stack begins, for the exit snapshot.
 *
 * The exit snapshot is taken from an exit handler, many frames below the program's last
 * live one; those frames reuse stack the program's returned functions (main itself, when
 * it returns) left pointers in. As LeakSanitizer does at its exit entry, the agent notes
 * the program's stack pointer where it called exit (exit is interposed: a few instructions
 * of assembly push the callee-saved registers there) or where main returned
 * (__libc_start_main is interposed to call main through a small wrapper, whose return
 * calls exit): the capturing thread is scanned from there up (issue 11).
 */
#ifndef LH_BOUNDARY_H
#define LH_BOUNDARY_H

#include <stdint.h>

/* The stack pointer noted at the calling thread's exit entry, or 0 (another thread exits,
 * or the program left through a path the agent does not see: the agent's own frame is
 * the boundary then). AS-safe. */
uintptr_t lh_boundary_exit_sp(void);

#endif /* LH_BOUNDARY_H */
