/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_watch.c: `leakhound watch`: proves from the outside whether a process leaks. It
 * samples the memory of the process and its children from /proc (procmem.h)
 * while a load command is run against it round after round (or just over time), fits a
 * line through the samples and gives a verdict (analysis/linfit.h), like watching `top`
 * beside `ab -n 100`. No agent is involved, so it works on any process.
 *
 * Exit status (for CI): 0 no leak, 1 leak, 2 inconclusive, 3 usage error or failure.
 * main.c maps a negative return to 2 or 1, which here mean verdicts, so this command prints
 * its own errors ("leakhound: watch: ..." on one line, as main.c would) and returns 3.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "grow.h"

#include "cmd.h"
#include "linfit.h"
#include "opts.h"
#include "procmem.h"
#include "watch.h"

#define WATCH_EXIT_FAILURE 3
#define WATCH_KILL_GRACE_MS 2000
#define WATCH_MAX_ROUNDS 100000ul
#define WATCH_MAX_LOADS 1000000000ul
#define WATCH_MAX_NS (7ull * 24 * 3600 * 1000000000) /* a week */

const char lh_cmd_watch_usage[] =
    "usage: leakhound watch (-p PID | [--] CMD [ARGS...]) [--load 'CMD' [-n N] [--rounds K]\n"
    "                       [--warmup W] [--settle DUR] [--show-load]]\n"
    "                       [--interval DUR] [--duration DUR] [--startup DUR]\n"
    "                       [--metric rss|pss] [--threshold SIZE] [--format text|json]\n"
    "\n"
    "Watches the memory of a process and all its children from outside (/proc; no agent)\n"
    "while load is applied, fits a line through the samples and says whether it leaks.\n"
    "\n"
    "  -p, --pid PID      watch a running process\n"
    "  CMD [ARGS...]      or start CMD (its stdin is /dev/null, its stdout goes to stderr),\n"
    "                     and stop it at the end (SIGTERM to its process group, SIGKILL\n"
    "                     2 s later)\n"
    "  --load 'CMD'       the load: run by /bin/sh -c, N times per round, one after the\n"
    "                     other; $LEAKHOUND_PID holds the target's pid. Its output is\n"
    "                     discarded unless --show-load (then it goes to stderr)\n"
    "  -n N               load commands per round (default 1)\n"
    "  --rounds K         measured rounds (default 10)\n"
    "  --warmup W         rounds run first and not measured (default 1)\n"
    "  --settle DUR       pause after each round before sampling (default 200ms)\n"
    "  --interval DUR     without --load: sample every DUR (default 1s) ...\n"
    "  --duration DUR     ... for DUR (default 30s)\n"
    "  --startup DUR      let a started CMD initialise this long first (default 500ms)\n"
    "  --metric rss|pss   what to fit (default rss; pss needs ptrace access to the target)\n"
    "  --threshold SIZE   growth over the watch that counts as a leak (default: the larger\n"
    "                     of 256K and 1% of the first sample)\n"
    "  --format text|json the report's format (default text)\n"
    "\n"
    "DUR is a number with a unit: ms, s, m or h (200ms, 1.5s); SIZE a number with K, M or G\n"
    "(binary units). The slope of memory against load commands (or seconds) comes with a\n"
    "95% confidence interval. Verdict: no leak when even the interval's upper end, over the\n"
    "whole watch, stays under the threshold, or when the later half of the samples does\n"
    "(memory rose once, then stopped); leak when the interval is above 0 and the growth\n"
    "reaches the threshold; inconclusive otherwise (too few samples, too noisy).\n"
    "\n"
    "Exit status: 0 no leak, 1 leak, 2 inconclusive, 3 usage error or failure.\n"
    "\n"
    "example:\n"
    "  leakhound watch --load 'curl -s localhost:8080/' -n 100 -- ./server --port 8080\n";

typedef struct watch_args { /* the options' values, as given */
    const char *pid, *load, *settle, *interval, *duration, *startup, *threshold;
    unsigned long n, rounds, warmup; /* ULONG_MAX: not given */
    int use_pss;                     /* --metric pss */
    int json;                        /* --format json */
    int show_load;
    int help;
    char **cmd; /* NULL-terminated, points into argv */
} watch_args_t;

typedef struct watch_cfg {
    pid_t pid;
    unsigned long n, rounds, warmup;
    double settle_ms, interval_ms, duration_ms, startup_ms;
    double threshold_bytes; /* 0: the default rule */
    int use_pss;
    int json;
} watch_cfg_t;

/* ---------------------------------------------------------------------------------------
 * Argument parsing
 * ------------------------------------------------------------------------------------- */

static int
parse_args(int argc, char **argv, watch_args_t *a, lh_err_t *err)
{
    const lh_opt_t opts[] = {
        {"--pid", "-p", LH_OPT_STR, &a->pid, 0, 0, NULL},
        {"--load", NULL, LH_OPT_STR, &a->load, 0, 0, NULL},
        {"-n", NULL, LH_OPT_UINT, &a->n, 1, WATCH_MAX_LOADS, NULL},
        {"--rounds", NULL, LH_OPT_UINT, &a->rounds, 1, WATCH_MAX_ROUNDS, NULL},
        {"--warmup", NULL, LH_OPT_UINT, &a->warmup, 0, WATCH_MAX_ROUNDS, NULL},
        {"--settle", NULL, LH_OPT_STR, &a->settle, 0, 0, NULL},
        {"--interval", NULL, LH_OPT_STR, &a->interval, 0, 0, NULL},
        {"--duration", NULL, LH_OPT_STR, &a->duration, 0, 0, NULL},
        {"--startup", NULL, LH_OPT_STR, &a->startup, 0, 0, NULL},
        {"--metric", NULL, LH_OPT_CHOICE, &a->use_pss, 0, 0, "rss|pss"},
        {"--threshold", NULL, LH_OPT_STR, &a->threshold, 0, 0, NULL},
        {"--format", NULL, LH_OPT_CHOICE, &a->json, 0, 0, "text|json"},
        {"--show-load", NULL, LH_OPT_BOOL, &a->show_load, 0, 0, NULL},
    };
    int i;
    a->n = a->rounds = a->warmup = ULONG_MAX;
    for (i = 1; i < argc; i++) {
        if (lh_opt_program_start(argv, &i, &a->help)) {
            break;
        }
        int rc = lh_opt_parse("watch", opts, sizeof opts / sizeof *opts, argc, argv, &i, err);
        if (rc < 0) {
            return rc;
        }
        if (rc == 0) {
            return lh_err_set(err, LH_EINVAL,
                              "watch: unknown option '%s' (see leakhound help watch)", argv[i]);
        }
    }
    a->cmd = i < argc ? argv + i : NULL;
    return 0;
}

/* A duration option, into milliseconds (at least lo ns, at most a week). */
static int
duration_ms(const char *opt, const char *s, uint64_t lo, double *ms, lh_err_t *err)
{
    uint64_t ns;
    if (lh_cli_value("watch", opt, s, 0, lo, WATCH_MAX_NS, &ns, err) < 0) {
        return LH_EINVAL;
    }
    *ms = (double)ns / 1e6;
    return 0;
}

static int
check_args(const watch_args_t *a, watch_cfg_t *c, lh_err_t *err)
{
    unsigned long v;
    if (a->pid && a->cmd) {
        return lh_err_set(err, LH_EINVAL, "give either -p PID or a command, not both");
    }
    if (!a->pid && !a->cmd) {
        return lh_err_set(err, LH_EINVAL,
                          "which process? give -p PID or -- CMD [ARGS...] "
                          "(see leakhound help watch)");
    }
    if (a->pid) {
        if (lh_cli_parse_uint("-p", a->pid, 1, 0x7fffffff, &v, err) < 0) {
            return LH_EINVAL;
        }
        c->pid = (pid_t)v;
        char state;
        if (lh_procmem_stat(c->pid, NULL, &state, NULL) < 0) {
            return lh_err_set(err, LH_EINVAL, "-p %s: no such process", a->pid);
        }
        if (state == 'Z' || state == 'X') {
            return lh_err_set(err, LH_EINVAL, "-p %s: the process has exited (zombie)",
                              a->pid);
        }
    }
    if (a->load) {
        if (!*a->load) {
            return lh_err_set(err, LH_EINVAL, "--load needs a command");
        }
        if (a->interval || a->duration) {
            return lh_err_set(err, LH_EINVAL,
                              "--interval and --duration apply only without --load");
        }
    } else if (a->n != ULONG_MAX || a->rounds != ULONG_MAX || a->warmup != ULONG_MAX ||
               a->settle || a->show_load) {
        return lh_err_set(err, LH_EINVAL,
                          "-n, --rounds, --warmup, --settle and --show-load need --load");
    }
    c->n = a->n != ULONG_MAX ? a->n : 1;
    c->rounds = a->rounds != ULONG_MAX ? a->rounds : 10;
    c->warmup = a->warmup != ULONG_MAX ? a->warmup : 1;
    c->settle_ms = 200;
    c->interval_ms = 1000;
    c->duration_ms = 30000;
    c->startup_ms = a->cmd ? 500 : 0;
    uint64_t thr = 0;
    if ((a->settle && duration_ms("--settle", a->settle, 0, &c->settle_ms, err) < 0) ||
        (a->interval && duration_ms("--interval", a->interval, 1, &c->interval_ms, err) < 0) ||
        (a->duration && duration_ms("--duration", a->duration, 1, &c->duration_ms, err) < 0) ||
        (a->startup && duration_ms("--startup", a->startup, 0, &c->startup_ms, err) < 0) ||
        (a->threshold &&
         lh_cli_value("watch", "--threshold", a->threshold, 1, 1, UINT64_MAX, &thr, err) < 0)) {
        return LH_EINVAL;
    }
    c->threshold_bytes = (double)thr;
    if (!a->load && c->interval_ms > c->duration_ms) {
        return lh_err_set(err, LH_EINVAL, "--interval is longer than --duration");
    }
    c->use_pss = a->use_pss;
    c->json = a->json;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Time and interruption
 * ------------------------------------------------------------------------------------- */

static double
now_ms(void)
{
    return (double)lh_cli_clock_ns(CLOCK_MONOTONIC) / 1e6;
}

/* Sleeps ms milliseconds, or less when SIGINT/SIGTERM arrives. */
static void
sleep_ms(double ms)
{
    double until = now_ms() + ms;
    double left;
    while (!lh_cli_stop && (left = until - now_ms()) > 0) {
        struct timespec ts = {(time_t)(left / 1000.0), (long)(fmod(left, 1000.0) * 1e6)};
        nanosleep(&ts, NULL);
    }
}

/* ---------------------------------------------------------------------------------------
 * The target
 * ------------------------------------------------------------------------------------- */

typedef struct target {
    pid_t pid;
    int is_started;
    int is_reaped;
    int wstatus;
    unsigned long long start_ticks;
} target_t;

/* Starts cmd in its own process group (so Ctrl-C reaches leakhound only, which then stops
 * the target itself), with stdin from /dev/null and stdout sent to stderr, keeping
 * leakhound's stdout for the report. A close-on-exec pipe reports an exec failure. */
static int
start_target(char **cmd, target_t *t, lh_err_t *err)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0) {
        return lh_err_set(err, LH_EIO, "pipe: %s", strerror(errno));
    }
    pid_t leader = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return lh_err_set(err, LH_EIO, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        setpgid(0, 0);
        /* Should leakhound die without stopping it, the target goes too. */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != leader) {
            _exit(127);
        }
        int fd = open("/dev/null", O_RDONLY);
        if (fd >= 0) {
            dup2(fd, 0);
            close(fd);
        }
        dup2(2, 1);
        execvp(cmd[0], cmd);
        int e = errno;
        ssize_t w = write(pfd[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    setpgid(pid, pid); /* both sides set it: no window where the group does not exist */
    close(pfd[1]);
    int child_errno = 0;
    ssize_t r;
    while ((r = read(pfd[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR) {
    }
    close(pfd[0]);
    t->pid = pid;
    t->is_started = 1;
    if (r == (ssize_t)sizeof child_errno) {
        waitpid(pid, &t->wstatus, 0);
        t->is_reaped = 1;
        return lh_err_set(err, LH_ENOENT, "cannot run '%s': %s", cmd[0],
                          strerror(child_errno));
    }
    return 0;
}

/* Is the target still running? Reaps a started target that exited; notices a reused pid. */
static int
target_alive(target_t *t)
{
    if (t->is_reaped) {
        return 0;
    }
    if (t->is_started) {
        pid_t r = waitpid(t->pid, &t->wstatus, WNOHANG);
        if (r == t->pid) {
            t->is_reaped = 1;
            return 0;
        }
    }
    unsigned long long ticks;
    char state;
    if (lh_procmem_stat(t->pid, &ticks, &state, NULL) < 0 || state == 'Z' || state == 'X') {
        return 0;
    }
    return t->start_ticks == 0 || ticks == t->start_ticks;
}

/* Waits up to ms for a started target to exit; returns 1 when it was reaped. */
static int
reap_within(target_t *t, double ms)
{
    double until = now_ms() + ms;
    while (!t->is_reaped) {
        pid_t r = waitpid(t->pid, &t->wstatus, WNOHANG);
        if (r == t->pid || (r < 0 && errno == ECHILD)) {
            t->is_reaped = 1;
            break;
        }
        if (now_ms() >= until) {
            return 0;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 1;
}

/* Stops a started target: SIGTERM to its process group, SIGKILL after the grace time,
 * then reaps it. A target given with -p is left alone. */
static void
stop_target(target_t *t)
{
    if (!t->is_started || t->is_reaped) {
        return;
    }
    kill(-t->pid, SIGTERM);
    kill(t->pid, SIGTERM);
    if (!reap_within(t, WATCH_KILL_GRACE_MS)) {
        kill(-t->pid, SIGKILL);
        kill(t->pid, SIGKILL);
        reap_within(t, 60000);
    }
    /* Descendants that left the group are not ours to chase; the group's rest gets it. */
    kill(-t->pid, SIGKILL);
}

/* ---------------------------------------------------------------------------------------
 * Load commands
 * ------------------------------------------------------------------------------------- */

enum { LOAD_OK = 0, LOAD_FAILED = 1, LOAD_TARGET_GONE = 2, LOAD_INTERRUPTED = 3 };

/* Runs one load command with /bin/sh -c in its own process group, and waits for it while
 * watching the target: when the target dies or the user interrupts, the load's group is
 * killed (a load writing to a FIFO nobody reads any more would block forever). Returns a
 * LOAD_* value, or a negative LH_E* code when it could not be started. */
static int
run_load(const char *cmd, int show_load, target_t *t, lh_err_t *err)
{
    char pidbuf[24];
    snprintf(pidbuf, sizeof pidbuf, "%ld", (long)t->pid);
    pid_t pid = fork();
    if (pid < 0) {
        return lh_err_set(err, LH_EIO, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        setpgid(0, 0);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        int fd = open("/dev/null", O_RDWR);
        if (fd >= 0) {
            dup2(fd, 0);
            if (!show_load) {
                dup2(fd, 1);
                dup2(fd, 2);
            }
            close(fd);
        }
        if (show_load) {
            dup2(2, 1);
        }
        setenv("LEAKHOUND_PID", pidbuf, 1);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid);
    long nap_us = 100;
    double next_check = now_ms() + 50;
    for (;;) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? LOAD_OK : LOAD_FAILED;
        }
        int gone = 0;
        if (!lh_cli_stop && now_ms() >= next_check) {
            gone = !target_alive(t);
            next_check = now_ms() + 50;
        }
        if (lh_cli_stop || gone) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            return gone ? LOAD_TARGET_GONE : LOAD_INTERRUPTED;
        }
        struct timespec ts = {0, nap_us * 1000};
        nanosleep(&ts, NULL);
        nap_us = nap_us < 10000 ? nap_us * 2 : 10000;
    }
}

/* ---------------------------------------------------------------------------------------
 * The watch
 * ------------------------------------------------------------------------------------- */

typedef struct watch_state {
    watch_cfg_t cfg;
    const char *load;
    int show_load;
    target_t target;
    lh_watch_sample_t *samples;
    size_t n_samples;
    size_t cap;
    unsigned long loads;         /* load commands run in measured rounds */
    unsigned long loads_run;     /* all load commands run, warm-up included */
    unsigned long load_failures; /* those that exited non-zero */
    double t0_ms;
    char exit_note[160];
} watch_state_t;

/* Takes one sample. Returns 1 when taken, 0 when the target is gone (exit_note set), or a
 * negative LH_E* code. */
static int
take_sample(watch_state_t *w, unsigned round, lh_err_t *err)
{
    lh_watch_mem_t mem;
    unsigned long long ticks = 0;
    if (!target_alive(&w->target) || lh_procmem_tree(w->target.pid, &mem, &ticks, NULL) < 0 ||
        (w->target.start_ticks && ticks != w->target.start_ticks)) {
        return 0;
    }
    if (w->cfg.use_pss && !mem.has_pss) {
        return lh_err_set(err, LH_EIO,
                          "PSS of pid %ld is unreadable (/proc/PID/smaps_rollup needs "
                          "ptrace access); use --metric rss",
                          (long)w->target.pid);
    }
    if (lh_grow(&w->samples, &w->cap, w->n_samples, sizeof *w->samples, 64) < 0) {
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    lh_watch_sample_t *s = &w->samples[w->n_samples++];
    s->round = round;
    s->loads = w->loads;
    s->t_s = (now_ms() - w->t0_ms) / 1000.0;
    s->mem = mem;
    return 1;
}

static void
note_exit(watch_state_t *w, const char *when)
{
    if (lh_cli_stop) {
        snprintf(w->exit_note, sizeof w->exit_note, "interrupted %s", when);
        return;
    }
    char how[64] = "";
    if (w->target.is_reaped && WIFEXITED(w->target.wstatus)) {
        snprintf(how, sizeof how, " with status %d", WEXITSTATUS(w->target.wstatus));
    } else if (w->target.is_reaped && WIFSIGNALED(w->target.wstatus)) {
        snprintf(how, sizeof how, " from signal %d (%s)", WTERMSIG(w->target.wstatus),
                 strsignal(WTERMSIG(w->target.wstatus)));
    }
    snprintf(w->exit_note, sizeof w->exit_note, "process %ld exited%s %s", (long)w->target.pid,
             how, when);
}

/* Runs one round's load commands. Returns 1 when all ran, 0 when the target went away or
 * the user interrupted, or a negative LH_E* code. */
static int
load_round(watch_state_t *w, int counted, lh_err_t *err)
{
    for (unsigned long i = 0; i < w->cfg.n; i++) {
        if (lh_cli_stop || !target_alive(&w->target)) {
            return 0;
        }
        int rc = run_load(w->load, w->show_load, &w->target, err);
        if (rc < 0) {
            return rc;
        }
        if (rc == LOAD_TARGET_GONE || rc == LOAD_INTERRUPTED) {
            return 0;
        }
        w->loads_run++;
        if (rc == LOAD_FAILED) {
            if (w->load_failures++ == 0) {
                fprintf(stderr, "leakhound: watch: warning: the load command exited with a "
                                "non-zero status (counted in the report)\n");
            }
        }
        if (counted) {
            w->loads++;
        }
    }
    return 1;
}

static char *
round_words(char *buf, size_t len, const watch_state_t *w)
{
    if (w->n_samples == 0) {
        snprintf(buf, len, "before the first sample");
    } else {
        snprintf(buf, len, "after round %u", w->samples[w->n_samples - 1].round);
    }
    return buf;
}

static int
watch_by_load(watch_state_t *w, lh_err_t *err)
{
    char when[64];
    int rc;
    for (unsigned long r = 0; r < w->cfg.warmup; r++) {
        if ((rc = load_round(w, 0, err)) <= 0) {
            if (rc == 0) {
                note_exit(w, "during warm-up");
            }
            return rc;
        }
    }
    sleep_ms(w->cfg.settle_ms);
    for (unsigned long r = 0; r <= w->cfg.rounds; r++) {
        if (r > 0) {
            if ((rc = load_round(w, 1, err)) < 0) {
                return rc;
            }
            if (rc > 0) {
                sleep_ms(w->cfg.settle_ms);
            }
        }
        if (lh_cli_stop || (rc = take_sample(w, (unsigned)r, err)) == 0) {
            note_exit(w, round_words(when, sizeof when, w));
            return 0;
        }
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}

static int
watch_by_time(watch_state_t *w, lh_err_t *err)
{
    char when[64];
    for (unsigned long i = 0;; i++) {
        double at = (double)i * w->cfg.interval_ms;
        if (at > w->cfg.duration_ms + 0.5) {
            return 0;
        }
        sleep_ms(w->t0_ms + at - now_ms());
        int rc = lh_cli_stop ? 0 : take_sample(w, (unsigned)i, err);
        if (rc == 0) {
            note_exit(w, round_words(when, sizeof when, w));
            return 0;
        }
        if (rc < 0) {
            return rc;
        }
    }
}

/* Fits, judges and renders. Returns the verdict, or a negative LH_E* code. */
static int
report(watch_state_t *w, char **cmd, lh_err_t *err)
{
    lh_watch_result_t res = {0};
    double *x = NULL, *y = NULL;
    int rc;
    size_t n = w->n_samples;
    res.pid = w->target.pid;
    res.command = cmd;
    res.is_started = w->target.is_started;
    res.exit_note = w->exit_note[0] ? w->exit_note : NULL;
    res.by_load = w->load != NULL;
    res.metric = w->cfg.use_pss ? "pss" : "rss";
    res.load_cmd = w->load;
    res.loads_per_round = w->cfg.n;
    res.rounds = w->cfg.rounds;
    res.warmup = w->cfg.warmup;
    res.load_failures = w->load_failures;
    res.samples = w->samples;
    res.n_samples = n;
    if (n && (!(x = calloc(n, sizeof *x)) || !(y = calloc(n, sizeof *y)))) {
        rc = lh_err_set(err, LH_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        x[i] = res.by_load ? (double)w->samples[i].loads : w->samples[i].t_s;
        y[i] = (double)(w->cfg.use_pss ? w->samples[i].mem.pss_bytes
                                       : w->samples[i].mem.rss_bytes);
    }
    lh_verdict_rule_t rule = LH_VERDICT_RULE_DEFAULT;
    if (w->cfg.threshold_bytes > 0) {
        rule.min_bytes = w->cfg.threshold_bytes;
        rule.start_frac = 0;
    }
    lh_linfit_judge(x, y, n, res.by_load ? "load" : "second", &rule, &res.judgement);
    if (w->loads_run > 0 && w->load_failures == w->loads_run) {
        /* A mistyped load command must not pass as "no leak": the target had no load. */
        res.judgement.verdict = LH_VERDICT_INCONCLUSIVE;
        snprintf(res.judgement.reason, sizeof res.judgement.reason,
                 "all %lu load commands failed (non-zero exit status), so the target may have "
                 "had no load at all; check the command with --show-load",
                 w->loads_run);
    }
    if (w->exit_note[0]) {
        fprintf(stderr, "leakhound: watch: %s; analysing the %zu sample%s taken\n",
                w->exit_note, n, n == 1 ? "" : "s");
    }
    rc = w->cfg.json ? lh_view_watch_json(stdout, &res, err)
                     : lh_view_watch_text(stdout, &res, err);
    if (rc == 0) {
        rc = (int)res.judgement.verdict;
    }
fail:
    free(x);
    free(y);
    return rc;
}

static int
watch(int argc, char **argv, lh_err_t *err)
{
    watch_args_t a = {0};
    watch_state_t w = {0};
    struct sigaction old[2];
    int rc;

    if ((rc = parse_args(argc, argv, &a, err)) < 0) {
        return rc;
    }
    if (a.help) {
        fputs(lh_cmd_watch_usage, stdout);
        return 0;
    }
    if ((rc = check_args(&a, &w.cfg, err)) < 0) {
        return rc;
    }
    w.load = a.load;
    w.show_load = a.show_load;

    lh_cli_stop_catch(old); /* a sleep or wait ends early: the watch stops with what it has */

    if (a.cmd) {
        if ((rc = start_target(a.cmd, &w.target, err)) < 0) {
            goto fail;
        }
    } else {
        w.target.pid = w.cfg.pid;
    }
    lh_procmem_stat(w.target.pid, &w.target.start_ticks, NULL, NULL);
    sleep_ms(w.cfg.startup_ms);
    w.t0_ms = now_ms();
    rc = w.load ? watch_by_load(&w, err) : watch_by_time(&w, err);
    if (rc < 0) {
        goto fail;
    }
    stop_target(&w.target);
    rc = report(&w, a.cmd, err);
fail:
    stop_target(&w.target);
    lh_cli_stop_restore(old);
    free(w.samples);
    return rc;
}

int
lh_cmd_watch(int argc, char **argv, lh_err_t *err)
{
    int rc = watch(argc, argv, err);
    if (rc < 0) {
        const char *msg = err->msg[0] ? err->msg : lh_err_str(rc);
        /* the argument layer's messages (opts.h) name the command already */
        fprintf(stderr, "leakhound: %s%s\n", strncmp(msg, "watch: ", 7) ? "watch: " : "", msg);
        err->msg[0] = '\0';
        return WATCH_EXIT_FAILURE;
    }
    return rc;
}
