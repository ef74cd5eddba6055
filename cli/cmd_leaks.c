/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_leaks.c: `leakhound leaks FILE`: the differential leak report. Blocks allocated in
 * an interval between two snapshots (or marks) that are still live at every later one are
 * that interval's leaks; sites are ranked by how much and how steadily they leak.
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "pass.h"

const char lh_cmd_leaks_usage[] =
    "usage: leakhound leaks FILE [--from LABEL] [--to LABEL] [--skip N] [--top N]\n"
    "                       [--use snapshots|marks]\n"
    "\n"
    "The differential leak report: what a program keeps piling up while it runs, even when\n"
    "it frees it all at exit. The run is cut into intervals by its snapshots (taken while\n"
    "it ran: --snapshot-every, --snapshot-signal, --snapshot-on-growth, lh_snapshot()), or\n"
    "by its marks (lh_mark()) when it has none. A block allocated in an interval and still\n"
    "live at every later snapshot up to --to counts as a leak of that interval. Sites are\n"
    "ranked by score = leaked bytes x (intervals in which the site leaked / intervals).\n"
    "\n"
    "  --from LABEL   start at this snapshot or mark (default: the first)\n"
    "  --to LABEL     end at this one (default: the last, not counting the exit snapshot,\n"
    "                 unless a single snapshot was taken while running)\n"
    "                 LABEL is a label (--from: its first use, --to: its last), LABEL#N for\n"
    "                 its N-th use, or #N for the N-th snapshot or mark\n"
    "  --skip N       skip the first N intervals as start-up (default 1; 0 with --from)\n"
    "  --top N        show the N best-scored sites (default 10; 0: all)\n"
    "  --use KIND     snapshots or marks, instead of choosing\n";

typedef struct leaks_args {
    lh_trace_args_t load;
    lh_timeline_opts_t tlo; /* what the pass builds */
    const char *from, *to;
    long skip;
    unsigned long top;
    int kind;               /* lh_bound_kind_t (--use) */
} leaks_args_t;

static int
parse_args(int argc, char **argv, leaks_args_t *a, lh_err_t *err)
{
    unsigned long skip = ULONG_MAX;
    int rc;
    const lh_opt_t opts[] = {
        {"--from", NULL, LH_OPT_STR, &a->from, 0, 0, NULL},
        {"--to", NULL, LH_OPT_STR, &a->to, 0, 0, NULL},
        {"--skip", NULL, LH_OPT_UINT, &skip, 0, 100000000, NULL},
        LH_OPT_TOP(&a->top),
        LH_OPT_USE(&a->kind),
    };
    a->kind = LH_BOUND_AUTO;
    a->top = 10;
    if ((rc = LH_ARGS_PARSE(leaks, LH_ARGS_FORMAT, opts, argc, argv, &a->load, err)) != 0) {
        return rc;
    }
    a->skip = skip == ULONG_MAX ? -1 : (long)skip;
    a->tlo.diff = 1;
    a->tlo.series = 1; /* for the growth model's trend of each site */
    a->tlo.diff_to = a->to;
    return 0;
}

static uint32_t
site_stack(const void *row)
{
    return ((const lh_diff_site_t *)row)->stack_id;
}

static void
free_site(void *row)
{
    lh_diff_site_t *s = row;
    free(s->blocks);
    free(s->bytes);
}

int
lh_cmd_leaks(int argc, char **argv, lh_err_t *err)
{
    leaks_args_t a = {0};
    lh_pass_t p;
    lh_diff_t d = {0};
    size_t n_shown = 0;
    int rc = parse_args(argc, argv, &a, err);
    if (rc != 0 || (rc = lh_pass_run(&p, &a.load, &a.tlo, NULL, NULL, err)) < 0) {
        return rc < 0 ? rc : 0;
    }
    lh_diff_opts_t dopts = {a.kind, a.from, a.skip};
    if ((rc = lh_timeline_diff(p.tl, p.r, &dopts, &d, err)) < 0) {
        rc = lh_pass_advise(rc, d.why, err);
        goto done;
    }
    if ((rc = lh_diff_trends(p.tl, &d, err)) < 0) {
        goto done;
    }
    if ((rc = lh_pass_drop_suppressed(&p, d.sites, &d.n_sites, sizeof *d.sites, site_stack,
                                      free_site, err)) < 0) {
        goto done;
    }
    d.total_blocks = LH_ROWS_SUM(d.sites, d.n_sites, lh_diff_site_t, total_blocks);
    d.total_bytes = LH_ROWS_SUM(d.sites, d.n_sites, lh_diff_site_t, total_bytes);
    n_shown = a.top && a.top < d.n_sites ? a.top : d.n_sites;
    if ((rc = lh_pass_show(&p, d.sites, sizeof *d.sites, offsetof(lh_diff_site_t, stack_id),
                           n_shown, err)) < 0) {
        goto done;
    }
    rc = lh_view_leaks(stdout, &p.view, &d, p.sites, n_shown, err);
done:
    lh_diff_fini(&d);
    lh_pass_close(&p);
    return rc < 0 ? rc : 0;
}
