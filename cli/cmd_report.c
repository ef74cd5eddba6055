/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_report.c: `leakhound report FILE`: reads a trace, replays it, symbolizes the top
 * leak sites and prints the report as text or JSON.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "json.h"
#include "leaksplit.h"
#include "pass.h"
#include "replay.h"
#include "report.h"
#include "symbolize.h"
#include "text.h"
#include "suppress.h"
#include "trace.h"

const char lh_cmd_report_usage[] =
    "usage: leakhound report FILE [--growth | --temporary [--threshold DURATION]] [--top N]\n"
    "                        [--format text|json] [--salvage]\n"
    "\n"
    "Reads a trace written by `leakhound run` and reports the blocks still allocated when\n"
    "the program ended, grouped by allocation stack, largest first. When the trace has RSS\n"
    "samples, compares RSS growth with heap growth.\n"
    "\n"
    "  --growth         instead: per site, live bytes and blocks at each mark (or snapshot),\n"
    "                   the least-squares slope per mark and in how many intervals it grew;\n"
    "                   only sites that grow (slope > 0, last > first, and keeping at least\n"
    "                   half of what they gained: a transient peak does not count)\n"
    "  --temporary      instead: blocks freed soon after their allocation, per site, by count\n"
    "                   (churn that costs time but does not leak)\n"
    "  --threshold D    --temporary: freed within D of the allocation (default 1ms)\n"
    "  --top N          show the N first sites (default 10; 0: all)\n"
    "  --format FORMAT  text (default) or json\n"
    "  --salvage        report a truncated or damaged trace up to the damage\n"
    "  --no-graph       skip the definitely/indirectly/possibly lost split that an exit\n"
    "                   snapshot with contents gives (it reads the snapshot's pointers)\n"
    "\n"
    "Per function (inclusive: anywhere on the stack, recursion counted once; exclusive: the\n"
    "site's location, its first frame outside the C/C++ runtime):\n"
    "  --by function    a table of functions instead of sites\n"
    "  --sort KIND      inclusive or exclusive (default) figures first\n"
    "  --metric M       leaked (default), allocated, peak (live at the heap peak) or growth\n"
    "                   (live bytes per mark, least squares)\n"
    "  --top N          rows (default 20; 0: all)\n"
    "  --suppressions FILE  leave out stacks matching LeakSanitizer-style rules\n"
    "                       (leak:PATTERN); may be repeated\n"
    "  --default-suppressions  also leave out the C library's and loader's own one-time\n"
    "                   allocations (the list `leakhound run --check` uses)\n";

typedef struct report_args {
    const char *path;
    unsigned long top;
    int json;
    int salvage;
    int no_graph; /* skip the exit snapshot's reference graph (LEAK SUMMARY) */
    int help;
    int growth;
    int temporary;
    const char *supp_files[16]; /* --suppressions (suppress.h) */
    size_t n_supp_files;
    int default_supp;
    const char *threshold;
    uint64_t threshold_ns;
} report_args_t;


static int
parse_args(int argc, char **argv, report_args_t *a, lh_err_t *err)
{
    int only_files = 0;
    a->top = 10;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *v;
        int missing = 0;
        if (only_files || arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (a->path) {
                return lh_err_set(err, LH_EINVAL, "report: one trace at a time (got '%s' and "
                                  "'%s')", a->path, arg);
            }
            a->path = arg;
        } else if (strcmp(arg, "--") == 0) {
            only_files = 1;
        } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            a->help = 1;
        } else if (strcmp(arg, "--salvage") == 0) {
            a->salvage = 1;
        } else if (strcmp(arg, "--no-graph") == 0) {
            a->no_graph = 1;
        } else if (strcmp(arg, "--growth") == 0) {
            a->growth = 1;
        } else if (strcmp(arg, "--temporary") == 0) {
            a->temporary = 1;
        } else if (strcmp(arg, "--default-suppressions") == 0) {
            a->default_supp = 1;
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--suppressions", &missing))) {
            if (a->n_supp_files == sizeof a->supp_files / sizeof a->supp_files[0]) {
                return lh_err_set(err, LH_EINVAL, "report: at most 16 --suppressions files");
            }
            a->supp_files[a->n_supp_files++] = v;
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--threshold", &missing))) {
            if (lh_parse_duration_ns(v, &a->threshold_ns) < 0) {
                return lh_err_set(err, LH_EINVAL, "report: --threshold: expected a duration such "
                                  "as 1ms, 500us or 2s, got '%s'", v);
            }
            a->threshold = v;
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--top", &missing)) ||
                   (v = lh_cli_opt_value(argc, argv, &i, "-n", &missing))) {
            if (lh_cli_parse_uint("--top", v, 0, 1000000, &a->top, err) < 0) {
                return LH_EINVAL;
            }
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--format", &missing))) {
            if (strcmp(v, "json") == 0) {
                a->json = 1;
            } else if (strcmp(v, "text") == 0) {
                a->json = 0;
            } else {
                return lh_err_set(err, LH_EINVAL,
                                  "report: unknown format '%s' (text or json)", v);
            }
        } else if (missing) {
            return lh_err_set(err, LH_EINVAL, "report: option '%s' needs a value", arg);
        } else {
            return lh_err_set(err, LH_EINVAL, "report: unknown option '%s' (see leakhound help "
                              "report)", arg);
        }
    }
    if (!a->path && !a->help) {
        return lh_err_set(err, LH_EINVAL, "report: which trace? usage: leakhound report FILE");
    }
    if (a->growth && a->temporary) {
        return lh_err_set(err, LH_EINVAL, "report: --growth or --temporary, one at a time");
    }
    if (a->threshold && !a->temporary) {
        return lh_err_set(err, LH_EINVAL, "report: --threshold goes with --temporary");
    }
    if (!a->threshold) {
        a->threshold_ns = 1000000; /* 1 ms */
    }
    return 0;
}

static void
print_warnings(const lh_warnings_t *w)
{
    for (size_t i = 0; i < w->n; i++) {
        fprintf(stderr, "leakhound: warning: %s\n", w->msgs[i]);
    }
}

/* Reads the whole trace into the heap model, and RSS samples into rss. */
static int
replay_all(lh_trace_t *t, lh_replay_t *r, lh_rss_cmp_t *rss, lh_leak_split_t *split,
           lh_err_t *err)
{
    lh_event_t ev;
    int rc;
    while ((rc = lh_trace_next(t, &ev, err)) > 0) {
        if ((rc = lh_replay_event(r, &ev, err)) < 0) {
            return rc;
        }
        lh_leak_split_note(split, &ev); /* the exit snapshot's graph, if any (issue 5) */
        if (ev.type == LH_REC_RSS) {
            lh_rss_cmp_event(rss, &ev, lh_replay_totals(r)->heap_bytes);
        }
    }
    if (rc == LH_ETRUNC || rc == LH_EFORMAT) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        return lh_err_set(err, rc, "%s (--salvage reports the events before it)", msg);
    }
    return rc;
}

/* report --growth and report --temporary: one pass through a timeline. */
static int
report_over_time(const report_args_t *a, lh_err_t *err)
{
    lh_pass_t p;
    lh_timeline_opts_t tlo = {0};
    lh_growth_t g;
    lh_temp_t tmp;
    lh_site_t *sites = NULL;
    uint32_t *ids = NULL;
    size_t n_shown = 0, n_all;
    int have = 0;
    int rc;
    tlo.series = a->growth;
    tlo.temporary = a->temporary;
    tlo.temp_threshold_ns = a->threshold_ns;
    if ((rc = lh_pass_run(&p, a->path, a->salvage, &tlo, NULL, err)) < 0) {
        return rc;
    }
    if (a->growth) {
        rc = lh_timeline_growth(p.tl, NULL, &g, err);
        n_all = g.n_sites;
    } else {
        rc = lh_timeline_temporary(p.tl, p.r, &tmp, err);
        n_all = tmp.n_sites;
    }
    if (rc < 0) {
        goto done;
    }
    have = 1;
    n_shown = a->top && a->top < n_all ? a->top : n_all;
    if (!(ids = malloc((n_shown ? n_shown : 1) * sizeof *ids))) {
        rc = lh_err_set(err, LH_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n_shown; i++) {
        ids[i] = a->growth ? g.sites[i].stack_id : tmp.sites[i].stack_id;
    }
    if ((rc = lh_pass_sites(&p, ids, n_shown, &sites, err)) < 0) {
        goto done;
    }
    lh_pass_warnings(&p);
    lh_tl_view_t v;
    lh_pass_view(&p, a->json, &v);
    rc = a->growth ? lh_view_growth(stdout, &v, &g, sites, n_shown, err)
                   : lh_view_temporary(stdout, &v, &tmp, sites, n_shown, err);
done:
    lh_pass_sites_free(sites, n_shown);
    free(ids);
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
    lh_trace_opts_t topts = {0};
    lh_trace_t *t = NULL;
    lh_replay_t *r = NULL;
    lh_symbolizer_t *sym = NULL;
    lh_report_t rep = {0};
    lh_report_opts_t ropts = {0};
    lh_sym_opts_t sopts = {0};
    lh_rss_cmp_t rss = {0};
    lh_leak_split_t split;
    int have_rep = 0;
    lh_leak_split_init(&split);
    for (int i = 1; i < argc; i++) { /* --by function: cmd_report_by.c */
        if (strcmp(argv[i], "--by") == 0 || strncmp(argv[i], "--by=", 5) == 0) {
            return lh_cmd_report_by(argc, argv, err);
        }
    }
    int rc = parse_args(argc, argv, &a, err);
    if (rc < 0 || a.help) {
        if (a.help) {
            fputs(lh_cmd_report_usage, stdout);
        }
        return rc;
    }
    if (a.growth || a.temporary) {
        return report_over_time(&a, err);
    }
    topts.salvage = a.salvage;
    if ((rc = lh_trace_open(a.path, &topts, &t, err)) < 0) {
        goto done;
    }
    if ((rc = lh_replay_new(&r, err)) < 0 || (rc = replay_all(t, r, &rss, &split, err)) < 0) {
        goto done;
    }
    sopts.exe_path = lh_trace_info(t)->exe;
    if ((rc = lh_sym_new(lh_trace_modules(t), &sopts, &sym, err)) < 0) {
        goto done;
    }
    ropts.top = a.top;
    lh_supp_t supp;
    lh_supp_init(&supp);
    if (a.n_supp_files || a.default_supp) { /* keep every site, filter, then cut to --top */
        ropts.top = 0;
        if (a.default_supp) {
            rc = lh_supp_add_defaults(&supp, err);
        }
        for (size_t k = 0; rc >= 0 && k < a.n_supp_files; k++) {
            rc = lh_supp_load(&supp, a.supp_files[k], err);
        }
        if (rc < 0) {
            lh_supp_fini(&supp);
            goto done;
        }
    }
    if ((rc = lh_report_build(&rep, t, r, sym, &ropts, err)) < 0) {
        lh_supp_fini(&supp);
        goto done;
    }
    have_rep = 1;
    if (supp.n) {
        lh_report_suppress(&rep, &supp, a.top);
    }
    lh_supp_fini(&supp);
    rep.rss = &rss;
    if (!a.no_graph && split.snap_index >= 0) { /* issue 5: the LEAK SUMMARY split */
        lh_err_t e2 = {{0}};
        if (lh_leak_split_build(&split, a.path, a.salvage, &e2) < 0) {
            fprintf(stderr, "leakhound: warning: %s\n", e2.msg);
        } else {
            rep.split = &split;
        }
    }
    print_warnings(lh_trace_warnings(t));
    print_warnings(lh_sym_warnings(sym));
    if (a.json) {
        rc = lh_view_json(stdout, &rep, err);
    } else {
        char cwd[PATH_MAX];
        lh_text_opts_t vopts = {getcwd(cwd, sizeof cwd)};
        rc = lh_view_text(stdout, &rep, &vopts, err);
    }
done:
    if (have_rep) {
        lh_report_fini(&rep);
    }
    lh_leak_split_fini(&split);
    lh_sym_free(sym);
    lh_replay_free(r);
    lh_trace_close(t);
    return rc < 0 ? rc : 0;
}
