/* leakhound - SPDX-License-Identifier: MIT
 *
 * load.h: what the picture and export subcommands share: one collecting pass over a trace
 * (analysis/collect.h) with a progress bar, the warnings printed, and the common options.
 */
#ifndef LH_CLI_LOAD_H
#define LH_CLI_LOAD_H

#include <limits.h>
#include <stdio.h>

#include "calltree.h"
#include "collect.h"
#include "funcs.h"
#include "err.h"
#include "leaksplit.h"
#include "opts.h"
#include "stream.h"
#include "suppress.h"

/* The one pass over a->path (stream.h) with the consumers cs[0..n), a progress bar unless
 * a->quiet; the trace and replay are the caller's on success. Returns 0 or an error. */
int lh_load_stream(const lh_trace_args_t *a, const lh_consumer_t *cs, size_t n, lh_trace_t **t,
                   lh_replay_t **r, lh_err_t *err);
/* Prints warnings to stderr, one "leakhound: warning: ..." line each. */
void lh_load_warnings(const lh_warnings_t *w);

/* Loads the suppressions a asks for into *supp (NULL: the caller has: export, before it
 * creates its database), then runs the collecting pass (opts may be NULL; salvage and the
 * progress callback are set from a) and prints the trace's warnings. Returns 0, or a
 * negative LH_E* code with *supp empty and *out NULL. */
int lh_load_run(const lh_trace_args_t *a, const lh_collect_opts_t *opts, lh_supp_t *supp,
                lh_collect_t **out, lh_err_t *err);

/* Prints the symbolizer's warnings (call after rendering: symbolization is lazy). */
void lh_load_sym_warnings(lh_collect_t *c);

/* The program's name: the base name of its executable (of the trace when unknown). */
const char *lh_load_prog(const lh_collect_t *c);
/* "WHAT — prog (pid N)" and "peak X at T s · Y live at exit · ..." for pictures. */
void lh_load_title(const lh_collect_t *c, const char *what, char *buf, size_t len);
void lh_load_subtitle(const lh_collect_t *c, char *buf, size_t len);

/* Loads the built-in list (defaults) and the files into s (initialised here; empty again
 * on failure). Returns 0 or an error. */
int lh_load_supp(lh_supp_t *s, int defaults, const lh_opt_files_t *files, lh_err_t *err);
/* Loads the suppressions a asks for into s. */
int lh_load_suppressions(const lh_trace_args_t *a, lh_supp_t *s, lh_err_t *err);
/* Where the built-in list applies (run --check, --default-suppressions), once t was read:
 * adds to s the rules the program embeds for LeakSanitizer (its __lsan_default_suppressions,
 * trace.h), as LeakSanitizer and heaptrack apply them. Rules that do not parse are left out
 * whole, with a warning naming the problem. Returns 0 or LH_ENOMEM. */
int lh_load_embedded_supp(lh_supp_t *s, const lh_trace_t *t, lh_err_t *err);

/* After a pass with the split's consumer (leaksplit.h): builds the split of the exit
 * snapshot it captured. 1 when built; 0 when none was captured, or when it could not be
 * built: then "leakhound: warning: MSG" and then (may be "") on standard error, the rest of
 * the command going on without it. */
int lh_load_split(lh_leak_split_t *s, lh_trace_t *t, const char *then);

/* What report --by, tree and flamegraph start from: the suppressions, the pass, the
 * per-function figures and (for a tree) the call tree. */
typedef struct lh_load_funcs {
    lh_supp_t supp;
    lh_collect_t *c;
    lh_funcs_t f;
    lh_tree_t t;
    int has_tree;
    const char *cwd;        /* the directory paths are shown relative to, or NULL */
    char cwd_buf[PATH_MAX];
} lh_load_funcs_t;

/* Builds them; tree_opts NULL: no tree. Returns 0 or an error (everything released). */
int lh_load_funcs(const lh_trace_args_t *a, const lh_tree_opts_t *tree_opts, lh_load_funcs_t *lf,
                  lh_err_t *err);
/* Prints the symbolizer's warnings and releases everything. */
void lh_load_funcs_fini(lh_load_funcs_t *lf);

/* The file an -o option names, for writing: "-" is standard output; a file is opened
 * without following a symbolic link, created with mode 0600, truncated. NULL with a
 * message naming it. */
FILE *lh_load_out_open(const char *path, lh_err_t *err);
/* Closes out (not standard output). Returns rc, or LH_EIO naming path when rc was not an
 * error and the data did not reach the file. */
int lh_load_out_close(FILE *out, const char *path, int rc, lh_err_t *err);

#endif /* LH_CLI_LOAD_H */
