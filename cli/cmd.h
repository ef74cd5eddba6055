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

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* leakhound run [-o FILE] [--depth N] [--unwind libunwind|fp] [--follow-exec] [--] PROG...
 * Returns the program's exit status (128 + signal if it died from one), 127 if it could
 * not be started. */
int lh_cmd_run(int argc, char **argv, lh_err_t *err);
extern const char lh_cmd_run_usage[];

/* Finds the library name (libleakhound.so, libleakhound_attach.so): $env_name when set,
 * else in ../lib, ../lib/leakhound or the directory of the leakhound executable. Returns 0
 * with its absolute path in out, or LH_ENOENT: "ENV=VALUE: no such file", "WHAT:
 * /proc/self/exe: ...", or "MISSING next to DIR (LOOKED); set ENV". */
int lh_cli_find_lib(const char *name, const char *env_name, const char *what, const char *missing,
                    const char *looked, char *out, size_t len, lh_err_t *err);

/* leakhound attach -p PID [-o FILE] [--duration D] [--depth N] [--unwind K]
 * [--sample-rate SIZE] [--snapshot-every D]: record a running process from now on. */
int lh_cmd_attach(int argc, char **argv, lh_err_t *err);
extern const char lh_cmd_attach_usage[];

/* leakhound snapshot -p PID [-o FILE] [--contents none|pointers|full] [--count N]
 * [--interval D]: a heap snapshot of a running process with no agent in it. */
int lh_cmd_snapshot(int argc, char **argv, lh_err_t *err);
extern const char lh_cmd_snapshot_usage[];

/* leakhound report FILE [--top N] [--format text|json] [--salvage] */
int lh_cmd_report(int argc, char **argv, lh_err_t *err);
extern const char lh_cmd_report_usage[];

/* Parses a decimal unsigned number in [lo, hi]; returns 0 or LH_EINVAL (message names the
 * option). */
int lh_cli_parse_uint(const char *opt, const char *s, unsigned long lo, unsigned long hi,
                      unsigned long *out, lh_err_t *err);
/* Parses --heuristics (lh_heuristics_parse, heapgraph.h); the message names the option
 * (cmd_shell.c; report takes it too). */
int lh_cli_parse_heuristics(const char *s, unsigned *out, lh_err_t *err);

/* leakhound watch (-p PID | -- CMD...) [--load CMD ...]: 0 no leak, 1 leak, 2 inconclusive,
 * 3 error (printed by the command itself, since 2 means inconclusive here). */
int lh_cmd_watch(int argc, char **argv, lh_err_t *err);
extern const char lh_cmd_watch_usage[];

/* leakhound leaks FILE [--from LABEL] [--to LABEL] [--skip N] [--top N] [--format F]:
 * the differential leak report over marks or snapshots. */
int lh_cmd_leaks(int argc, char **argv, lh_err_t *err);
extern const char lh_cmd_leaks_usage[];

/* leakhound counts FILE [--by site|function] [--top N] [--rows N] [--format F]: live
 * blocks per group at each mark. */
int lh_cmd_counts(int argc, char **argv, lh_err_t *err);
extern const char lh_cmd_counts_usage[];

/* leakhound log FILE [--addr ADDR] [--site N] [--thread TID] [--limit N] [--format F]:
 * the raw event history. */
int lh_cmd_log(int argc, char **argv, lh_err_t *err);
extern const char lh_cmd_log_usage[];

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

/* ---------------------------------------------------------------------------------------
 * Where the memory went (issue 6): attribution, trees, pictures, exports, CI checks.
 * ------------------------------------------------------------------------------------- */
/* leakhound report FILE --by function [--sort inclusive|exclusive] [--metric M] [--top N]
 * [--format text|json]: called by lh_cmd_report when --by is given. */
int lh_cmd_report_by(int argc, char **argv, lh_err_t *err);
/* leakhound export FILE [--sqlite OUT.db [--events]] [--pprof OUT.pb.gz [--at LABEL]]
 * [--folded OUT.txt [--metric M]] */
int lh_cmd_export(int argc, char **argv, lh_err_t *err);
extern const char lh_cmd_export_usage[];
/* leakhound tree FILE [--top-down|--bottom-up] [--metric M] [--focus FUNC] [--min-percent P]
 * [--format text|json] */
int lh_cmd_tree(int argc, char **argv, lh_err_t *err);
extern const char lh_cmd_tree_usage[];
/* leakhound flamegraph FILE -o OUT.svg [--metric M] */
int lh_cmd_flamegraph(int argc, char **argv, lh_err_t *err);
extern const char lh_cmd_flamegraph_usage[];
/* leakhound plot FILE -o OUT.svg [--top N] [--x time|marks] */
int lh_cmd_plot(int argc, char **argv, lh_err_t *err);
extern const char lh_cmd_plot_usage[];
/* leakhound html FILE -o OUT.html */
int lh_cmd_html(int argc, char **argv, lh_err_t *err);
extern const char lh_cmd_html_usage[];
/* Exit status of `leakhound run --check` when the program leaked more than allowed. */
#define LH_EXIT_CHECK_LEAK 23

/* ---------------------------------------------------------------------------------------
 * Why is it still alive (issue 5): heap snapshots with the reference graph.
 * ------------------------------------------------------------------------------------- */
/* leakhound shell FILE [SNAPSHOT] [-c 'CMD; ...'] [--salvage]: 0, or 1 when a scripted
 * command failed. */
int lh_cmd_shell(int argc, char **argv, lh_err_t *err);
extern const char lh_cmd_shell_usage[];

#endif /* LH_CMD_H */
