/* leakhound - SPDX-License-Identifier: MIT
 *
 * dwscopes.h: the functions (real and inlined) containing an address, from an index built
 * once per DWARF compile unit.
 *
 * Why: libdw's dwarf_getscopes() and dwarf_getscopes_die() walk the compile unit's DIE tree
 * from its root on every call. In a large CU (CPython's ceval.c, sqlite3.c) that is tens of
 * thousands of DIEs per address, and symbolizing a Python trace spent most of its time
 * there. The index walks each CU once, keeps every DW_TAG_subprogram,
 * DW_TAG_inlined_subroutine and DW_TAG_entry_point that has code (its pc ranges, its DIE
 * offset, the nearest such DIE enclosing it), and answers with a binary search.
 *
 * Lookup. Ranges are sorted by start (an enclosing range before the ranges it encloses);
 * each knows the nearest earlier range that encloses it. For pc, the last range starting at
 * or before pc is either the innermost one containing pc or nested inside it, so walking
 * its enclosing ranges up to the first that contains pc finds the innermost. This holds
 * when ranges nest, as DWARF requires of a DIE's children; a CU whose ranges overlap
 * without nesting is not indexed (lh_dwscopes_at returns LH_DWSCOPES_NOINDEX, and the
 * caller uses libdw's walk), so an answer from the index is the answer the walk gives.
 *
 * Memory: 24 bytes per range and 16 per function DIE with code, for the CUs that were asked
 * about. Not thread-safe.
 */
#ifndef LH_DWSCOPES_H
#define LH_DWSCOPES_H

#include <elfutils/libdw.h>

typedef struct lh_dwscopes lh_dwscopes_t;

#define LH_DWSCOPES_NOINDEX (-2)

/* NULL when out of memory. */
lh_dwscopes_t *lh_dwscopes_new(void);
void lh_dwscopes_free(lh_dwscopes_t *ix);

/* The function DIEs containing pc (a DWARF address, bias removed) in the CU cudie, innermost
 * first, each followed by the one it is inlined into, ending with the first one that is not
 * an inlined subroutine (or the outermost found). *out is malloc'd (caller frees) and holds
 * the return value's count of DIEs. Returns 0 when no function of the CU contains pc, -1
 * when out of memory, LH_DWSCOPES_NOINDEX when this CU cannot be indexed (see above). */
int lh_dwscopes_at(lh_dwscopes_t *ix, Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Die **out);

#endif
