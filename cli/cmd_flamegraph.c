/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_flamegraph.c: `leakhound flamegraph FILE -o flame.svg`: a flame graph of a metric.
 */
#include <stdio.h>

#include "calltree.h"
#include "cmd.h"
#include "flamegraph.h"
#include "load.h"

const char lh_cmd_flamegraph_usage[] =
    "usage: leakhound flamegraph FILE -o OUT.svg [--metric M] [--width PIXELS]\n"
    "\n"
    "Writes a flame graph (self-contained SVG: open it in a browser) of where the memory\n"
    "went: main at the bottom, the allocating functions at the top, widths by bytes.\n"
    "Hover for details, click to zoom, Search to highlight functions.\n"
    "  --metric M        leaked (default: live at exit), allocated, peak (live at the heap\n"
    "                    peak), growth (live bytes per mark or snapshot, growing stacks only)\n"
    "                    or allocations (calls that made a block, by count)\n"
    "  --width PIXELS    image width (default 1200)\n";

/* What a flame graph of each metric shows, for its title. */
static const char *const what[] = {"Bytes allocated", "Bytes leaked (live at exit)",
                                   "Bytes live at the heap peak", "Growth per mark",
                                   "Allocations (calls that made a block)"};

int
lh_cmd_flamegraph(int argc, char **argv, lh_err_t *err)
{
    lh_trace_args_t la = {0};
    lh_tree_opts_t to = {LH_METRIC_LEAKED, 0, NULL};
    unsigned long width = 1200;
    int metric = LH_METRIC_LEAKED, rc;
    const lh_opt_t opts[] = {
        LH_OPT_METRIC(&metric),
        LH_OPT_WIDTH(&width),
    };
    if ((rc = LH_ARGS_PARSE(flamegraph, LH_ARGS_OUTPUT, opts, argc, argv, &la, err)) != 0) {
        return rc < 0 ? rc : 0;
    }
    to.metric = (lh_metric_t)metric;
    lh_load_funcs_t lf;
    char head[512];
    if ((rc = lh_load_funcs(&la, &to, &lf, err)) < 0) {
        return rc;
    }
    lh_load_title(lf.c, what[to.metric], head, sizeof head);
    lh_flame_opts_t fo = {"flame", 0, head, lf.cwd, (int)width};
    FILE *out = lh_load_out_open(la.out, err);
    rc = !out ? LH_EIO
              : lh_load_out_close(out, la.out, lh_view_flamegraph(out, &lf.t, &lf.f, &fo, err),
                                  err);
    lh_load_funcs_fini(&lf);
    return rc < 0 ? rc : 0;
}
