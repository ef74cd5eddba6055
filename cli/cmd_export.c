/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_export.c: `leakhound export FILE`: the trace's aggregates as an SQLite database, a
 * pprof profile and/or folded stacks, from one pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dupstr.h"
#include "folded.h"
#include "funcs.h"
#include "load.h"
#include "pprof.h"
#include "sqlite.h"

const char lh_cmd_export_usage[] =
    "usage: leakhound export FILE [--sqlite OUT.db [--events]] [--pprof OUT.pb.gz [--at LABEL]]\n"
    "                        [--folded OUT.txt [--metric M]]\n"
    "\n"
    "Writes what a trace holds in formats other tools read, all from one pass:\n"
    "  --sqlite OUT.db   stacks, frames, sites, functions, marks and snapshots with each\n"
    "                    site's live set, RSS samples (docs/SQLITE.md has the schema)\n"
    "  --events          also every event (big: one row per allocation and free)\n"
    "  --pprof OUT.pb.gz a gzipped pprof profile: alloc_objects, alloc_space, inuse_objects,\n"
    "                    inuse_space (`go tool pprof -top OUT.pb.gz`)\n"
    "  --at LABEL        in use at that mark or snapshot instead of at exit: LABEL (the last\n"
    "                    one so labelled), LABEL#N (the N-th so labelled) or #N (the N-th)\n"
    "  --folded OUT.txt  folded stacks, `main;f;g bytes` a line (flamegraph.pl, speedscope)\n"
    "  --metric M        for --folded: leaked (default), allocated, peak, growth or allocations\n"
    "Each OUT may be - for standard output. Suppressed stacks are left out of the pprof\n"
    "profile and the folded stacks.\n";

typedef struct export_args {
    lh_trace_args_t load;
    const char *sqlite, *pprof, *folded, *at;
    int events;
    int metric;             /* lh_metric_t */
} export_args_t;

static int
parse_args(int argc, char **argv, export_args_t *a, lh_err_t *err)
{
    int rc;
    const lh_opt_t opts[] = {
        {"--events", NULL, LH_OPT_BOOL, &a->events, 0, 0, NULL},
        {"--sqlite", NULL, LH_OPT_STR, &a->sqlite, 0, 0, NULL},
        {"--pprof", NULL, LH_OPT_STR, &a->pprof, 0, 0, NULL},
        {"--folded", NULL, LH_OPT_STR, &a->folded, 0, 0, NULL},
        {"--at", NULL, LH_OPT_STR, &a->at, 0, 0, NULL},
        LH_OPT_METRIC(&a->metric),
    };
    a->metric = LH_METRIC_LEAKED;
    if ((rc = LH_ARGS_PARSE(export, 0, opts, argc, argv, &a->load, err)) != 0) {
        return rc;
    }
    if (!a->sqlite && !a->pprof && !a->folded) {
        return lh_err_set(err, LH_EINVAL, "export: nothing to write: give --sqlite, --pprof "
                          "and/or --folded");
    }
    if (a->events && !a->sqlite) {
        return lh_err_set(err, LH_EINVAL, "export: --events goes with --sqlite");
    }
    if (a->at && !a->pprof) {
        return lh_err_set(err, LH_EINVAL, "export: --at goes with --pprof");
    }
    return 0;
}

static int
write_pprof(const export_args_t *a, lh_collect_t *c, const lh_supp_t *supp, lh_err_t *err)
{
    lh_profile_opts_t po = {NULL, NULL, supp};
    lh_profile_t d;
    uint64_t *bytes = NULL, *blocks = NULL;
    int rc;
    if (a->at) {
        size_t n = lh_collect_n_stacks(c), n_pts;
        const lh_boundary_t *pts = lh_timeline_all_bounds(lh_collect_timeline(c), &n_pts);
        long p = lh_bound_find(pts, n_pts, a->at, 1);
        if (p < 0) {
            char labels[320];
            lh_bound_labels(pts, n_pts, labels, sizeof labels);
            return lh_err_set(err, LH_EINVAL, "export: --at %s: no such mark or snapshot in %s "
                              "(it has %zu: %s)", a->at, a->load.name, n_pts, labels);
        }
        bytes = calloc(n ? n : 1, sizeof *bytes);
        blocks = calloc(n ? n : 1, sizeof *blocks);
        if (!bytes || !blocks) {
            LH_FREE_ALL(bytes, blocks);
            return lh_err_set(err, LH_ENOMEM, "out of memory");
        }
        lh_timeline_at(lh_collect_timeline(c), (size_t)p, n, bytes, blocks);
        po.inuse_bytes = bytes;
        po.inuse_blocks = blocks;
    }
    if ((rc = lh_profile_build(&d, c, &po, err)) >= 0) {
        rc = lh_view_pprof(a->pprof, &d, lh_trace_parts(lh_collect_trace(c))->path, a->at, err);
        lh_profile_fini(&d);
    }
    LH_FREE_ALL(bytes, blocks);
    return rc;
}

int
lh_cmd_export(int argc, char **argv, lh_err_t *err)
{
    export_args_t a = {0};
    lh_collect_opts_t co = {0};
    lh_collect_t *c = NULL;
    lh_sqlite_out_t *db = NULL;
    lh_supp_t supp;
    lh_funcs_t f = {0}; /* lh_funcs_fini is a no-op on it until built */
    int rc = parse_args(argc, argv, &a, err);
    if (rc != 0 || (rc = lh_load_suppressions(&a.load, &supp, err)) < 0) {
        return rc < 0 ? rc : 0;
    }
    const lh_supp_t *sp = NULL;
    if (a.sqlite) {
        if ((rc = lh_sqlite_open(a.sqlite, a.events, &db, err)) < 0) {
            goto done;
        }
        if (a.events) {
            co.on_event = lh_sqlite_event;
            co.event_ctx = db;
        }
    }
    if ((rc = lh_load_run(&a.load, &co, NULL, &c, err)) < 0 ||
        (a.load.default_supp &&
         (rc = lh_load_embedded_supp(&supp, lh_collect_trace(c), err)) < 0)) {
        goto done;
    }
    sp = supp.n ? &supp : NULL;
    if ((rc = lh_funcs_build(&f, c, sp, err)) < 0) {
        goto done;
    }
    if (db && (rc = lh_sqlite_finish(db, c, &f, err)) < 0) {
        goto done;
    }
    if (a.pprof && (rc = write_pprof(&a, c, sp, err)) < 0) {
        goto done;
    }
    if (a.folded) {
        FILE *out = lh_load_out_open(a.folded, err);
        rc = !out ? LH_EIO
                  : lh_load_out_close(out, a.folded, lh_view_folded(out, c, &f, sp, a.metric, err),
                                      err);
        if (rc < 0) {
            goto done;
        }
    }
    lh_load_sym_warnings(c);
done:
    lh_sqlite_close(db);
    lh_funcs_fini(&f);
    lh_supp_fini(&supp);
    lh_collect_free(c);
    return rc < 0 ? rc : 0;
}
