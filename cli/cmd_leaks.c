/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_leaks.c: `leakhound leaks FILE`: the differential leak report. Blocks allocated in
 * an interval between two snapshots (or marks) that are still live at every later one are
 * that interval's leaks; sites are ranked by how much and how steadily they leak.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "pass.h"

const char lh_cmd_leaks_usage[] =
    "usage: leakhound leaks FILE [--from LABEL] [--to LABEL] [--skip N] [--top N]\n"
    "                       [--use snapshots|marks] [--format text|json] [--salvage]\n"
    "\n"
    "The differential leak report: what a program keeps piling up while it runs, even when\n"
    "it frees it all at exit. The run is cut into intervals by its snapshots (taken while\n"
    "it ran: --snapshot-every, --snapshot-signal, --snapshot-on-growth, lh_snapshot()), or\n"
    "by its marks (lh_mark()) when it has none. A block allocated in an interval and still\n"
    "live at every later snapshot up to --to counts as a leak of that interval. Sites are\n"
    "ranked by score = leaked bytes x (intervals in which the site leaked / intervals).\n"
    "\n"
    "  --from LABEL   start at this snapshot or mark (default: the first)\n"
    "  --to LABEL     end at this one (default: the last, not counting the exit snapshot)\n"
    "                 LABEL is a label (--from: its first use, --to: its last), LABEL#N for\n"
    "                 its N-th use, or #N for the N-th snapshot or mark\n"
    "  --skip N       skip the first N intervals as start-up (default 1; 0 with --from)\n"
    "  --top N        show the N best-scored sites (default 10; 0: all)\n"
    "  --use KIND     snapshots or marks, instead of choosing\n"
    "  --format F     text (default) or json\n"
    "  --salvage      read a truncated or damaged trace up to the damage\n";

typedef struct leaks_args {
    const char *path, *from, *to;
    long skip;
    unsigned long top;
    lh_bound_kind_t kind;
    int json, salvage, help;
} leaks_args_t;

static int
parse_args(int argc, char **argv, leaks_args_t *a, lh_err_t *err)
{
    a->top = 10;
    a->skip = -1;
    a->kind = LH_BOUND_AUTO;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *v;
        int missing = 0;
        unsigned long n;
        if (arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (a->path) {
                return lh_err_set(err, LH_EINVAL, "leaks: one trace at a time (got '%s' and "
                                  "'%s')", a->path, arg);
            }
            a->path = arg;
        } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            a->help = 1;
        } else if (strcmp(arg, "--salvage") == 0) {
            a->salvage = 1;
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--from", &missing))) {
            a->from = v;
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--to", &missing))) {
            a->to = v;
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--skip", &missing))) {
            if (lh_cli_parse_uint("--skip", v, 0, 100000000, &n, err) < 0) {
                return LH_EINVAL;
            }
            a->skip = (long)n;
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--top", &missing))) {
            if (lh_cli_parse_uint("--top", v, 0, 1000000, &a->top, err) < 0) {
                return LH_EINVAL;
            }
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--use", &missing))) {
            if (strcmp(v, "snapshots") == 0) {
                a->kind = LH_BOUND_SNAPSHOTS;
            } else if (strcmp(v, "marks") == 0) {
                a->kind = LH_BOUND_MARKS;
            } else {
                return lh_err_set(err, LH_EINVAL, "leaks: --use: snapshots or marks, not '%s'", v);
            }
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--format", &missing))) {
            if (strcmp(v, "json") != 0 && strcmp(v, "text") != 0) {
                return lh_err_set(err, LH_EINVAL, "leaks: unknown format '%s' (text or json)", v);
            }
            a->json = strcmp(v, "json") == 0;
        } else if (missing) {
            return lh_err_set(err, LH_EINVAL, "leaks: option '%s' needs a value", arg);
        } else {
            return lh_err_set(err, LH_EINVAL, "leaks: unknown option '%s' (see leakhound help "
                              "leaks)", arg);
        }
        if ((a->from && !*a->from) || (a->to && !*a->to)) {
            return lh_err_set(err, LH_EINVAL, "leaks: --from and --to need a label");
        }
    }
    if (!a->path && !a->help) {
        return lh_err_set(err, LH_EINVAL, "leaks: which trace? usage: leakhound leaks FILE");
    }
    return 0;
}

int
lh_cmd_leaks(int argc, char **argv, lh_err_t *err)
{
    leaks_args_t a = {0};
    lh_pass_t p;
    lh_diff_t d;
    lh_site_t *sites = NULL;
    uint32_t *ids = NULL;
    size_t n_shown = 0;
    int have_diff = 0;
    int rc = parse_args(argc, argv, &a, err);
    if (rc < 0 || a.help) {
        if (a.help) {
            fputs(lh_cmd_leaks_usage, stdout);
        }
        return rc;
    }
    lh_timeline_opts_t tlo = {0};
    tlo.diff = 1;
    tlo.diff_to = a.to;
    if ((rc = lh_pass_run(&p, a.path, a.salvage, &tlo, NULL, err)) < 0) {
        return rc;
    }
    lh_diff_opts_t dopts = {a.kind, a.from, a.skip};
    if ((rc = lh_timeline_diff(p.tl, p.r, &dopts, &d, err)) < 0) {
        goto done;
    }
    have_diff = 1;
    n_shown = a.top && a.top < d.n_sites ? a.top : d.n_sites;
    if (!(ids = malloc((n_shown ? n_shown : 1) * sizeof *ids))) {
        rc = lh_err_set(err, LH_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n_shown; i++) {
        ids[i] = d.sites[i].stack_id;
    }
    if ((rc = lh_pass_sites(&p, ids, n_shown, &sites, err)) < 0) {
        goto done;
    }
    lh_pass_warnings(&p);
    lh_tl_view_t v;
    lh_pass_view(&p, a.json, &v);
    rc = lh_view_leaks(stdout, &v, &d, sites, n_shown, err);
done:
    lh_pass_sites_free(sites, n_shown);
    free(ids);
    if (have_diff) {
        lh_diff_fini(&d);
    }
    lh_pass_close(&p);
    return rc < 0 ? rc : 0;
}
