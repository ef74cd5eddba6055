/* leakhound - SPDX-License-Identifier: MIT
 *
 * opts.c: the one argument layer (opts.h): option tables, the trace argument, and what
 * every trace-reading command shares.
 */
#include "opts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cmd.h"

/* "on", "yes", "true", "1" give 1; "off", "no", "false", "0" give 0; else -1. */
static int
bool_value(const char *s)
{
    static const char *const on[] = {"on", "yes", "true", "1"};
    static const char *const off[] = {"off", "no", "false", "0"};
    for (size_t k = 0; k < sizeof on / sizeof on[0]; k++) {
        if (strcmp(s, on[k]) == 0) {
            return 1;
        }
        if (strcmp(s, off[k]) == 0) {
            return 0;
        }
    }
    return -1;
}

/* The index of v among choices "a|b|c" (exact, else a unique prefix), or -1. */
static int
choice_index(const char *choices, const char *v)
{
    size_t vn = strlen(v);
    int idx = 0, prefix = -1, n_prefix = 0;
    for (const char *p = choices; vn; idx++) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == vn && strncmp(p, v, n) == 0) {
            return idx;
        }
        if (vn < n && strncmp(p, v, vn) == 0) {
            prefix = idx;
            n_prefix++;
        }
        if (!bar) {
            break;
        }
        p = bar + 1;
    }
    return n_prefix == 1 ? prefix : -1;
}

/* "a, b or c" from "a|b|c". */
static void
choices_text(const char *choices, char *buf, size_t len)
{
    size_t o = 0;
    const char *last = strrchr(choices, '|');
    for (const char *p = choices; *p && o + 5 < len; p++) {
        if (*p != '|') {
            buf[o++] = *p;
            continue;
        }
        const char *sep = p == last ? " or " : ", ";
        size_t n = strlen(sep);
        if (o + n + 1 >= len) {
            break;
        }
        memcpy(buf + o, sep, n);
        o += n;
    }
    buf[o] = '\0';
}

/* Does arg name opt (its name or alias), possibly as "--name=value"? Sets *eq to the value
 * after '=', and *neg for "--no-name" (booleans only). */
static int
names(const lh_opt_t *o, const char *arg, const char **eq, int *neg)
{
    const char *const cand[2] = {o->name, o->alias};
    *eq = NULL;
    *neg = 0;
    for (int k = 0; k < 2; k++) {
        const char *nm = cand[k];
        if (!nm) {
            continue;
        }
        size_t n = strlen(nm);
        if (strncmp(arg, nm, n) == 0 && (arg[n] == '\0' || arg[n] == '=')) {
            *eq = arg[n] == '=' ? arg + n + 1 : NULL;
            return 1;
        }
        n -= 2; /* "--no-name", "--no-name=value" */
        if (o->kind == LH_OPT_BOOL && strncmp(nm, "--", 2) == 0 &&
            strncmp(arg, "--no-", 5) == 0 && strncmp(arg + 5, nm + 2, n) == 0 &&
            (arg[5 + n] == '\0' || arg[5 + n] == '=')) {
            *eq = arg[5 + n] == '=' ? arg + 5 + n + 1 : NULL;
            *neg = 1;
            return 1;
        }
    }
    return 0;
}

int
lh_opt_parse(const char *cmd, const lh_opt_t *opts, size_t n, int argc, char **argv, int *i,
             lh_err_t *err)
{
    const char *arg = argv[*i], *v;
    int neg;
    for (size_t k = 0; k < n; k++) {
        const lh_opt_t *o = &opts[k];
        if (!names(o, arg, &v, &neg)) {
            continue;
        }
        if (o->kind == LH_OPT_BOOL) {
            int b = 1;
            if (neg && v) {
                return lh_err_set(err, LH_EINVAL, "%s: --no-%s takes no value", cmd,
                                  o->name + 2);
            }
            if (v && (b = bool_value(v)) < 0) {
                return lh_err_set(err, LH_EINVAL, "%s: %s: expected on or off, got '%s'", cmd,
                                  o->name, v);
            }
            /* "--flag on": the next argument when it is exactly on or off; anything else
             * (another option, the trace, a program such as `true`) is not its value. */
            if (!v && !neg && *i + 1 < argc &&
                (strcmp(argv[*i + 1], "on") == 0 || strcmp(argv[*i + 1], "off") == 0)) {
                b = bool_value(argv[++*i]);
            }
            *(int *)o->dst = neg ? 0 : b;
            return 1;
        }
        if (!v) {
            if (*i + 1 >= argc) {
                return lh_err_set(err, LH_EINVAL, "%s: option '%s' needs a value", cmd, arg);
            }
            v = argv[++*i];
        }
        switch (o->kind) {
        case LH_OPT_STR:
            if (!*v) {
                return lh_err_set(err, LH_EINVAL, "%s: option '%s' needs a value", cmd, o->name);
            }
            *(const char **)o->dst = v;
            break;
        case LH_OPT_UINT: {
            lh_err_t e2 = {{0}};
            if (lh_cli_parse_uint(o->name, v, o->lo, o->hi, (unsigned long *)o->dst, &e2) < 0) {
                return lh_err_set(err, LH_EINVAL, "%s: %s", cmd, e2.msg);
            }
            break;
        }
        case LH_OPT_FILES: {
            lh_opt_files_t *f = o->dst;
            if (!*v) {
                return lh_err_set(err, LH_EINVAL, "%s: option '%s' needs a value", cmd, o->name);
            }
            if (f->n == sizeof f->v / sizeof f->v[0]) {
                return lh_err_set(err, LH_EINVAL, "%s: at most %zu %s files", cmd,
                                  sizeof f->v / sizeof f->v[0], o->name);
            }
            f->v[f->n++] = v;
            break;
        }
        case LH_OPT_CHOICE: {
            int idx = choice_index(o->choices, v);
            if (idx < 0) {
                char txt[160];
                choices_text(o->choices, txt, sizeof txt);
                return lh_err_set(err, LH_EINVAL, "%s: %s: expected %s, got '%s'", cmd, o->name,
                                  txt, v);
            }
            *(int *)o->dst = idx;
            break;
        }
        default:
            break;
        }
        return 1;
    }
    return 0;
}

/* Copies standard input into an anonymous file and names it in a->stdin_path (for a trace
 * given as `-`). Returns 0 or LH_EIO. Called by lh_args_parse. */
static int
args_stdin(lh_trace_args_t *a, lh_err_t *err)
{
    int fd = memfd_create("leakhound-stdin", 0);
    char buf[1 << 16];
    ssize_t n;
    if (fd < 0) {
        return lh_err_set(err, LH_EIO, "standard input: cannot buffer it: %s", strerror(errno));
    }
    while ((n = read(STDIN_FILENO, buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 || write(fd, buf, (size_t)n) != n) {
            int e = errno;
            close(fd);
            return lh_err_set(err, LH_EIO, "standard input: %s", strerror(e));
        }
    }
    /* The descriptor stays open for the life of the command: the trace is reopened by
     * path (/proc/self/fd/N) wherever a file name is expected. */
    snprintf(a->stdin_path, sizeof a->stdin_path, "/proc/self/fd/%d", fd);
    a->path = a->stdin_path;
    return 0;
}

/* The options of lh_trace_args_t, as a table. */
static size_t
common_opts(lh_trace_args_t *a, unsigned flags, lh_opt_t *o, int *fmt)
{
    size_t n = 0;
    o[n++] = (lh_opt_t){"--help", "-h", LH_OPT_BOOL, &a->help, 0, 0, NULL};
    if (flags & LH_ARGS_OUTPUT) {
        o[n++] = (lh_opt_t){"--output", "-o", LH_OPT_STR, &a->out, 0, 0, NULL};
    }
    if (flags & LH_ARGS_FORMAT) {
        o[n++] = (lh_opt_t){"--format", NULL, LH_OPT_CHOICE, fmt, 0, 0, "text|json"};
    }
    if (!(flags & LH_ARGS_NO_TRACE)) {
        o[n++] = (lh_opt_t){"--salvage", NULL, LH_OPT_BOOL, &a->salvage, 0, 0, NULL};
        o[n++] = (lh_opt_t){"--quiet", "-q", LH_OPT_BOOL, &a->quiet, 0, 0, NULL};
    }
    if (!(flags & (LH_ARGS_NO_TRACE | LH_ARGS_NO_SUPP))) {
        o[n++] = (lh_opt_t){"--default-suppressions", NULL, LH_OPT_BOOL, &a->default_supp, 0,
                            0, NULL};
        o[n++] = (lh_opt_t){"--suppressions", NULL, LH_OPT_FILES, &a->supp_files, 0, 0, NULL};
    }
    return n;
}

/* Prints the command's usage and, for a command that reads a trace, the options it shares
 * with every other (common_opts), described once here. */
static void
print_usage(const lh_cmd_spec_t *spec)
{
    unsigned f = spec->flags;
    fputs(spec->usage, stdout);
    if (f & LH_ARGS_NO_TRACE) {
        return;
    }
    printf("\nAs every command that reads a trace:\n"
           "  FILE              the trace; - reads it from standard input\n"
           "%s%s"
           "  --salvage         read a truncated or damaged trace up to the damage\n"
           "  -q, --quiet       no progress bar\n"
           "%s"
           "  -h, --help        this help\n"
           "A flag also takes on or off: --salvage=on, --salvage off, --no-salvage.\n",
           f & LH_ARGS_FORMAT ? "  --format F        text (default) or json\n" : "",
           f & LH_ARGS_OUTPUT ? "  -o, --output OUT  the file to write (- for standard output)\n"
                              : "",
           f & LH_ARGS_NO_SUPP
               ? ""
               : "  --suppressions FILE  leave out stacks matching LeakSanitizer-style rules\n"
                 "                    (leak:PATTERN); may be repeated\n"
                 "  --default-suppressions  also leave out the C library's and loader's own\n"
                 "                    one-time allocations (the list `leakhound run --check`\n"
                 "                    uses)\n");
}

int
lh_args_parse(const lh_cmd_spec_t *spec, int argc, char **argv, lh_trace_args_t *a,
              lh_err_t *err)
{
    const char *cmd = spec->name;
    lh_opt_t common[8];
    int fmt = a->json, only_files = 0, rc;
    size_t n_common = common_opts(a, spec->flags, common, &fmt);
    int takes_trace = !(spec->flags & LH_ARGS_NO_TRACE);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (only_files || arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (!takes_trace) {
                return lh_err_set(err, LH_EINVAL, "%s: unexpected '%s' (see leakhound help %s)",
                                  cmd, arg, cmd);
            }
            if (a->path && (spec->flags & LH_ARGS_SECOND) && !a->second) {
                a->second = arg;
                continue;
            }
            if (a->path) {
                return lh_err_set(err, LH_EINVAL, "%s: one trace at a time (got '%s' and '%s')",
                                  cmd, a->path, arg);
            }
            a->path = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_files = 1;
            continue;
        }
        if ((rc = lh_opt_parse(cmd, common, n_common, argc, argv, &i, err)) != 0 ||
            (rc = lh_opt_parse(cmd, spec->opts, spec->n_opts, argc, argv, &i, err)) != 0) {
            if (rc < 0) {
                return rc;
            }
            continue;
        }
        if (strncmp(arg, "--format", 8) == 0 && (arg[8] == '\0' || arg[8] == '=')) {
            return lh_err_set(err, LH_EINVAL, "%s: --format: text and json are for report, "
                              "leaks, counts, log and tree", cmd);
        }
        return lh_err_set(err, LH_EINVAL, "%s: unknown option '%s' (see leakhound help %s)", cmd,
                          arg, cmd);
    }
    a->json = fmt == 1;
    if (a->help) {
        print_usage(spec);
        return 1;
    }
    if (takes_trace && !a->path) {
        return lh_err_set(err, LH_EINVAL, "%s: which trace? usage: leakhound %s FILE (- for "
                          "standard input)", cmd, cmd);
    }
    a->name = a->path;
    if (takes_trace && strcmp(a->path, "-") == 0 && (rc = args_stdin(a, err)) < 0) {
        return rc;
    }
    if ((spec->flags & LH_ARGS_OUTPUT) && !a->out) {
        /* "where to? usage: leakhound CMD FILE -o OUT.x": the usage's head, up to -o's value */
        const char *o = strstr(spec->usage, " -o ");
        size_t n = o ? (size_t)(o - spec->usage) + 4 + strcspn(o + 4, " \n") : 0;
        return lh_err_set(err, LH_EINVAL, "%s: where to? %.*s", cmd, (int)n, spec->usage);
    }
    return 0;
}

int
lh_args_parse_own(const char *cmd, const char *usage, const lh_opt_t *opts, size_t n,
                  int argc, char **argv, lh_err_t *err)
{
    const lh_cmd_spec_t spec = {cmd, usage, LH_ARGS_NO_TRACE, opts, n};
    lh_trace_args_t ta;
    memset(&ta, 0, sizeof ta);
    return lh_args_parse(&spec, argc, argv, &ta, err);
}

int
lh_opt_program_start(char **argv, int *i, int *help)
{
    const char *arg = argv[*i];
    if (strcmp(arg, "--") == 0) {
        ++*i;
        return 1;
    }
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
        *help = 1;
    }
    return arg[0] != '-' || arg[1] == '\0' || *help;
}
