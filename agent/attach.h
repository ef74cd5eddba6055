/* leakhound - SPDX-License-Identifier: MIT
 *
 * attach.h: the two entry points of libleakhound_attach.so (attach.c), the only names it
 * exports. `leakhound attach` (cli/cmd_attach.c) calls them in the target through gdb, on a
 * thread that is blocked in a system call and is not inside the agent.
 */
#ifndef LH_ATTACH_H
#define LH_ATTACH_H

/* Starts recording in this (running) process. vars: LEAKHOUND_* settings, one NAME=VALUE a
 * line (LEAKHOUND_OUTPUT must be an absolute path). Returns 0: recording; 1: already
 * attached; -1: could not start (said on the process's stderr); -2: libc's malloc family
 * not found. Not AS-safe; takes the loader's lock. */
int lh_attach_start(const char *vars);

/* Routes every patched relocation back to what it was, ends the trace (END: detached) and
 * closes it. Returns 0; 1 when not attached; -1 when the agent's thread did not stop within
 * 2 s (the trace is complete all the same). */
int lh_attach_stop(void);

#endif /* LH_ATTACH_H */
