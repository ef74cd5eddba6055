/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_run.c: `leakhound run PROG ARGS...`: starts PROG with the agent preloaded, waits for
 * it like time(1) does (ignoring SIGINT and SIGQUIT, which reach the program; passing on
 * SIGTERM and SIGHUP sent to us), and exits with its status.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "cmd.h"
#include "opts.h"
#include "preloadable.h"
#include "snapfile.h"

extern char **environ;

/* The agent refuses deeper stacks (agent/agent.h LH_MAX_DEPTH). */

const char lh_cmd_run_usage[] =
    "usage: leakhound run [-o FILE] [--depth N] [--unwind table|libunwind|fp] [--follow-exec]\n"
    "                     [--mark-function NAME] [snapshot options] [--] PROG [ARGS...]\n"
    "\n"
    "Runs PROG with the leakhound agent preloaded and records its allocations into a trace\n"
    "(default: leakhound.PROG.PID.lht in the current directory). Then run\n"
    "`leakhound report FILE`. Exits with PROG's exit status.\n"
    "\n"
    "  -o, --output FILE  write the trace to FILE (replaced if it exists, with the\n"
    "                     snapshot files an earlier run left beside it: FILE.snapN.lhs)\n"
    "  --depth N          record at most N frames per stack (1-256, default 64)\n"
    "  --unwind KIND      table (default: .eh_frame compiled into tables, libunwind for\n"
    "                     what they cannot express; works without frame pointers),\n"
    "                     libunwind (DWARF only), or fp (frame pointers only: needs\n"
    "                     -fno-omit-frame-pointer)\n"
    "  --follow-exec      keep tracing programs PROG executes (one trace each)\n"
    "  --no-follow-exec   trace PROG alone, not even what it becomes by exec. By default\n"
    "                     PROG is followed through its own execs, so a wrapper (a shell\n"
    "                     script, env, a pyenv shim, a virtualenv launcher) is seen through\n"
    "                     to the real program; what PROG starts as children is not traced.\n"
    "                     The wrappers' traces (and their children's) are removed and the\n"
    "                     program's is left at FILE (or the default name). Every trace\n"
    "                     the run kept is listed at the end.\n"
    "  --mark-function NAME  Python: each call of function NAME (module and qualified name:\n"
    "                     app.handle, app.Handler.handle) is a mark; may be repeated\n"
    "\n"
    "Perl (PROG is perl, or runs perl): Perl subs and lines are recorded by themselves.\n"
    "  --mark-sub NAME    each call of the Perl sub NAME (MyApp::handle_request) is a mark\n"
    "                     (may be repeated); the LeakHound module (LeakHound::mark(LABEL),\n"
    "                     LeakHound::snapshot(LABEL)) is on PERL5LIB for `perl -MLeakHound`\n"
    "\n"
    "CI (like LeakSanitizer): after PROG exits, analyse the trace and fail when it leaked:\n"
    "  --check            exit 23 with one line saying why when PROG leaked more than\n"
    "                     allowed (PROG's own failure status wins: it is returned as is)\n"
    "                     leaked: what nothing reaches at exit (definitely or indirectly\n"
    "                     lost); what a global or a thread still points to, even into a\n"
    "                     block's middle (possibly lost), is not\n"
    "  --check-reachable  count every block live at exit (possibly lost, still reachable)\n"
    "  --max-leak SIZE    allowed leaked bytes (default 0; 4096, 64K, 1M; with 0, a lost\n"
    "                     block of 0 bytes fails too)\n"
    "  --suppressions FILE  LeakSanitizer-style rules (leak:function, leak:libfoo.so,\n"
    "                     leak:file.c, * globs, # comments); may be repeated\n"
    "  --no-default-suppressions  also count the C library's, loader's and C++ runtime's\n"
    "                     own one-time allocations (stdio buffers, locale, NSS, TLS)\n"
    "\n"
    "Snapshots and samples (for `leakhound leaks`, `report --growth`, `counts`):\n"
    "  --snapshot-signal SIG     take a snapshot when PROG receives SIG (USR2 by default,\n"
    "                            and only if PROG has no handler of its own), or none\n"
    "  --snapshot-every DURATION take a snapshot every DURATION (10s, 500ms; 0: off)\n"
    "  --snapshot-on-growth SIZE take a snapshot each time the heap grew by SIZE since the\n"
    "                            last one (64M, 512K; 0: off)\n"
    "  --snapshot-at-exit[=on|off] snapshot at exit (default on); --no-snapshot-at-exit\n"
    "  --rss-interval DURATION   sample RSS every DURATION (default 100ms; 0: off)\n"
    "  --snapshot-contents none|pointers|full  what a snapshot records besides the live\n"
    "                            set: none; the words that point into the heap or into\n"
    "                            modules (default: the reference graph, no other data);\n"
    "                            or every byte (heap contents, so secrets too)\n"
    "\n"
    "Overhead:\n"
    "  --sample-rate SIZE        record a Poisson sample of the allocations, one per SIZE\n"
    "                            bytes on average (512K: near-zero overhead; figures in the\n"
    "                            reports become estimates; snapshots default to\n"
    "                            --snapshot-contents none)\n"
    "\n"
    "SIGTERM and SIGHUP sent to leakhound run are passed on to the program, which then ends as\n"
    "it would alone; run waits for it and exits with its status.\n"
    "\n"
    "The agent is $LEAKHOUND_AGENT, or libleakhound.so in ../lib, ../lib/leakhound or the\n"
    "directory of the leakhound executable.\n";

typedef struct run_args {
    lh_record_opts_t rec;
    int follow_exec; /* 1: --follow-exec, 0: --no-follow-exec, -1: the exec chain */
    char mark_functions[1024]; /* --mark-function, comma-separated */
    int check;             /* --check (check.h) */
    lh_check_opts_t check_opts;
    const char *max_leak;
    int help;
    const char *snap_signal, *snap_growth, *snap_exit, *rss_interval, *contents;
    char env_signal[16], env_growth[24], env_rss[24]; /* checked values */
    char **prog_argv; /* NULL-terminated, points into argv */
    const char *mark_subs[16]; /* --mark-sub */
    size_t n_mark_subs;
} run_args_t;

/* Checks the snapshot options and turns them into the agent's env values. */
static int
check_snapshot_args(run_args_t *a, lh_err_t *err)
{
    if (a->snap_signal) {
        int sig = lh_parse_signal(a->snap_signal);
        if (sig < 0) {
            return lh_err_set(err, LH_EINVAL, "run: --snapshot-signal: unknown or uncatchable "
                              "signal '%s' (a name such as USR2 or SIGUSR1, a number, or none)",
                              a->snap_signal);
        }
        snprintf(a->env_signal, sizeof a->env_signal, sig ? "%d" : "none", sig);
    }
    if (a->rss_interval && lh_cli_env_ms("run", "--rss-interval", a->rss_interval, 3600000,
                                         a->env_rss, sizeof a->env_rss, err) < 0) {
        return LH_EINVAL;
    }
    if (a->snap_growth && lh_cli_env_bytes("run", "--snapshot-on-growth", a->snap_growth,
                                           1ull << 50, a->env_growth, sizeof a->env_growth,
                                           err) < 0) {
        return LH_EINVAL;
    }
    if (a->contents && strcmp(a->contents, "none") != 0 && strcmp(a->contents, "pointers") != 0 &&
        strcmp(a->contents, "full") != 0) {
        return lh_err_set(err, LH_EINVAL, "run: --snapshot-contents: expected none, pointers or "
                          "full, got '%s'", a->contents);
    }
    return 0;
}

static int
parse_args(int argc, char **argv, run_args_t *a, lh_err_t *err)
{
    int i, snap_exit = -1, default_supp = -1;
    a->follow_exec = -1;
    for (i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (lh_opt_program_start(argv, &i, &a->help)) {
            break;
        }
        if (strncmp(arg, "--mark-function", 15) == 0 && (arg[15] == '\0' || arg[15] == '=')) {
            const char *v = arg[15] ? arg + 16 : i + 1 < argc ? argv[++i] : NULL;
            size_t have = strlen(a->mark_functions);
            if (!v || !*v || strchr(v, ',')) {
                return lh_err_set(err, LH_EINVAL, "run: --mark-function needs one function name "
                                  "(module.function), got '%s'", v ? v : "");
            }
            if (have + strlen(v) + 2 > sizeof a->mark_functions) {
                return lh_err_set(err, LH_EINVAL, "run: too many --mark-function names");
            }
            snprintf(a->mark_functions + have, sizeof a->mark_functions - have, "%s%s",
                     have ? "," : "", v);
            continue;
        }
        const lh_opt_t flags[] = {
            {"--follow-exec", NULL, LH_OPT_BOOL, &a->follow_exec, 0, 0, NULL},
            {"--check", NULL, LH_OPT_BOOL, &a->check, 0, 0, NULL},
            {"--default-suppressions", NULL, LH_OPT_BOOL, &default_supp, 0, 0, NULL},
            {"--check-reachable", NULL, LH_OPT_BOOL, &a->check_opts.count_reachable, 0, 0, NULL},
            {"--snapshot-at-exit", NULL, LH_OPT_BOOL, &snap_exit, 0, 0, NULL},
        };
        int at = i;
        int rc = lh_opt_parse("run", flags, sizeof flags / sizeof *flags, argc, argv, &i, err);
        if (rc < 0) {
            return rc;
        }
        if (rc) {
            /* A bare flag followed by a word is the program's start, unless a `--` comes
             * later: then that word was meant as the flag's value. */
            if (i == at && !strchr(arg, '=') && i + 1 < argc && argv[i + 1][0] != '-') {
                for (int k = i + 2; k < argc; k++) {
                    if (strcmp(argv[k], "--") == 0) {
                        return lh_err_set(err, LH_EINVAL, "run: %s: expected on or off, got "
                                          "'%s'", arg, argv[i + 1]);
                    }
                }
            }
            continue;
        }
        if (strncmp(arg, "--mark-sub", 10) == 0 && (arg[10] == '\0' || arg[10] == '=')) {
            const char *v = arg[10] ? arg + 11 : i + 1 < argc ? argv[++i] : NULL;
            if (!v || !*v) {
                return lh_err_set(err, LH_EINVAL, "run: option '--mark-sub' needs a sub name");
            }
            /* A sub name goes into PERL5OPT: nothing that could end or split the option. */
            for (const char *c = v; *c; c++) {
                if (!(*c == ':' || *c == '_' || (*c >= '0' && *c <= '9') ||
                      (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z'))) {
                    return lh_err_set(err, LH_EINVAL, "run: --mark-sub '%s': not a Perl sub "
                                      "name (letters, digits, _ and ::)", v);
                }
            }
            if (a->n_mark_subs == sizeof a->mark_subs / sizeof a->mark_subs[0]) {
                return lh_err_set(err, LH_EINVAL, "run: at most 16 --mark-sub");
            }
            a->mark_subs[a->n_mark_subs++] = v;
            continue;
        }
        const lh_opt_t values[] = {
            LH_RECORD_OPTS(&a->rec),
            {"--snapshot-signal", NULL, LH_OPT_STR, &a->snap_signal, 0, 0, NULL},
            {"--snapshot-on-growth", NULL, LH_OPT_STR, &a->snap_growth, 0, 0, NULL},
            {"--rss-interval", NULL, LH_OPT_STR, &a->rss_interval, 0, 0, NULL},
            {"--snapshot-contents", NULL, LH_OPT_STR, &a->contents, 0, 0, NULL},
            {"--max-leak", NULL, LH_OPT_STR, &a->max_leak, 0, 0, NULL},
            {"--suppressions", NULL, LH_OPT_FILES, &a->check_opts.supp_files, 0, 0, NULL},
        };
        if ((rc = lh_opt_parse("run", values, sizeof values / sizeof *values, argc, argv, &i,
                               err)) == 0) {
            return lh_err_set(err, LH_EINVAL, "run: unknown option '%s' (see leakhound help run)",
                              arg);
        }
        if (rc < 0) {
            return rc;
        }
    }
    if (a->help) {
        return 0;
    }
    if (snap_exit >= 0) {
        a->snap_exit = snap_exit ? "on" : "off";
    }
    if (default_supp >= 0) {
        a->check_opts.no_default_supp = !default_supp;
    }
    if (i >= argc) {
        return lh_err_set(err, LH_EINVAL,
                          "run: which program? usage: leakhound run [options] -- PROG [ARGS...]");
    }
    a->prog_argv = argv + i;
    if (lh_record_check("run", &a->rec, err) < 0) {
        return LH_EINVAL;
    }
    if (a->max_leak && lh_cli_value("run", "--max-leak", a->max_leak, 1, 0, UINT64_MAX,
                                    &a->check_opts.max_leak_bytes, err) < 0) {
        return LH_EINVAL;
    }
    if (!a->check && (a->max_leak || a->check_opts.supp_files.n ||
                      a->check_opts.no_default_supp || a->check_opts.count_reachable)) {
        return lh_err_set(err, LH_EINVAL, "run: --max-leak, --check-reachable, --suppressions "
                          "and --no-default-suppressions go with --check");
    }
    return check_snapshot_args(a, err);
}

static int
is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int
lh_cli_find_lib(const char *name, const char *env_name, const char *what, const char *missing,
                const char *looked, char *out, size_t len, lh_err_t *err)
{
    static const char *const rel[] = {"/../lib/", "/../lib/leakhound/", "/"};
    char dir[PATH_MAX], cand[PATH_MAX + 64], real[PATH_MAX];
    const char *env = getenv(env_name);
    if (env && *env) {
        if (!is_file(env) || !realpath(env, real) || strlen(real) >= len) {
            return lh_err_set(err, LH_ENOENT, "%s=%s: no such file", env_name, env);
        }
        memcpy(out, real, strlen(real) + 1);
        return 0;
    }
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    if (n <= 0) {
        return lh_err_set(err, LH_ENOENT, "%s: /proc/self/exe: %s", what, strerror(errno));
    }
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
    }
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        snprintf(cand, sizeof cand, "%s%s%s", dir, rel[i], name);
        if (is_file(cand) && realpath(cand, real) && strlen(real) < len) {
            memcpy(out, real, strlen(real) + 1);
            return 0;
        }
    }
    return lh_err_set(err, LH_ENOENT, "%s next to %s (%s); set %s", missing, dir, looked,
                      env_name);
}

/* The default trace name pattern, "leakhound.<basename>.%p.lht" ('%' in the name
 * doubled, as the agent expands %p and %%). */
static void
default_pattern(char *out, size_t len, const char *prog)
{
    const char *base = strrchr(prog, '/');
    base = base ? base + 1 : prog;
    size_t k = (size_t)snprintf(out, len, "leakhound.");
    for (const char *p = base; *p && k + 16 < len; p++) {
        if (*p == '%') {
            out[k++] = '%';
        }
        out[k++] = *p;
    }
    snprintf(out + k, len - k, ".%%p.lht");
}

/* The pattern with %p replaced by pid and %% by %. */
static void
expand_pattern(char *out, size_t len, const char *pat, pid_t pid)
{
    size_t k = 0;
    for (const char *p = pat; *p && k + 24 < len; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            k += (size_t)snprintf(out + k, len - k, "%ld", (long)pid);
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            out[k++] = '%';
            p++;
        } else {
            out[k++] = *p;
        }
    }
    out[k] = '\0';
}

static int
set_env(const char *name, const char *value, lh_err_t *err)
{
    if (setenv(name, value, 1) != 0) {
        return lh_err_set(err, LH_ENOMEM, "cannot set %s: %s", name, strerror(errno));
    }
    return 0;
}

/* Sets variable name to first, then ':' and the variable's old value when it had one. */
static int
prepend_env(const char *name, const char *first, lh_err_t *err)
{
    const char *old = getenv(name);
    size_t n = strlen(first) + (old ? strlen(old) : 0) + 2;
    char *v = malloc(n);
    if (!v) {
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    snprintf(v, n, "%s%s%s", first, old && *old ? ":" : "", old ? old : "");
    int rc = set_env(name, v, err);
    free(v);
    return rc;
}

/* dir: the agent's directory and "/" sub. Returns 0 when the agent's path has no directory. */
static int
beside_agent(const char *agent, const char *sub, char *dir, size_t len)
{
    snprintf(dir, len, "%s", agent);
    char *slash = strrchr(dir, '/');
    if (!slash) {
        return 0;
    }
    snprintf(slash, len - (size_t)(slash - dir), "/%s", sub);
    return 1;
}

/* Puts the leakhound Python module (python/ in the tree, installed beside the agent) first
 * on PYTHONPATH; its sitecustomize applies --mark-function and then runs the one it hides. */
static int
python_path(const char *agent, lh_err_t *err)
{
    char dir[PATH_MAX + 16];
    if (!beside_agent(agent, "python", dir, sizeof dir)) {
        return 0;
    }
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/leakhound.py", dir);
    if (!is_file(probe)) {
        return 0; /* an agent without the module: Python programs run as they are */
    }
    return prepend_env("PYTHONPATH", dir, err);
}

/* The LeakHound Perl module (perl/LeakHound.pm): in perl5/ next to the agent. `run` puts it
 * on PERL5LIB, and --mark-sub loads it through PERL5OPT to wrap the subs. */
static int
perl_env(const run_args_t *a, const char *agent, lh_err_t *err)
{
    char dir[PATH_MAX + 16];
    if (!beside_agent(agent, "perl5", dir, sizeof dir)) {
        return 0;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        if (a->n_mark_subs) {
            return lh_err_set(err, LH_ENOENT, "run: --mark-sub needs the LeakHound Perl module, "
                              "not found in %s", dir);
        }
        return 0;
    }
    int rc = prepend_env("PERL5LIB", dir, err);
    if (rc < 0 || !a->n_mark_subs) {
        return rc;
    }
    const char *old = getenv("PERL5OPT");
    size_t n = (old ? strlen(old) : 0) + 32;
    for (size_t i = 0; i < a->n_mark_subs; i++) {
        n += strlen(a->mark_subs[i]) + 10;
    }
    char *opt = malloc(n);
    if (!opt) {
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    size_t k = (size_t)snprintf(opt, n, "%s%s-MLeakHound", old ? old : "", old && *old ? " " : "");
    for (size_t i = 0; i < a->n_mark_subs; i++) {
        k += (size_t)snprintf(opt + k, n - k, "%smark_sub,%s", i ? "," : "=", a->mark_subs[i]);
    }
    rc = set_env("PERL5OPT", opt, err);
    free(opt);
    return rc;
}

/* Sets the child's environment in our own (we exit right after the child does). */
static int
prepare_env(const run_args_t *a, const char *agent, const char *pattern, lh_err_t *err)
{
    int rc = prepend_env("LD_PRELOAD", agent, err);
    if (rc < 0 || (rc = set_env("LEAKHOUND_OUTPUT", pattern, err)) < 0 ||
        (rc = perl_env(a, agent, err)) < 0) {
        return rc;
    }
    for (size_t i = 0; i < a->rec.n_env; i++) {
        if ((rc = set_env(a->rec.env_name[i], a->rec.env_value[i], err)) < 0) {
            return rc;
        }
    }
    if (a->follow_exec >= 0 && (rc = set_env("LEAKHOUND_FOLLOW_EXEC",
                                             a->follow_exec ? "1" : "0", err)) < 0) {
        return rc;
    }
    /* The agent of the program names the traced line itself (agent/config.c), writing its
     * pid over this placeholder: no putenv, so the program's environ[] stays the kernel's
     * (room for any pid: 20 digits). */
    if ((rc = set_env("LEAKHOUND_MAIN_PID", "~~~~~~~~~~~~~~~~~~~~", err)) < 0) {
        return rc;
    }
    if (a->mark_functions[0] &&
        (rc = set_env("LEAKHOUND_MARK_FUNCTION", a->mark_functions, err)) < 0) {
        return rc;
    }
    if ((rc = python_path(agent, err)) < 0) {
        return rc;
    }
    if ((a->snap_signal && (rc = set_env("LEAKHOUND_SNAPSHOT_SIGNAL", a->env_signal, err)) < 0) ||
        (a->snap_growth &&
         (rc = set_env("LEAKHOUND_SNAPSHOT_ON_GROWTH", a->env_growth, err)) < 0) ||
        (a->snap_exit && (rc = set_env("LEAKHOUND_SNAPSHOT_AT_EXIT",
                                       strcmp(a->snap_exit, "on") == 0 ? "1" : "0", err)) < 0) ||
        (a->rss_interval && (rc = set_env("LEAKHOUND_RSS_MS", a->env_rss, err)) < 0) ||
        (a->contents && (rc = set_env("LEAKHOUND_SNAPSHOT_CONTENTS", a->contents, err)) < 0)) {
        return rc;
    }
    return 0;
}

/* The program's pid while we wait for it, for the forwarding handler. */
static volatile sig_atomic_t run_child_pid;

/* SIGTERM and SIGHUP sent to `leakhound run` (a service manager stopping a unit, `kill` of
 * the pid a user sees, a closed terminal) are meant for the program: passed on, so that it
 * shuts down as it would alone and we still wait for it and report. Without this we died and
 * left the program running with nobody to wait for it. kill(2) is async-signal-safe. */
static void
forward_signal(int sig)
{
    pid_t pid = (pid_t)run_child_pid;
    if (pid > 0) {
        kill(pid, sig);
    }
}

/* The signals spawn_and_wait treats: ignored while the program runs (the terminal sends
 * them to the whole group, so the program has them already), or forwarded to it. The
 * snapshot signal is added to the forwarded ones (run_signals). */
typedef struct {
    int sig, forward;
} run_sig_t;
static const run_sig_t run_sigs[] = {{SIGINT, 0}, {SIGQUIT, 0}, {SIGTERM, 1}, {SIGHUP, 1}};
#define RUN_NSIG (sizeof run_sigs / sizeof *run_sigs)

/* The signal the agent snapshots on: --snapshot-signal, else LEAKHOUND_SNAPSHOT_SIGNAL as
 * the user exported it, else SIGUSR2; 0 for none (or a value the agent will ignore). */
static int
snapshot_signal(const run_args_t *a)
{
    const char *s = a->snap_signal ? a->snap_signal : getenv("LEAKHOUND_SNAPSHOT_SIGNAL");
    int sig = s ? lh_parse_signal(s) : SIGUSR2;
    return sig > 0 ? sig : 0;
}

/* run_sigs, and the snapshot signal forwarded: `kill -USR2` of the pid a user sees (that of
 * `leakhound run`, `$!` of a script that started it) is meant for the program. Without it
 * the default action killed us, the program ran on with nobody to wait for it and no
 * snapshot was taken. Returns how many entries it filled. */
static size_t
run_signals(int snap_sig, run_sig_t out[RUN_NSIG + 1])
{
    size_t n = 0;
    int known = 0;
    for (size_t i = 0; i < RUN_NSIG; i++) {
        out[n++] = run_sigs[i];
        known |= run_sigs[i].sig == snap_sig;
    }
    if (snap_sig > 0 && !known) {
        out[n++] = (run_sig_t){snap_sig, 1};
    }
    return n;
}

/* Starts the program with the signals it treats at their defaults and waits for it, passing
 * on SIGTERM, SIGHUP and the snapshot signal (snap_sig, 0 for none). Returns its exit
 * status; *pid_out gets its pid (0 if it never started). */
static int
spawn_and_wait(char **prog_argv, int snap_sig, pid_t *pid_out, lh_err_t *err)
{
    posix_spawnattr_t attr;
    sigset_t def, fwd, old_mask;
    run_sig_t sigs[RUN_NSIG + 1];
    size_t nsig = run_signals(snap_sig, sigs);
    struct sigaction act = {0}, old[RUN_NSIG + 1];
    pid_t pid = 0;
    int status = 0, rc;

    *pid_out = 0;
    run_child_pid = 0;
    sigemptyset(&def);
    sigemptyset(&fwd);
    for (size_t i = 0; i < nsig; i++) {
        if (sigs[i].forward) {
            sigaddset(&fwd, sigs[i].sig);
        }
        sigaddset(&def, sigs[i].sig);
    }
    if ((rc = posix_spawnattr_init(&attr)) != 0) {
        return lh_err_set(err, LH_ENOMEM, "cannot run %s: %s", prog_argv[0], strerror(rc));
    }
    /* The forwarded signals stay blocked here until the pid is known (a SIGTERM before it
     * is delivered then, not lost); the program starts with our mask as it was. */
    sigprocmask(SIG_BLOCK, &fwd, &old_mask);
    posix_spawnattr_setsigdefault(&attr, &def);
    posix_spawnattr_setsigmask(&attr, &old_mask);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    /* Ignore before spawning, so an early ^C cannot kill us instead of the program. */
    sigemptyset(&act.sa_mask);
    for (size_t i = 0; i < nsig; i++) {
        act.sa_handler = sigs[i].forward ? forward_signal : SIG_IGN;
        act.sa_flags = sigs[i].forward ? SA_RESTART : 0;
        sigaction(sigs[i].sig, &act, &old[i]);
    }
    rc = posix_spawnp(&pid, prog_argv[0], NULL, &attr, prog_argv, environ);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        fprintf(stderr, "leakhound: cannot run %s: %s\n", prog_argv[0], strerror(rc));
        status = 127;
        goto done;
    }
    *pid_out = pid;
    run_child_pid = pid;
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            rc = lh_err_set(err, LH_EIO, "waiting for %s: %s", prog_argv[0], strerror(errno));
            status = -1;
            goto done;
        }
    }
    run_child_pid = 0; /* reaped: its pid may be reused */
    if (WIFEXITED(status)) {
        status = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        fprintf(stderr, "leakhound: %s killed by signal %d (%s)\n", prog_argv[0],
                WTERMSIG(status), strsignal(WTERMSIG(status)));
        status = 128 + WTERMSIG(status);
    } else {
        status = 1;
    }
done:
    run_child_pid = 0;
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    for (size_t i = 0; i < nsig; i++) {
        sigaction(sigs[i].sig, &old[i], NULL);
    }
    return status < 0 ? rc : status;
}

/* Whether NAME is a file that belongs to trace BASE (its name in the directory; STEM of
 * it without ".lht"): a snapshot contents file, STEM.snap<N>.lhs with anything after (the
 * agent's ".1" when the name was taken), or the shell's index, BASE.lhx and BASE.<N>.lhx
 * with anything after (its temporary names). */
/* P past its decimal digits; NULL when it has none. */
static const char *
past_digits(const char *p)
{
    const char *q = p;
    while (*q >= '0' && *q <= '9') {
        q++;
    }
    return q == p ? NULL : q;
}

/* Whether P is EXT, or EXT followed by '.' and anything. */
static int
is_ext(const char *p, const char *ext)
{
    size_t n = strlen(ext);
    return p && strncmp(p, ext, n) == 0 && (p[n] == '\0' || p[n] == '.');
}

static int
belongs_to_trace(const char *name, const char *base, size_t stem)
{
    size_t n = strlen(base);
    if (strncmp(name, base, n) == 0 && name[n] == '.') {
        const char *p = name + n + 1, *num = past_digits(p);
        if (is_ext(p, "lhx") || is_ext(num, ".lhx")) {
            return 1;
        }
    }
    return strncmp(name, base, stem) == 0 && lh_snapfile_is_suffix(name + stem);
}

/* -o replaces a trace: the files that belong to the replaced one (belongs_to_trace) go
 * with it. Left in place, the new run's snapshots would be written beside them as
 * X.snap1.lhs.1, and an index would describe snapshots that are gone. With only_empty,
 * only the empty contents files (.lhs) go: those the agent reserved before a process
 * dropped root or chrooted (agent/snapshot.h) and that no snapshot used, which the
 * process itself could no longer remove. */
static void
remove_snapshot_files(const char *trace, int only_empty)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(trace, '/');
    const char *base = slash ? slash + 1 : trace;
    size_t n = slash ? (size_t)(slash - trace) : 0;
    if (n >= sizeof dir) {
        return;
    }
    if (slash == NULL) {
        strcpy(dir, ".");
    } else if (n == 0) {
        strcpy(dir, "/");
    } else {
        memcpy(dir, trace, n);
        dir[n] = '\0';
    }
    size_t stem = lh_snapfile_stem_len(base);
    DIR *d = opendir(dir);
    if (d == NULL) {
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!belongs_to_trace(e->d_name, base, stem)) {
            continue;
        }
        /* Only regular files: unlinkat never follows a link, but a directory is kept. */
        struct stat st;
        int dfd = dirfd(d);
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode) &&
            (!only_empty || (S_ISREG(st.st_mode) && st.st_size == 0 &&
                             strstr(e->d_name, ".lhs") != NULL))) {
            unlinkat(dfd, e->d_name, 0);
        }
    }
    closedir(d);
}

/* The run's index of traces (agent/output.c appends "pid TAB program TAB path" per trace
 * file opened): a private temporary file, named to the agent by LEAKHOUND_INDEX. */
static int
index_create(char *path, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, len, "%s/leakhound-run-XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        path[0] = '\0';
        return -1;
    }
    close(fd);
    if (setenv("LEAKHOUND_INDEX", path, 1) != 0) {
        unlink(path);
        path[0] = '\0';
        return -1;
    }
    return 0;
}

/* Path as the user would type it from here: relative when under the current directory. */
static const char *
shown_path(const char *path, const char *cwd)
{
    size_t n = strlen(cwd);
    if (n > 1 && strncmp(path, cwd, n) == 0 && path[n] == '/') {
        return path + n + 1;
    }
    return path;
}

typedef struct run_trace {
    long pid;
    unsigned long long image;
    char prog[64];
    char path[PATH_MAX];
} run_trace_t;

/* Removes a trace and every file that belongs to it (belongs_to_trace: its snapshot
 * contents files, also those the agent gave a ".K" when the name was taken, and the
 * shell's index). */
static void
remove_trace(const char *path)
{
    remove_snapshot_files(path, 0);
    unlink(path);
}

/* Moves trace FROM and its snapshot contents files (FROM's stem + ".snap<N>.lhs...") to
 * TO, the files to TO's stem with the same suffix, where the reader looks for them
 * (lh_snapfile_contents_path). Never replaces a file: each is linked to its new name first;
 * on any failure the links made are removed and everything stays where it was. Returns 0
 * when moved. */
static int
move_trace(const char *from, const char *to)
{
    const char *fslash = strrchr(from, '/'), *tslash = strrchr(to, '/');
    const char *fbase = fslash ? fslash + 1 : from, *tbase = tslash ? tslash + 1 : to;
    size_t fstem = lh_snapfile_stem_len(fbase), tstem = lh_snapfile_stem_len(tbase);
    size_t fdl = (size_t)(fbase - from), tdl = (size_t)(tbase - to);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", fdl ? (int)fdl : 1, fdl ? from : ".");
    char (*names)[2][PATH_MAX] = NULL; /* old and new name of each contents file */
    size_t n = 0, cap = 0, linked = 0;
    int rc = -1;
    DIR *d = opendir(dir);
    if (!d || link(from, to) != 0) {
        if (d) {
            closedir(d);
        }
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, fbase, fstem) != 0 || !lh_snapfile_is_suffix(e->d_name + fstem)) {
            continue;
        }
        if (n == cap) {
            size_t c = cap ? 2 * cap : 8;
            char(*nn)[2][PATH_MAX] = realloc(names, c * sizeof *names);
            if (!nn) {
                goto out;
            }
            names = nn;
            cap = c;
        }
        int a = snprintf(names[n][0], PATH_MAX, "%.*s%s", (int)fdl, from, e->d_name);
        int b = snprintf(names[n][1], PATH_MAX, "%.*s%s", (int)(tdl + tstem), to,
                         e->d_name + fstem);
        if (a < 0 || a >= PATH_MAX || b < 0 || b >= PATH_MAX) {
            goto out;
        }
        n++;
    }
    for (linked = 0; linked < n; linked++) {
        if (link(names[linked][0], names[linked][1]) != 0) {
            goto out;
        }
    }
    rc = 0;
out:
    closedir(d);
    for (size_t i = 0; i < n; i++) {
        if (rc == 0) {
            unlink(names[i][0]);
        } else if (i < linked) {
            unlink(names[i][1]);
        }
    }
    unlink(rc == 0 ? from : to);
    free(names);
    return rc;
}

/* The programs the traced line started without tracing them (the default following: a
 * shell script's commands), each name once, the first few only. */
typedef struct untraced {
    size_t n;
    int more;
    char names[160];
} untraced_t;

static void
note_untraced(untraced_t *u, const char *prog)
{
    u->n++;
    size_t len = strlen(prog), w = strlen(u->names);
    for (const char *p = u->names; (p = strstr(p, prog)) != NULL; p += len) {
        if ((p == u->names || p[-1] == ' ') && (p[len] == ',' || !p[len])) {
            return; /* named already */
        }
    }
    if (w + len + 8 >= sizeof u->names) {
        u->more = 1;
        return;
    }
    snprintf(u->names + w, sizeof u->names - w, "%s%.63s", w ? ", " : "", prog);
}

/* Reads the run's index: lists every trace when there is more than one, and puts into
 * main the trace of the program itself (the last one its pid opened: after a wrapper's
 * exec, the real program). With prune (the default following of the exec chain only, where
 * every other traced process is a fork child of an image of the chain), traces of the fork
 * children of a wrapper (a shell script's subshells, before it became the real program)
 * are removed: they trace the wrapper, not the program (agent.h image_id). A fork child of
 * an earlier image that runs the program itself is kept: a server that forks its workers
 * and then re-executes itself as their master (haproxy -W) is no wrapper, and its workers'
 * traces hold all the requests. With prune, the traces of the main pid's earlier images
 * that ran another program than the last (the wrappers themselves: env, sh, a shim) go
 * too; those of the same program (haproxy -W's first image) stay. Then, when the name
 * the user asked for (WANTED: -o, or the default pattern for the pid) has become free, the
 * program's trace is moved there with its snapshot files (move_trace). Returns the number
 * of traces listed, and hands over in LIST (the caller frees it) every trace read, those
 * removed with pid -1. */
static int
index_report(const char *index, pid_t pid, int prune, const char *wanted, char *main,
             size_t len, run_trace_t **list, size_t *n_list)
{
    FILE *f = fopen(index, "r");
    char line[2 * PATH_MAX + 300], cwd[PATH_MAX];
    run_trace_t *t = NULL;
    size_t n = 0, cap = 0, removed = 0;
    unsigned long long last_image = 0;
    char main_prog[sizeof t->prog] = "";
    untraced_t untraced = {0};
    if (!f) {
        return 0;
    }
    if (!getcwd(cwd, sizeof cwd)) {
        cwd[0] = '\0';
    }
    while (fgets(line, sizeof line, f)) {
        char *gen = strchr(line, '\t');
        char *prog = gen ? strchr(gen + 1, '\t') : NULL;
        char *file = prog ? strchr(prog + 1, '\t') : NULL;
        if (!file) {
            continue;
        }
        *gen++ = *prog++ = *file++ = '\0';
        file[strcspn(file, "\n")] = '\0';
        if (!file[0]) { /* a program the line started, untraced (lh_output_index_untraced) */
            note_untraced(&untraced, prog);
            continue;
        }
        if (n == cap) {
            size_t c = cap ? 2 * cap : 16;
            run_trace_t *nt = realloc(t, c * sizeof *t);
            if (!nt) {
                break;
            }
            t = nt;
            cap = c;
        }
        t[n].pid = atol(line);
        t[n].image = strtoull(gen, NULL, 10);
        snprintf(t[n].prog, sizeof t[n].prog, "%s", prog);
        snprintf(t[n].path, sizeof t[n].path, "%s", file);
        if (t[n].pid == (long)pid) {
            untraced.n = 0; /* what the wrappers before this image ran is theirs */
            untraced.names[0] = '\0';
            last_image = t[n].image;
            snprintf(main_prog, sizeof main_prog, "%s", t[n].prog);
            snprintf(main, len, "%s", shown_path(file, cwd));
        }
        n++;
    }
    fclose(f);
    size_t kept = 0, last = n;
    char wrappers[200] = "";
    for (size_t i = 0; i < n; i++) {
        if (prune && t[i].image != last_image && strcmp(t[i].prog, main_prog) != 0) {
            size_t w = strlen(wrappers);
            if (t[i].pid == (long)pid && w + strlen(t[i].prog) + 3 < sizeof wrappers) {
                snprintf(wrappers + w, sizeof wrappers - w, "%s%s", w ? ", " : "", t[i].prog);
            }
            remove_trace(t[i].path);
            removed++;
            t[i].pid = -1;
        } else {
            kept++;
            last = t[i].pid == (long)pid ? i : last;
        }
    }
    if (removed) {
        fprintf(stderr, "leakhound: removed %zu trace%s of the wrappers%s%s%s and their own child "
                        "processes (before the program was exec'd)\n", removed,
                removed > 1 ? "s" : "", wrappers[0] ? " (" : "", wrappers,
                wrappers[0] ? ")" : "");
    }
    size_t wl = strlen(wanted);
    if (last < n && wl < sizeof t->path && strcmp(t[last].path, wanted) != 0 &&
        access(wanted, F_OK) != 0 && errno == ENOENT && move_trace(t[last].path, wanted) == 0) {
        memcpy(t[last].path, wanted, wl + 1);
        snprintf(main, len, "%s", shown_path(wanted, cwd));
    }
    if (kept > 1) {
        fprintf(stderr, "leakhound: %zu traces written (program, pid, file):\n", kept);
        for (size_t i = 0; i < n; i++) {
            if (t[i].pid >= 0) {
                fprintf(stderr, "leakhound:   %-16s %8ld  %s\n", t[i].prog, t[i].pid,
                        shown_path(t[i].path, cwd));
            }
        }
    }
    if (untraced.n) {
        fprintf(stderr, "leakhound: %s started %zu program%s that %s not traced (%s%s); "
                        "leakhound run --follow-exec traces %s too\n",
                main_prog[0] ? main_prog : "the program", untraced.n,
                untraced.n > 1 ? "s" : "", untraced.n > 1 ? "were" : "was", untraced.names,
                untraced.more ? ", ..." : "", untraced.n > 1 ? "them" : "it");
    }
    *list = t;
    *n_list = n;
    return (int)kept;
}

/* run --check: the program's trace is judged, then every other process the run traced
 * (its fork children, and with --follow-exec the programs they ran) that ended by exit or
 * a return from main, each on its own line naming its pid, as LeakSanitizer checks each
 * process at its exit (check.h). Fails (LH_EXIT_CHECK_LEAK) when any of them leaked more
 * than allowed. */
static int
check_run(const char *trace, const run_trace_t *t, size_t n, const lh_check_opts_t *o,
          lh_err_t *err)
{
    struct stat main_st, st;
    int verdict = lh_check_trace(trace, o, err);
    if (verdict < 0 || stat(trace, &main_st) != 0) {
        return verdict;
    }
    for (size_t i = 0; i < n; i++) {
        if (t[i].pid < 0 || stat(t[i].path, &st) != 0 ||
            (st.st_dev == main_st.st_dev && st.st_ino == main_st.st_ino)) {
            continue; /* removed, or the program's own trace (its name may be relative) */
        }
        int v = lh_check_process(t[i].path, o, t[i].pid, t[i].prog, err);
        if (v < 0) {
            return v;
        }
        if (v == LH_EXIT_CHECK_LEAK) {
            verdict = v;
        }
    }
    return verdict;
}

int
lh_cmd_run(int argc, char **argv, lh_err_t *err)
{
    run_args_t a = {0};
    char agent[PATH_MAX], pattern[PATH_MAX + 32], trace[PATH_MAX + 64];
    pid_t pid;
    int rc = parse_args(argc, argv, &a, err);
    if (rc < 0 || a.help) {
        if (a.help) {
            fputs(lh_cmd_run_usage, stdout);
        }
        return rc;
    }
    if ((rc = lh_cli_find_lib("libleakhound.so", "LEAKHOUND_AGENT", "cannot find the agent",
                              "cannot find the agent libleakhound.so",
                              "looked in ../lib, ../lib/leakhound and the same directory", agent,
                              sizeof agent, err)) < 0) {
        return rc;
    }
    if (a.rec.output) {
        /* The agent creates the trace with O_EXCL; -o means replace. Its name is used as
         * is: '%' doubled so the agent does not expand it. */
        if (unlink(a.rec.output) != 0 && errno != ENOENT) {
            return lh_err_set(err, LH_EIO, "cannot replace %s: %s", a.rec.output,
                              strerror(errno));
        }
        remove_snapshot_files(a.rec.output, 0);
        size_t k = 0;
        for (const char *p = a.rec.output; *p && k + 2 < sizeof pattern; p++) {
            if (*p == '%') {
                pattern[k++] = '%';
            }
            pattern[k++] = *p;
        }
        pattern[k] = '\0';
    } else {
        default_pattern(pattern, sizeof pattern, a.prog_argv[0]);
    }
    if (pattern[0] != '/') {
        /* Absolute for the agent: a program (a wrapper) may change directory first. */
        char cwd[PATH_MAX], abs[sizeof pattern];
        if (getcwd(cwd, sizeof cwd) && strchr(cwd, '%') == NULL &&
            (size_t)snprintf(abs, sizeof abs, "%s/%s", cwd, pattern) < sizeof abs) {
            snprintf(pattern, sizeof pattern, "%s", abs);
        }
    }
    if ((rc = prepare_env(&a, agent, pattern, err)) < 0) {
        return rc;
    }
    char index[PATH_MAX];
    run_trace_t *traced = NULL; /* every trace of the run (index_report) */
    size_t n_traced = 0;
    if (index_create(index, sizeof index) < 0) {
        unsetenv("LEAKHOUND_INDEX"); /* traces are still written; only the list is lost */
    }
    fflush(stdout);
    fflush(stderr);
    rc = spawn_and_wait(a.prog_argv, snapshot_signal(&a), &pid, err);
    trace[0] = '\0';
    if (index[0]) {
        if (rc >= 0 && pid) {
            char wanted[sizeof trace];
            expand_pattern(wanted, sizeof wanted, pattern, pid);
            index_report(index, pid, a.follow_exec < 0, wanted, trace, sizeof trace, &traced,
                         &n_traced);
            for (size_t i = 0; i < n_traced; i++) {
                /* a process still running (a daemon's) may yet use its reservation */
                if (traced[i].pid > 0 && kill((pid_t)traced[i].pid, 0) != 0 &&
                    errno == ESRCH) {
                    remove_snapshot_files(traced[i].path, 1);
                }
            }
        }
        unlink(index);
    }
    if (rc < 0 || pid == 0) {
        free(traced);
        return rc;
    }
    if (!trace[0]) {
        expand_pattern(trace, sizeof trace, pattern, pid);
    }
    if (access(trace, F_OK) == 0) {
        fprintf(stderr, "leakhound: trace written to %s\n", trace);
        if (a.check) { /* check.c: the program's own failure status wins */
            int verdict = check_run(trace, traced, n_traced, &a.check_opts, err);
            if (verdict < 0) {
                free(traced);
                return verdict;
            }
            if (rc == 0) {
                rc = verdict;
            }
        }
    } else {
        char why[PATH_MAX + 256];
        if (lh_preload_obstacle(a.prog_argv[0], why, sizeof why)) {
            fprintf(stderr, "leakhound: no trace was written: %s\n", why);
        } else {
            fprintf(stderr, "leakhound: no trace was written to %s (did the program start? is "
                            "the agent %s working?)\n",
                    trace, agent);
        }
        if (rc == 0) {
            rc = 1;
        }
    }
    free(traced);
    return rc;
}
