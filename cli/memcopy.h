/* leakhound - SPDX-License-Identifier: MIT
 *
 * memcopy.h: the maps of a process and a copy of its writable memory, taken while its
 * threads are held (ptstop.h) so that everything after the release works on a consistent
 * picture: the malloc walk (mallocwalk.h) and the pointer scan read the copy, not the
 * process.
 *
 * Copied: every readable and writable mapping except the kernel's ([vvar], [vdso],
 * [vsyscall]); of a private anonymous mapping only the pages /proc/PID/pagemap says are
 * resident or swapped out (the others were never written: zeros). Read with
 * process_vm_readv (one call per run of pages, page by page where that fails: a page that
 * cannot be read is zeros and counted). Reading does not write the
 * process and adds no memory to it (never-touched anonymous pages read as the shared zero
 * page). Not thread-safe.
 */
#ifndef LH_CLI_MEMCOPY_H
#define LH_CLI_MEMCOPY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"

typedef struct lh_mapping {
    uint64_t lo, hi, offset;
    char perms[5];
    char *path;        /* "" anonymous, "/usr/lib/...", "[heap]", "[stack]" */
    uint8_t *bytes;    /* the copy (writable mappings), or NULL */
    int in_pool;       /* bytes belong to the pool, else mmap'd here */
} lh_mapping_t;

/* Memory made resident before the process is stopped, for the copy: copying into pages
 * that fault in during the copy made the pause about 4 times longer (measured: 540 ms
 * instead of 144 ms for a 190 MiB heap). One buffer per writable mapping, of its size but
 * resident only where the mapping's pages are (the same rule as the copy). */
typedef struct lh_memcopy lh_memcopy_t;

typedef struct lh_prebuf {
    uint64_t lo, hi;
    uint8_t *bytes;
    int taken;
} lh_prebuf_t;

typedef struct lh_mempool {
    lh_prebuf_t *v;
    size_t n;
} lh_mempool_t;

/* Buffers for pre's writable mappings (read before the stop). *need gets the bytes the
 * copy will read (the resident and swapped pages of private anonymous mappings, the
 * others whole). Returns 0, -2 (need > limit: nothing allocated) or -1 (no memory: the
 * copy allocates its own). */
int lh_mempool_init(lh_mempool_t *p, const lh_memcopy_t *pre, uint64_t limit, uint64_t *need);
void lh_mempool_fini(lh_mempool_t *p);

typedef struct lh_memcopy {
    pid_t pid;
    lh_mempool_t *pool; /* where copies go first (may be NULL); not owned */
    lh_mapping_t *maps; /* sorted by address, as in /proc/PID/maps */
    size_t n;
    uint64_t bytes_copied;
} lh_memcopy_t;

/* Reads /proc/PID/maps into m (no memory copied yet). Returns 0 or LH_EIO/LH_ENOMEM. */
int lh_memcopy_maps(lh_memcopy_t *m, pid_t pid, lh_err_t *err);

/* Copies the writable mappings (the process must be held) into pool (may be NULL), then
 * malloc'd memory. Returns 0 or LH_ENOMEM. */
int lh_memcopy_copy(lh_memcopy_t *m, lh_mempool_t *pool, lh_err_t *err);

void lh_memcopy_fini(lh_memcopy_t *m);

/* The mapping containing addr, or NULL. */
const lh_mapping_t *lh_memcopy_find(const lh_memcopy_t *m, uint64_t addr);

/* Reads len bytes at addr from the copy. Returns 0, or -1 when a byte is outside every
 * copied mapping. */
int lh_memcopy_read(const lh_memcopy_t *m, uint64_t addr, void *buf, size_t len);

/* One word; *ok (may be NULL) is cleared when it is not in the copy (0 is returned). */
uint64_t lh_memcopy_word(const lh_memcopy_t *m, uint64_t addr, int *ok);

/* Reads len bytes of the live process (no copy needed: constant data). Returns 0 or -1. */
int lh_memcopy_read_live(pid_t pid, uint64_t addr, void *buf, size_t len);

#endif /* LH_CLI_MEMCOPY_H */
