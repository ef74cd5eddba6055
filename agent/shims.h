/* leakhound - SPDX-License-Identifier: MIT
 *
 * shims.h: the LD_PRELOAD front-end's interposed functions (shims.c).
 */
#ifndef LH_SHIMS_H
#define LH_SHIMS_H

#include <stdint.h>

#include "stopsig.h"

/* Resolves the real functions with dlsym(RTLD_NEXT), once: moves the state from
 * LH_ST_UNINIT to LH_ST_RESOLVED, or to LH_ST_STOPPED when malloc/free/calloc/realloc are
 * missing (said in one line). Allocations dlsym makes meanwhile come from the bootstrap
 * arena. Not AS-safe. */
void lh_shims_resolve(void);

/* In sampling mode (after lh_recorder_init set lh_recorder_sampling), points malloc and
 * free at sampling's fast paths. Once, in the constructor. */
void lh_shims_sampling(void);

/* Whether addr is in the executable segment of the real malloc (the allocator's code).
 * Set by lh_shims_resolve. AS-safe. */
int lh_shims_in_allocator(uintptr_t addr);

/* Resolves the real C++ operators new and delete (shims_cxx.c); called by
 * lh_shims_resolve once it found the malloc family. Not AS-safe. */
void lh_shims_cxx_resolve(void);

/* The C library's sigaction (NULL before lh_shims_resolve found it). */
lh_sigaction_fn lh_shims_real_sigaction(void);

#endif /* LH_SHIMS_H */
