/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_report.c: `leakhound report FILE`: reads a trace, replays it, symbolizes the top
 * leak sites and prints the report as text or JSON.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "json.h"
#include "replay.h"
#include "report.h"
#include "symbolize.h"
#include "text.h"
#include "trace.h"

const char lh_cmd_report_usage[] =
    "usage: leakhound report FILE [--top N] [--format text|json] [--salvage]\n"
    "\n"
    "Reads a trace written by `leakhound run` and reports the blocks still allocated when\n"
    "the program ended, grouped by allocation stack, largest first.\n"
    "\n"
    "  --top N          show the N largest sites (default 10; 0: all)\n"
    "  --format FORMAT  text (default) or json\n"
    "  --salvage        report a truncated or damaged trace up to the damage\n";

typedef struct report_args {
    const char *path;
    unsigned long top;
    int json;
    int salvage;
    int help;
} report_args_t;

/* "--name VALUE" or "--name=VALUE": returns the value and advances *i, or NULL. */
static const char *
opt_value(int argc, char **argv, int *i, const char *name, int *missing)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n) != 0) {
        return NULL;
    }
    if (a[n] == '=') {
        return a + n + 1;
    }
    if (a[n] != '\0') {
        return NULL;
    }
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    return argv[++*i];
}

static int
parse_args(int argc, char **argv, report_args_t *a, lh_err_t *err)
{
    int only_files = 0;
    a->top = 10;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *v;
        int missing = 0;
        if (only_files || arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (a->path) {
                return lh_err_set(err, LH_EINVAL, "report: one trace at a time (got '%s' and "
                                  "'%s')", a->path, arg);
            }
            a->path = arg;
        } else if (strcmp(arg, "--") == 0) {
            only_files = 1;
        } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            a->help = 1;
        } else if (strcmp(arg, "--salvage") == 0) {
            a->salvage = 1;
        } else if ((v = opt_value(argc, argv, &i, "--top", &missing)) ||
                   (v = opt_value(argc, argv, &i, "-n", &missing))) {
            if (lh_cli_parse_uint("--top", v, 0, 1000000, &a->top, err) < 0) {
                return LH_EINVAL;
            }
        } else if ((v = opt_value(argc, argv, &i, "--format", &missing))) {
            if (strcmp(v, "json") == 0) {
                a->json = 1;
            } else if (strcmp(v, "text") == 0) {
                a->json = 0;
            } else {
                return lh_err_set(err, LH_EINVAL,
                                  "report: unknown format '%s' (text or json)", v);
            }
        } else if (missing) {
            return lh_err_set(err, LH_EINVAL, "report: option '%s' needs a value", arg);
        } else {
            return lh_err_set(err, LH_EINVAL, "report: unknown option '%s' (see leakhound help "
                              "report)", arg);
        }
    }
    if (!a->path && !a->help) {
        return lh_err_set(err, LH_EINVAL, "report: which trace? usage: leakhound report FILE");
    }
    return 0;
}

static void
print_warnings(const lh_warnings_t *w)
{
    for (size_t i = 0; i < w->n; i++) {
        fprintf(stderr, "leakhound: warning: %s\n", w->msgs[i]);
    }
}

/* Reads the whole trace into the heap model. */
static int
replay_all(lh_trace_t *t, lh_replay_t *r, lh_err_t *err)
{
    lh_event_t ev;
    int rc;
    while ((rc = lh_trace_next(t, &ev, err)) > 0) {
        if ((rc = lh_replay_event(r, &ev, err)) < 0) {
            return rc;
        }
    }
    if (rc == LH_ETRUNC || rc == LH_EFORMAT) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        return lh_err_set(err, rc, "%s (--salvage reports the events before it)", msg);
    }
    return rc;
}

int
lh_cmd_report(int argc, char **argv, lh_err_t *err)
{
    report_args_t a = {0};
    lh_trace_opts_t topts = {0};
    lh_trace_t *t = NULL;
    lh_replay_t *r = NULL;
    lh_symbolizer_t *sym = NULL;
    lh_report_t rep = {0};
    lh_report_opts_t ropts = {0};
    lh_sym_opts_t sopts = {0};
    int have_rep = 0;
    int rc = parse_args(argc, argv, &a, err);
    if (rc < 0 || a.help) {
        if (a.help) {
            fputs(lh_cmd_report_usage, stdout);
        }
        return rc;
    }
    topts.salvage = a.salvage;
    if ((rc = lh_trace_open(a.path, &topts, &t, err)) < 0) {
        goto done;
    }
    if ((rc = lh_replay_new(&r, err)) < 0 || (rc = replay_all(t, r, err)) < 0) {
        goto done;
    }
    sopts.exe_path = lh_trace_info(t)->exe;
    if ((rc = lh_sym_new(lh_trace_modules(t), &sopts, &sym, err)) < 0) {
        goto done;
    }
    ropts.top = a.top;
    if ((rc = lh_report_build(&rep, t, r, sym, &ropts, err)) < 0) {
        goto done;
    }
    have_rep = 1;
    print_warnings(lh_trace_warnings(t));
    print_warnings(lh_sym_warnings(sym));
    if (a.json) {
        rc = lh_view_json(stdout, &rep, err);
    } else {
        char cwd[PATH_MAX];
        lh_text_opts_t vopts = {getcwd(cwd, sizeof cwd)};
        rc = lh_view_text(stdout, &rep, &vopts, err);
    }
done:
    if (have_rep) {
        lh_report_fini(&rep);
    }
    lh_sym_free(sym);
    lh_replay_free(r);
    lh_trace_close(t);
    return rc < 0 ? rc : 0;
}
