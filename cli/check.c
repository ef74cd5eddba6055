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
#include "load.h"
#include "stream.h"
#include "report.h"
#include "suppress.h"
#include "symbolize.h"
#include "text.h"
#include "trace.h"

static void
print_verdict(const lh_report_t *rep, const lh_check_opts_t *o, const char *trace, int failed)
{
    char h[32], s[32], cwd[PATH_MAX];
    uint64_t bytes = lh_report_leaked_bytes(rep);
    uint64_t blocks = lh_report_leaked_blocks(rep);
    fprintf(stderr, "leakhound: check %s: %s (%" PRIu64 " bytes) leaked in %" PRIu64
                    " block%s from %zu site%s",
            failed ? "failed" : "passed", lh_text_human_bytes(h, sizeof h, bytes), bytes, blocks,
            blocks == 1 ? "" : "s", rep->n_leak_sites, rep->n_leak_sites == 1 ? "" : "s");
    if (failed && rep->n_sites) {
        fputs("; largest ", stderr);
        lh_text_human_bytes(h, sizeof h, rep->sites[0].stats.live_bytes);
        fprintf(stderr, "%s at ", h);
        lh_text_location(stderr, &rep->sites[0], getcwd(cwd, sizeof cwd));
        const lh_site_t *site = &rep->sites[0];
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

int
lh_check_trace(const char *trace, const lh_check_opts_t *o, lh_err_t *err)
{
    lh_stream_opts_t so = {1, NULL, 0, NULL, NULL}; /* salvage: a crashed program is still
                                                       checked */
    lh_trace_t *t = NULL;
    lh_replay_t *r = NULL;
    lh_symbolizer_t *sym = NULL;
    lh_report_t rep = {0};
    lh_report_opts_t ropts = {0};
    lh_sym_opts_t sopts = {0};
    lh_supp_t supp;
    int have_rep = 0;
    int rc = lh_load_supp(&supp, !o->no_default_supp, &o->supp_files, err);
    if (rc < 0 || (rc = lh_stream_run(trace, &so, &t, &r, err)) < 0) {
        goto done;
    }
    sopts.exe_path = lh_trace_parts(t)->info.exe;
    if ((rc = lh_sym_new(&lh_trace_parts(t)->modules, &sopts, &sym, err)) < 0 ||
        (rc = lh_report_build(&rep, t, r, sym, &ropts, err)) < 0) {
        goto done;
    }
    have_rep = 1;
    lh_report_suppress(&rep, &supp, 0);
    uint64_t leaked = lh_report_leaked_bytes(&rep);
    int failed = leaked > o->max_leak_bytes;
    print_verdict(&rep, o, trace, failed);
    rc = failed ? LH_EXIT_CHECK_LEAK : 0;
done:
    if (have_rep) {
        lh_report_fini(&rep);
    }
    lh_supp_fini(&supp);
    lh_sym_free(sym);
    lh_replay_free(r);
    lh_trace_close(t);
    return rc;
}
