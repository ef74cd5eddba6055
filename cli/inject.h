/* leakhound - SPDX-License-Identifier: MIT
 *
 * inject.h: calling functions inside a running process through gdb in batch mode
 * (inject.c), for `leakhound attach`. gdb stops the process (every thread) from its
 * attach to its detach; each call runs on one thread of the process that is blocked in a
 * system call and has no frame in a leakhound library (so it holds no malloc or agent
 * lock), with the other threads resumed for the duration of the call; a signal during a
 * call unwinds it (set unwindonsignal). Strings are written into buffers from the
 * process's own malloc, freed before gdb detaches.
 */
#ifndef LH_INJECT_H
#define LH_INJECT_H

#include <stdint.h>
#include <sys/types.h>

#include "err.h"

/* Loads lib into pid (dlopen RTLD_NOW, once: a loaded library is found again) and calls
 * lh_attach_start(vars) there; with start == 0, calls lh_attach_stop() of the loaded lib
 * instead. *rc gets the function's return value; *pause_ns how long the process was held
 * by gdb (first to last time it was seen in a tracing stop, sampled every 5 ms, + 5 ms). Returns 0, or a negative LH_E*
 * code with one line in err (gdb missing, ptrace refused, no thread fit to call on, the
 * library could not be loaded: dlerror's text). */
int lh_inject_call(pid_t pid, const char *lib, int start, const char *vars, int *rc,
                   uint64_t *pause_ns, lh_err_t *err);

#endif /* LH_INJECT_H */
