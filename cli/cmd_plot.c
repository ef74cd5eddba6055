/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_plot.c: `leakhound plot FILE -o evolution.svg`: the heap over time, stacked by site.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "evolution.h"
#include "load.h"
#include "svg_plot.h"

#define PLOT_COLUMNS 400

const char lh_cmd_plot_usage[] =
    "usage: leakhound plot FILE -o OUT.svg [--top N] [--x time|marks] [--width PIXELS]\n"
    "\n"
    "Draws the live heap over the run (self-contained SVG), stacked by the N sites that held\n"
    "the most at any time plus all the others, with the RSS line, marks and snapshots.\n"
    "Suppressed stacks are never drawn on their own (they are in \"other sites\").\n"
    "  --top N           sites drawn on their own (default 8, at most 12)\n"
    "  --x time|marks    x axis: seconds since start (default), or mark number (live bytes\n"
    "                    at each mark; at each snapshot when there are no marks)\n"
    "  --width PIXELS    image width (default 1000)\n";

int
lh_cmd_plot(int argc, char **argv, lh_err_t *err)
{
    lh_trace_args_t la = {0};
    unsigned long top = 8, width = 1000;
    int x_marks = 0, rc;
    const lh_opt_t opts[] = {
        {"--top", NULL, LH_OPT_UINT, &top, 0, 12, NULL},
        LH_OPT_WIDTH(&width),
        {"--x", NULL, LH_OPT_CHOICE, &x_marks, 0, 0, "time|marks"},
    };
    if ((rc = LH_ARGS_PARSE(plot, LH_ARGS_OUTPUT, opts, argc, argv, &la, err)) != 0) {
        return rc < 0 ? rc : 0;
    }
    lh_collect_opts_t co = {0};
    lh_collect_t *c = NULL;
    lh_evolution_t e;
    lh_supp_t supp;
    int have_e = 0;
    char cwd[PATH_MAX], head[512], sub[512];
    co.n_columns = PLOT_COLUMNS;
    if ((rc = lh_load_run(&la, &co, &supp, &c, err)) < 0) {
        return rc;
    }
    if ((rc = lh_evolution_build(&e, c, top, x_marks, &supp, err)) < 0) {
        size_t np;
        lh_timeline_all_bounds(lh_collect_timeline(c), &np);
        if (x_marks && !np) {
            rc = lh_err_set(err, rc, "--x marks: the trace has no marks or snapshots (call "
                            "lh_mark() or lh_snapshot(), or record with --snapshot-every): "
                            "use --x time");
        }
        goto done;
    }
    have_e = 1;
    lh_load_title(c, "Heap over time", head, sizeof head);
    lh_load_subtitle(c, sub, sizeof sub);
    lh_plot_opts_t po = {"plot", 0, head, sub, getcwd(cwd, sizeof cwd), (int)width};
    FILE *out = lh_load_out_open(la.out, err);
    rc = !out ? LH_EIO : lh_load_out_close(out, la.out, lh_view_svg_plot(out, &e, &po, err), err);
    lh_load_sym_warnings(c);
done:
    if (have_e) {
        lh_evolution_fini(&e);
    }
    lh_collect_free(c);
    lh_supp_fini(&supp);
    return rc < 0 ? rc : 0;
}
