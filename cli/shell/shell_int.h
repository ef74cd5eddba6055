/* leakhound - SPDX-License-Identifier: MIT
 *
 * shell_int.h: helpers shared by the shell's command files (internal to cli/shell/).
 */
#ifndef LH_SHELL_INT_H
#define LH_SHELL_INT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "keyindex.h"
#include "shell.h"

/* How the shell's listings order their rows, for qsort: the larger figure first... */
#define SH_DESC(x, y) ((x) > (y) ? -1 : (x) < (y))
/* ...then, on equal figures, by key and by stack id, so that a listing comes out in the
 * same order on every run. */
static inline int
sh_cmp_key_stack(const char *ka, uint32_t sa, const char *kb, uint32_t sb)
{
    int c = strcmp(ka, kb);
    return c ? c : (sa < sb ? -1 : sa > sb);
}

/* Human-readable bytes ("1.5 KiB") into buf. */
const char *sh_bytes(char *buf, size_t len, uint64_t n);
/* The n ids with the largest key(ctx, id) (ties: the lower id first), in that order, into
 * top without sorting them all: the ids are ids[0..nc), or 0..nc-1 when ids is NULL (top
 * may be ids). Returns how many (the smaller of n and nc). */
size_t sh_top_n(const uint32_t *ids, size_t nc, uint64_t (*key)(const void *ctx, uint32_t id),
                const void *ctx, uint32_t *top, size_t n);
/* The last listing's rows: reset, then add a node per row (returns the row number). */
int sh_rows_reset(lh_shell_t *sh);
int sh_row_add(lh_shell_t *sh, uint32_t node);
/* The option that records contents of MODE ("pointers", "full") the way the trace was
 * recorded ("run with --snapshot-contents MODE"): `snapshot -p` spells it --contents. */
const char *sh_contents_advice(const lh_shell_t *sh, const char *mode, char *buf, size_t len);
/* LH_EINVAL with "cmd: <why the snapshot has no graph>" when it has none. */
int sh_need_graph(lh_shell_t *sh, const char *cmd, lh_err_t *err);
/* An ADDR argument to a node (a block containing the address, or the row's node). */
int sh_node_arg(lh_shell_t *sh, const char *cmd, const char *arg, uint32_t *node,
                uint64_t *addr, lh_err_t *err);
/* "48 B type, site" of block b on out. */
void sh_block_brief(lh_shell_t *sh, uint32_t b, FILE *out);
/* One note line on out when no live block has an allocation stack (`snapshot -p`), for
 * the commands that group by site or function. */
void sh_note_no_stacks(lh_shell_t *sh);
/* One snapshot of the shell's trace, with what its index holds. */
typedef struct lh_snapshot {
    lh_heapgraph_t *hg;
    lh_objheap_t *oh;     /* NULL: no graph, or the language heap did not decode */
    char *note;           /* why it did not decode, or NULL */
    lh_gindex_info_t info;
} lh_snapshot_t;
/* Opens snapshot sel (NULL: the default) or idx (>= 0): from its index file when a valid
 * one is there, else from the trace (the graph, the objects decoded and claimed), then
 * writing its index (unless sh->no_index). Returns 0 or LH_E*; release with
 * sh_snapshot_fini. */
int sh_open_snapshot(lh_shell_t *sh, const char *sel, long idx, lh_snapshot_t *out,
                     lh_err_t *err);
void sh_snapshot_fini(lh_snapshot_t *s);
/* A graph loaded from an index has no trace: opens it (read, not replayed) for the
 * commands that need data symbols or other snapshots' sites. Returns 0 or LH_E*. */
int sh_need_trace(lh_shell_t *sh, lh_err_t *err);

/* Commands in their own files. */
int sh_cmd_identify(lh_shell_t *sh, int argc, char **argv, lh_err_t *err);
int sh_cmd_diff(lh_shell_t *sh, int argc, char **argv, lh_err_t *err);

/* Blocks or objects grouped by (key text, stack id), in first-seen order: the listings of
 * count and unreachable, blocks and language objects alike (objects.c). */
typedef struct sh_group {
    const char *key;      /* valid while the grouping is: a type, a function, or "" */
    uint32_t stack_id;    /* 0 when grouped by key alone */
    uint64_t n, bytes;
    uint64_t n2, bytes2;  /* a second class (unreachable: indirectly lost) */
    uint32_t example;     /* the block or object a row's @N names (LH_NODE_NONE: none yet) */
} sh_group_t;

typedef struct sh_grouping {
    sh_group_t *v;
    size_t n, cap;
    lh_keyindex_t ix;
} sh_grouping_t;

/* The group of (key, stack_id), added with zero counts when new; NULL without memory. */
sh_group_t *sh_group_get(sh_grouping_t *gr, const char *key, uint32_t stack_id);
void sh_grouping_fini(sh_grouping_t *gr);

/* Language objects (objects.c): on when the snapshot's interpreter heap was decoded and
 * the block view was not asked for. */
int sh_obj_mode(const lh_shell_t *sh);
int sh_obj_count(lh_shell_t *sh, int by_site, int by_class, lh_err_t *err);
int sh_obj_largest(lh_shell_t *sh, unsigned long n, int retained, lh_err_t *err);
int sh_obj_roots(lh_shell_t *sh, unsigned long n, lh_err_t *err);
int sh_obj_identify(lh_shell_t *sh, const char *arg, int all, lh_err_t *err);
int sh_obj_show(lh_shell_t *sh, const char *arg, lh_err_t *err);
int sh_obj_unreachable(lh_shell_t *sh, lh_err_t *err);
int sh_obj_diff(lh_shell_t *sh, long ia, long ib, lh_err_t *err);

/* A row of `diff`: a group (a site, a function or, for objects, a type) and how its live
 * count (blocks or objects) and bytes changed from snapshot a to snapshot b. */
typedef struct sh_growth {
    const char *key;
    int64_t dcount, dbytes;
    uint64_t count_a, count_b;
    uint32_t stack_id; /* by site */
} sh_growth_t;
void sh_obj_summary(lh_shell_t *sh, FILE *out);

#endif /* LH_SHELL_INT_H */
