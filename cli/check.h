/* leakhound - SPDX-License-Identifier: MIT
 *
 * check.h: `leakhound run --check`: the CI verdict on a trace, like LeakSanitizer's or
 * `valgrind --error-exitcode`: fail when the program leaked more than allowed, after
 * suppressions. What leaked is what nothing reaches at exit: the blocks the exit snapshot's
 * reference graph finds definitely or indirectly lost (leaksplit.h), LeakSanitizer's direct
 * and indirect leaks; a block a global, a thread's stack or TLS still points to, even
 * through an interior pointer only (possibly lost), is not a failure, as LeakSanitizer
 * takes any pointer into a block as a reference (its use_globals, use_stacks, use_tls
 * tests). With count_reachable (all four classes count), or when
 * the trace has no such snapshot (--snapshot-contents none, --sample-rate,
 * --no-snapshot-at-exit), every block live at exit counts.
 */
#ifndef LH_CLI_CHECK_H
#define LH_CLI_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "opts.h"

typedef struct lh_check_opts {
    uint64_t max_leak_bytes;    /* allowed leaked bytes (default 0) */
    lh_opt_files_t supp_files;  /* --suppressions */
    int no_default_supp;        /* --no-default-suppressions */
    int count_reachable;        /* --check-reachable: possibly lost and still reachable
                                   blocks count too */
} lh_check_opts_t;

/* Analyses trace and prints one line on standard error: "leakhound: check passed: ..." or
 * "leakhound: check failed: N bytes lost in B blocks from S sites (definitely D, indirectly
 * I bytes; not counted: possibly lost P, still reachable R bytes); largest ... (allowed M)"
 * ("leaked", without the classes, when every live block counts). Fails when the bytes
 * counted exceed max_leak_bytes, or, with max_leak_bytes 0, when any block counts (a lost
 * malloc(0)). Returns 0 (passed), LH_EXIT_CHECK_LEAK (failed), or a negative LH_E* code. */
int lh_check_trace(const char *trace, const lh_check_opts_t *o, lh_err_t *err);

/* The verdict on one more process of the run (`run --check` judges every process it
 * traced, as LeakSanitizer checks each process at its exit): the same as lh_check_trace,
 * its line naming the process ("leakhound: check failed: process 1235 (prog): ..."), but
 * only when the trace ended by exit() or a return from main, where LeakSanitizer checks; a
 * process that ended by _exit, by exec or by a signal, or whose trace has no end, is not
 * judged (its blocks are its parent's or the next program's) and LH_CHECK_NOT_JUDGED is
 * returned with nothing printed. */
#define LH_CHECK_NOT_JUDGED 1
int lh_check_process(const char *trace, const lh_check_opts_t *o, long pid, const char *prog,
                     lh_err_t *err);

#endif /* LH_CLI_CHECK_H */
