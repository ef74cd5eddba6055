/* leakhound - SPDX-License-Identifier: MIT
 *
 * preloadable.h: why LD_PRELOAD cannot reach a program's malloc, read from its file
 * (preloadable.c), for `leakhound run` to say when no trace was written: a static binary,
 * a 32-bit one, a set-user-ID or set-group-ID one the loader runs in secure mode. Follows
 * a script's #! line (and `#!/usr/bin/env NAME`) to its interpreter. Reads files only.
 */
#ifndef LH_PRELOADABLE_H
#define LH_PRELOADABLE_H

#include <stddef.h>

/* When prog (a name looked up on PATH, or a path) cannot have the agent preloaded, writes
 * one sentence saying why into why (n bytes) and returns 1; otherwise returns 0 (also when
 * the file cannot be read: nothing is known). */
int lh_preload_obstacle(const char *prog, char *why, size_t n);

#endif /* LH_PRELOADABLE_H */
