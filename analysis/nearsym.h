/* leakhound - SPDX-License-Identifier: MIT
 *
 * nearsym.h: the function symbol nearest below an address, for code no symbol covers: a
 * static function of a stripped module (a C extension from Debian, numpy's .so), which
 * has only its dynamic symbol table (.dynsym: the exported functions). libdw answers such
 * an address with nothing (no sized symbol contains it); the nearest exported function
 * below it is a landmark a user can find in the library's source, beside the start of
 * the function found in the call frame information (symbolize.c).
 *
 * The start of the function holding an address comes from .eh_frame_hdr's search table
 * (one entry per FDE, sorted by the first address it covers; every function compiled with
 * unwind tables, the default on x86-64, has one): the entry at or below the address.
 *
 * Built once per module on the first address that needs it: one sorted copy of the
 * module's defined function symbols (16 bytes each; names stay libdw's) and of the FDEs'
 * start addresses (8 bytes each). Not thread-safe.
 */
#ifndef LH_NEARSYM_H
#define LH_NEARSYM_H

#include <elfutils/libdwfl.h>
#include <gelf.h>

typedef struct lh_nearsym lh_nearsym_t;

/* The index of mod's function symbols and FDEs; NULL when out of memory or it has
 * neither. */
lh_nearsym_t *lh_nearsym_new(Dwfl_Module *mod);
void lh_nearsym_free(lh_nearsym_t *ix);

/* The name of the function symbol with the greatest address <= addr (addresses as libdw
 * gives them: the module's, bias included), its address in *start; NULL when none is
 * below addr or ix is NULL. */
const char *lh_nearsym_below(const lh_nearsym_t *ix, GElf_Addr addr, GElf_Addr *start);

/* The first address of the FDE (the function) at or below addr, in *start: 0, or -1 when
 * the module has no search table (or ix is NULL) or none is below addr. The caller checks
 * that addr is covered by some FDE at all (libdw's dwarf_cfi_addrframe). */
int lh_nearsym_func_start(const lh_nearsym_t *ix, GElf_Addr addr, GElf_Addr *start);

#endif /* LH_NEARSYM_H */
