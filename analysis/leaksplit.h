/* leakhound - SPDX-License-Identifier: MIT
 *
 * leaksplit.h: what `leakhound report` adds when the trace holds an exit snapshot with
 * contents: Valgrind's LEAK SUMMARY (definitely, indirectly, possibly lost, still
 * reachable) over the blocks live at exit, in total and per allocation site. Built from the
 * snapshot's reference graph (heapgraph.h), captured in the report's own pass over the
 * trace (lh_leak_split_consumer), then the .lhs file; nothing at all when there is no such
 * snapshot. In a fork child seeded with its inherited heap (trace.h) the inherited blocks
 * take part in the graph but are not counted, as report.h leaves them out of the leaks.
 */
#ifndef LH_LEAKSPLIT_H
#define LH_LEAKSPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "refgraph.h"
#include "stream.h"
#include "trace.h"

typedef struct lh_class_counts {
    uint64_t blocks[LH_CLASS_COUNT], bytes[LH_CLASS_COUNT]; /* by enum lh_leak_class */
} lh_class_counts_t;

typedef struct lh_leak_split {
    struct lh_heapgraph *hg; /* capturing, until lh_leak_split_build */
    unsigned heuristics;     /* for the graph: LH_HEUR_* (heapgraph.h); 0: the default */
    int present;             /* built: the fields below are valid */
    char label[256];         /* the snapshot's label */
    lh_class_counts_t total;
    lh_class_counts_t *by_stack; /* indexed by stack id */
    size_t n_stacks;
} lh_leak_split_t;

/* Starts with nothing captured. */
void lh_leak_split_init(lh_leak_split_t *ls);
void lh_leak_split_fini(lh_leak_split_t *ls);

/* Before the pass over the trace at path: *c becomes the consumer that captures the live
 * set at the last exit snapshot recorded with contents. Returns 0 or LH_ENOMEM. */
int lh_leak_split_begin(lh_leak_split_t *ls, const char *path, lh_consumer_t *c,
                        lh_err_t *err);
/* 1 when the pass met such a snapshot (lh_leak_split_build has something to build). */
int lh_leak_split_captured(const lh_leak_split_t *ls);

/* After the pass (t: its trace, borrowed): builds the split from the snapshot captured
 * (nothing to do and 0 when none was). Returns 0, or LH_E* with a message (a missing or
 * damaged .lhs file): callers show it as a warning, the rest of the report stands. */
int lh_leak_split_build(lh_leak_split_t *ls, lh_trace_t *t, lh_err_t *err);

/* The counts of one stack id, or NULL when none of its blocks was live at the snapshot. */
const lh_class_counts_t *lh_leak_split_site(const lh_leak_split_t *ls, uint32_t stack_id);

/* Leaves out of the split the stacks for which drop(ctx, stack id) says 1 (a suppressed
 * site), so that its totals count what the report's site list shows. Returns 0, or drop's
 * negative error. */
int lh_leak_split_filter(lh_leak_split_t *ls, int (*drop)(void *ctx, uint32_t id, lh_err_t *err),
                         void *ctx, lh_err_t *err);

#endif /* LH_LEAKSPLIT_H */
