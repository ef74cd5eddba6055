/* leakhound - SPDX-License-Identifier: MIT
 *
 * check.h: `leakhound run --check`: the CI verdict on a trace, like LeakSanitizer's or
 * `valgrind --error-exitcode`: fail when the program leaked more than allowed, after
 * suppressions.
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
} lh_check_opts_t;

/* Analyses trace and prints one line on standard error: "leakhound: check passed: ..." or
 * "leakhound: check failed: N bytes leaked in B blocks from S sites (allowed M); largest
 * ...". Returns 0 (passed), LH_EXIT_CHECK_LEAK (failed), or a negative LH_E* code. */
int lh_check_trace(const char *trace, const lh_check_opts_t *o, lh_err_t *err);

#endif /* LH_CLI_CHECK_H */
