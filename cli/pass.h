/* leakhound - SPDX-License-Identifier: MIT
 *
 * pass.h: what the trace-reading subcommands share: the one pass over a trace (stream.h)
 * with a timeline (or a history) as its consumer, symbolize the sites to
 * show, print the warnings.
 */
#ifndef LH_CLI_PASS_H
#define LH_CLI_PASS_H

#include <limits.h>

#include "grow.h"
#include "history.h"
#include "opts.h"
#include "stream.h"
#include "suppress.h"
#include "replay.h"
#include "report.h"
#include "symbolize.h"
#include "timeline.h"
#include "trace.h"
#include "timeline_view.h"

typedef struct lh_pass {
    const char *name;       /* the trace as shown (lh_trace_args_t) */
    lh_trace_t *t;
    lh_replay_t *r;
    lh_timeline_t *tl;      /* when opened with timeline options */
    lh_symbolizer_t *sym;
    char cwd[PATH_MAX];
    lh_supp_t supp;         /* the suppressions the arguments named */
    int have_supp;
    uint8_t *supp_known;    /* per stack id: 0 not looked at, 1 shown, 2 suppressed */
    size_t n_supp_known;
    int json;               /* --format json */
    lh_site_t *sites;       /* after lh_pass_show: the sites shown, symbolized */
    size_t n_sites;
    lh_tl_view_t view;      /* after lh_pass_show: the view settings */
} lh_pass_t;

/* Loads the suppressions a names, opens a->path and runs the one pass over it (with a
 * progress bar unless a->quiet): through a timeline built with tlo, or, when hist is not
 * NULL, through that history, and then through hook (may be NULL) when given. Returns 0 or
 * a negative LH_E* code (message in err); on failure the pass is closed. */
int lh_pass_run(lh_pass_t *p, const lh_trace_args_t *a, const lh_timeline_opts_t *tlo,
                lh_history_t *hist, const lh_consumer_t *hook, lh_err_t *err);
/* 1 when a suppression rule matches stack id's frames, else 0 (cached); or LH_ENOMEM. */
int lh_pass_suppressed(lh_pass_t *p, uint32_t id, lh_err_t *err);
/* Leaves out of a listing's rows (*n of size bytes, the others keeping their order) those
 * a suppression rule matches: stack_of(row) is a row's stack id (UINT32_MAX: none, kept),
 * and release(row), unless NULL, frees what a row left out owns. Totals over the rows are
 * the caller's to recompute (LH_ROWS_SUM). Returns 0 or an error (the rows not looked at
 * yet kept). */
int lh_pass_drop_suppressed(lh_pass_t *p, void *rows, size_t *n, size_t size,
                            uint32_t (*stack_of)(const void *row), void (*release)(void *row),
                            lh_err_t *err);
/* What every listing ends with, once its rows are chosen: symbolizes the n sites shown into
 * p->sites (row i's stack id is the uint32_t at rows + i * stride + off: a listing's array of
 * rows and offsetof its stack id field), prints the warnings and fills p->view. The sites
 * live in the pass, so that lh_pass_close releases all a command opened. Returns 0 or an
 * error (nothing printed). */
int lh_pass_show(lh_pass_t *p, const void *rows, size_t stride, size_t off, size_t n,
                 lh_err_t *err);
/* Prints the trace's and the symbolizer's warnings to stderr. */
void lh_pass_warnings(const lh_pass_t *p);
void lh_pass_close(lh_pass_t *p);
/* Turns an analysis's refusal (rc, with why from its result) into advice naming this
 * command line's flags; returns rc. */
int lh_pass_advise(int rc, lh_bound_why_t why, lh_err_t *err);

#endif /* LH_CLI_PASS_H */
