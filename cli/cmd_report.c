/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_report.c: `leakhound report FILE`: reads a trace, replays it, symbolizes the top
 * leak sites and prints the report as text or JSON.
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "json.h"
#include "load.h"
#include "heapgraph.h"
#include "leaksplit.h"
#include "pass.h"
#include "replay.h"
#include "report.h"
#include "scriptstack.h"
#include "symbolize.h"
#include "text.h"
#include "suppress.h"
#include "trace.h"

const char lh_cmd_report_usage[] =
    "usage: leakhound report FILE [--growth | --temporary [--threshold D | --immediate]]\n"
    "                        [--top N]"
    "                        [--heuristics H] [--by function ...]\n"
    "\n"
    "Reads a trace written by `leakhound run` and reports the blocks still allocated when\n"
    "the program ended, grouped by allocation stack, largest first; the sites that grow\n"
    "over the marks (or snapshots) first, as --growth ranks them. When the trace has RSS\n"
    "samples, compares RSS growth with heap growth.\n"
    "\n"
    "  --growth         instead: per site, live bytes and blocks at each mark (or snapshot),\n"
    "                   the least-squares slope per mark and in how many intervals it grew;\n"
    "                   only sites that grow (slope > 0, last > first, and keeping at least\n"
    "                   half of what they gained: a transient peak does not count)\n"
    "  --temporary      instead: blocks freed soon after their allocation, per site, by count\n"
    "                   (churn that costs time but does not leak)\n"
    "  --threshold D    --temporary: freed within D of the allocation (default 1ms)\n"
    "  --immediate      --temporary: instead, freed by the allocating thread's next call\n"
    "                   to the allocator, nothing allocated or freed by it in between\n"
    "                   (heaptrack's temporary allocations), however long that took\n"
    "  --top N          show the N first sites (default 10; 0: all)\n"
    "  --no-graph       skip the definitely/indirectly/possibly lost split that an exit\n"
    "                   snapshot with contents gives (it reads the snapshot's pointers)\n"
    "  --heuristics H   for that split, Valgrind's interior-pointer heuristics: none, all\n"
    "                   (default) or a list of stdstring, length64, newarray,\n"
    "                   multipleinheritance\n"
    "\n"
    "Per function (inclusive: anywhere on the stack, recursion counted once; exclusive: the\n"
    "site's location, its first frame outside the C/C++ runtime):\n"
    "  --by function    a table of functions instead of sites\n"
    "  --sort KIND      inclusive or exclusive (default) figures first\n"
    "  --metric M       leaked (default), allocated, peak (live at the heap peak), growth\n"
    "                   (live bytes per mark or snapshot, least squares) or allocations\n"
    "                   (calls that made a block: heaptrack's most calls to allocation\n"
    "                   functions)\n"
    "  --top N          rows (default 20; 0: all)\n";

typedef struct report_args {
    lh_trace_args_t load;
    unsigned long top;
    int no_graph; /* skip the exit snapshot's reference graph (LEAK SUMMARY) */
    int growth;
    int temporary;
    int immediate;
    const char *threshold;
    uint64_t threshold_ns;
    const char *heuristics; /* --heuristics (heapgraph.h) */
    unsigned heur_bits;
} report_args_t;

static int
parse_args(int argc, char **argv, report_args_t *a, lh_err_t *err)
{
    int rc;
    const lh_opt_t opts[] = {
        {"--no-graph", NULL, LH_OPT_BOOL, &a->no_graph, 0, 0, NULL},
        {"--growth", NULL, LH_OPT_BOOL, &a->growth, 0, 0, NULL},
        {"--heuristics", NULL, LH_OPT_STR, &a->heuristics, 0, 0, NULL},
        {"--temporary", NULL, LH_OPT_BOOL, &a->temporary, 0, 0, NULL},
        {"--threshold", NULL, LH_OPT_STR, &a->threshold, 0, 0, NULL},
        {"--immediate", NULL, LH_OPT_BOOL, &a->immediate, 0, 0, NULL},
        LH_OPT_TOP(&a->top),
    };
    a->top = 10;
    if ((rc = LH_ARGS_PARSE(report, LH_ARGS_FORMAT, opts, argc, argv, &a->load, err)) != 0) {
        return rc;
    }
    if (a->threshold && lh_cli_value("report", "--threshold", a->threshold, 0, 0, UINT64_MAX,
                                     &a->threshold_ns, err) < 0) {
        return LH_EINVAL;
    }
    if (a->growth && a->temporary) {
        return lh_err_set(err, LH_EINVAL, "report: --growth or --temporary, one at a time");
    }
    if ((a->threshold || a->immediate) && !a->temporary) {
        return lh_err_set(err, LH_EINVAL, "report: %s goes with --temporary",
                          a->threshold ? "--threshold" : "--immediate");
    }
    if (a->threshold && a->immediate) {
        return lh_err_set(err, LH_EINVAL, "report: --threshold or --immediate, one at a time");
    }
    if (!a->threshold) {
        a->threshold_ns = 1000000; /* 1 ms */
    }
    if (a->heuristics &&
        lh_cli_parse_heuristics("report", a->heuristics, &a->heur_bits, err) < 0) {
        return LH_EINVAL;
    }
    return 0;
}

static int
suppressed(void *p, uint32_t id, lh_err_t *err)
{
    return lh_pass_suppressed(p, id, err);
}

static uint32_t
temp_stack(const void *row)
{
    return ((const lh_temp_site_t *)row)->stack_id;
}

/* The growth listing of the pass (its timeline kept series), in the order report --growth
 * prints it: growing sites first by bytes per point, suppressed sites left out, perl's
 * arena after the other growing sites. The plain report ranks by it too (report.h), so
 * that both put the same site first. Returns 0, LH_EINVAL with g->why (fewer than 2
 * points), or another error; g is released on failure. */
static int
growth_listing(lh_pass_t *p, lh_growth_t *g, lh_err_t *err)
{
    int rc = lh_timeline_growth(p->tl, NULL, g, err);
    if (rc < 0) {
        return rc;
    }
    rc = lh_growth_filter(g, suppressed, p, err);
    if (rc >= 0) {
        rc = lh_growth_arena_last(g, p->t, p->sym, err);
    }
    if (rc < 0) {
        lh_growth_fini(g);
    }
    return rc < 0 ? rc : 0;
}

/* report --growth and report --temporary: one pass through a timeline. */
static int
report_over_time(const report_args_t *a, lh_err_t *err)
{
    lh_pass_t p;
    lh_timeline_opts_t tlo = {0};
    lh_growth_t g;
    lh_temp_t tmp;
    size_t n_shown = 0, n_all;
    int have = 0;
    int rc;
    tlo.series = a->growth;
    tlo.temporary = a->temporary;
    tlo.temp_threshold_ns = a->threshold_ns;
    tlo.temp_immediate = a->immediate;
    if ((rc = lh_pass_run(&p, &a->load, &tlo, NULL, NULL, err)) < 0) {
        return rc;
    }
    if (a->growth) {
        rc = lh_pass_advise(growth_listing(&p, &g, err), g.why, err);
        n_all = g.n_sites;
    } else {
        rc = lh_timeline_temporary(p.tl, p.r, &tmp, err);
        n_all = tmp.n_sites;
    }
    if (rc < 0) {
        goto done;
    }
    have = 1;
    /* suppressed sites are left out, as from every listing (growth_listing did it) */
    if (!a->growth) {
        rc = lh_pass_drop_suppressed(&p, tmp.sites, &tmp.n_sites, sizeof *tmp.sites, temp_stack,
                                     NULL, err);
        n_all = tmp.n_sites;
        tmp.n_temp = LH_ROWS_SUM(tmp.sites, n_all, lh_temp_site_t, n_temp);
        tmp.temp_bytes = LH_ROWS_SUM(tmp.sites, n_all, lh_temp_site_t, temp_bytes);
    }
    if (rc < 0) {
        goto done;
    }
    n_shown = a->top && a->top < n_all ? a->top : n_all;
    rc = a->growth ? lh_pass_show(&p, g.sites, sizeof *g.sites,
                                  offsetof(lh_growth_site_t, stack_id), n_shown, err)
                   : lh_pass_show(&p, tmp.sites, sizeof *tmp.sites,
                                  offsetof(lh_temp_site_t, stack_id), n_shown, err);
    if (rc < 0) {
        goto done;
    }
    rc = a->growth ? lh_view_growth(stdout, &p.view, &g, p.sites, n_shown, err)
                   : lh_view_temporary(stdout, &p.view, &tmp, p.sites, n_shown, err);
done:
    if (have && a->growth) {
        lh_growth_fini(&g);
    } else if (have) {
        lh_temp_fini(&tmp);
    }
    lh_pass_close(&p);
    return rc < 0 ? rc : 0;
}

int
lh_cmd_report(int argc, char **argv, lh_err_t *err)
{
    report_args_t a = {0};
    lh_pass_t p;
    lh_report_t rep = {0};
    lh_report_opts_t ropts = {0};
    lh_leak_split_t split;
    lh_timeline_opts_t tlo = {0};
    lh_growth_t g;
    int have_rep = 0, have_pass = 0, have_growth = 0;
    lh_leak_split_init(&split);
    tlo.series = 1;
    for (int i = 1; i < argc; i++) { /* --by function: cmd_report_by.c */
        if (strcmp(argv[i], "--by") == 0 || strncmp(argv[i], "--by=", 5) == 0) {
            return lh_cmd_report_by(argc, argv, err);
        }
    }
    int rc = parse_args(argc, argv, &a, err);
    if (rc != 0) {
        return rc < 0 ? rc : 0;
    }
    if (a.growth || a.temporary) {
        return report_over_time(&a, err);
    }
    /* The ranking takes growth over marks or running snapshots only (report.h), not the
     * survivors' (timeline.h: points_only). With suppressions the listing is kept whole:
     * filtering it symbolizes its sites, and the symbolizer's warnings follow that order. */
    tlo.points_only = !a.load.default_supp && !a.load.supp_files.n;
    /* issue 5: the LEAK SUMMARY split, from the exit snapshot's graph, captured in the same
     * pass. A trace on standard input has no directory: its snapshots' contents files
     * cannot be found, so there is no reference graph to read. */
    lh_consumer_t hook = {NULL, NULL, 0};
    int graph = !a.no_graph && !a.load.stdin_path[0];
    split.heuristics = a.heur_bits;
    if ((graph && (rc = lh_leak_split_begin(&split, a.load.path, &hook, err)) < 0) ||
        (rc = lh_pass_run(&p, &a.load, &tlo, NULL, graph ? &hook : NULL, err)) < 0) {
        goto done;
    }
    have_pass = 1;
    /* the growing sites rank first (report.h); a run with fewer than 2 points has none */
    if ((rc = growth_listing(&p, &g, err)) < 0 && rc != LH_EINVAL) {
        goto done;
    }
    have_growth = rc == 0;
    int have_split = lh_load_split(&split, p.t, "");
    ropts.top = p.supp.n ? 0 : a.top; /* with suppressions: every site, filtered, then cut */
    ropts.split = have_split ? &split : NULL; /* lost first, one-time reachable last */
    ropts.growth = have_growth ? &g : NULL;
    if ((rc = lh_report_build(&rep, p.t, p.r, p.sym, &ropts, err)) < 0) {
        goto done;
    }
    have_rep = 1;
    rep.trace_path = p.name;
    if (p.supp.n) {
        lh_report_suppress(&rep, &p.supp, a.top);
    }
    rep.rss = lh_timeline_rss(p.tl);
    rep.split = have_split ? &split : NULL;
    /* the LEAK SUMMARY counts what the site list shows: suppressed stacks left out */
    if (rep.split && (rc = lh_leak_split_filter(&split, suppressed, &p, err)) < 0) {
        goto done;
    }
    lh_pass_warnings(&p);
    if (a.load.json) {
        rc = lh_view_json(stdout, &rep, err);
    } else {
        lh_text_opts_t vopts = {p.cwd[0] ? p.cwd : NULL};
        rc = lh_view_text(stdout, &rep, &vopts, err);
    }
done:
    if (have_rep) {
        lh_report_fini(&rep);
    }
    if (have_growth) {
        lh_growth_fini(&g);
    }
    lh_leak_split_fini(&split);
    if (have_pass) {
        lh_pass_close(&p);
    }
    return rc < 0 ? rc : 0;
}
