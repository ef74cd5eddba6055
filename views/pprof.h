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

#include "err.h"
#include "profile.h"

/* Writes profile d (built by lh_profile_build, which this adds the comment's strings to) of
 * trace to path (replaced) as a gzip-compressed profile; inuse_label names the boundary the
 * in-use figures are at, NULL: at exit. Returns 0, LH_EIO, LH_ENOMEM. */
int lh_view_pprof(const char *path, lh_profile_t *d, const char *trace, const char *inuse_label,
                  lh_err_t *err);

#endif /* LH_VIEW_PPROF_H */
