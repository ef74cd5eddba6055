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
#include "shell.h"

const char lh_cmd_shell_usage[] =
    "usage: leakhound shell FILE [SNAPSHOT] [-c 'CMD; CMD...'] [--salvage]\n"
    "\n"
    "Explores a heap snapshot of a trace: what is alive, what holds it (paths from the\n"
    "roots: globals and thread stacks), what each block retains, what leaked (Valgrind's\n"
    "definitely / indirectly / possibly lost, still reachable). SNAPSHOT is a label or a\n"
    "number (see `snapshots`); default: the exit snapshot, else the last one.\n"
    "\n"
    "  -c CMDS    run these commands (separated by ';') and exit\n"
    "  --salvage  read a truncated trace up to the damage\n"
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
lh_cmd_shell(int argc, char **argv, lh_err_t *err)
{
    const char *path = NULL, *snapshot = NULL, *cmds = NULL;
    int salvage = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(lh_cmd_shell_usage, stdout);
            return 0;
        } else if (strcmp(argv[i], "-c") == 0) {
            if (i + 1 >= argc) {
                return lh_err_set(err, LH_EINVAL, "shell: -c needs commands");
            }
            cmds = argv[++i];
        } else if (strcmp(argv[i], "--salvage") == 0) {
            salvage = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return lh_err_set(err, LH_EINVAL, "shell: unknown option '%s' (see leakhound help "
                              "shell)", argv[i]);
        } else if (!path) {
            path = argv[i];
        } else if (!snapshot) {
            snapshot = argv[i];
        } else {
            return lh_err_set(err, LH_EINVAL, "shell: unexpected '%s' (leakhound shell FILE "
                              "[SNAPSHOT])", argv[i]);
        }
    }
    if (!path) {
        return lh_err_set(err, LH_EINVAL, "shell: which trace? usage: leakhound shell FILE "
                          "[SNAPSHOT]");
    }
    lh_shell_t sh;
    char cwd[PATH_MAX];
    int rc = lh_shell_open(&sh, path, snapshot, salvage, stdout, stderr, err);
    if (rc < 0) {
        lh_shell_fini(&sh);
        return rc;
    }
    sh.cwd = getcwd(cwd, sizeof cwd);
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
