/* leakhound - SPDX-License-Identifier: MIT
 *
 * mallocwalk.h: glibc malloc's live blocks in a copy of a process's memory (memcopy.h),
 * found by walking its own data structures, the way glibc's mallinfo does, with every
 * offset taken from glibc's debug info (lh_glibc_layout_load, from libc6-dbg by build id).
 *
 * The walk: every arena (main_arena, then `next` until back to it); the main arena's heap
 * from mp_.sbrk_base to its top chunk; each other arena's heaps (heap_info, through
 * `prev`), found from its top chunk's mapping and checked (heap_info.ar_ptr is the arena);
 * chunk by chunk, a chunk is in use when the next one's PREV_INUSE bit is set, minus the
 * chunks that sit in a fastbin or a thread's tcache (they keep that bit set); and the
 * mmapped chunks, which glibc links nowhere: found at page starts of the anonymous
 * mappings (a header with IS_MMAPPED, page-multiple size) and checked against mp_.n_mmaps
 * and mp_.mmapped_mem. Pointers in fastbins and tcache are demangled (safe-linking, glibc
 * 2.32 and later). Anything inconsistent (a chunk size that overruns its heap, a free
 * list pointer outside the heap, a loop) stops the walk with a message: no block is made
 * up. A block's size is its usable size (malloc_usable_size): the chunk size minus its
 * header. Not thread-safe.
 */
#ifndef LH_CLI_MALLOCWALK_H
#define LH_CLI_MALLOCWALK_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "memcopy.h"

/* Everything the walk needs to know about one libc build, from its debug info. */
typedef struct lh_glibc_layout {
    int major, minor;              /* __libc_version */
    int safe_linking;              /* 2.32+: tcache and fastbin links are mangled */
    uint64_t libc_bias;            /* where the libc is loaded in the process */
    uint64_t main_arena, mp;       /* runtime addresses */
    int has_tcache;
    uint64_t tcache_tls;           /* offset of `tcache` in libc's TLS block */
    uint64_t libc_tls_offset;      /* link_map.l_tls_offset of libc (TP - block) */
    /* malloc_state */
    uint64_t ms_size, ms_mutex, ms_fastbins, ms_n_fastbins, ms_top, ms_next, ms_system_mem;
    /* malloc_chunk */
    uint64_t ch_size, ch_fd, min_size, size_sz;
    /* heap_info */
    uint64_t hi_size_of, hi_ar_ptr, hi_prev, hi_size;
    /* malloc_par */
    uint64_t mp_sbrk_base, mp_n_mmaps, mp_mmapped_mem;
    /* tcache_perthread_struct, tcache_entry */
    uint64_t tc_counts, tc_count_size, tc_entries, tc_n_bins, te_next;
    /* struct pthread size and the static TLS size (TLS roots) */
    uint64_t pthread_size, tls_static_size;
    /* the code of malloc.c (runtime [lo, hi) ranges): a thread stopped there may be
     * half-way through changing the heap, even without a lock (a single-threaded process
     * takes none) */
    uint64_t malloc_code[64][2];
    size_t n_malloc_code;
} lh_glibc_layout_t;

/* Reads the layout of the libc at libc_path (loaded at bias; ldso_path/ldso_bias: the
 * dynamic loader, for libc's TLS offset and the static TLS size), reading the process's
 * constant data live. Returns 0, or a negative LH_E* with one line: LH_ENOENT when the
 * debug info is not installed ("install libc6-dbg"), LH_EFORMAT when it lacks a symbol or
 * a struct member the walk needs, LH_EINVAL for a glibc version the walk does not know. */
int lh_glibc_layout_load(pid_t pid, const char *libc_path, uint64_t libc_bias,
                         const char *ldso_path, uint64_t ldso_bias, lh_glibc_layout_t *l,
                         lh_err_t *err);

typedef struct lh_mblock {
    uint64_t addr;  /* the pointer malloc returned */
    uint64_t size;  /* usable size */
} lh_mblock_t;

typedef struct lh_mwalk {
    lh_mblock_t *blocks; /* sorted by address */
    size_t n;
    uint64_t bytes;                 /* sum of usable sizes */
    uint64_t chunk_bytes;           /* sum of chunk sizes (what mallinfo2's uordblks counts,
                                       less the tcache chunks, which it counts in use) */
    unsigned arenas, heaps;
    uint64_t n_mmapped, mmapped_bytes;
    uint64_t n_tcache, tcache_bytes, system_mem;
    char warning[512];              /* a non-fatal mismatch (mmapped chunks), or "" */
} lh_mwalk_t;

/* Nonzero when pc is in glibc's malloc code. */
int lh_mwalk_in_malloc(const lh_glibc_layout_t *l, uint64_t pc);

/* The arena whose mutex is held, or 0: a thread was inside malloc when the process was
 * stopped, so the structures may be half-changed; the caller lets it run and retries. */
uint64_t lh_mwalk_locked_arena(const lh_glibc_layout_t *l, const lh_memcopy_t *m);

/* Walks the copy. tps: the threads' thread pointers (fs_base), for their tcaches.
 * Returns 0, or LH_EFORMAT with one line saying what was inconsistent where, LH_ENOMEM. */
int lh_mwalk(const lh_glibc_layout_t *l, const lh_memcopy_t *m, const uint64_t *tps,
             size_t n_tps, lh_mwalk_t *w, lh_err_t *err);
void lh_mwalk_fini(lh_mwalk_t *w);

#endif /* LH_CLI_MALLOCWALK_H */
