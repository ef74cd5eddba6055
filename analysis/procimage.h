/* leakhound - SPDX-License-Identifier: MIT
 *
 * procimage.h: the memory of a traced process at one snapshot, for the language heap
 * decoders (pyheap.h): bytes come from the snapshot's pages (contents mode `full`, the
 * heap and the writable data of every module) and, for the read-only parts of a module
 * (the strings of .rodata: a static type's name), from the module's file on disk at the
 * same offset the loader mapped. Symbols are found by name in a module's .dynsym and
 * .symtab (the interpreter's _PyRuntime and its static types).
 *
 * Memory reads never trust the image: an address outside every page and every file-backed
 * segment, or crossing into one, fails instead of reading garbage. A module file that
 * changed since the run (another build id) is not used. Not thread-safe; read-only once
 * built.
 */
#ifndef LH_PROCIMAGE_H
#define LH_PROCIMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "modules.h"
#include "snapfile.h"

typedef struct lh_procimage lh_procimage_t;

/* sf: a contents file read with keep_pages (borrowed, must outlive the image); mods: the
 * trace's module table at epoch (borrowed); exe_path names a module recorded with an
 * empty path. Returns 0, LH_EINVAL when sf has no pages (not mode full), LH_ENOMEM. */
int lh_procimage_new(const lh_snapfile_t *sf, const lh_modules_t *mods, uint64_t epoch,
                     const char *exe_path, lh_procimage_t **out, lh_err_t *err);
void lh_procimage_free(lh_procimage_t *pi);

/* Copies len bytes at addr into buf. Returns 0, or -1 when any byte is unknown. */
int lh_procimage_read(lh_procimage_t *pi, uint64_t addr, void *buf, size_t len);
/* Reads one 8-byte word (0 on failure, with *ok = 0 when ok is given). */
uint64_t lh_procimage_word(lh_procimage_t *pi, uint64_t addr, int *ok);
/* A NUL-terminated string of at most cap - 1 bytes at addr into buf. Returns its length,
 * or -1 when unreadable or not terminated within cap. */
long lh_procimage_cstr(lh_procimage_t *pi, uint64_t addr, char *buf, size_t cap);

/* The runtime address of the symbol name in the first loaded module whose path's base
 * name starts with one of the prefixes in mod_prefixes (NULL-terminated; NULL: every
 * module), or 0. *mod_idx (may be NULL) gets the module's index. */
uint64_t lh_procimage_symbol(lh_procimage_t *pi, const char *const *mod_prefixes,
                             const char *name, long *mod_idx);
/* The same in one module. */
uint64_t lh_procimage_module_symbol(lh_procimage_t *pi, long mod_idx, const char *name);
/* The module's path ("" unknown). */
const char *lh_procimage_module_path(lh_procimage_t *pi, long mod_idx);

#endif /* LH_PROCIMAGE_H */
