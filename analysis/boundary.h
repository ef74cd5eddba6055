/* leakhound - SPDX-License-Identifier: MIT
 *
 * boundary.h: the one boundary model. The boundaries of a run are its MARK records
 * (lh_mark, iteration boundaries) and its SNAPSHOT records (signal, period, growth and exit
 * triggers), in time order, each with the live heap at that moment. Every analysis keeps
 * them as lh_boundary_t, and every command and the shell name one with a spec resolved
 * here, by one rule:
 *
 *   "LABEL"    the boundaries labelled exactly LABEL: the first one for a start (--from,
 *              the first snapshot of the shell's diff), the last one for an end or a single
 *              point (--to, --at, the shell's use and the second snapshot of diff);
 *   "LABEL#N"  the N-th boundary labelled LABEL (1-based);
 *   "#N"       the N-th boundary of the list searched.
 *
 * Labels are compared exactly, and an exact label wins over the #N forms ("x#1" names the
 * boundary labelled "x#1" when there is one). Which list is searched is the caller's: the
 * boundaries of one kind (leaks, counts) or all of them (export --at), or the snapshots.
 */
#ifndef LH_BOUNDARY_H
#define LH_BOUNDARY_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

typedef enum lh_bound_kind {
    LH_BOUND_AUTO = -1,
    LH_BOUND_MARKS = 0,
    LH_BOUND_SNAPSHOTS = 1,
    LH_BOUND_ACTIVITY = 2,   /* neither: equal shares of the run's allocations (survivors.h) */
} lh_bound_kind_t;

typedef struct lh_boundary {
    uint64_t ts_ns;
    char *label;             /* NUL-terminated copy */
    int is_snapshot;
    int is_slice;            /* a point of the run's activity (survivors.h), neither */
    int trigger;             /* snapshots: LH_SNAP_* */
    size_t global;           /* index among all boundaries, both kinds, in time order */
    uint64_t marks_before;   /* marks strictly before this boundary */
    uint64_t heap_bytes;     /* live heap at this boundary */
    uint64_t heap_blocks;
} lh_boundary_t;

/* Why an analysis over boundaries refused. Its message says what, in the analysis's words
 * (the range's "start", "end", "skip"); the CLI, which owns the flag names, turns the
 * reason into advice about its flags. */
typedef enum lh_bound_why {
    LH_WHY_NONE = 0,
    LH_WHY_NO_POINTS,        /* no marks and no snapshots taken while the program ran */
    LH_WHY_FEW,              /* one boundary of the kind: no interval ("the trace has 1 ...") */
    LH_WHY_FROM,             /* the start spec names no boundary ("start '...': ...") */
    LH_WHY_TO,               /* the end spec names no boundary ("end '...': ...") */
    LH_WHY_SKIP,             /* skipping leaves no interval ("skip N leaves ...") */
} lh_bound_why_t;

/* What a point of kind k is called ("mark", "snapshot", "slice"; plural "marks", ...), and
 * what a listing over such points says of them after their count ("" for marks; " (the
 * trace has no marks)" for snapshots; for slices, what they are). Every view and message
 * names the points with these. */
const char *lh_bound_noun(lh_bound_kind_t k, int plural);
const char *lh_bound_note(lh_bound_kind_t k);

/* Fills b from a MARK or SNAPSHOT event (the label copied). Returns 0, or -1 without
 * memory. */
int lh_boundary_init(lh_boundary_t *b, const lh_event_t *ev, size_t global,
                     uint64_t marks_before, uint64_t heap_bytes, uint64_t heap_blocks);

/* A parsed spec. */
typedef struct lh_bound_spec {
    const char *whole;       /* the spec as given */
    const char *label;       /* label part of "LABEL#N" (not NUL-terminated), NULL for "#N" */
    size_t label_len;
    size_t nth;              /* N of "#N" / "LABEL#N"; 0: neither form */
} lh_bound_spec_t;

/* Where a resolution is, as the labels of a list come one by one. Start zeroed. */
typedef struct lh_bound_cursor {
    size_t n_seen;           /* labels fed */
    size_t n_label;          /* of those, labelled like the spec's LABEL part */
    int have_exact;          /* one was labelled exactly like the spec */
} lh_bound_cursor_t;

void lh_bound_spec_parse(const char *spec, lh_bound_spec_t *sp);
/* The resolver: feeds the label of the next element of a list (in order) and returns 1
 * when that element is, among the elements fed so far, the one sp names (for_to: as an
 * end, see above), else 0. The element a spec names in a whole list is the last one for
 * which this returned 1, so a pass can follow it as the list grows. */
int lh_bound_step(const lh_bound_spec_t *sp, lh_bound_cursor_t *c, const char *label,
                  int for_to);
/* Resolves spec among b[0..n) with lh_bound_step. Returns the index, or -1. */
long lh_bound_find(const lh_boundary_t *b, size_t n, const char *spec, int for_to);
/* The same over any array of n elements of stride bytes whose label is the `char *` at
 * label_off (offsetof) in each: lists of snapshots kept in other shapes. */
long lh_bound_find_in(const void *list, size_t n, size_t stride, size_t label_off,
                      const char *spec, int for_to);
/* Writes "'request' (2000), 'done' (1), 'exit' (1)" (distinct labels in order of first use,
 * with counts) into buf. */
void lh_bound_labels(const lh_boundary_t *b, size_t n, char *buf, size_t len);

/* The end of the main work among b[0..n) (growth.h: lh_trend_main_end over their heap). */
size_t lh_bound_main_end(const lh_boundary_t *b, size_t n);

#endif /* LH_BOUNDARY_H */
