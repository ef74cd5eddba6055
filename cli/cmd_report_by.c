/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_report_by.c: `leakhound report FILE --by function`: where the memory went, per
 * function, inclusive and exclusive (analysis/funcs.h).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "funcs.h"
#include "funcs_view.h"
#include "load.h"

typedef struct by_args {
    lh_trace_args_t load;
    lh_metric_t metric;
    int inclusive;
    unsigned long top;
} by_args_t;

static int
parse_args(int argc, char **argv, by_args_t *a, lh_err_t *err)
{
    int metric = LH_METRIC_LEAKED, by = 0, sort = 1, rc;
    const lh_opt_t opts[] = {
        {"--by", NULL, LH_OPT_CHOICE, &by, 0, 0, "function"},
        {"--sort", NULL, LH_OPT_CHOICE, &sort, 0, 0, "inclusive|exclusive"},
        {"--metric", NULL, LH_OPT_CHOICE, &metric, 0, 0, LH_METRIC_CHOICES},
        {"--top", "-n", LH_OPT_UINT, &a->top, 0, 100000000, NULL},
    };
    a->top = 20;
    if ((rc = LH_ARGS_PARSE(report, LH_ARGS_FORMAT, opts, argc, argv, &a->load, err)) != 0) {
        return rc;
    }
    a->metric = (lh_metric_t)metric;
    a->inclusive = sort == 0;
    return 0;
}

int
lh_cmd_report_by(int argc, char **argv, lh_err_t *err)
{
    by_args_t a = {0};
    lh_load_funcs_t lf;
    char cwd[PATH_MAX];
    int rc = parse_args(argc, argv, &a, err);
    if (rc != 0 || (rc = lh_load_funcs(&a.load, NULL, &lf, err)) < 0) {
        return rc < 0 ? rc : 0;
    }
    lh_funcs_sort(&lf.f, a.inclusive, a.metric);
    lh_funcs_view_t v = {a.load.path, getcwd(cwd, sizeof cwd), a.metric, a.inclusive, a.top};
    rc = a.load.json ? lh_view_funcs_json(stdout, &lf.f, &v, err)
                     : lh_view_funcs_text(stdout, &lf.f, &v, err);
    lh_load_funcs_fini(&lf);
    return rc < 0 ? rc : 0;
}
