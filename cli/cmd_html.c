/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_html.c: `leakhound html FILE -o report.html`: everything on one self-contained page.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calltree.h"
#include "cmd.h"
#include "evolution.h"
#include "funcs.h"
#include "html.h"
#include "load.h"

#define HTML_COLUMNS 400
#define HTML_GROWTH_ROWS 15

const char lh_cmd_html_usage[] =
    "usage: leakhound html FILE -o OUT.html [--top N]\n"
    "\n"
    "Writes one self-contained HTML page (no network, no other files: open it in any\n"
    "browser, attach it to a bug) with the summary, the heap over time, a flame graph, the\n"
    "top sites with their stacks, the functions, and the growth ranking when the trace has\n"
    "marks or snapshots. Suppressed stacks are left out of all of them.\n"
    "  --top N           sites in the table (default 20)\n";

int
lh_cmd_html(int argc, char **argv, lh_err_t *err)
{
    lh_trace_args_t la = {0};
    unsigned long top = 20;
    int rc;
    const lh_opt_t opts[] = {{"--top", NULL, LH_OPT_UINT, &top, 1, 1000, NULL}};
    if ((rc = LH_ARGS_PARSE(html, LH_ARGS_OUTPUT, opts, argc, argv, &la, err)) != 0) {
        return rc < 0 ? rc : 0;
    }
    lh_collect_opts_t co = {0};
    lh_collect_t *c = NULL;
    lh_report_t rep;
    lh_report_opts_t ro = {top, NULL, NULL};
    lh_funcs_t f;
    lh_tree_t t;
    lh_evolution_t e;
    lh_growth_t g;
    const lh_site_t **gsites = NULL;
    int have_rep = 0, have_f = 0, have_t = 0, have_e = 0, have_g = 0;
    char cwd[PATH_MAX], ptitle[512], psub[512], ftitle[512];
    lh_supp_t supp;
    co.n_columns = HTML_COLUMNS;
    if ((rc = lh_load_run(&la, &co, &supp, &c, err)) < 0) {
        return rc;
    }
    const lh_supp_t *sp = supp.n ? &supp : NULL;
    if (sp) {
        ro.top = 0; /* every site, filtered, then cut to --top */
    }
    if ((rc = lh_growth_rank(&g, c, sp, err)) < 0) {
        goto done;
    }
    have_g = 1;
    ro.growth = &g; /* the growing sites first in the table too (report.h) */
    if ((rc = lh_report_build(&rep, lh_collect_trace(c), lh_collect_replay(c),
                              lh_collect_symbolizer(c), &ro, err)) < 0) {
        goto done;
    }
    have_rep = 1;
    rep.trace_path = la.name;
    if (sp) {
        lh_report_suppress(&rep, &supp, top);
    }
    if ((rc = lh_funcs_build(&f, c, sp, err)) < 0) {
        goto done;
    }
    have_f = 1;
    lh_funcs_sort(&f, 0, LH_METRIC_LEAKED);
    /* the flame graph shows what leaked, or what was live at the peak for a clean program */
    lh_tree_opts_t to = {f.total.leaked ? LH_METRIC_LEAKED : LH_METRIC_PEAK, 0, NULL};
    if ((rc = lh_tree_build(&t, c, &f, sp, &to, err)) < 0) {
        goto done;
    }
    have_t = 1;
    if ((rc = lh_evolution_build(&e, c, 8, 0, sp, err)) < 0) {
        goto done;
    }
    have_e = 1;
    size_t ng = g.n_sites < HTML_GROWTH_ROWS ? g.n_sites : HTML_GROWTH_ROWS;
    if (!(gsites = calloc(ng ? ng : 1, sizeof *gsites))) {
        rc = lh_err_set(err, LH_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < ng; i++) {
        if ((rc = lh_collect_site(c, g.sites[i].stack_id, &gsites[i], err)) < 0) {
            goto done;
        }
    }
    lh_load_title(c, "Heap over time", ptitle, sizeof ptitle);
    lh_load_subtitle(c, psub, sizeof psub);
    lh_load_title(c, to.metric == LH_METRIC_LEAKED ? "Bytes leaked (live at exit)"
                                                   : "Bytes live at the heap peak",
                  ftitle, sizeof ftitle);
    lh_html_page_t page = {&rep, &f, &e, &t, &g, gsites, ng, lh_load_prog(c), ptitle, psub,
                           ftitle, getcwd(cwd, sizeof cwd), LH_VERSION};
    FILE *out = lh_load_out_open(la.out, err);
    rc = !out ? LH_EIO : lh_load_out_close(out, la.out, lh_view_html(out, &page, err), err);
    lh_load_sym_warnings(c);
done:
    free(gsites);
    if (have_g) {
        lh_growth_fini(&g);
    }
    if (have_e) {
        lh_evolution_fini(&e);
    }
    if (have_t) {
        lh_tree_fini(&t);
    }
    if (have_f) {
        lh_funcs_fini(&f);
    }
    if (have_rep) {
        lh_report_fini(&rep);
    }
    lh_collect_free(c);
    lh_supp_fini(&supp);
    return rc < 0 ? rc : 0;
}
