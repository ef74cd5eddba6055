/* leakhound - SPDX-License-Identifier: MIT
 *
 * pprof.h: the trace as a pprof profile (profile.proto, gzip-compressed), for `go tool
 * pprof`, Speedscope, Pyroscope and the like. Written by hand: a small protobuf writer
 * and zlib's gzip.
 *
 * Sample types, in this order (the last is pprof's default): alloc_objects/count,
 * alloc_space/bytes (over the whole run), inuse_objects/count, inuse_space/bytes (live at
 * exit, or at the boundary the caller chose). Samples, locations, functions and mappings
 * are analysis/profile.h's, computed there (symbolized, suppressions applied); mappings
 * are marked as symbolized so pprof does not try again.
 */
#ifndef LH_VIEW_PPROF_H
#define LH_VIEW_PPROF_H

#include "collect.h"
#include "err.h"
#include "suppress.h"

typedef struct lh_pprof_opts {
    /* In use per stack (lh_collect_n_stacks() entries each), or NULL: live at exit. */
    const uint64_t *inuse_bytes;
    const uint64_t *inuse_blocks;
    const char *inuse_label;  /* for the comment, or NULL */
    const lh_supp_t *supp;
} lh_pprof_opts_t;

/* Writes the gzip-compressed profile to path (replaced). Returns 0, LH_EIO, LH_ENOMEM. */
int lh_view_pprof(const char *path, lh_collect_t *c, const lh_pprof_opts_t *opts,
                  lh_err_t *err);

#endif /* LH_VIEW_PPROF_H */
