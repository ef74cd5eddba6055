/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_attach.c: `leakhound attach -p PID`: record a process that is already running, from
 * now on, with no restart. gdb loads libleakhound_attach.so into it and starts the
 * recorder (inject.c); after --duration, Ctrl-C or SIGTERM, gdb stops it again, which
 * restores every relocation it patched. The trace is an ordinary trace (INFO_ATTACH, END:
 * detached): report, leaks, --growth and the views read it as they read run's.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "inject.h"
#include "opts.h"
#include "target.h"

const char lh_cmd_attach_usage[] =
    "usage: leakhound attach -p PID [-o FILE] [--duration DURATION] [--depth N]\n"
    "                        [--unwind table|libunwind|fp] [--sample-rate SIZE]\n"
    "                        [--snapshot-every DURATION]\n"
    "\n"
    "Records the allocations of a running process from now on, without restarting it,\n"
    "until DURATION has passed, Ctrl-C or SIGTERM; then puts the process back as it was and\n"
    "it runs on. Blocks allocated before the attach are unknown to the trace: their frees\n"
    "are counted apart (unmatched frees). Needs gdb (Debian package gdb), a dynamically\n"
    "linked program on glibc's malloc, and the right to trace it.\n"
    "\n"
    "  -p, --pid PID        the process\n"
    "  -o, --output FILE    the trace (default leakhound.COMM.PID.lht here; must not exist;\n"
    "                       the process itself creates it, so its user must be able to)\n"
    "  --duration DURATION  detach after DURATION (30s, 5m; default: at Ctrl-C)\n"
    "  --depth N            at most N frames per stack (1-256, default 64)\n"
    "  --unwind KIND        table (default), libunwind or fp, as for `leakhound run`\n"
    "  --sample-rate SIZE   record a sample: one allocation per SIZE bytes on average\n"
    "  --snapshot-every DURATION  a snapshot every DURATION while attached\n"
    "\n"
    "The process is stopped while gdb loads the agent and while it unloads it (see the\n"
    "pause times printed at the end); in between it runs, recorded as under `run`.\n";


typedef struct attach_args { /* the options' values, as given */
    const char *pid, *duration;
    lh_record_opts_t rec;
} attach_args_t;

static int
parse_args(int argc, char **argv, attach_args_t *a, lh_err_t *err)
{
    memset(a, 0, sizeof *a);
    const lh_opt_t opts[] = {
        {"--pid", "-p", LH_OPT_STR, &a->pid, 0, 0, NULL},
        {"--duration", NULL, LH_OPT_STR, &a->duration, 0, 0, NULL},
        LH_RECORD_OPTS(&a->rec),
    };
    int rc = lh_args_parse_own("attach", lh_cmd_attach_usage, opts, sizeof opts / sizeof opts[0],
                               argc, argv, err);
    if (rc != 0) {
        return rc;
    }
    if (!a->pid) {
        return lh_err_set(err, LH_EINVAL, "attach: which process? give -p PID");
    }
    return lh_record_check("attach", &a->rec, err);
}

/* An absolute trace path that does not exist yet. */
static int
trace_path(const attach_args_t *a, const lh_target_t *t, char *out, size_t len,
           lh_err_t *err)
{
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) {
        return lh_err_set(err, LH_EIO, "attach: getcwd: %s", strerror(errno));
    }
    struct stat st;
    if (a->rec.output) {
        int k = a->rec.output[0] == '/' ? snprintf(out, len, "%s", a->rec.output)
                                        : snprintf(out, len, "%s/%s", cwd, a->rec.output);
        if (k < 0 || (size_t)k >= len) {
            return lh_err_set(err, LH_EINVAL, "attach: -o %s: path too long", a->rec.output);
        }
        if (lstat(out, &st) == 0) {
            return lh_err_set(err, LH_EINVAL, "attach: %s already exists (the trace is never "
                              "written over another file)", out);
        }
        return 0;
    }
    char name[128];
    snprintf(name, sizeof name, "%s", t->comm[0] ? t->comm : "prog");
    for (char *c = name; *c; c++) {
        if (*c == '/' || *c == '%' || *c < ' ') {
            *c = '_';
        }
    }
    for (int k = 0; k < 1000; k++) {
        int w = k == 0 ? snprintf(out, len, "%s/leakhound.%s.%d.lht", cwd, name, (int)t->pid)
                       : snprintf(out, len, "%s/leakhound.%s.%d.%d.lht", cwd, name,
                                  (int)t->pid, k);
        if (w < 0 || (size_t)w >= len) {
            return lh_err_set(err, LH_EINVAL, "attach: the current directory's path is too "
                              "long; use -o");
        }
        if (lstat(out, &st) != 0) {
            return 0;
        }
    }
    return lh_err_set(err, LH_EINVAL, "attach: too many traces of process %d here; use -o",
                      (int)t->pid);
}

/* LEAKHOUND_* settings for lh_attach_start, one NAME=VALUE a line. */
static int
build_vars(const attach_args_t *a, const char *path, char *out, size_t len, lh_err_t *err)
{
    size_t n = 0;
    char pattern[PATH_MAX * 2];
    size_t k = 0;
    for (const char *p = path; *p && k + 2 < sizeof pattern; p++) {
        if (*p == '%') {
            pattern[k++] = '%'; /* the agent expands %p and %e; %% is a % */
        }
        pattern[k++] = *p;
    }
    pattern[k] = '\0';
    if (strchr(path, '\n')) {
        return lh_err_set(err, LH_EINVAL, "attach: a trace path with a newline");
    }
    int w = snprintf(out, len, "LEAKHOUND_OUTPUT=%s\nLEAKHOUND_SNAPSHOT_AT_EXIT=0\n", pattern);
    if (w < 0 || (size_t)w >= len) {
        return lh_err_set(err, LH_EINVAL, "attach: the trace path is too long");
    }
    n = (size_t)w;
    for (size_t i = 0; i < a->rec.n_env && n < len; i++) {
        n += (size_t)snprintf(out + n, len - n, "%s=%s\n", a->rec.env_name[i],
                              a->rec.env_value[i]);
    }
    return n < len ? 0 : lh_err_set(err, LH_EINVAL, "attach: settings too long");
}

static const char *
start_failure(int rc)
{
    switch (rc) {
    case 1:
        return "it is already attached (another leakhound attach is recording it)";
    case -2:
        return "the agent did not find libc's malloc family in it";
    default:
        return "the agent could not start in it (its stderr says why: the trace file could "
               "not be created?)";
    }
}

int
lh_cmd_attach(int argc, char **argv, lh_err_t *err)
{
    attach_args_t a;
    int rc = parse_args(argc, argv, &a, err);
    if (rc != 0) {
        return rc > 0 ? 0 : rc;
    }
    unsigned long pid_ul;
    if (lh_cli_parse_uint("-p", a.pid, 1, 0x7fffffff, &pid_ul, err) < 0) {
        return LH_EINVAL;
    }
    uint64_t duration_ns = 0;
    if (a.duration && lh_cli_value("attach", "--duration", a.duration, 0, 1, UINT64_MAX,
                                   &duration_ns, err) < 0) {
        return LH_EINVAL;
    }
    char lib[PATH_MAX], path[PATH_MAX], vars[3 * PATH_MAX];
    lh_target_t t;
    if ((rc = lh_cli_find_lib("libleakhound_attach.so", "LEAKHOUND_ATTACH_AGENT", "attach",
                              "attach: cannot find libleakhound_attach.so", "../lib", lib,
                              sizeof lib, err)) < 0 ||
        (rc = lh_target_check((pid_t)pid_ul, "attach", &t, err)) < 0 ||
        (rc = trace_path(&a, &t, path, sizeof path, err)) < 0 ||
        (rc = build_vars(&a, path, vars, sizeof vars, err)) < 0) {
        return rc;
    }
    struct sigaction old[2];
    lh_cli_stop_catch(old);

    int frc = 0;
    uint64_t pause_start = 0, pause_stop = 0;
    rc = lh_inject_call(t.pid, lib, 1, vars, &frc, &pause_start, err);
    if (rc == 0 && frc != 0) {
        rc = lh_err_set(err, LH_EINVAL, "attach: process %d (%s): %s; it runs on untouched",
                        (int)t.pid, t.comm, start_failure(frc));
    }
    if (rc < 0) {
        goto out;
    }
    fprintf(stderr, "leakhound: attached to process %d (%s), recording into %s; %s\n",
            (int)t.pid, t.comm, path, a.duration ? "detaching after --duration" : "Ctrl-C "
            "detaches");
    uint64_t t0 = lh_cli_clock_ns(CLOCK_MONOTONIC);
    int gone = 0;
    for (;;) {
        if (lh_cli_stop) {
            break;
        }
        if (!lh_target_alive(t.pid)) {
            gone = 1;
            break;
        }
        if (duration_ns && lh_cli_clock_ns(CLOCK_MONOTONIC) - t0 >= duration_ns) {
            break;
        }
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
    double secs = (double)(lh_cli_clock_ns(CLOCK_MONOTONIC) - t0) / 1e9;
    if (gone) {
        fprintf(stderr, "leakhound: process %d exited while attached; the trace %s ends at "
                "its exit\n", (int)t.pid, path);
        goto out;
    }
    rc = lh_inject_call(t.pid, lib, 0, NULL, &frc, &pause_stop, err);
    if (rc < 0) {
        if (!lh_target_alive(t.pid)) {
            fprintf(stderr, "leakhound: process %d exited while detaching; the trace %s ends "
                    "at its exit\n", (int)t.pid, path);
            rc = 0;
        }
        goto out;
    }
    if (frc == 1) {
        rc = lh_err_set(err, LH_EINVAL, "attach: process %d was no longer attached (another "
                        "leakhound detached it?)", (int)t.pid);
        goto out;
    }
    printf("recorded process %d (%s) for %.1f s into %s\n", (int)t.pid, t.comm, secs, path);
    printf("stopped by gdb about %.0f ms to attach, %.0f ms to detach; `leakhound report %s`\n",
           (double)pause_start / 1e6, (double)pause_stop / 1e6, path);
    if (frc == -1) {
        fprintf(stderr, "leakhound: the agent's thread in process %d did not stop within 2 s; "
                "the trace is complete\n", (int)t.pid);
    }
out:
    lh_cli_stop_restore(old);
    return rc;
}
