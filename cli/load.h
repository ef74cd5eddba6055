/* leakhound - SPDX-License-Identifier: MIT
 *
 * load.h: what the picture and export subcommands share: one collecting pass over a trace
 * (analysis/collect.h) with a progress bar, the warnings printed, and the common options.
 */
#ifndef LH_CLI_LOAD_H
#define LH_CLI_LOAD_H

#include "collect.h"
#include "err.h"
#include "suppress.h"

typedef struct lh_load_args {
    const char *path;       /* the trace */
    int salvage;
    int quiet;
    const char *supp_files[16];
    size_t n_supp_files;
    int default_supp;       /* add the built-in list */
} lh_load_args_t;

/* Recognises the options every such command takes, at argv[*i]: --salvage, --quiet/-q,
 * --suppressions FILE, --default-suppressions. Returns 1 (consumed, *i advanced past any
 * value), 0 (not one of them) or LH_EINVAL (message names cmd). */
int lh_load_opt(const char *cmd, int argc, char **argv, int *i, lh_load_args_t *a,
                lh_err_t *err);

/* What every picture and export subcommand takes first: the trace (one positional
 * argument; a second is an error naming cmd), -h/--help (sets *help), and the options of
 * lh_load_opt. Returns 1 (consumed), 0 (not one of them) or LH_EINVAL. */
int lh_load_arg(const char *cmd, int argc, char **argv, int *i, lh_load_args_t *a, int *help,
                lh_err_t *err);

/* Runs the pass (opts may be NULL; salvage and the progress callback are set from a).
 * Prints the trace's and symbolizer's warnings. Returns 0 or a negative LH_E* code. */
int lh_load_run(const lh_load_args_t *a, const lh_collect_opts_t *opts, lh_collect_t **out,
                lh_err_t *err);

/* Prints the symbolizer's warnings (call after rendering: symbolization is lazy). */
void lh_load_sym_warnings(lh_collect_t *c);

/* "WHAT — prog (pid N)" and "peak X at T s · Y live at exit · ..." for pictures. */
void lh_load_title(const lh_collect_t *c, const char *what, char *buf, size_t len);
void lh_load_subtitle(const lh_collect_t *c, char *buf, size_t len);

/* Loads the suppressions a asks for into s (initialised here). Returns 0 or an error. */
int lh_load_suppressions(const lh_load_args_t *a, lh_supp_t *s, lh_err_t *err);

#endif /* LH_CLI_LOAD_H */
