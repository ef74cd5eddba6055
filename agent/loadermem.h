/* leakhound - SPDX-License-Identifier: MIT
 *
 * loadermem.h: the memory the dynamic loader allocated for itself before malloc existed, a
 * root of snapshots, as Valgrind has it (all memory that is no heap block is a root there).
 *
 * ld.so allocates with its own minimal allocator until libc is relocated: the link_maps of
 * the program and of every library loaded at startup (the agent's own dependencies
 * included), their names and scope arrays, the main thread's static TLS. It maps that
 * memory anonymously, so a snapshot sees heap-like memory with no block in it, whose words
 * belonged to nothing: the first library dlopen'd later hangs from the last startup
 * link_map's l_next, and its link_map and everything the loader malloc'd for it looked
 * lost ("possibly lost" through the interior pointers of _dl_find_object's tables, or
 * definitely lost). The ranges are taken once, at the agent's start, before anything else
 * can be mapped next to them: the anonymous mappings that hold a link_map of the loader's
 * list then. Memory there that a heap block occupies stays that block's.
 */
#ifndef LH_LOADERMEM_H
#define LH_LOADERMEM_H

#include <stdint.h>

/* At the agent's start (single-threaded; dlsym, dladdr: not AS-safe). */
void lh_loadermem_init(void);

/* The i-th range (0: lo and hi set, 1 returned; past the last: 0). AS-safe. */
int lh_loadermem_range(int i, uintptr_t *lo, uintptr_t *hi);

/* The loader's path (the module holding _r_debug), the name of those ranges. AS-safe. */
const char *lh_loadermem_name(void);

#endif /* LH_LOADERMEM_H */
