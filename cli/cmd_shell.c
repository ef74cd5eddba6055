/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_shell.c: `leakhound shell FILE [SNAPSHOT]`: the interactive heap-snapshot shell
 * (line editing, history and completion with libedit's readline API), or scripted: -c
 * 'cmd; cmd', or commands on standard input when it is not a terminal. The commands
 * themselves are in shell/ (shell.h); their output is the same in every mode.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <editline/readline.h>

#include "cmd.h"
#include "opts.h"
#include "shell.h"

const char lh_cmd_shell_usage[] =
    "usage: leakhound shell FILE [SNAPSHOT] [-c 'CMD; CMD...'] [--heuristics H] [--no-index]\n"
    "\n"
    "Explores a heap snapshot of a trace: what is alive, what holds it (paths from the\n"
    "roots: globals and thread stacks), what each block retains, what leaked (Valgrind's\n"
    "definitely / indirectly / possibly lost, still reachable). SNAPSHOT is a label or a\n"
    "number (see `snapshots`); default: the exit snapshot, else the last one.\n"
    "\n"
    "  -c CMDS    run these commands (separated by ';') and exit\n"
    "  --heuristics none|all|LIST\n"
    "             Valgrind's interior-pointer heuristics (stdstring, length64, newarray,\n"
    "             multipleinheritance; default: all): an interior pointer of such a shape\n"
    "             keeps a block reachable, not possibly lost\n"
    "  --no-index neither read nor write the snapshot's index file. By default the first\n"
    "             shell on a snapshot writes what it computed (graph, dominators, sites,\n"
    "             objects) to FILE.N.lhx (and the snapshot list to FILE.lhx) so that later\n"
    "             shells start at once; an index that no longer matches the trace or its\n"
    "             contents file is rebuilt\n"
    "\n"
    "Without -c, commands are read from the terminal (with line editing and history), or\n"
    "from standard input when it is not a terminal. The exit status is 1 if a command\n"
    "failed. Type `help` for the commands.\n";

static const char *const *completion_names;

static char *
complete_command(const char *text, int state)
{
    static size_t i, len;
    if (!state) {
        i = 0;
        len = strlen(text);
    }
    while (completion_names[i]) {
        const char *n = completion_names[i++];
        if (strncmp(n, text, len) == 0) {
            return strdup(n);
        }
    }
    return NULL;
}

static char **
completion(const char *text, int start, int end)
{
    (void)end;
    if (start != 0) {
        return NULL;
    }
    return rl_completion_matches(text, complete_command);
}

static int
interactive(lh_shell_t *sh)
{
    char hist[PATH_MAX] = "";
    const char *home = getenv("HOME");
    if (home && *home) {
        snprintf(hist, sizeof hist, "%s/.leakhound_history", home);
    }
    completion_names = lh_shell_command_names;
    rl_attempted_completion_function = completion;
    using_history();
    if (hist[0]) {
        read_history(hist);
    }
    lh_shell_run_line(sh, "summary");
    while (!sh->quit) {
        char *line = readline("leakhound> ");
        if (!line) {
            fputc('\n', stdout);
            break;
        }
        if (line[strspn(line, " \t")]) {
            add_history(line);
        }
        lh_shell_run_line(sh, line);
        free(line);
    }
    if (hist[0]) {
        write_history(hist);
    }
    return 0; /* interactive: errors were shown, not an exit status */
}

static int
from_stream(lh_shell_t *sh, FILE *in)
{
    char *line = NULL;
    size_t cap = 0;
    while (!sh->quit && getline(&line, &cap, in) >= 0) {
        lh_shell_run_line(sh, line);
    }
    free(line);
    return sh->n_failed ? 1 : 0;
}

int
lh_cli_parse_heuristics(const char *cmd, const char *s, unsigned *out, lh_err_t *err)
{
    lh_err_t e2 = {{0}};
    if (lh_heuristics_parse(s, out, &e2) < 0) {
        return lh_err_set(err, LH_EINVAL, "%s: --heuristics: %s", cmd, e2.msg);
    }
    return 0;
}

int
lh_cmd_shell(int argc, char **argv, lh_err_t *err)
{
    lh_trace_args_t a = {0};
    const char *cmds = NULL, *heur = NULL;
    int no_index = 0, rc;
    const lh_opt_t opts[] = {{"-c", NULL, LH_OPT_STR, &cmds, 0, 0, NULL},
                             {"--heuristics", NULL, LH_OPT_STR, &heur, 0, 0, NULL},
                             {"--no-index", NULL, LH_OPT_BOOL, &no_index, 0, 0, NULL}};
    unsigned heuristics = 0;
    if ((rc = LH_ARGS_PARSE(shell, LH_ARGS_NO_SUPP | LH_ARGS_SECOND, opts, argc, argv, &a,
                            err)) != 0) {
        return rc < 0 ? rc : 0;
    }
    if (heur && lh_cli_parse_heuristics("shell", heur, &heuristics, err) < 0) {
        return LH_EINVAL;
    }
    if (strcmp(a.path, a.stdin_path) == 0 && !cmds) {
        return lh_err_set(err, LH_EINVAL, "shell: the trace is on standard input, so the "
                          "commands must come with -c");
    }
    lh_shell_t sh;
    char cwd[PATH_MAX];
    /* a trace on standard input is a temporary file: no index beside it */
    no_index |= strcmp(a.path, a.stdin_path) == 0;
    rc = lh_shell_open(&sh, a.path, a.second, a.salvage, heuristics, no_index, stdout, stderr,
                       err);
    if (rc < 0) {
        lh_shell_fini(&sh);
        return rc;
    }
    sh.cwd = getcwd(cwd, sizeof cwd);
    sh.trace_name = strcmp(a.name, "-") == 0 ? a.name : NULL;
    if (cmds) {
        lh_shell_run_line(&sh, cmds);
        rc = sh.n_failed ? 1 : 0;
    } else if (isatty(STDIN_FILENO)) {
        rc = interactive(&sh);
    } else {
        rc = from_stream(&sh, stdin);
    }
    lh_shell_fini(&sh);
    return rc;
}
