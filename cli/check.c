/* leakhound - SPDX-License-Identifier: MIT
 *
 * check.c: the --check verdict.
 */
#include "check.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "leaksplit.h"
#include "load.h"
#include "stream.h"
#include "report.h"
#include "suppress.h"
#include "symbolize.h"
#include "text.h"
#include "trace.h"

/* What the verdict counts: with the exit snapshot's split (leaksplit.h), the blocks
 * definitely and indirectly lost, LeakSanitizer's direct and indirect leaks. A block only an
 * interior pointer reaches (possibly lost) is not counted: LeakSanitizer takes any pointer
 * into a block as a reference (a C++ object through a base class, CPython's objects through
 * their bytes), and a CI check must not fail on what the program still reaches. Without the
 * split, or with --check-reachable, every block live at exit counts. */
typedef struct check_count {
    int by_class;                       /* counted from the split */
    uint64_t bytes, blocks;             /* what counts */
    uint64_t cls[LH_CLASS_COUNT];       /* by_class: bytes by class, reachable included */
    size_t n_sites;                     /* sites with something counted */
    const lh_site_t *largest;           /* the site with the most bytes counted, or NULL */
    uint64_t largest_bytes;
} check_count_t;

static void
count_leaks(const lh_report_t *rep, const lh_leak_split_t *split, int reachable_too,
            check_count_t *c)
{
    memset(c, 0, sizeof *c);
    c->by_class = split != NULL;
    if (!split) {
        c->bytes = lh_report_leaked_bytes(rep);
        c->blocks = lh_report_leaked_blocks(rep);
        c->n_sites = rep->n_leak_sites;
        if (rep->n_sites) {
            c->largest = &rep->sites[0];
            c->largest_bytes = rep->sites[0].stats.live_bytes;
        }
        return;
    }
    /* the report was built with every site, suppressed ones removed: sum what is left */
    for (size_t i = 0; i < rep->n_sites; i++) {
        const lh_class_counts_t *k = lh_leak_split_site(split, rep->sites[i].stack_id);
        if (!k) {
            continue;
        }
        uint64_t bytes = 0, blocks = 0;
        for (int cl = 0; cl < LH_CLASS_COUNT; cl++) {
            c->cls[cl] += k->bytes[cl];
            if (cl == LH_CLASS_DEFINITE || cl == LH_CLASS_INDIRECT || reachable_too) {
                bytes += k->bytes[cl];
                blocks += k->blocks[cl];
            }
        }
        c->bytes += bytes;
        c->blocks += blocks;
        c->n_sites += blocks != 0;
        if (blocks && (!c->largest || bytes > c->largest_bytes)) {
            c->largest = &rep->sites[i];
            c->largest_bytes = bytes;
        }
    }
}

/* The process a verdict is about, when it is not the run's program itself. */
typedef struct check_who {
    long pid;
    const char *prog;
} check_who_t;

static void
print_verdict(const lh_report_t *rep, const lh_check_opts_t *o, const check_count_t *c,
              const char *trace, const check_who_t *who, int failed)
{
    char h[32], s[32], cwd[PATH_MAX];
    fprintf(stderr, "leakhound: check %s: ", failed ? "failed" : "passed");
    if (who) {
        fprintf(stderr, "process %ld (", who->pid);
        lh_text_clean(stderr, who->prog);
        fputs("): ", stderr);
    }
    fprintf(stderr, "%s (%" PRIu64 " bytes) %s in %" PRIu64 " block%s from %zu site%s",
            lh_text_human_bytes(h, sizeof h, c->bytes), c->bytes,
            c->by_class && !o->count_reachable ? "lost" : "leaked", c->blocks,
            c->blocks == 1 ? "" : "s", c->n_sites, c->n_sites == 1 ? "" : "s");
    if (c->by_class) {
        fprintf(stderr, " (definitely %" PRIu64 ", indirectly %" PRIu64 " bytes; %s possibly "
                        "lost %" PRIu64 ", still reachable %" PRIu64 " bytes)",
                c->cls[LH_CLASS_DEFINITE], c->cls[LH_CLASS_INDIRECT],
                o->count_reachable ? "counted too:" : "not counted:", c->cls[LH_CLASS_POSSIBLE],
                c->cls[LH_CLASS_REACHABLE]);
    } else if (!o->count_reachable) {
        fputs(" (every block live at exit: no exit snapshot with pointers to tell the lost ones)",
              stderr);
    }
    if (failed && c->largest) {
        const lh_site_t *site = c->largest;
        fprintf(stderr, "; largest %s at ", lh_text_human_bytes(h, sizeof h, c->largest_bytes));
        lh_text_location(stderr, site, getcwd(cwd, sizeof cwd));
        if (site->location >= 0 && site->frames[site->location].function) {
            fputs(" in ", stderr);
            lh_text_clean(stderr, site->frames[site->location].function);
        }
        lh_text_user_frame(stderr, site, cwd);
    }
    fprintf(stderr, " (allowed %" PRIu64 " bytes", o->max_leak_bytes);
    if (rep->n_suppressed_sites) {
        fprintf(stderr, "; %s suppressed", lh_text_human_bytes(s, sizeof s, rep->suppressed_bytes));
    }
    fputc(')', stderr);
    if (failed) {
        fputs("; see leakhound report ", stderr);
        lh_text_clean(stderr, trace);
        if (o->supp_files.n || !o->no_default_supp) {
            fputs(" --default-suppressions", stderr);
            for (size_t i = 0; i < o->supp_files.n; i++) {
                fputs(" --suppressions ", stderr);
                lh_text_clean(stderr, o->supp_files.v[i]);
            }
        }
    }
    fputc('\n', stderr);
}

static int
check_one(const char *trace, const lh_check_opts_t *o, const check_who_t *who, lh_err_t *err)
{
    /* salvage: a crashed program is still checked; the split's consumer captures the exit
     * snapshot's live set in the same pass */
    lh_consumer_t hook = {NULL, NULL, 0};
    lh_stream_opts_t so = {1, &hook, 1, NULL, NULL};
    lh_trace_t *t = NULL;
    lh_replay_t *r = NULL;
    lh_symbolizer_t *sym = NULL;
    lh_report_t rep = {0};
    lh_report_opts_t ropts = {0};
    lh_sym_opts_t sopts = {0};
    lh_supp_t supp;
    lh_leak_split_t split;
    check_count_t count;
    int have_rep = 0, have_split = 0;
    lh_leak_split_init(&split);
    int rc = lh_load_supp(&supp, !o->no_default_supp, &o->supp_files, err);
    if (rc < 0 || (rc = lh_leak_split_begin(&split, trace, &hook, err)) < 0 ||
        (rc = lh_stream_run(trace, &so, &t, &r, err)) < 0 ||
        (!o->no_default_supp && (rc = lh_load_embedded_supp(&supp, t, err)) < 0)) {
        goto done;
    }
    if (who && (!lh_trace_parts(t)->end.present || lh_trace_parts(t)->end.kind != LH_EXIT_NORMAL)) {
        rc = LH_CHECK_NOT_JUDGED; /* LeakSanitizer checks at exit only */
        goto done;
    }
    have_split = lh_load_split(&split, t, "; every block live at exit counts");
    ropts.split = have_split ? &split : NULL;
    sopts.exe_path = lh_trace_parts(t)->info.exe;
    if ((rc = lh_sym_new(&lh_trace_parts(t)->modules, &sopts, &sym, err)) < 0 ||
        (rc = lh_report_build(&rep, t, r, sym, &ropts, err)) < 0) {
        goto done;
    }
    have_rep = 1;
    lh_report_suppress(&rep, &supp, 0);
    count_leaks(&rep, have_split ? &split : NULL, o->count_reachable, &count);
    /* a lost malloc(0) block is a leak too (LeakSanitizer counts it as 1 byte): when nothing
     * is allowed, any block counted fails */
    int failed = count.bytes > o->max_leak_bytes || (!o->max_leak_bytes && count.blocks);
    print_verdict(&rep, o, &count, trace, who, failed);
    rc = failed ? LH_EXIT_CHECK_LEAK : 0;
done:
    if (have_rep) {
        lh_report_fini(&rep);
    }
    lh_supp_fini(&supp);
    lh_leak_split_fini(&split);
    lh_sym_free(sym);
    lh_replay_free(r);
    lh_trace_close(t);
    return rc;
}

int
lh_check_trace(const char *trace, const lh_check_opts_t *o, lh_err_t *err)
{
    return check_one(trace, o, NULL, err);
}

int
lh_check_process(const char *trace, const lh_check_opts_t *o, long pid, const char *prog,
                 lh_err_t *err)
{
    check_who_t who = {pid, prog};
    return check_one(trace, o, &who, err);
}
