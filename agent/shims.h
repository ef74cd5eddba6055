/* leakhound - SPDX-License-Identifier: MIT
 *
 * shims.h: the LD_PRELOAD front-end's interposed functions (shims.c).
 */
#ifndef LH_SHIMS_H
#define LH_SHIMS_H

#include "stopsig.h"

/* Resolves the real functions with dlsym(RTLD_NEXT), once: moves the state from
 * LH_ST_UNINIT to LH_ST_RESOLVED, or to LH_ST_STOPPED when malloc/free/calloc/realloc are
 * missing (said in one line). Allocations dlsym makes meanwhile come from the bootstrap
 * arena. Not AS-safe. */
void lh_shims_resolve(void);

/* In sampling mode (after lh_recorder_init set lh_recorder_sampling), points malloc and
 * free at sampling's fast paths. Once, in the constructor. */
void lh_shims_sampling(void);

/* The C library's sigaction (NULL before lh_shims_resolve found it). */
lh_sigaction_fn lh_shims_real_sigaction(void);

#endif /* LH_SHIMS_H */
