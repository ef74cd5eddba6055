/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_tree.c: `leakhound tree FILE`: the call tree of a metric, top-down or bottom-up.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calltree.h"
#include "cmd.h"
#include "load.h"
#include "tree_view.h"

const char lh_cmd_tree_usage[] =
    "usage: leakhound tree FILE [--top-down | --bottom-up] [--metric M] [--focus FUNC]\n"
    "                      [--min-percent P] [--depth N] [--format text|json]\n"
    "                      [--suppressions FILE] [--default-suppressions] [--quiet]\n"
    "\n"
    "The call tree of what a trace allocated, with each node's share of the total.\n"
    "  --top-down        from main down to the allocating functions (default)\n"
    "  --bottom-up       from the allocating functions up to their callers\n"
    "  --metric M        leaked (default: live at exit), allocated, peak (live at the heap\n"
    "                    peak) or growth (live bytes per mark, growing stacks only)\n"
    "  --focus FUNC      root the tree at FUNC, merging every place it is called from\n"
    "  --min-percent P   hide nodes under P%% of the total (default 0.5)\n"
    "  --depth N         at most N levels (0: all, the default)\n"
    "  --format FORMAT   text (default) or json\n";

typedef struct tree_args {
    lh_load_args_t load;
    lh_tree_opts_t topts;
    double min_percent;
    unsigned long depth;
    int json;
    int help;
} tree_args_t;

static int
parse_args(int argc, char **argv, tree_args_t *a, lh_err_t *err)
{
    a->topts.metric = LH_METRIC_LEAKED;
    a->min_percent = 0.5;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *v;
        int missing = 0, rc;
        if ((rc = lh_load_arg("tree", argc, argv, &i, &a->load, &a->help, err)) != 0) {
            if (rc < 0) {
                return rc;
            }
        } else if (strcmp(arg, "--top-down") == 0) {
            a->topts.bottom_up = 0;
        } else if (strcmp(arg, "--bottom-up") == 0) {
            a->topts.bottom_up = 1;
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--metric", &missing))) {
            if (lh_metric_parse(v, &a->topts.metric) < 0) {
                return lh_err_set(err, LH_EINVAL, "tree: --metric: allocated, leaked, peak or "
                                  "growth, got '%s'", v);
            }
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--focus", &missing))) {
            a->topts.focus = v;
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--min-percent", &missing))) {
            char *end;
            a->min_percent = strtod(v, &end);
            if (*end || end == v || a->min_percent < 0 || a->min_percent > 100) {
                return lh_err_set(err, LH_EINVAL, "tree: --min-percent: a number from 0 to 100, "
                                  "got '%s'", v);
            }
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--depth", &missing))) {
            if (lh_cli_parse_uint("--depth", v, 0, 100000, &a->depth, err) < 0) {
                return LH_EINVAL;
            }
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--format", &missing))) {
            if (strcmp(v, "json") != 0 && strcmp(v, "text") != 0) {
                return lh_err_set(err, LH_EINVAL, "tree: unknown format '%s' (text or json)", v);
            }
            a->json = strcmp(v, "json") == 0;
        } else if (missing) {
            return lh_err_set(err, LH_EINVAL, "tree: option '%s' needs a value", arg);
        } else {
            return lh_err_set(err, LH_EINVAL, "tree: unknown option '%s' (see leakhound help "
                              "tree)", arg);
        }
    }
    if (!a->load.path && !a->help) {
        return lh_err_set(err, LH_EINVAL, "tree: which trace? usage: leakhound tree FILE");
    }
    return 0;
}

int
lh_cmd_tree(int argc, char **argv, lh_err_t *err)
{
    tree_args_t a = {0};
    lh_collect_t *c = NULL;
    lh_supp_t supp;
    lh_funcs_t f;
    lh_tree_t t;
    int have_f = 0, have_t = 0;
    char cwd[PATH_MAX];
    int rc = parse_args(argc, argv, &a, err);
    if (rc < 0 || a.help) {
        if (a.help) {
            fputs(lh_cmd_tree_usage, stdout);
        }
        return rc;
    }
    if ((rc = lh_load_suppressions(&a.load, &supp, err)) < 0) {
        return rc;
    }
    const lh_supp_t *sp = supp.n ? &supp : NULL;
    if ((rc = lh_load_run(&a.load, NULL, &c, err)) < 0 ||
        (rc = lh_funcs_build(&f, c, sp, err)) < 0) {
        goto done;
    }
    have_f = 1;
    if ((rc = lh_tree_build(&t, c, &f, sp, &a.topts, err)) < 0) {
        goto done;
    }
    have_t = 1;
    lh_tree_view_t v = {a.load.path, getcwd(cwd, sizeof cwd), a.topts.focus, a.min_percent,
                        a.depth};
    rc = a.json ? lh_view_tree_json(stdout, &t, &f, &v, err)
                : lh_view_tree_text(stdout, &t, &f, &v, err);
    lh_load_sym_warnings(c);
done:
    if (have_t) {
        lh_tree_fini(&t);
    }
    if (have_f) {
        lh_funcs_fini(&f);
    }
    lh_supp_fini(&supp);
    lh_collect_free(c);
    return rc < 0 ? rc : 0;
}
