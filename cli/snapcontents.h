/* leakhound - SPDX-License-Identifier: MIT
 *
 * snapcontents.h: the contents file (.lhs, docs/FORMAT.md) of a snapshot taken from
 * outside (`snapshot -p`), from the copy of the process's memory (memcopy.h) and its
 * threads' registers (ptstop.h).
 *
 * Regions, as the agent draws them: a module's writable data and the anonymous mapping
 * right after it (its bss) are data roots named by the module; each thread's stack from
 * its stack pointer (less the 128-byte red zone, which the ABI lets a function use) to the
 * top of its mapping is a stack root "[stack:TID]" (for threads other than the first this
 * takes in glibc's struct pthread and static TLS, which live at the top of the stack
 * mapping); the first thread's static TLS block and struct pthread, elsewhere, are a TLS
 * root "[tls:TID]" (its size from the loader: _dl_tls_static_size); every other anonymous
 * writable mapping, [heap] included, is heap. The stack below a stack pointer is dead and
 * not written. Registers: the stack pointer bounds the stack root and the thread pointer
 * (fs_base) locates the TLS; the other registers' values are not roots (a region needs an
 * address in the process), so a pointer held only in a register is missed.
 *
 * Modes: pointers (the words that point into heap or module memory, plus the WORDS
 * records), full (every page of the regions), none (no file). Not thread-safe.
 */
#ifndef LH_CLI_SNAPCONTENTS_H
#define LH_CLI_SNAPCONTENTS_H

#include <stdint.h>

#include "err.h"
#include "mallocwalk.h"
#include "memcopy.h"
#include "ptstop.h"

typedef struct lh_snapc_info {
    uint64_t pid, number, ts_ns;
    const char *label;
    int mode; /* LH_CONTENTS_POINTERS or LH_CONTENTS_FULL */
} lh_snapc_info_t;

typedef struct lh_snapc_stats {
    uint64_t regions, words, ptrs, bytes;
} lh_snapc_stats_t;

/* Writes the contents file at path (created new, 0600). Returns 0 or a negative LH_E*. */
int lh_snapc_write(const char *path, const lh_snapc_info_t *info, const lh_memcopy_t *m,
                   const lh_ptstop_t *threads, const lh_glibc_layout_t *l,
                   lh_snapc_stats_t *st, lh_err_t *err);

#endif /* LH_CLI_SNAPCONTENTS_H */
