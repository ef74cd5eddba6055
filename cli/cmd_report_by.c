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
    lh_load_args_t load;
    lh_metric_t metric;
    int inclusive;
    unsigned long top;
    int json;
    int help;
} by_args_t;

static int
parse_args(int argc, char **argv, by_args_t *a, lh_err_t *err)
{
    a->top = 20;
    a->metric = LH_METRIC_LEAKED;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *v;
        int missing = 0, rc;
        if ((rc = lh_load_arg("report", argc, argv, &i, &a->load, &a->help, err)) != 0) {
            if (rc < 0) {
                return rc;
            }
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--by", &missing))) {
            if (strcmp(v, "function") != 0 && strcmp(v, "func") != 0) {
                return lh_err_set(err, LH_EINVAL, "report: --by: only 'function' (got '%s')", v);
            }
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--sort", &missing))) {
            if (strcmp(v, "inclusive") == 0 || strcmp(v, "incl") == 0) {
                a->inclusive = 1;
            } else if (strcmp(v, "exclusive") == 0 || strcmp(v, "excl") == 0) {
                a->inclusive = 0;
            } else {
                return lh_err_set(err, LH_EINVAL, "report: --sort: inclusive or exclusive, got "
                                  "'%s'", v);
            }
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--metric", &missing))) {
            if (lh_metric_parse(v, &a->metric) < 0) {
                return lh_err_set(err, LH_EINVAL, "report: --metric: allocated, leaked, peak or "
                                  "growth, got '%s'", v);
            }
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--top", &missing)) ||
                   (v = lh_cli_opt_value(argc, argv, &i, "-n", &missing))) {
            if (lh_cli_parse_uint("--top", v, 0, 100000000, &a->top, err) < 0) {
                return LH_EINVAL;
            }
        } else if ((v = lh_cli_opt_value(argc, argv, &i, "--format", &missing))) {
            if (strcmp(v, "json") != 0 && strcmp(v, "text") != 0) {
                return lh_err_set(err, LH_EINVAL, "report: unknown format '%s' (text or json)", v);
            }
            a->json = strcmp(v, "json") == 0;
        } else if (missing) {
            return lh_err_set(err, LH_EINVAL, "report: option '%s' needs a value", arg);
        } else {
            return lh_err_set(err, LH_EINVAL, "report --by function: unknown option '%s' (see "
                              "leakhound help report)", arg);
        }
    }
    if (!a->load.path && !a->help) {
        return lh_err_set(err, LH_EINVAL, "report: which trace? usage: leakhound report FILE "
                          "--by function");
    }
    return 0;
}

int
lh_cmd_report_by(int argc, char **argv, lh_err_t *err)
{
    by_args_t a = {0};
    lh_collect_t *c = NULL;
    lh_supp_t supp;
    lh_funcs_t f;
    int have_supp = 0, have_f = 0;
    char cwd[PATH_MAX];
    int rc = parse_args(argc, argv, &a, err);
    if (rc < 0 || a.help) {
        if (a.help) {
            fputs(lh_cmd_report_usage, stdout);
        }
        return rc;
    }
    if ((rc = lh_load_suppressions(&a.load, &supp, err)) < 0) {
        return rc;
    }
    have_supp = 1;
    if ((rc = lh_load_run(&a.load, NULL, &c, err)) < 0 ||
        (rc = lh_funcs_build(&f, c, supp.n ? &supp : NULL, err)) < 0) {
        goto done;
    }
    have_f = 1;
    lh_funcs_sort(&f, a.inclusive, a.metric);
    lh_funcs_view_t v = {a.load.path, getcwd(cwd, sizeof cwd), a.metric, a.inclusive, a.top};
    rc = a.json ? lh_view_funcs_json(stdout, &f, &v, err) : lh_view_funcs_text(stdout, &f, &v, err);
    lh_load_sym_warnings(c);
done:
    if (have_f) {
        lh_funcs_fini(&f);
    }
    if (have_supp) {
        lh_supp_fini(&supp);
    }
    lh_collect_free(c);
    return rc < 0 ? rc : 0;
}
