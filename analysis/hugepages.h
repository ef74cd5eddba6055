/* leakhound - SPDX-License-Identifier: MIT
 *
 * hugepages.h: transparent huge pages under the reader's large arrays.
 *
 * The largest arrays of a report (the heap model's live set, the reorder window) are tens
 * of MiB written once and then reached at random: in 4 KiB pages a python3 report took 38k
 * page faults, a quarter of its time (perf: exc_page_fault and the memcg charge of each
 * page), and the live set's look-ups missed the TLB. Under MADV_HUGEPAGE one fault maps
 * 2 MiB. Where the kernel's THP setting is "madvise" (Debian's default) nothing else turns
 * them on; with "never" the hint changes nothing. A failed hint is ignored: huge pages are
 * never a condition of correctness, and the contents are the same either way.
 */
#ifndef LH_HUGEPAGES_H
#define LH_HUGEPAGES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

/* Arrays smaller than this stay in small pages: under two huge pages gain little. */
#define LH_HUGEPAGES_MIN ((size_t)4 << 20)

/* Marks the pages under p[0 .. bytes) (from malloc, calloc or realloc) for huge pages, from
 * the page p lies in; only whole 2 MiB stretches inside get them. Before the array is first
 * written this saves its faults; later, the TLB's misses. Inline: grow.h calls it, and every
 * program that grows an array would otherwise need this module. */
static inline void
lh_hugepages_hint(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    if (p && bytes >= LH_HUGEPAGES_MIN) {
        uintptr_t start = (uintptr_t)p & ~(uintptr_t)4095;
        (void)madvise((void *)start, (uintptr_t)p + bytes - start, MADV_HUGEPAGE);
    }
#else
    (void)p;
    (void)bytes;
#endif
}

/* A zeroed array of bytes: below LH_HUGEPAGES_MIN from calloc, above it mapped on a 2 MiB
 * boundary and marked, so that all of it can be huge pages. NULL without memory. Free it
 * with lh_hugepages_free and the same bytes. */
void *lh_hugepages_calloc(size_t bytes);
void lh_hugepages_free(void *p, size_t bytes);

#endif /* LH_HUGEPAGES_H */
