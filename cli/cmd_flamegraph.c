/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_flamegraph.c: `leakhound flamegraph FILE -o flame.svg`: a flame graph of a metric.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "calltree.h"
#include "cmd.h"
#include "flamegraph.h"
#include "load.h"

const char lh_cmd_flamegraph_usage[] =
    "usage: leakhound flamegraph FILE -o OUT.svg [--metric M] [--width PIXELS]\n"
    "                            [--suppressions FILE] [--default-suppressions] [--quiet]\n"
    "\n"
    "Writes a flame graph (self-contained SVG: open it in a browser) of where the memory\n"
    "went: main at the bottom, the allocating functions at the top, widths by bytes.\n"
    "Hover for details, click to zoom, Search to highlight functions.\n"
    "  -o, --output OUT.svg  the file to write (- for standard output)\n"
    "  --metric M        leaked (default: live at exit), allocated, peak (live at the heap\n"
    "                    peak) or growth (live bytes per mark, growing stacks only)\n"
    "  --width PIXELS    image width (default 1200)\n";

/* Writes the title of a picture of trace t for metric m into buf. */
static void
title(char *buf, size_t len, const lh_collect_t *c, lh_metric_t m)
{
    static const char *what[] = {"Bytes allocated", "Bytes leaked (live at exit)",
                                 "Bytes live at the heap peak", "Growth per mark"};
    const lh_trace_info_t *in = lh_trace_info(lh_collect_trace(c));
    const char *exe = in->exe[0] ? in->exe : lh_trace_path(lh_collect_trace(c));
    const char *b = strrchr(exe, '/');
    snprintf(buf, len, "%s \xe2\x80\x94 %s (pid %llu)", what[m], b ? b + 1 : exe,
             (unsigned long long)in->pid);
}

int
lh_cmd_flamegraph(int argc, char **argv, lh_err_t *err)
{
    lh_trace_args_t la = {0};
    lh_tree_opts_t to = {LH_METRIC_LEAKED, 0, NULL};
    const char *out_path = NULL;
    unsigned long width = 1200;
    int metric = LH_METRIC_LEAKED, rc;
    const lh_opt_t opts[] = {
        {"--output", "-o", LH_OPT_STR, &out_path, 0, 0, NULL},
        {"--metric", NULL, LH_OPT_CHOICE, &metric, 0, 0, LH_METRIC_CHOICES},
        {"--width", NULL, LH_OPT_UINT, &width, 400, 20000, NULL},
    };
    const lh_cmd_spec_t spec = {"flamegraph", lh_cmd_flamegraph_usage, 0, opts,
                                sizeof opts / sizeof *opts};
    if ((rc = lh_args_parse(&spec, argc, argv, &la, err)) != 0) {
        return rc < 0 ? rc : 0;
    }
    if (!out_path) {
        return lh_err_set(err, LH_EINVAL, "flamegraph: where to? usage: leakhound flamegraph "
                          "FILE -o OUT.svg");
    }
    to.metric = (lh_metric_t)metric;
    lh_collect_t *c = NULL;
    lh_supp_t supp;
    lh_funcs_t f;
    lh_tree_t t;
    int have_f = 0, have_t = 0;
    char cwd[PATH_MAX], head[512];
    if ((rc = lh_load_suppressions(&la, &supp, err)) < 0) {
        return rc;
    }
    const lh_supp_t *sp = supp.n ? &supp : NULL;
    if ((rc = lh_load_run(&la, NULL, &c, err)) < 0 || (rc = lh_funcs_build(&f, c, sp, err)) < 0) {
        goto done;
    }
    have_f = 1;
    if ((rc = lh_tree_build(&t, c, &f, sp, &to, err)) < 0) {
        goto done;
    }
    have_t = 1;
    title(head, sizeof head, c, to.metric);
    lh_flame_opts_t fo = {"flame", 0, head, getcwd(cwd, sizeof cwd), (int)width};
    FILE *out = strcmp(out_path, "-") == 0 ? stdout : fopen(out_path, "w");
    if (!out) {
        rc = lh_err_set(err, LH_EIO, "cannot write %s", out_path);
        goto done;
    }
    rc = lh_view_flamegraph(out, &t, &f, &fo, err);
    if (out != stdout && fclose(out) != 0 && rc >= 0) {
        rc = lh_err_set(err, LH_EIO, "error writing %s", out_path);
    }
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
