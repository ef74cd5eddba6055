/* leakhound - SPDX-License-Identifier: MIT
 *
 * funcs.h: where the memory went, per function: inclusive and exclusive attribution of
 * every stack's figures (collect.h) to the functions on it.
 *
 * A "function" is a symbolized frame's function name within its module; inlined frames are
 * functions of their own (an inlined helper gets its bytes even though no call happened).
 * Frames without a name are named after their module and offset ("libfoo.so+0x1a2b"), or
 * their address ("0x7f..."). Two static functions with one name in one module are one.
 *
 *   exclusive  the function is the stack's site location: its first frame with a source
 *              file that is not in the C/C++ runtime (report.h), i.e. the line a user
 *              looks at. A wrapper like xmalloc() in the program therefore owns the
 *              bytes, not malloc or operator new. Exclusive figures add up to the total.
 *   inclusive  the function appears anywhere on the stack (the agent's frames dropped).
 *              A recursive function is counted once per stack, so inclusive never
 *              exceeds the total.
 *
 * Figures per function: bytes allocated and allocations, bytes and blocks live at exit
 * (leaked), bytes live at the global heap peak, and growth: the least-squares slope of its
 * live bytes per mark (per snapshot when there are no marks; 0 with fewer than two).
 */
#ifndef LH_FUNCS_H
#define LH_FUNCS_H

#include <stddef.h>
#include <stdint.h>

#include "collect.h"
#include "err.h"
#include "growth.h"
#include "suppress.h"

typedef enum lh_metric {
    LH_METRIC_ALLOCATED = 0, /* bytes allocated over the run */
    LH_METRIC_LEAKED = 1,    /* bytes live at exit */
    LH_METRIC_PEAK = 2,      /* bytes live at the heap peak */
    LH_METRIC_GROWTH = 3,    /* bytes per mark (slope) */
    LH_METRIC_ALLOCATIONS = 4, /* calls that made a block (malloc, calloc, ..., realloc):
                                  heaptrack's "calls to allocation functions" */
} lh_metric_t;
/* The metric names in enum order, for option tables ("a|b|..."). */
#define LH_METRIC_CHOICES "allocated|leaked|peak|growth|allocations"

const char *lh_metric_name(lh_metric_t m);

typedef struct lh_fmetrics {
    uint64_t allocated;
    uint64_t n_allocs;
    uint64_t leaked;
    uint64_t leaked_blocks;
    uint64_t peak;
    double growth;
    lh_trend_t trend;     /* per stack (lh_funcs_stack_metrics) only: its growth class */
} lh_fmetrics_t;

/* The metric m of a set of figures, as a number (growth may be negative). */
double lh_fmetrics_value(const lh_fmetrics_t *f, lh_metric_t m);

typedef struct lh_func {
    const char *name;    /* owned by the table */
    const char *module;  /* module path (the symbolizer's string), NULL if none */
    const char *key;     /* with name, its identity: module, or the file of a python
                            function or of perl's top-level code ("(require)", "(eval)") */
    const char *file;    /* a source file seen for it, NULL if none */
    uint32_t line;       /* a line in it (of its first frame seen), 0 if none */
    int file_from_callee; /* file, line came from a script frame with no script frame
                             inside it: perl may still be at its caller's line there */
    int is_program;      /* in the traced executable (else a library) */
    lh_fmetrics_t incl, excl;
} lh_func_t;

typedef struct lh_funcs {
    lh_func_t *v;        /* in order of first appearance until lh_funcs_sort */
    size_t n;
    lh_fmetrics_t total; /* over all stacks counted */
    int n_growth_points; /* boundaries the growth is computed over (0 or >= 2) */
    int growth_is_snapshots;
    uint64_t n_stacks;   /* stacks counted */
    uint64_t n_suppressed_stacks;
    /* internal: name lookup */
    uint32_t *hash;
    size_t hash_mask;
    char **names;
    double *stack_growth; /* per stack id (collect): the slope of the stacks that grow
                             (growth.h), 0 for the others; NULL without growth */
    uint8_t *stack_trend; /* per stack id: its lh_trend_t */
    size_t n_stack_growth;
} lh_funcs_t;

/* Attributes every stack of c that allocated or was live to its functions. Stacks that a
 * suppression rule of supp matches (supp may be NULL) are left out and counted in
 * n_suppressed_stacks. Returns 0 or LH_ENOMEM. Release with lh_funcs_fini. */
int lh_funcs_build(lh_funcs_t *f, lh_collect_t *c, const lh_supp_t *supp, lh_err_t *err);
void lh_funcs_fini(lh_funcs_t *f);

/* Sorts by the metric, inclusive or exclusive figures, descending (ties by name). */
void lh_funcs_sort(lh_funcs_t *f, int inclusive, lh_metric_t m);

/* The index of the function of frame fr (as lh_funcs_build named it), or -1. */
long lh_funcs_find(const lh_funcs_t *f, const lh_frame_t *fr);
/* Writes the name lh_funcs_build gives frame fr into buf; returns buf. */
const char *lh_funcs_frame_name(const lh_frame_t *fr, char *buf, size_t len);

/* The figures of one stack of the collector (growth from f, 0 when not computed). */
void lh_funcs_stack_metrics(const lh_funcs_t *f, const lh_collect_t *c, uint32_t id,
                            lh_fmetrics_t *out);

/* The frames of a stack as the trees, flame graphs and folded exports show them: frames
 * outer than the outermost `main` (_start, __libc_start_main) are cut. Returns the number
 * of frames to keep, from frames[0] (innermost). */
size_t lh_funcs_trim(const lh_frame_t *frames, size_t n);

#endif /* LH_FUNCS_H */
