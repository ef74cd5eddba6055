/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_report_by.c: `leakhound report FILE --by function`: where the memory went, per
 * function, inclusive and exclusive (analysis/funcs.h).
 */
#include <stdio.h>

#include "cmd.h"
#include "funcs.h"
#include "funcs_view.h"
#include "load.h"

int
lh_cmd_report_by(int argc, char **argv, lh_err_t *err)
{
    lh_trace_args_t la = {0};
    lh_load_funcs_t lf;
    unsigned long top = 20;
    int metric = LH_METRIC_LEAKED, by = 0, sort = 1, rc;
    const lh_opt_t opts[] = {
        {"--by", NULL, LH_OPT_CHOICE, &by, 0, 0, "function"},
        {"--sort", NULL, LH_OPT_CHOICE, &sort, 0, 0, "inclusive|exclusive"},
        LH_OPT_METRIC(&metric),
        LH_OPT_TOP(&top),
    };
    if ((rc = LH_ARGS_PARSE(report, LH_ARGS_FORMAT, opts, argc, argv, &la, err)) != 0 ||
        (rc = lh_load_funcs(&la, NULL, &lf, err)) < 0) {
        return rc < 0 ? rc : 0;
    }
    lh_funcs_view_t v = {la.name, lf.cwd, (lh_metric_t)metric, sort == 0, top};
    lh_funcs_sort(&lf.f, v.inclusive, v.metric);
    rc = la.json ? lh_view_funcs_json(stdout, &lf.f, &v, err)
                 : lh_view_funcs_text(stdout, &lf.f, &v, err);
    lh_load_funcs_fini(&lf);
    return rc < 0 ? rc : 0;
}
