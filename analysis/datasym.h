/* leakhound - SPDX-License-Identifier: MIT
 *
 * datasym.h: data addresses to symbols, for the roots and types of a heap snapshot: which
 * global variable a word of a module's data/bss belongs to (with its DWARF declaration file
 * when the module has debug info), and which C++ class a vtable pointer names.
 *
 * Uses its own libdwfl sessions over a trace's module table (opened on first use, one per
 * module record), so it is independent of the code symbolizer (symbolize.h). Symbol names
 * are demangled. A vtable pointer points 16 bytes into the `_ZTV<class>` object (past the
 * offset-to-top and typeinfo slots, more with virtual bases); any address inside the
 * symbol counts. Results and strings are owned by the lh_datasym_t. Not thread-safe.
 */
#ifndef LH_DATASYM_H
#define LH_DATASYM_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "modules.h"

typedef struct lh_datasym lh_datasym_t;

typedef struct lh_dsym {
    const char *name;   /* demangled symbol name, NULL when no symbol covers the address */
    const char *file;   /* the variable's declaration file (DWARF), NULL when unknown */
    uint64_t start;     /* runtime address of the symbol (valid when name is set) */
    uint64_t size;      /* its size (0: unknown) */
    const char *module; /* the module's path ("" for an unnamed main program) */
} lh_dsym_t;

/* mods must outlive the result. exe_path names modules recorded with an empty path. */
int lh_datasym_new(const lh_modules_t *mods, const char *exe_path, lh_datasym_t **out,
                   lh_err_t *err);
void lh_datasym_free(lh_datasym_t *ds);

/* The symbol containing addr among the modules valid at epoch. Returns 1 (out->name set),
 * 0 when addr is in a module but in no symbol (out->module set), -1 when in no module. */
int lh_datasym_lookup(lh_datasym_t *ds, uint64_t addr, uint64_t epoch, lh_dsym_t *out);

/* The C++ class whose vtable contains value ("Foo" for _ZTV3Foo), or NULL. Cached. */
const char *lh_datasym_vtable_class(lh_datasym_t *ds, uint64_t value, uint64_t epoch);

/* The run-time address of the defined symbol names[k] (.symtab, else .dynsym) in the first
 * module valid at epoch whose file name starts with module_prefix ("" : any module, in
 * table order: the executable first), for the first k of the n_names (at most
 * LH_DATASYM_MAX_NAMES) that any module defines. One pass over a module's symbol table,
 * whatever n_names, and none when the symbol cache has the module's answers for these
 * names (a report of a program that is not perl then reads no table to say so). Returns
 * that k (*addr set), or -1 when none is found. */
#define LH_DATASYM_MAX_NAMES 32
int lh_datasym_find(lh_datasym_t *ds, const char *module_prefix, const char *const *names,
                    int n_names, uint64_t epoch, uint64_t *addr);

#endif /* LH_DATASYM_H */
