/* leakhound - SPDX-License-Identifier: MIT
 *
 * addrsym.h: dwfl_module_addrinfo's answer (the symbol "closest" to an address) from a
 * compact copy of the module's symbol table.
 *
 * Why: elfutils 0.188 answers each dwfl_module_addrinfo call by reading every entry of the
 * symbol table through libelf (gelf_getsym, the section header, the SHN_XINDEX table): on
 * Debian's python3 with libc6-dbg about 33,000 symbols and 7.7 million instructions a call,
 * a quarter of a report's time (datasym.h names the heap's data pointers with it). The
 * copy is made once per module (32 bytes per symbol that can ever be chosen) and the same
 * selection is run over it: the same order (globals, then locals when no global fits), the
 * same preferences (closest start, then binding, then the smaller size), the same rule
 * for symbols without a size (only in the address's section, only above every sized symbol
 * below it). So the answer is libdw's, name pointer included (test_addrsym compares them
 * address by address). Modules that are not ET_EXEC/ET_DYN, or whose symbols' values need
 * resolving (function descriptors), are answered by libdw itself. Not thread-safe.
 */
#ifndef LH_ADDRSYM_H
#define LH_ADDRSYM_H

#include <elfutils/libdwfl.h>
#include <gelf.h>

typedef struct lh_addrsym lh_addrsym_t;

/* The index of mod, built now; NULL when out of memory or the symbol table cannot be
 * read (lh_addrsym_info then asks libdw). */
lh_addrsym_t *lh_addrsym_new(Dwfl_Module *mod);
void lh_addrsym_free(lh_addrsym_t *ix);

/* dwfl_module_addrinfo(mod, addr, off, sym, NULL, NULL, NULL); ix may be NULL. */
const char *lh_addrsym_info(lh_addrsym_t *ix, Dwfl_Module *mod, GElf_Addr addr, GElf_Off *off,
                            GElf_Sym *sym);

/* The same, with the index *ix built on the first call (*built says it was tried: a
 * module whose index cannot be built is not tried again). */
const char *lh_addrsym_lazy(lh_addrsym_t **ix, int *built, Dwfl_Module *mod, GElf_Addr addr,
                            GElf_Off *off, GElf_Sym *sym);

#endif /* LH_ADDRSYM_H */
