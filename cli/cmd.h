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

#include "err.h"

/* leakhound run [-o FILE] [--depth N] [--unwind libunwind|fp] [--follow-exec] [--] PROG...
 * Returns the program's exit status (128 + signal if it died from one), 127 if it could
 * not be started. */
int lh_cmd_run(int argc, char **argv, lh_err_t *err);
extern const char lh_cmd_run_usage[];

/* leakhound report FILE [--top N] [--format text|json] [--salvage] */
int lh_cmd_report(int argc, char **argv, lh_err_t *err);
extern const char lh_cmd_report_usage[];

/* Parses a decimal unsigned number in [lo, hi]; returns 0 or LH_EINVAL (message names the
 * option). */
int lh_cli_parse_uint(const char *opt, const char *s, unsigned long lo, unsigned long hi,
                      unsigned long *out, lh_err_t *err);

#endif /* LH_CMD_H */
