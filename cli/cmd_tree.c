/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_tree.c: `leakhound tree FILE`: the call tree of a metric, top-down or bottom-up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calltree.h"
#include "cmd.h"
#include "load.h"
#include "tree_view.h"

const char lh_cmd_tree_usage[] =
    "usage: leakhound tree FILE [--top-down | --bottom-up] [--metric M] [--focus FUNC]\n"
    "                      [--min-percent P] [--depth N]\n"
    "\n"
    "The call tree of what a trace allocated, with each node's share of the total.\n"
    "  --top-down        from main down to the allocating functions (default)\n"
    "  --bottom-up       from the allocating functions up to their callers\n"
    "  --metric M        leaked (default: live at exit), allocated, peak (live at the heap\n"
    "                    peak), growth (live bytes per mark or snapshot, growing stacks only)\n"
    "                    or allocations (calls that made a block, by count)\n"
    "  --focus FUNC      root the tree at FUNC, merging every place it is called from\n"
    "  --min-percent P   hide nodes under P% of the total (default 0.5)\n"
    "  --depth N         at most N levels (0: all, the default)\n";

typedef struct tree_args {
    lh_trace_args_t load;
    lh_tree_opts_t topts;
    double min_percent;
    unsigned long depth;
} tree_args_t;

static int
parse_args(int argc, char **argv, tree_args_t *a, lh_err_t *err)
{
    int metric = LH_METRIC_LEAKED, bottom_up = 0, top_down = 0, rc;
    const char *min_percent = NULL;
    const lh_opt_t opts[] = {
        {"--top-down", NULL, LH_OPT_BOOL, &top_down, 0, 0, NULL},
        {"--bottom-up", NULL, LH_OPT_BOOL, &bottom_up, 0, 0, NULL},
        LH_OPT_METRIC(&metric),
        {"--focus", NULL, LH_OPT_STR, &a->topts.focus, 0, 0, NULL},
        {"--min-percent", NULL, LH_OPT_STR, &min_percent, 0, 0, NULL},
        {"--depth", NULL, LH_OPT_UINT, &a->depth, 0, 100000, NULL},
    };
    a->min_percent = 0.5;
    if ((rc = LH_ARGS_PARSE(tree, LH_ARGS_FORMAT, opts, argc, argv, &a->load, err)) != 0) {
        return rc;
    }
    if (top_down && bottom_up) {
        return lh_err_set(err, LH_EINVAL, "tree: --top-down or --bottom-up, one at a time");
    }
    a->topts.metric = (lh_metric_t)metric;
    a->topts.bottom_up = bottom_up;
    if (min_percent) {
        char *end;
        a->min_percent = strtod(min_percent, &end);
        if (*end || end == min_percent || a->min_percent < 0 || a->min_percent > 100) {
            return lh_err_set(err, LH_EINVAL, "tree: --min-percent: a number from 0 to 100, "
                              "got '%s'", min_percent);
        }
    }
    return 0;
}

int
lh_cmd_tree(int argc, char **argv, lh_err_t *err)
{
    tree_args_t a = {0};
    lh_load_funcs_t lf;
    int rc = parse_args(argc, argv, &a, err);
    if (rc != 0 || (rc = lh_load_funcs(&a.load, &a.topts, &lf, err)) < 0) {
        return rc < 0 ? rc : 0;
    }
    lh_tree_view_t v = {a.load.name, lf.cwd, a.topts.focus, a.min_percent, a.depth};
    rc = a.load.json ? lh_view_tree_json(stdout, &lf.t, &lf.f, &v, err)
                     : lh_view_tree_text(stdout, &lf.t, &lf.f, &v, err);
    lh_load_funcs_fini(&lf);
    return rc < 0 ? rc : 0;
}
