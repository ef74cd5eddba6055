/* leakhound - SPDX-License-Identifier: MIT
 *
 * opts.h: the one argument layer of the CLI. A command describes its own options in a table
 * (lh_opt_t) and lh_args_parse() does the rest, the same way for every command:
 *
 *   - the trace: one positional argument; `-` is standard input (copied once into an
 *     anonymous file, so that a command may read it twice); `--` ends the options;
 *   - -h/--help prints the command's usage;
 *   - what every command that reads a trace takes (lh_trace_args_t): --salvage, --quiet/-q,
 *     --suppressions FILE (repeatable), --default-suppressions, and --format text|json for
 *     the commands that print text or JSON;
 *   - values as `--name VALUE` or `--name=VALUE`; booleans bare (`--growth`), as
 *     `--name=on|off` or `--name on|off`, and negated as `--no-name`;
 *   - one set of messages: "CMD: unknown option '--x' (see leakhound help CMD)", "CMD:
 *     option '--x' needs a value", "CMD: --x: expected one of a, b or c, got 'd'", ...
 *
 * Errors are returned (LH_EINVAL with the message in err), never printed. Not thread-safe.
 */
#ifndef LH_CLI_OPTS_H
#define LH_CLI_OPTS_H

#include <stddef.h>

#include "err.h"

typedef enum lh_opt_kind {
    LH_OPT_BOOL,   /* int: 1 or 0 */
    LH_OPT_STR,    /* const char *, pointing into argv */
    LH_OPT_UINT,   /* unsigned long in [lo, hi] */
    LH_OPT_CHOICE, /* int: index of the value in choices ("a|b|c"); a unique prefix is enough */
    LH_OPT_FILES,  /* lh_opt_files_t: repeatable, each value appended */
} lh_opt_kind_t;

/* The values of a repeatable option naming files (--suppressions), in order. */
typedef struct lh_opt_files {
    const char *v[16];
    size_t n;
} lh_opt_files_t;

typedef struct lh_opt {
    const char *name;    /* "--top" */
    const char *alias;   /* "-n", or NULL */
    lh_opt_kind_t kind;
    void *dst;
    unsigned long lo, hi;
    const char *choices;
} lh_opt_t;

/* Rows that several commands' tables share, each written once: --top/-n N (0: all), --use
 * marks|snapshots (lh_bound_kind_t's order after AUTO), --metric (LH_METRIC_CHOICES, funcs.h)
 * and an image's --width in pixels. */
#define LH_OPT_TOP(dst) {"--top", "-n", LH_OPT_UINT, (dst), 0, 1000000, NULL}
#define LH_OPT_USE(dst) {"--use", NULL, LH_OPT_CHOICE, (dst), 0, 0, "marks|snapshots"}
#define LH_OPT_METRIC(dst) {"--metric", NULL, LH_OPT_CHOICE, (dst), 0, 0, LH_METRIC_CHOICES}
#define LH_OPT_WIDTH(dst) {"--width", NULL, LH_OPT_UINT, (dst), 400, 20000, NULL}

/* What lh_args_parse() also accepts, besides the trace and --help. */
enum {
    LH_ARGS_FORMAT = 1,   /* --format text|json */
    LH_ARGS_NO_TRACE = 2, /* the command reads no trace: no positional argument, no load
                             options (run's booleans use the same table) */
    LH_ARGS_NO_SUPP = 4,  /* the command shows every block: no suppressions (shell) */
    LH_ARGS_OUTPUT = 8,   /* the command writes a file: -o/--output (a->out) is required,
                             its usage starts "usage: leakhound CMD FILE -o OUT.x" */
    LH_ARGS_SECOND = 16,  /* a second positional argument may follow the trace (a->second:
                             the shell's SNAPSHOT) */
};

/* The options every command that reads a trace shares. */
typedef struct lh_trace_args {
    const char *path;       /* the trace (after lh_args_parse: a readable path for `-`) */
    const char *name;       /* the trace as given and shown: its path, or "-" */
    int salvage;
    int quiet;
    int json;               /* --format json */
    int help;
    lh_opt_files_t supp_files;
    int default_supp;       /* add the built-in list */
    const char *out;        /* -o/--output (LH_ARGS_OUTPUT) */
    const char *second;     /* LH_ARGS_SECOND: the argument after the trace, or NULL */
    char stdin_path[32];    /* "/proc/self/fd/N" when the trace is `-` */
} lh_trace_args_t;

typedef struct lh_cmd_spec {
    const char *name;       /* "leaks", as in messages */
    const char *usage;      /* printed for --help */
    unsigned flags;         /* LH_ARGS_* */
    const lh_opt_t *opts;   /* the command's own */
    size_t n_opts;
} lh_cmd_spec_t;

/* Parses argv[1..argc) (argv[0] is the command's name). Returns 0 (the trace in a->path),
 * 1 when --help was given (the usage is printed on stdout), or LH_EINVAL: an unknown
 * option, a missing or bad value, no trace or two, no -o (LH_ARGS_OUTPUT). */
int lh_args_parse(const lh_cmd_spec_t *spec, int argc, char **argv, lh_trace_args_t *a,
                  lh_err_t *err);
/* lh_args_parse for the command NAME (a bare word: "NAME" in messages, lh_cmd_NAME_usage for
 * --help) with its own option array opts, whose length is taken here: so that a command
 * states its table once and nothing about it twice. */
#define LH_ARGS_PARSE(name, flags, opts, argc, argv, a, err)                                    \
    lh_args_parse(&(const lh_cmd_spec_t){#name, lh_cmd_##name##_usage, (flags), (opts),         \
                                         sizeof(opts) / sizeof *(opts)},                        \
                  (argc), (argv), (a), (err))

/* lh_args_parse for a command that reads no trace (LH_ARGS_NO_TRACE): its own options and
 * --help only (attach, snapshot). */
int lh_args_parse_own(const char *cmd, const char *usage, const lh_opt_t *opts, size_t n,
                      int argc, char **argv, lh_err_t *err);

/* One option at argv[*i] against opts (advancing *i past a separate value). Returns 1
 * (consumed), 0 (not one of them) or LH_EINVAL (message names cmd). For commands whose
 * positional arguments are not a trace (run: the program). */
int lh_opt_parse(const char *cmd, const lh_opt_t *opts, size_t n, int argc, char **argv, int *i,
                 lh_err_t *err);

/* For a command that runs a program (run, watch): do its options stop at argv[*i]? 1 at
 * the program's start (the first argument that is not an option; a lone "-" is not one),
 * at "--" (then *i moves past it), and at -h or --help (then *help = 1); 0 for an option
 * to parse. */
int lh_opt_program_start(char **argv, int *i, int *help);



#endif /* LH_CLI_OPTS_H */
