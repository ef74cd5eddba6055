/* leakhound - SPDX-License-Identifier: MIT
 *
 * main.c: the leakhound command line: dispatches subcommands, and is the only place that
 * turns errors into exit statuses.
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "format.h"
#include "symbolize.h"
#include "symcache.h"

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv, lh_err_t *err);
    const char *summary;
} command_t;

/* cmd.h's list of commands, in its order. */
#define COMMAND(name, summary) {#name, lh_cmd_##name, summary},
static const command_t commands[] = {LH_COMMANDS(COMMAND)};

static void
usage(FILE *out)
{
    fputs("usage: leakhound <command> [options]\n\ncommands:\n", out);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    }
    fputs("  help       show this help, or a command's: leakhound help run\n"
          "  version    show the version\n\n"
          "options of every command but run (before a --):\n"
          "  --native           keep the interpreter's own frames in Perl and Python stacks\n"
          "                     (shell has its own, per command)\n"
          "  --no-symbol-cache  neither read nor write the symbol cache ($LEAKHOUND_CACHE_DIR,\n"
          "                     else $XDG_CACHE_HOME/leakhound or ~/.cache/leakhound)\n\n"
          "example:\n"
          "  leakhound run -o app.lht ./app --port 8080\n"
          "  leakhound report app.lht --top 5\n",
          out);
}

/* `--native` applies to every view of a trace (interpreter frames shown in stacks with Perl
 * or Python frames, scriptstack.h), so it is taken here once, wherever it stands before a
 * `--`, instead of in each command's options; so is `--no-symbol-cache` (symcache.h: no
 * symbol cache read or written). Returns the new argc. */
static int
take_native(int argc, char **argv, int native_too)
{
    int k = 1;
    int seen_dashdash = 0;
    for (int i = 1; i < argc; i++) {
        if (!seen_dashdash && native_too && strcmp(argv[i], "--native") == 0) {
            lh_sym_set_native(1);
            continue;
        }
        if (!seen_dashdash && strcmp(argv[i], "--no-symbol-cache") == 0) {
            lh_symcache_set_enabled(0);
            continue;
        }
        if (strcmp(argv[i], "--") == 0) {
            seen_dashdash = 1;
        }
        argv[k++] = argv[i];
    }
    argv[k] = NULL;
    return k;
}

int
main(int argc, char **argv)
{
    lh_err_t err = {{0}};
    const command_t *cmd;
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "help") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        if (argc > 2) {
            if (!(cmd = LH_CLI_FIND(commands, argv[2]))) {
                fprintf(stderr, "leakhound: unknown command '%s' (see leakhound --help)\n",
                        argv[2]);
                return 2;
            }
            /* the same text as `leakhound CMD --help` */
            char help[] = "--help", *help_argv[] = {argv[2], help, NULL};
            return cmd->fn(2, help_argv, &err) < 0 ? 2 : 0;
        }
        usage(stdout);
        return 0;
    }
    if (strcmp(name, "version") == 0 || strcmp(name, "--version") == 0) {
        printf("leakhound %s (trace format %d.%d)\n", LH_VERSION, LH_FORMAT_MAJOR,
               LH_FORMAT_MINOR);
        return 0;
    }
    if (!(cmd = LH_CLI_FIND(commands, name))) {
        fprintf(stderr, "leakhound: unknown %s '%s' (see leakhound --help)\n",
                name[0] == '-' ? "option" : "command", name);
        return 2;
    }
    /* run passes its arguments to the program; shell has a --native of its own (the block
     * view of a language heap), per command inside it. */
    if (strcmp(cmd->name, "run") != 0) {
        argc = take_native(argc, argv, strcmp(cmd->name, "shell") != 0);
    }
    int rc = cmd->fn(argc - 1, argv + 1, &err);
    if (rc < 0) {
        fprintf(stderr, "leakhound: %s\n", err.msg[0] ? err.msg : lh_err_str(rc));
        return rc == LH_EINVAL ? 2 : 1;
    }
    return rc > 255 ? 255 : rc;
}
