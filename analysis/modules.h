/* leakhound - SPDX-License-Identifier: MIT
 *
 * modules.h: the table of loaded modules (executable and shared libraries) of a traced
 * process, from its MODULE and MODULE_UNLOAD records, used to map return addresses back to
 * files for offline symbolization.
 *
 * Epochs: the agent bumps an epoch counter whenever the module map changes. A module is
 * valid for stacks with epoch e when it was loaded at an epoch <= e and not unloaded at an
 * epoch <= e (a MODULE_UNLOAD carries the new epoch after the unload), because the same
 * address range can be reused by another library later.
 */
#ifndef LH_MODULES_H
#define LH_MODULES_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define LH_EPOCH_NEVER UINT64_MAX

typedef struct lh_segment {
    uint64_t vaddr; /* p_vaddr in the file; runtime address = load_bias + vaddr */
    uint64_t memsz;
    uint32_t flags; /* PF_* */
} lh_segment_t;

typedef struct lh_module {
    char *path;            /* as recorded (NUL-terminated copy) */
    uint64_t load_bias;    /* runtime address of file vaddr 0 (dlpi_addr) */
    uint8_t *build_id;
    size_t build_id_len;
    lh_segment_t *segs;
    size_t n_segs;
    uint64_t epoch_loaded;
    uint64_t epoch_unloaded; /* LH_EPOCH_NEVER while loaded */
    uint64_t lo, hi;         /* every address its segments hold is in [lo, hi): a lookup
                                skips the module at two compares (set by lh_modules_add) */
} lh_module_t;

typedef struct lh_modules {
    lh_module_t *mods;
    size_t n;
    size_t cap;
} lh_modules_t;

/* A zeroed table is empty; lh_modules_fini frees one and leaves it so. */
void lh_modules_fini(lh_modules_t *t);

/* Appends a module; copies path (path_len bytes, need not be NUL-terminated), build id and
 * segments. Returns its index (>= 0) or LH_ENOMEM. */
int lh_modules_add(lh_modules_t *t, const char *path, size_t path_len, uint64_t load_bias,
                   const uint8_t *build_id, size_t build_id_len, const lh_segment_t *segs,
                   size_t n_segs, uint64_t epoch);

/* Marks the newest loaded module with this path and load bias as unloaded at epoch (an
 * empty path matches any module at that load bias: the agent may not know the name).
 * Returns 0, or LH_ENOENT when no such module is loaded (not fatal for callers). */
int lh_modules_unload(lh_modules_t *t, const char *path, size_t path_len, uint64_t load_bias,
                      uint64_t epoch);

/* The module valid at epoch whose segments contain addr, or -1. When several match (a
 * corrupt or racy map), the newest wins. */
long lh_modules_find(const lh_modules_t *t, uint64_t addr, uint64_t epoch);
/* The same, trying module hint first (a previous answer: neighbouring frames are mostly in
 * the same module; a linear search per frame was a tenth of a report's time). Modules
 * alive at one epoch do not overlap in a well-formed trace; in a corrupt one a hint that
 * holds addr may win over a newer module that also does. */
long lh_modules_find_near(const lh_modules_t *t, uint64_t addr, uint64_t epoch, long hint);

#endif /* LH_MODULES_H */
