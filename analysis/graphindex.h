/* leakhound - SPDX-License-Identifier: MIT
 *
 * graphindex.h: the snapshot index (issue 14.4): what `leakhound shell` computes on its
 * first load of a snapshot (the live set, the reference graph with its classification,
 * dominators and retained sizes, the roots, the kept pointer words, the symbolized sites
 * of the live blocks, the decoded perl/python object heap), written to a file beside the
 * trace so that later shells (each a new process) load it instead of replaying the trace,
 * reading the contents file and rebuilding the graph. docs/FORMAT.md, "Snapshot index
 * files", gives the layout.
 *
 * Two files per trace T: T.lhx, the catalog (the trace's snapshot list, to resolve a
 * selector without reading the trace), and T.N.lhx, the index of snapshot N (1-based).
 * When T's directory is not writable, they go in the user's cache directory instead
 * (symcache.h's, so not with --no-symbol-cache) as index/H.lhx and index/H.N.lhx, H a
 * hash of T's real path.
 * Both are written 0600 through a temporary file created with O_EXCL|O_NOFOLLOW and
 * renamed into place, and carry a key: the trace's (and the snapshot's contents file's)
 * size, mtime, inode and a hash of its first 4 KiB, the heuristics, --salvage, --native
 * and the leakhound version. A file whose key differs (stale), whose checksum or any
 * count, offset or node index is wrong (corrupt), or that is not a regular file owned by
 * the user is ignored: the caller rebuilds from the trace and rewrites it. Nothing read
 * from an index is trusted before it is checked, so a damaged index never crashes the
 * reader.
 *
 * A heapgraph loaded from an index has no trace, symbolizer or data symbols (trace, sym
 * and ds are NULL): its sites are those the index holds (every live block's and object's
 * stack). lh_gindex_attach() opens the trace for what needs more (data symbols of pointer
 * words, sites of other snapshots): reading it, not replaying it. Not thread-safe.
 */
#ifndef LH_GRAPHINDEX_H
#define LH_GRAPHINDEX_H

#include <stdint.h>

#include "err.h"
#include "heapgraph.h"
#include "objheap.h"

#define LH_GINDEX_VERSION 4

/* The parts of the trace's INFO the shell shows (a loaded heapgraph has no trace). */
typedef struct lh_gindex_info {
    uint64_t attach_how;
    int has_clock;
    uint64_t mono_start_ns;
} lh_gindex_info_t;

/* What makes an index valid for the caller besides the files it was built from. */
typedef struct lh_gindex_opts {
    unsigned heuristics; /* lh_heapgraph_opts_t.heuristics as given */
    int salvage;
    int native;          /* lh_sym_get_native() */
} lh_gindex_opts_t;

/* The catalog of trace_path: its snapshot list, if a valid catalog is there. Returns 1
 * (*snaps, *n set; release with lh_gindex_snaps_free), 0 when there is none or it is stale
 * or corrupt. */
int lh_gindex_read_catalog(const char *trace_path, const lh_gindex_opts_t *o,
                           lh_snapinfo_t **snaps, size_t *n);
void lh_gindex_snaps_free(lh_snapinfo_t *snaps, size_t n);

/* The snapshot a shell opens by default: the last exit snapshot, else the last one (the
 * rule of lh_heapgraph_open). */
long lh_gindex_default_snapshot(const lh_snapinfo_t *snaps, size_t n);

/* Loads the index of snapshot index idx (0-based) of trace_path. Returns 1 with *hg (no
 * trace: see above), *oh (NULL when the shell had none), *note (the note the object
 * decoder left, "" if none: caller frees) and *info set; 0 when there is no valid index.
 * LH_ENOMEM is returned as 0 too (the caller rebuilds). */
int lh_gindex_load(const char *trace_path, const lh_gindex_opts_t *o, long idx,
                   lh_heapgraph_t **hg, lh_objheap_t **oh, char **note, lh_gindex_info_t *info);

/* Writes the index of hg's snapshot (with oh, may be NULL, and note, may be NULL) and the
 * catalog. Symbolizes the sites of every live block and object first (they go in the
 * index). Returns 0, or LH_EIO/LH_ENOMEM with a message (no file is left half written). */
int lh_gindex_write(lh_heapgraph_t *hg, const lh_objheap_t *oh, const char *note,
                    const lh_gindex_opts_t *o, lh_err_t *err);

/* For a heapgraph loaded from an index: opens its trace (read, not replayed) and creates
 * its symbolizer and data symbols. No-op when it has them. Returns 0 or LH_E*. */
int lh_gindex_attach(lh_heapgraph_t *hg, int salvage, lh_err_t *err);

/* The trace INFO fields of an opened heapgraph. */
void lh_gindex_info_of(const lh_heapgraph_t *hg, lh_gindex_info_t *info);

#endif /* LH_GRAPHINDEX_H */
