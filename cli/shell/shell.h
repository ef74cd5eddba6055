/* leakhound - SPDX-License-Identifier: MIT
 *
 * shell.h: `leakhound shell`: the command language over a heap snapshot (heapgraph.h),
 * kept apart from the terminal so it is tested without one.
 *
 * A line holds commands separated by ';' (outside quotes). Words are split at blanks;
 * 'single quotes' keep everything, "double quotes" allow \" and \\, a backslash outside
 * quotes escapes the next character, '#' at the start of a word starts a comment.
 * Addresses are 0x-prefixed hex ("0x55d0c0a012a0") or @N: the Nth row of the last listing
 * (largest, roots, elems, identify, count, unreachable, diff), which names a block or a root.
 *
 * lh_shell_run_line() runs one line's commands in order; a failing command prints one
 * "error: ..." line to the error stream and does not stop the next ones. Output goes to
 * the shell's out stream, errors to its err stream; both are the same whether the line
 * came from a terminal, -c or standard input. Not thread-safe.
 */
#ifndef LH_SHELL_H
#define LH_SHELL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"
#include "graphindex.h"
#include "heapgraph.h"
#include "objheap.h"

/* ---------------------------------------------------------------------------------------
 * Parsing (pure)
 * ------------------------------------------------------------------------------------- */

#define LH_SHELL_MAX_WORDS 64

typedef struct lh_shell_cmd {
    int argc;
    char *argv[LH_SHELL_MAX_WORDS + 1]; /* NULL-terminated; owned by the lh_shell_line_t */
} lh_shell_cmd_t;

typedef struct lh_shell_line {
    lh_shell_cmd_t *cmds; /* empty commands (";;", blank lines, comments) are dropped */
    size_t n;
    char *buf;            /* the words' storage */
} lh_shell_line_t;

/* Splits line into commands and words. Returns 0, or LH_EINVAL with a message (an
 * unterminated quote, a trailing backslash, more than LH_SHELL_MAX_WORDS words), LH_ENOMEM.
 * Release with lh_shell_line_fini (also after an error). */
int lh_shell_parse(const char *line, lh_shell_line_t *out, lh_err_t *err);
void lh_shell_line_fini(lh_shell_line_t *l);

/* The target of an address argument: a hex address ("0x..."; *node = LH_NODE_NONE) or
 * "@N" (1-based) into rows[0..n_rows) (*node = rows[N-1], *addr = 0). Returns 0, or
 * LH_EINVAL with a message (malformed, "@0", past the last row, no listing yet). */
int lh_shell_parse_addr(const char *s, const uint32_t *rows, size_t n_rows, uint64_t *addr,
                        uint32_t *node, lh_err_t *err);


/* ---------------------------------------------------------------------------------------
 * The shell
 * ------------------------------------------------------------------------------------- */

typedef struct lh_shell {
    char *trace_path;
    const char *trace_name; /* as shown, when not trace_path: "-" (standard input) */
    int salvage;
    unsigned heuristics; /* LH_HEUR_* for the graph (0: the default, all) */
    int no_index;        /* neither read nor write snapshot index files (graphindex.h) */
    lh_gindex_info_t info; /* the trace's INFO fields shown (hg may have no trace) */
    char *obj_note;      /* why the language heap did not decode, or NULL */
    lh_heapgraph_t *hg;
    lh_objheap_t *oh;   /* the snapshot's perl/python objects, or NULL (objects.c) */
    int native;         /* block view even when oh has objects (`native on`, --native) */
    uint32_t *rows;     /* nodes of the last listing's rows (LH_NODE_NONE: none) */
    size_t n_rows;
    int rows_obj;       /* the rows are oh's nodes, not hg's */
    FILE *out, *errs;
    int quit;           /* `quit` was run */
    int n_failed;       /* commands that failed so far */
    const char *cwd;
} lh_shell_t;

/* Opens the trace and the snapshot (selector NULL: the default, see heapgraph.h): from
 * the snapshot's index file when a valid one is there (graphindex.h), else from the trace,
 * then writing the index (unless no_index; a failure to write it is not an error).
 * Returns 0 or LH_E* with a message; release with lh_shell_fini. */
int lh_shell_open(lh_shell_t *sh, const char *trace_path, const char *snapshot, int salvage,
                  unsigned heuristics, int no_index, FILE *out, FILE *errs, lh_err_t *err);
void lh_shell_fini(lh_shell_t *sh);

/* Runs the commands of one line. Returns the number of commands that failed. */
int lh_shell_run_line(lh_shell_t *sh, const char *line);


/* Command names, for completion: NULL-terminated. */
extern const char *const lh_shell_command_names[];

#endif /* LH_SHELL_H */
