/* leakhound - SPDX-License-Identifier: MIT
 *
 * profile.h: the data of a sampled-stacks profile (the shape of pprof's profile.proto),
 * computed from a collecting pass: what views/pprof.c encodes, and nothing it must work
 * out itself.
 *
 * One sample per stack that allocated or was live, with four values: alloc_objects,
 * alloc_space (over the whole run), inuse_objects, inuse_space (live at exit, or at the
 * boundary the caller chose). A stack the suppressions match is left out. One location
 * per return address, with one line per source frame: inlined frames first, the function
 * they were inlined into last. A script frame (a Perl sub or Python function at a line,
 * scriptstack.h) is a location of its own with no mapping and no address. The agent's own
 * frames are dropped. Mappings are the trace's modules (path, load address range, build
 * id), in the trace's order.
 *
 * All strings are interned in one table whose entry 0 is "" (as profile.proto wants);
 * ids below are indices into it. Ids of locations, functions and mappings are 1-based
 * positions in their arrays (0: none).
 */
#ifndef LH_PROFILE_H
#define LH_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "collect.h"
#include "err.h"
#include "suppress.h"

typedef struct lh_profile_mapping {
    uint64_t start, limit; /* load address range */
    size_t file;           /* string id: the module's path (the executable's for "") */
    size_t build_id;       /* string id: hex, "" when unknown */
} lh_profile_mapping_t;

typedef struct lh_profile_function {
    size_t name, file; /* string ids */
} lh_profile_function_t;

typedef struct lh_profile_line {
    uint64_t function; /* function id */
    uint64_t line;
} lh_profile_line_t;

typedef struct lh_profile_location {
    uint64_t mapping; /* mapping id, 0 for none (a script frame, an unmapped address) */
    uint64_t address; /* 0 for a script frame */
    size_t first_line, n_lines; /* into lh_profile_t.lines */
} lh_profile_location_t;

typedef struct lh_profile_sample {
    size_t first_loc, n_locs; /* location ids in lh_profile_t.sample_locs, innermost first */
    uint64_t values[4];       /* alloc_objects, alloc_space, inuse_objects, inuse_space */
} lh_profile_sample_t;

typedef struct lh_profile {
    char **strings;
    size_t n_strings;
    lh_profile_mapping_t *mappings;
    size_t n_mappings;
    lh_profile_function_t *functions;
    size_t n_functions;
    lh_profile_location_t *locations;
    size_t n_locations;
    lh_profile_line_t *lines;
    size_t n_lines;
    lh_profile_sample_t *samples;
    size_t n_samples;
    uint64_t *sample_locs;
    size_t n_sample_locs;
    uint64_t time_ns;     /* wall-clock start of the run */
    uint64_t duration_ns; /* from the first event to the last */
    void *priv;           /* the builder's hash tables */
} lh_profile_t;

typedef struct lh_profile_opts {
    /* In use per stack (lh_collect_n_stacks() entries each), or NULL: live at exit. */
    const uint64_t *inuse_bytes;
    const uint64_t *inuse_blocks;
    const lh_supp_t *supp; /* or NULL */
} lh_profile_opts_t;

/* Builds the profile of the collected trace (symbolizing through the collector's
 * symbolizer). Returns 0, or LH_ENOMEM (or a symbolizer's error) with *p emptied. */
int lh_profile_build(lh_profile_t *p, lh_collect_t *c, const lh_profile_opts_t *opts,
                     lh_err_t *err);

/* Interns s (NULL is "") and returns its string id, or -1 when out of memory: for a view
 * that adds its own strings (sample type names, a comment) to the same table. */
long lh_profile_string(lh_profile_t *p, const char *s);

void lh_profile_fini(lh_profile_t *p);

#endif /* LH_PROFILE_H */
