/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd.h: the subcommands of the leakhound CLI, dispatched by main.c.
 *
 * Each takes the arguments after "leakhound" (argv[0] is the subcommand's name) and
 * returns the process exit status (>= 0), or a negative LH_E* code with a one-line message
 * in err; main.c prints it as "leakhound: <message>" and exits 2 for LH_EINVAL (usage
 * errors), else 1. Commands print their own output; they never exit.
 */
#ifndef LH_CMD_H
#define LH_CMD_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "err.h"

/* The subcommands, one X(NAME, SUMMARY) each, in the order `leakhound help` lists them:
 * this list declares lh_cmd_NAME and its --help text lh_cmd_NAME_usage below (the arguments
 * are there, not repeated here), and is main.c's dispatch table, so that a command is named
 * in one place. Exit statuses beyond 0 and the errors above: run returns the program's (128
 * + signal if it died from one; 127 if it could not be started); watch 0 no leak, 1 leak,
 * 2 inconclusive, 3 error (printed by watch itself, since 2 means inconclusive there);
 * shell 1 when a scripted command failed. */
#define LH_COMMANDS(X)                                                                     \
    X(run, "run a program under the agent, recording a trace")                             \
    X(attach, "record a running process from now on")                                      \
    X(snapshot, "heap snapshot of a running process, no agent (-p PID)")                   \
    X(report, "report what a recorded program leaked")                                     \
    X(leaks, "what piles up while it runs, per interval")                                  \
    X(counts, "live blocks per site at each mark")                                         \
    X(log, "allocations and frees of an address, site, thread")                            \
    X(watch, "measure from outside whether a process leaks")                               \
    X(tree, "the call tree of what was allocated, leaked, at peak")                        \
    X(plot, "draw the heap over time, by site (SVG)")                                      \
    X(flamegraph, "draw a flame graph (SVG)")                                              \
    X(html, "one self-contained HTML page: charts and tables")                             \
    X(export, "write a trace as SQLite, pprof or folded stacks")                           \
    X(shell, "explore a heap snapshot: why is it still alive")

#define LH_CMD_DECLARE(name, summary)                                                      \
    int lh_cmd_##name(int argc, char **argv, lh_err_t *err);                               \
    extern const char lh_cmd_##name##_usage[];
LH_COMMANDS(LH_CMD_DECLARE)

/* The options of what the agent records, taken alike by run and attach: -o/--output,
 * --depth, --unwind, --sample-rate, --snapshot-every, as given (LH_RECORD_OPTS: rows of an
 * lh_opt_t table filling them), then checked by lh_record_check into the agent's settings. */
typedef struct lh_record_opts {
    const char *output, *depth, *unwind, *sample_rate, *snap_every;
    size_t n_env;               /* after lh_record_check: LEAKHOUND_<env_name[i]> = env_value[i] */
    const char *env_name[4];
    char env_value[4][24];
} lh_record_opts_t;
#define LH_RECORD_OPTS(r)                                                                  \
    {"--output", "-o", LH_OPT_STR, &(r)->output, 0, 0, NULL},                              \
    {"--depth", NULL, LH_OPT_STR, &(r)->depth, 0, 0, NULL},                                \
    {"--unwind", NULL, LH_OPT_STR, &(r)->unwind, 0, 0, NULL},                              \
    {"--sample-rate", NULL, LH_OPT_STR, &(r)->sample_rate, 0, 0, NULL},                    \
    {"--snapshot-every", NULL, LH_OPT_STR, &(r)->snap_every, 0, 0, NULL}
/* Checks r's values (messages "CMD: --depth: ...") and fills its settings. 0 or LH_EINVAL. */
int lh_record_check(const char *cmd, lh_record_opts_t *r, lh_err_t *err);
/* The value v of option opt as a duration in ns (size 0: lh_parse_duration_ns) or a size
 * in bytes (size 1: lh_parse_size_bytes) from lo to hi: 0, or LH_EINVAL with the one
 * message of every command: "CMD: OPT: expected a duration from 1ns to 168h (such as 500ms,
 * 10s or 1.5m), got 'V'" ("of at most 1T", "of at least 1": an end left open). */
int lh_cli_value(const char *cmd, const char *opt, const char *v, int size, uint64_t lo,
                 uint64_t hi, uint64_t *out, lh_err_t *err);
/* The same as decimal text in out for the agent's environment: a size in bytes, at most
 * max; a duration in whole milliseconds, 0 or at least 1ms ("CMD: OPT V: the agent counts
 * in milliseconds"), at most max_ms. */
int lh_cli_env_bytes(const char *cmd, const char *opt, const char *v, uint64_t max, char *out,
                     size_t len, lh_err_t *err);
int lh_cli_env_ms(const char *cmd, const char *opt, const char *v, uint64_t max_ms, char *out,
                  size_t len, lh_err_t *err);

/* leakhound report FILE --by function [--sort inclusive|exclusive] [--metric M] [--top N]
 * [--format text|json]: called by lh_cmd_report when --by is given. */
int lh_cmd_report_by(int argc, char **argv, lh_err_t *err);

/* Finds the library name (libleakhound.so, libleakhound_attach.so): $env_name when set,
 * else in ../lib, ../lib/leakhound or the directory of the leakhound executable. Returns 0
 * with its absolute path in out, or LH_ENOENT: "ENV=VALUE: no such file", "WHAT:
 * /proc/self/exe: ...", or "MISSING next to DIR (LOOKED); set ENV". */
int lh_cli_find_lib(const char *name, const char *env_name, const char *what, const char *missing,
                    const char *looked, char *out, size_t len, lh_err_t *err);

/* Parses a decimal unsigned number in [lo, hi]; returns 0 or LH_EINVAL (message names the
 * option). */
int lh_cli_parse_uint(const char *opt, const char *s, unsigned long lo, unsigned long hi,
                      unsigned long *out, lh_err_t *err);
/* Parses --heuristics (lh_heuristics_parse, heapgraph.h); the message names the command
 * and the option, "CMD: --heuristics: ..." (cmd_shell.c; report takes it too). */
int lh_cli_parse_heuristics(const char *cmd, const char *s, unsigned *out, lh_err_t *err);

/* The row named name in a table of n rows of size bytes, each starting with its name (a
 * const char *), or NULL: the one lookup of main.c's commands and the shell's. */
const void *lh_cli_find_named(const void *rows, size_t n, size_t size, const char *name);
#define LH_CLI_FIND(table, name) lh_cli_find_named((table), sizeof(table) / sizeof *(table), \
                                                   sizeof *(table), (name))

/* qsort/bsearch orders of uint64_t and uint32_t elements, ascending. */
int lh_cli_cmp_u64(const void *a, const void *b);
int lh_cli_cmp_u32(const void *a, const void *b);

/* Pure parsers (unit-tested), returning 0 or LH_EINVAL without a message:
 * durations: a number (fractions allowed) and a unit ns, us, ms, s, m/min or h ("10s",
 * "500ms", "1.5s"); a bare "0" needs no unit. */
int lh_parse_duration_ns(const char *s, uint64_t *ns);
/* sizes: a number and an optional binary unit K, M, G, T (1024-based), with or without a
 * trailing "B"/"iB" ("64M", "512K", "1.5GiB", "4096"); whole bytes only. */
int lh_parse_size_bytes(const char *s, uint64_t *bytes);
/* signals: "USR2", "SIGUSR2", "sigusr2", "12", "RTMIN+3"; "none" or "0" give 0. Returns the
 * signal number, 0, or LH_EINVAL (unknown, or KILL/STOP, which cannot be caught). */
int lh_parse_signal(const char *s);

/* clock_gettime(id) in nanoseconds: the one clock read of the CLI's timers. */
static inline uint64_t
lh_cli_clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* From lh_cli_stop_catch on, SIGINT and SIGTERM set lh_cli_stop (cleared there) and, with
 * no SA_RESTART, end a sleep or wait early; lh_cli_stop_restore puts back the handlers that
 * catch saved in old (attach and watch stop what they do and report). */
extern volatile sig_atomic_t lh_cli_stop;
void lh_cli_stop_catch(struct sigaction old[2]);
void lh_cli_stop_restore(const struct sigaction old[2]);

/* Exit status of `leakhound run --check` when the program leaked more than allowed. */
#define LH_EXIT_CHECK_LEAK 23

#endif /* LH_CMD_H */
