/* leakhound - SPDX-License-Identifier: MIT
 *
 * commands.c: the shell's commands over a heapgraph: summary, snapshots, use, largest,
 * show, elems, count, roots, unreachable, help, quit (identify and diff: paths.c, diff.c).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "format.h"
#include "graphindex.h"
#include "grow.h"
#include "keyindex.h"
#include "shell.h"
#include "shell_int.h"
#include "text.h"

const char *const lh_shell_command_names[] = {
    "summary", "snapshots", "use", "largest", "show", "elems", "identify", "path", "count",
    "roots", "unreachable", "diff", "native", "help", "quit", "exit", NULL};

/* ---------------------------------------------------------------------------------------
 * Helpers shared by the commands (shell_int.h)
 * ------------------------------------------------------------------------------------- */

const char *
sh_bytes(char *buf, size_t len, uint64_t n)
{
    return lh_text_human_bytes(buf, len, n);
}

int
sh_rows_reset(lh_shell_t *sh)
{
    sh->n_rows = 0;
    sh->rows_obj = 0;
    return 0;
}

int
sh_row_add(lh_shell_t *sh, uint32_t node)
{
    if ((sh->n_rows & (sh->n_rows - 1)) == 0) {
        size_t cap = sh->n_rows ? sh->n_rows * 2 : 16;
        uint32_t *v = realloc(sh->rows, cap * sizeof *v);
        if (!v) {
            return LH_ENOMEM;
        }
        sh->rows = v;
    }
    sh->rows[sh->n_rows++] = node;
    return (int)sh->n_rows;
}

const char *
sh_contents_advice(const lh_shell_t *sh, const char *mode, char *buf, size_t len)
{
    if (sh->info.attach_how == 2) {
        snprintf(buf, len, "take it with `leakhound snapshot --contents %s`", mode);
    } else {
        snprintf(buf, len, "run with --snapshot-contents %s", mode);
    }
    return buf;
}

/* Why the snapshot has no graph (no_graph_why), with that advice when contents are missing. */
static const char *
graph_why(const lh_shell_t *sh, char *buf, size_t len)
{
    char advice[128];
    if (sh->hg->no_graph_code == LH_GRAPH_NO_CONTENTS) {
        /* `run` also reads the environment (an agent preloaded without `run`) */
        int run = sh->info.attach_how != 2;
        snprintf(buf, len, "%s; %s%s", sh->hg->no_graph_why,
                 sh_contents_advice(sh, "pointers", advice, sizeof advice),
                 run ? " (LEAKHOUND_SNAPSHOT_CONTENTS=pointers)" : "");
    } else {
        snprintf(buf, len, "%s", sh->hg->no_graph_why);
    }
    return buf;
}

int
sh_need_graph(lh_shell_t *sh, const char *cmd, lh_err_t *err)
{
    char why[sizeof sh->hg->no_graph_why + 192];
    if (!sh->hg->has_graph) {
        return lh_err_set(err, LH_EINVAL, "%s: %s", cmd, graph_why(sh, why, sizeof why));
    }
    return 0;
}

/* A node from an address argument: the block containing it, or the row's node. */
int
sh_node_arg(lh_shell_t *sh, const char *cmd, const char *arg, uint32_t *node, uint64_t *addr,
            lh_err_t *err)
{
    lh_err_t e2;
    int rc = lh_shell_parse_addr(arg, sh->rows, sh->n_rows, addr, node, &e2);
    if (rc < 0) {
        return lh_err_set(err, rc, "%s: %s", cmd, e2.msg);
    }
    if (*node != LH_NODE_NONE && sh->rows_obj) {
        /* a row of an object listing: the block holding the object */
        *addr = *node < sh->oh->n_objs ? sh->oh->objs[*node].addr
                : *node < sh->oh->n_objs + sh->oh->n_ext
                    ? sh->hg->blocks[sh->oh->ext[*node - sh->oh->n_objs]].addr : 0;
        *node = LH_NODE_NONE;
    } else if (*node != LH_NODE_NONE) {
        if (*node < sh->hg->n_blocks) {
            *addr = sh->hg->blocks[*node].addr;
        }
        return 0;
    }
    *node = lh_heapgraph_block_at(sh->hg, *addr);
    if (*node == LH_NODE_NONE) {
        return lh_err_set(err, LH_EINVAL, "%s: 0x%" PRIx64 " is not in a live block of "
                          "snapshot %zu", cmd, *addr, sh->hg->cur + 1);
    }
    return 0;
}

/* A block's class name ("?" without a graph). */
static const char *
block_class(lh_shell_t *sh, uint32_t b)
{
    return sh->hg->has_graph ? lh_leak_class_name(sh->hg->g.cls[b]) : "?";
}

/* "48 B handler_t, handler_new (file.c:20)"; a site that reads as the type (an untyped
 * block of perl's SV arena) once: "4.0 KiB perl SV arena (...)" */
void
sh_block_brief(lh_shell_t *sh, uint32_t b, FILE *out)
{
    char sz[32], site[512];
    const lh_hblock_t *bl = &sh->hg->blocks[b];
    const char *type = lh_heapgraph_type(sh->hg, b);
    const char *at = lh_heapgraph_site_str(sh->hg, bl->stack_id, site, sizeof site);
    if (strcmp(type, at) == 0) {
        fprintf(out, "%s %s", sh_bytes(sz, sizeof sz, bl->size), at);
    } else {
        fprintf(out, "%s %s, %s", sh_bytes(sz, sizeof sz, bl->size), type, at);
    }
}

static int
parse_opt_count(const char *cmd, int argc, char **argv, int *i, unsigned long *out,
                lh_err_t *err)
{
    if (*i + 1 >= argc) {
        return lh_err_set(err, LH_EINVAL, "%s: %s needs a number", cmd, argv[*i]);
    }
    (*i)++;
    return lh_cli_parse_uint(cmd, argv[*i], 0, 100000000, out, err);
}

/* ---------------------------------------------------------------------------------------
 * summary, snapshots, use
 * ------------------------------------------------------------------------------------- */

static const char *
mode_name(int m)
{
    return m == LH_CONTENTS_POINTERS ? "pointers" : m == LH_CONTENTS_FULL ? "full" : "none";
}

static double
snap_time(const lh_shell_t *sh, const lh_snapinfo_t *s)
{
    const lh_gindex_info_t *in = &sh->info;
    uint64_t start = in->has_clock ? in->mono_start_ns : sh->hg->snaps[0].ts_ns;
    return s->ts_ns > start ? (double)(s->ts_ns - start) / 1e9 : 0.0;
}

/* The objects of hg: NULL without a graph, or when the heap does not
 * decode (*note: why, caller frees). Returns 0 or LH_ENOMEM. */
static int
decode_objects(lh_heapgraph_t *hg, lh_objheap_t **oh, char **note, lh_err_t *err)
{
    *oh = NULL;
    *note = NULL;
    if (!hg->has_graph) {
        return 0;
    }
    int rc = lh_objheap_open(hg, oh, err);
    if (rc < 0 && rc != LH_ENOMEM) {
        *note = strdup(err->msg);
        return *note ? 0 : lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    if (rc == 0) {
        lh_objheap_claim(*oh); /* SV arenas and buffers are no "possibly lost" blocks */
    }
    return rc;
}

int
sh_open_snapshot(lh_shell_t *sh, const char *sel, long idx, lh_snapshot_t *out, lh_err_t *err)
{
    lh_gindex_opts_t go = {sh->heuristics, sh->salvage, lh_sym_get_native()};
    memset(out, 0, sizeof *out);
    if (!sh->no_index && idx < 0) {
        lh_snapinfo_t *snaps;
        size_t n;
        if (lh_gindex_read_catalog(sh->trace_path, &go, &snaps, &n)) {
            idx = sel ? lh_heapgraph_find_snapshot(snaps, n, sel, 1)
                      : lh_gindex_default_snapshot(snaps, n);
            lh_gindex_snaps_free(snaps, n);
        }
    }
    if (!sh->no_index && idx >= 0 &&
        lh_gindex_load(sh->trace_path, &go, idx, &out->hg, &out->oh, &out->note, &out->info)) {
        if (!out->note[0]) {
            free(out->note);
            out->note = NULL;
        }
        return 0;
    }
    lh_heapgraph_opts_t o = {idx >= 0 ? NULL : sel, idx, sh->salvage, 0, sh->heuristics};
    int rc = lh_heapgraph_open(sh->trace_path, &o, &out->hg, err);
    if (rc < 0 || (rc = decode_objects(out->hg, &out->oh, &out->note, err)) < 0) {
        sh_snapshot_fini(out);
        return rc;
    }
    lh_gindex_info_of(out->hg, &out->info);
    if (!sh->no_index) {
        lh_err_t e2;
        lh_gindex_write(out->hg, out->oh, out->note, &go, &e2); /* a cache: best effort */
    }
    return 0;
}

void
sh_snapshot_fini(lh_snapshot_t *s)
{
    lh_objheap_free(s->oh);
    lh_heapgraph_free(s->hg);
    free(s->note);
    memset(s, 0, sizeof *s);
}

/* Opens the snapshot (selector sel, or index idx >= 0) as sh's own. On failure sh keeps
 * the snapshot it had. */
static int
sh_load(lh_shell_t *sh, const char *sel, long idx, lh_err_t *err)
{
    lh_snapshot_t s;
    int rc = sh_open_snapshot(sh, sel, idx, &s, err);
    if (rc < 0) {
        return rc;
    }
    lh_objheap_free(sh->oh);
    lh_heapgraph_free(sh->hg);
    free(sh->obj_note);
    sh->hg = s.hg;
    sh->oh = s.oh;
    sh->obj_note = s.note;
    sh->info = s.info;
    sh_rows_reset(sh);
    if (s.note) {
        fprintf(sh->errs, "note: %s\n", s.note); /* a heap that does not decode: why */
    }
    return 0;
}

int
sh_need_trace(lh_shell_t *sh, lh_err_t *err)
{
    return lh_gindex_attach(sh->hg, sh->salvage, err);
}

/* The one-line Valgrind-style LEAK SUMMARY. */
static void
leak_summary(lh_shell_t *sh, FILE *out)
{
    static const int order[] = {LH_CLASS_DEFINITE, LH_CLASS_INDIRECT, LH_CLASS_POSSIBLE,
                                LH_CLASS_REACHABLE};
    static const char *names[] = {"definitely lost", "indirectly lost", "possibly lost",
                                  "still reachable"};
    for (int i = 0; i < 4; i++) {
        fprintf(out, "%s%s: %" PRIu64 " bytes in %" PRIu64 " blocks", i ? "; " : "", names[i],
                sh->hg->class_bytes[order[i]], sh->hg->class_blocks[order[i]]);
    }
    fputc('\n', out);
}

static int
cmd_summary(lh_shell_t *sh, int argc, char **argv, lh_err_t *err)
{
    lh_heapgraph_t *hg = sh->hg;
    const lh_snapinfo_t *s = &hg->snaps[hg->cur];
    char b1[32];
    (void)argv;
    if (argc > 1) {
        return lh_err_set(err, LH_EINVAL, "summary: takes no arguments");
    }
    fprintf(sh->out, "trace: %s\n",
            sh->trace_name ? sh->trace_name : lh_text_rel_path(sh->trace_path, sh->cwd));
    fprintf(sh->out, "snapshot %zu of %zu: '%s' (%s) at %.3f s, contents: %s\n", hg->cur + 1,
            hg->n_snaps, s->label, lh_text_trigger_name(s->trigger, "?"), snap_time(sh, s),
            mode_name(s->mode));
    fprintf(sh->out, "live: %u blocks, %s (%" PRIu64 " bytes)\n", hg->n_blocks,
            sh_bytes(b1, sizeof b1, hg->live_bytes), hg->live_bytes);
    if (!hg->has_graph) {
        char why[sizeof hg->no_graph_why + 192];
        fprintf(sh->out, "graph: none: %s\n", graph_why(sh, why, sizeof why));
        return 0;
    }
    fprintf(sh->out, "graph: %u roots, %" PRIu64 " references (%" PRIu64 " to a block's start, "
            "%" PRIu64 " interior)\n", hg->n_roots, hg->g.n_edges, hg->g.n_strong,
            hg->g.n_interior);
    leak_summary(sh, sh->out);
    /* Valgrind's "of which reachable via heuristic": blocks no start pointer refers to */
    const char *sep = "of which reachable via heuristic: ";
    for (unsigned k = 0; k < 4; k++) {
        if (hg->heur_blocks[k]) {
            fprintf(sh->out, "%s%s: %" PRIu64 " bytes in %" PRIu64 " blocks", sep,
                    lh_heuristic_name(1u << k), hg->heur_bytes[k], hg->heur_blocks[k]);
            sep = "; ";
        }
    }
    if (sep[0] == ';') {
        fputc('\n', sh->out);
    }
    sh_obj_summary(sh, sh->out);
    return 0;
}

void
sh_note_no_stacks(lh_shell_t *sh)
{
    const lh_heapgraph_t *hg = sh->hg;
    for (uint32_t b = 0; b < hg->n_blocks; b++) {
        if (hg->blocks[b].stack_id) {
            return;
        }
    }
    if (hg->n_blocks) {
        fputs("note: no block has an allocation stack (a snapshot taken from outside, "
              "`snapshot -p`): by site or function they make one group\n", sh->out);
    }
}

static int
cmd_snapshots(lh_shell_t *sh, int argc, char **argv, lh_err_t *err)
{
    lh_heapgraph_t *hg = sh->hg;
    char b1[32];
    (void)argv;
    if (argc > 1) {
        return lh_err_set(err, LH_EINVAL, "snapshots: takes no arguments");
    }
    /* pause: how long the program was stopped for it (the fork, or attach's ptrace stop) */
    fprintf(sh->out, "    #  %-16s %-7s %10s %12s %11s %10s  %s\n", "label", "trigger", "time",
            "live blocks", "live bytes", "pause", "contents");
    for (size_t i = 0; i < hg->n_snaps; i++) {
        const lh_snapinfo_t *s = &hg->snaps[i];
        fprintf(sh->out, "%s %3zu  %-16s %-7s %8.3f s %12" PRIu64 " %11s %7.1f ms  %s\n",
                i == hg->cur ? "*" : " ", i + 1, s->label, lh_text_trigger_name(s->trigger, "?"),
                snap_time(sh, s), s->live_blocks, sh_bytes(b1, sizeof b1, s->live_bytes),
                (double)s->pause_ns / 1e6, mode_name(s->mode));
    }
    return 0;
}

static int
cmd_use(lh_shell_t *sh, int argc, char **argv, lh_err_t *err)
{
    if (argc != 2) {
        return lh_err_set(err, LH_EINVAL, "use: which snapshot? use LABEL|N");
    }
    long idx = lh_heapgraph_find_snapshot(sh->hg->snaps, sh->hg->n_snaps, argv[1], 1);
    if (idx < 0) {
        return lh_err_set(err, LH_EINVAL, "use: no snapshot '%s' (see snapshots)", argv[1]);
    }
    int rc = sh_load(sh, NULL, idx, err);
    if (rc < 0) {
        return rc;
    }
    lh_heapgraph_t *hg = sh->hg;
    const lh_snapinfo_t *s = &hg->snaps[hg->cur];
    fprintf(sh->out, "using snapshot %zu '%s': %u live blocks%s\n", hg->cur + 1, s->label,
            hg->n_blocks, hg->has_graph ? "" : " (no contents: graph commands unavailable)");
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * largest, show, elems
 * ------------------------------------------------------------------------------------- */

/* A bounded insertion list: each id goes in only when it beats the last kept. */
size_t
sh_top_n(const uint32_t *ids, size_t nc, uint64_t (*key)(const void *ctx, uint32_t id),
         const void *ctx, uint32_t *top, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < nc; i++) {
        uint32_t v = ids ? ids[i] : (uint32_t)i;
        uint64_t kv = key(ctx, v);
        size_t j = k;
        while (j > 0) { /* top[j - 1] before v: a larger key, or the same and a lower id */
            uint64_t kt = key(ctx, top[j - 1]);
            if (kt > kv || (kt == kv && top[j - 1] < v)) {
                break;
            }
            j--;
        }
        if (j == n) {
            continue;
        }
        k += k < n;
        memmove(top + j + 1, top + j, (k - 1 - j) * sizeof *top);
        top[j] = v;
    }
    return k;
}

static uint64_t
block_size(const void *hg, uint32_t b)
{
    return ((const lh_heapgraph_t *)hg)->blocks[b].size;
}

static uint64_t
block_retained(const void *hg, uint32_t b)
{
    return ((const lh_heapgraph_t *)hg)->g.retained[b];
}

static int
cmd_largest(lh_shell_t *sh, int argc, char **argv, lh_err_t *err)
{
    unsigned long n = 10;
    int retained = 0, have_n = 0;
    char b1[32], b2[32], site[512];
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--retained") == 0) {
            retained = 1;
        } else if (!have_n && argv[i][0] != '-') {
            if (lh_cli_parse_uint("largest", argv[i], 1, 100000, &n, err) < 0) {
                return LH_EINVAL;
            }
            have_n = 1;
        } else {
            return lh_err_set(err, LH_EINVAL, "largest: unknown argument '%s' (largest [N] "
                              "[--retained])", argv[i]);
        }
    }
    if (retained && sh_need_graph(sh, "largest --retained", err) < 0) {
        return LH_EINVAL;
    }
    if (sh_obj_mode(sh)) {
        return sh_obj_largest(sh, n, retained, err);
    }
    uint32_t *top = malloc(n * sizeof *top);
    if (!top) {
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    size_t k = sh_top_n(NULL, sh->hg->n_blocks, retained ? block_retained : block_size, sh->hg,
                        top, n);
    sh_rows_reset(sh);
    fprintf(sh->out, "   @  %-18s %10s %10s  %-15s  %-20s %s\n", "address", "size", "retained",
            "class", "type", "site");
    for (size_t i = 0; i < k; i++) {
        const lh_hblock_t *b = &sh->hg->blocks[top[i]];
        sh_row_add(sh, top[i]);
        fprintf(sh->out, "%4zu  0x%-16" PRIx64 " %10s %10s  %-15s  %-20s %s\n", i + 1, b->addr,
                sh_bytes(b1, sizeof b1, b->size),
                sh->hg->has_graph ? sh_bytes(b2, sizeof b2, sh->hg->g.retained[top[i]]) : "?",
                block_class(sh, top[i]), lh_heapgraph_type(sh->hg, top[i]),
                lh_heapgraph_site_str(sh->hg, b->stack_id, site, sizeof site));
    }
    free(top);
    return 0;
}

/* One word of a block or root: "+0x8  0x...  -> 0x... (48 B type, site)". */
static void
print_word(lh_shell_t *sh, uint64_t base, const lh_word_t *w, int numbered)
{
    lh_heapgraph_t *hg = sh->hg;
    uint32_t t = lh_heapgraph_block_at(hg, w->val);
    if (numbered) {
        int row = sh_row_add(sh, t);
        fprintf(sh->out, "%4d  ", row);
    } else {
        fputs("    ", sh->out);
    }
    fprintf(sh->out, "+0x%-6" PRIx64 " 0x%-14" PRIx64, w->addr - base, w->val);
    if (t != LH_NODE_NONE) {
        uint64_t in = w->val - hg->blocks[t].addr;
        fputs(" -> ", sh->out);
        if (in) {
            fprintf(sh->out, "inside 0x%" PRIx64 " (+0x%" PRIx64 "): ", hg->blocks[t].addr, in);
        }
        sh_block_brief(sh, t, sh->out);
    } else {
        /* data symbols: a graph loaded from its index opens the trace for them */
        lh_err_t e2;
        const char *cls = sh_need_trace(sh, &e2) < 0
                              ? NULL : lh_datasym_vtable_class(hg->ds, w->val, hg->epoch);
        lh_dsym_t ds;
        if (cls) {
            fprintf(sh->out, " -> vtable for %s", cls);
        } else if (hg->ds && lh_datasym_lookup(hg->ds, w->val, hg->epoch, &ds) > 0) {
            fprintf(sh->out, " -> %s", ds.name);
        } else {
            fputs(" (not a live block)", sh->out);
        }
    }
    fputc('\n', sh->out);
}

static void
show_stack(lh_shell_t *sh, uint32_t stack_id)
{
    const lh_site_t *s = lh_heapgraph_site(sh->hg, stack_id);
    if (!s->n_frames) {
        fprintf(sh->out, "  stack: %s\n", stack_id ? "(not recorded)" : "(none)");
        return;
    }
    fputs("  allocated:\n", sh->out);
    lh_text_stack(sh->out, s, 12, sh->cwd);
}

static int
show_root(lh_shell_t *sh, uint32_t node)
{
    lh_heapgraph_t *hg = sh->hg;
    uint32_t r = node - hg->n_blocks;
    const lh_hroot_t *root = &hg->roots[r];
    char name[512], b1[32];
    fprintf(sh->out, "root %s\n", lh_heapgraph_node_name(hg, node, name, sizeof name));
    if (root->kind == LH_ROOT_DATA) {
        fprintf(sh->out, "  kind: global data in %s\n",
                root->module ? lh_text_rel_path(root->module, sh->cwd) : "?");
    } else {
        fputs("  kind: thread stack\n", sh->out);
    }
    fprintf(sh->out, "  retains: %s\n", sh_bytes(b1, sizeof b1, hg->g.retained[node]));
    uint64_t n = hg->root_woff[r + 1] - hg->root_woff[r];
    fprintf(sh->out, "  pointer words: %" PRIu64 "%s\n", n, n > 16 ? " (the first 16)" : "");
    sh_rows_reset(sh);
    for (uint64_t k = hg->root_woff[r]; k < hg->root_woff[r + 1] && k < hg->root_woff[r] + 16;
         k++) {
        print_word(sh, root->kind == LH_ROOT_DATA ? root->start : 0,
                   &hg->sf.words[hg->root_words[k]], 1);
    }
    return 0;
}

static int
cmd_show(lh_shell_t *sh, int argc, char **argv, lh_err_t *err)
{
    lh_heapgraph_t *hg = sh->hg;
    uint32_t b;
    uint64_t addr;
    char b1[32], name[512];
    if (argc != 2) {
        return lh_err_set(err, LH_EINVAL, "show: which block? show ADDR");
    }
    if (sh_obj_mode(sh)) {
        return sh_obj_show(sh, argv[1], err);
    }
    if (sh_node_arg(sh, "show", argv[1], &b, &addr, err) < 0) {
        return LH_EINVAL;
    }
    if (b >= hg->n_blocks) {
        return show_root(sh, b);
    }
    const lh_hblock_t *bl = &hg->blocks[b];
    fprintf(sh->out, "block 0x%" PRIx64 ", %s (%" PRIu64 " bytes)", bl->addr,
            sh_bytes(b1, sizeof b1, bl->size), bl->size);
    if (addr != bl->addr) {
        fprintf(sh->out, "; 0x%" PRIx64 " is at +0x%" PRIx64, addr, addr - bl->addr);
    }
    fputc('\n', sh->out);
    fprintf(sh->out, "  type: %s (%s)\n", lh_heapgraph_type(hg, b),
            !bl->type ? "allocating function" : "tag or vtable");
    show_stack(sh, bl->stack_id);
    if (!hg->has_graph) {
        char why[sizeof hg->no_graph_why + 192];
        fprintf(sh->out, "  references: unknown: %s\n", graph_why(sh, why, sizeof why));
        return 0;
    }
    fprintf(sh->out, "  class: %s\n", lh_leak_class_name(hg->g.cls[b]));
    if (hg->via_heur && hg->via_heur[b] && !hg->start_ref[b]) {
        unsigned h = hg->via_heur[b] & (unsigned)-(int)hg->via_heur[b]; /* the lowest bit */
        fprintf(sh->out, "  reachable via heuristic: %s (no pointer to its start; an interior "
                "pointer of the shape that heuristic accepts)\n", lh_heuristic_name(h));
    }
    fprintf(sh->out, "  retained: %s (%" PRIu64 " bytes)\n",
            sh_bytes(b1, sizeof b1, hg->g.retained[b]), hg->g.retained[b]);
    uint32_t d = hg->g.idom[b];
    if (d != LH_NODE_NONE && d != hg->g.super) {
        fprintf(sh->out, "  dominated by: %s\n", lh_heapgraph_node_name(hg, d, name, sizeof name));
    }
    fprintf(sh->out, "  referenced by: %" PRIu64 " pointer%s\n", hg->g.roff[b + 1] - hg->g.roff[b],
            hg->g.roff[b + 1] - hg->g.roff[b] == 1 ? "" : "s");
    size_t first;
    size_t n = lh_heapgraph_block_words(hg, b, &first);
    fprintf(sh->out, "  pointer words: %zu%s\n", n, n > 8 ? " (the first 8; see elems)" : "");
    sh_rows_reset(sh);
    for (size_t k = first; k < first + n && k < first + 8; k++) {
        print_word(sh, bl->addr, &hg->sf.words[k], 1);
    }
    return 0;
}

static int
cmd_elems(lh_shell_t *sh, int argc, char **argv, lh_err_t *err)
{
    lh_heapgraph_t *hg = sh->hg;
    const char *a = NULL;
    unsigned long count = 20, start = 0;
    int have_start = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--count") == 0) {
            if (parse_opt_count("elems", argc, argv, &i, &count, err) < 0) {
                return LH_EINVAL;
            }
        } else if (!a) {
            a = argv[i];
        } else if (!have_start) {
            char *end = NULL;
            start = strtoul(argv[i], &end, 0);
            if (!end || *end || argv[i][0] == '-') {
                return lh_err_set(err, LH_EINVAL, "elems: START is a byte offset (16 or 0x10), "
                                  "got '%s'", argv[i]);
            }
            have_start = 1;
        } else {
            return lh_err_set(err, LH_EINVAL, "elems: unexpected '%s' (elems ADDR [START] "
                              "[--count N])", argv[i]);
        }
    }
    if (!a) {
        return lh_err_set(err, LH_EINVAL, "elems: which block? elems ADDR [START] [--count N]");
    }
    uint32_t b;
    uint64_t addr;
    if (sh_need_graph(sh, "elems", err) < 0 || sh_node_arg(sh, "elems", a, &b, &addr, err) < 0) {
        return LH_EINVAL;
    }
    if (b >= hg->n_blocks) {
        return lh_err_set(err, LH_EINVAL, "elems: %s is a root; use show", a);
    }

    size_t first;
    size_t n = lh_heapgraph_block_words(hg, b, &first);
    size_t shown = 0;
    char b1[32];
    fprintf(sh->out, "block 0x%" PRIx64 " (%s, %s): %zu pointer word%s\n", hg->blocks[b].addr,
            sh_bytes(b1, sizeof b1, hg->blocks[b].size), lh_heapgraph_type(hg, b), n,
            n == 1 ? "" : "s");
    sh_rows_reset(sh);
    for (size_t k = first; k < first + n && shown < count; k++) {
        if (hg->sf.words[k].addr - hg->blocks[b].addr < start) {
            continue;
        }
        print_word(sh, hg->blocks[b].addr, &hg->sf.words[k], 1);
        shown++;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * count, roots, unreachable
 * ------------------------------------------------------------------------------------- */

static int
cmp_group(const void *a, const void *b)
{
    const sh_group_t *x = a, *y = b;
    int c = SH_DESC(x->bytes + x->bytes2, y->bytes + y->bytes2);
    return c ? c : sh_cmp_key_stack(x->key, x->stack_id, y->key, y->stack_id);
}

enum { BY_TYPE, BY_SITE, BY_FUNCTION, BY_CLASS };

static int
parse_by(const char *cmd, int argc, char **argv, int allowed, int *by, lh_err_t *err)
{
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (strcmp(argv[i], "--by") == 0 && i + 1 < argc) {
            v = argv[++i];
        } else if (strncmp(argv[i], "--by=", 5) == 0) {
            v = argv[i] + 5;
        } else {
            return lh_err_set(err, LH_EINVAL, "%s: unknown argument '%s'", cmd, argv[i]);
        }
        if (strcmp(v, "type") == 0 && (allowed & 1 << BY_TYPE)) {
            *by = BY_TYPE;
        } else if (strcmp(v, "site") == 0 && (allowed & 1 << BY_SITE)) {
            *by = BY_SITE;
        } else if (strcmp(v, "function") == 0 && (allowed & 1 << BY_FUNCTION)) {
            *by = BY_FUNCTION;
        } else if (strcmp(v, "class") == 0 && (allowed & 1 << BY_CLASS)) {
            *by = BY_CLASS;
        } else {
            return lh_err_set(err, LH_EINVAL, "%s: cannot group by '%s'", cmd, v);
        }
    }
    return 0;
}

/* The key of block b: by site none (the stack id is the identity, formatted when
 * printed), else the type's or the function's name (two sites in one function make one
 * group). */
static const char *
block_key(lh_shell_t *sh, uint32_t b, int by)
{
    lh_heapgraph_t *hg = sh->hg;
    if (by == BY_SITE) {
        return "";
    }
    if (by == BY_TYPE && hg->blocks[b].type) {
        return hg->types[hg->blocks[b].type];
    }
    return lh_heapgraph_site_function(hg, hg->blocks[b].stack_id);
}

static void
print_group_key(lh_shell_t *sh, const sh_group_t *g, int by)
{
    char site[512];
    if (by == BY_SITE) {
        /* A row is a site of the report ([site N]: one stack; `counts`, `log --site N`):
         * two stacks through one line print alike, and may differ in class (one kept, one
         * lost), so they stay two rows, told apart by the id. A `snapshot -p` has no
         * stacks: one site, no id. */
        fputs(lh_heapgraph_site_str(sh->hg, g->stack_id, site, sizeof site), sh->out);
        if (sh->info.attach_how != 2) {
            fprintf(sh->out, " [site %" PRIu32 "]", g->stack_id);
        }
    } else {
        fputs(g->key, sh->out);
    }
}

static int
cmd_count(lh_shell_t *sh, int argc, char **argv, lh_err_t *err)
{
    lh_heapgraph_t *hg = sh->hg;
    int by = BY_TYPE;
    sh_grouping_t gr = {0};
    char b1[32];
    if (parse_by("count", argc, argv, 15, &by, err) < 0) {
        return LH_EINVAL;
    }
    if (sh_obj_mode(sh) && by != BY_FUNCTION) {
        return sh_obj_count(sh, by == BY_SITE, by == BY_CLASS, err);
    }
    if (by == BY_CLASS) {
        return lh_err_set(err, LH_EINVAL, "count --by class: the objects of a perl or python "
                          "snapshot (blessed packages, classes); %s", sh->oh
                          ? "this is the block view: `native off` first"
                          : "this snapshot has none");
    }
    if (by != BY_TYPE) {
        sh_note_no_stacks(sh);
    }
    for (uint32_t b = 0; b < hg->n_blocks; b++) {
        sh_group_t *g = sh_group_get(&gr, block_key(sh, b, by),
                                     by == BY_SITE ? hg->blocks[b].stack_id : 0);
        if (!g) {
            sh_grouping_fini(&gr);
            return lh_err_set(err, LH_ENOMEM, "out of memory");
        }
        g->n++;
        g->bytes += hg->blocks[b].size;
        if (g->example == LH_NODE_NONE || hg->blocks[b].size > hg->blocks[g->example].size) {
            g->example = b;
        }
    }
    lh_qsort(gr.v, gr.n, sizeof *gr.v, cmp_group);
    static const char *bynames[] = {"type", "site", "function"};
    fprintf(sh->out, "   @  %10s %10s  %s\n", "blocks", "bytes", bynames[by]);
    sh_rows_reset(sh);
    for (size_t i = 0; i < gr.n; i++) {
        sh_row_add(sh, gr.v[i].example);
        fprintf(sh->out, "%4zu  %10" PRIu64 " %10s  ", i + 1, gr.v[i].n,
                sh_bytes(b1, sizeof b1, gr.v[i].bytes));
        print_group_key(sh, &gr.v[i], by);
        fputc('\n', sh->out);
    }
    fprintf(sh->out, "total %u blocks, %s in %zu group%s\n", hg->n_blocks,
            sh_bytes(b1, sizeof b1, hg->live_bytes), gr.n, gr.n == 1 ? "" : "s");
    sh_grouping_fini(&gr);
    return 0;
}

static lh_heapgraph_t *root_sort_hg;

static int
cmp_root(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    const lh_refgraph_t *g = &root_sort_hg->g;
    int c = SH_DESC(g->retained[x], g->retained[y]);
    /* then by the pointers a root holds: roots found in address order (a stack, a
     * program's mapping) do not come in the same order from one run to the next */
    c = c ? c : SH_DESC(g->off[x + 1] - g->off[x], g->off[y + 1] - g->off[y]);
    return c ? c : (x < y ? -1 : x > y);
}

static int
cmd_roots(lh_shell_t *sh, int argc, char **argv, lh_err_t *err)
{
    lh_heapgraph_t *hg = sh->hg;
    unsigned long n = 10;
    char b1[32], name[512];
    if (argc > 2) {
        return lh_err_set(err, LH_EINVAL, "roots: roots [N]");
    }
    if (argc == 2 && lh_cli_parse_uint("roots", argv[1], 1, 1000000, &n, err) < 0) {
        return LH_EINVAL;
    }
    if (sh_need_graph(sh, "roots", err) < 0) {
        return LH_EINVAL;
    }
    if (sh_obj_mode(sh)) {
        return sh_obj_roots(sh, n, err);
    }
    uint32_t *v = malloc(((size_t)hg->n_roots + 1) * sizeof *v);
    if (!v) {
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    for (uint32_t r = 0; r < hg->n_roots; r++) {
        v[r] = hg->n_blocks + r;
    }
    root_sort_hg = hg;
    lh_qsort(v, hg->n_roots, sizeof *v, cmp_root);
    fprintf(sh->out, "   @  %10s %8s  %s\n", "retained", "pointers", "root");
    sh_rows_reset(sh);
    uint64_t shown = 0, others = 0;
    uint32_t n_shown = 0;
    for (uint32_t i = 0; i < hg->n_roots; i++) {
        if (i >= n) {
            others += hg->g.retained[v[i]];
            continue;
        }
        sh_row_add(sh, v[i]);
        shown += hg->g.retained[v[i]];
        n_shown++;
        fprintf(sh->out, "%4u  %10s %8" PRIu64 "  %s\n", i + 1,
                sh_bytes(b1, sizeof b1, hg->g.retained[v[i]]),
                hg->g.off[v[i] + 1] - hg->g.off[v[i]],
                lh_heapgraph_node_name(hg, v[i], name, sizeof name));
    }
    /* A block reachable from two roots is retained by neither alone (dominators): the rows
     * add up to the total only with that shared part, so the line says what it is. */
    uint64_t reach = hg->g.retained[hg->g.super] - hg->class_bytes[LH_CLASS_DEFINITE] -
                     hg->class_bytes[LH_CLASS_INDIRECT];
    uint64_t shared = reach > shown + others ? reach - shown - others : 0;
    char b2[32], b3[32], b4[32];
    fprintf(sh->out, "%u roots reach %s of %s live: the %u above retain %s on their own, the "
                     "other %u %s, and %s is reachable from more than one root\n",
            hg->n_roots, sh_bytes(b1, sizeof b1, reach),
            sh_bytes(name, sizeof name, hg->live_bytes), n_shown, sh_bytes(b2, sizeof b2, shown),
            hg->n_roots - n_shown, sh_bytes(b3, sizeof b3, others),
            sh_bytes(b4, sizeof b4, shared));
    free(v);
    return 0;
}

static int
cmd_unreachable(lh_shell_t *sh, int argc, char **argv, lh_err_t *err)
{
    lh_heapgraph_t *hg = sh->hg;
    int by = BY_SITE;
    sh_grouping_t gr = {0};
    char b1[32], b2[32];
    if (parse_by("unreachable", argc, argv, 1 << BY_SITE, &by, err) < 0 ||
        sh_need_graph(sh, "unreachable", err) < 0) {
        return LH_EINVAL;
    }
    if (sh_obj_mode(sh)) {
        return sh_obj_unreachable(sh, err);
    }
    sh_note_no_stacks(sh);
    for (uint32_t b = 0; b < hg->n_blocks; b++) {
        int c = hg->g.cls[b];
        if (c != LH_CLASS_DEFINITE && c != LH_CLASS_INDIRECT) {
            continue;
        }
        sh_group_t *g = sh_group_get(&gr, "", hg->blocks[b].stack_id);
        if (!g) {
            sh_grouping_fini(&gr);
            return lh_err_set(err, LH_ENOMEM, "out of memory");
        }
        if (c == LH_CLASS_DEFINITE) {
            g->n++;
            g->bytes += hg->blocks[b].size;
        } else {
            g->n2++;
            g->bytes2 += hg->blocks[b].size;
        }
        if (g->example == LH_NODE_NONE || (c == LH_CLASS_DEFINITE &&
                                           hg->g.cls[g->example] != LH_CLASS_DEFINITE)) {
            g->example = b;
        }
    }
    lh_qsort(gr.v, gr.n, sizeof *gr.v, cmp_group);
    fprintf(sh->out, "definitely lost: %" PRIu64 " bytes in %" PRIu64 " blocks; indirectly "
            "lost: %" PRIu64 " bytes in %" PRIu64 " blocks\n",
            hg->class_bytes[LH_CLASS_DEFINITE], hg->class_blocks[LH_CLASS_DEFINITE],
            hg->class_bytes[LH_CLASS_INDIRECT], hg->class_blocks[LH_CLASS_INDIRECT]);
    if (gr.n) {
        fprintf(sh->out, "   @  %8s %10s  %8s %10s  %s\n", "direct", "bytes", "indirect",
                "bytes", "site");
    }
    sh_rows_reset(sh);
    for (size_t i = 0; i < gr.n; i++) {
        sh_row_add(sh, gr.v[i].example);
        fprintf(sh->out, "%4zu  %8" PRIu64 " %10s  %8" PRIu64 " %10s  ", i + 1, gr.v[i].n,
                sh_bytes(b1, sizeof b1, gr.v[i].bytes), gr.v[i].n2,
                sh_bytes(b2, sizeof b2, gr.v[i].bytes2));
        print_group_key(sh, &gr.v[i], BY_SITE);
        fputc('\n', sh->out);
    }
    sh_grouping_fini(&gr);
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * help, dispatch
 * ------------------------------------------------------------------------------------- */

typedef struct command {
    const char *name;
    int (*fn)(lh_shell_t *sh, int argc, char **argv, lh_err_t *err);
    const char *usage;
    const char *help;
} command_t;

static int cmd_help(lh_shell_t *sh, int argc, char **argv, lh_err_t *err);

static int
cmd_quit(lh_shell_t *sh, int argc, char **argv, lh_err_t *err)
{
    (void)argc;
    (void)argv;
    (void)err;
    sh->quit = 1;
    return 0;
}

static int
cmd_native(lh_shell_t *sh, int argc, char **argv, lh_err_t *err)
{
    if (argc != 2 || (strcmp(argv[1], "on") != 0 && strcmp(argv[1], "off") != 0)) {
        return lh_err_set(err, LH_EINVAL, "native: native on|off");
    }
    sh->native = strcmp(argv[1], "on") == 0;
    sh_rows_reset(sh);
    if (!sh->oh || sh->oh->n_objs == 0) {
        fprintf(sh->out, "this snapshot has no decoded perl/python objects: block view\n");
    } else {
        fprintf(sh->out, "%s view\n", sh->native ? "block" : "object");
    }
    return 0;
}

static const command_t commands[] = {
    {"summary", cmd_summary, "summary", "the snapshot, its live set and the leak summary"},
    {"snapshots", cmd_snapshots, "snapshots",
     "the trace's snapshots, how long each paused the program (* marks the one in use)"},
    {"use", cmd_use, "use LABEL|N", "switch to another snapshot"},
    {"largest", cmd_largest, "largest [N] [--retained]",
     "the N biggest blocks (default 10) by size, or by retained size"},
    {"show", cmd_show, "show ADDR",
     "a block: size, type, stack, class, retained size, its first pointers; perl/python "
     "objects: its names, a scalar's value (string, number), its references"},
    {"elems", cmd_elems, "elems ADDR [START] [--count N]",
     "the pointers a block holds, by offset, from byte offset START"},
    {"identify", sh_cmd_identify, "identify ADDR [--depth N] [--all] [--weak]",
     "why is it alive: the paths from roots to the block (shortest; --all: one per root; "
     "--weak: through interior pointers too; --depth: hops shown; perl/python objects: one "
     "path per variable that holds it, 4 of them, --all: every one)"},
    {"path", sh_cmd_identify, "path ADDR [...]", "the same as identify"},
    {"count", cmd_count, "count [--by type|site|function|class]",
     "live blocks and bytes per group; perl/python: objects per type, site, or class (blessed "
     "package, as Devel::MAT's count --blessed)"},
    {"roots", cmd_roots, "roots [N]", "the roots that retain the most"},
    {"unreachable", cmd_unreachable, "unreachable [--by site]",
     "lost blocks by site: definitely (direct) and indirectly lost"},
    {"diff", sh_cmd_diff, "diff LABEL1 LABEL2 [--by site|function]",
     "the groups whose live blocks grew from one snapshot to the other"},
    {"native", cmd_native, "native on|off",
     "perl/python snapshots: malloc blocks (on) or the language's objects (off, the "
     "default); --native on one command does the same for it"},
    {"help", cmd_help, "help [CMD]", "this list, or one command's help"},
    {"quit", cmd_quit, "quit", "leave the shell (also: exit, end of input)"},
    {"exit", cmd_quit, NULL, NULL},
};

static int
cmd_help(lh_shell_t *sh, int argc, char **argv, lh_err_t *err)
{
    if (argc > 2) {
        return lh_err_set(err, LH_EINVAL, "help: help [CMD]");
    }
    if (argc == 2) {
        const command_t *c = LH_CLI_FIND(commands, argv[1]);
        if (!c || !c->usage) {
            return lh_err_set(err, LH_EINVAL, "help: unknown command '%s'", argv[1]);
        }
        fprintf(sh->out, "%s\n  %s\n", c->usage, c->help);
        return 0;
    }
    fputs("commands (ADDR: 0x... or @N, the Nth row of the last listing):\n", sh->out);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (commands[i].usage) {
            fprintf(sh->out, "  %-42s %s\n", commands[i].usage, commands[i].help);
        }
    }
    return 0;
}

/* Runs one parsed command. Returns 0, or a negative code with the message in err. */
static int
shell_exec(lh_shell_t *sh, int argc, char **argv, lh_err_t *err)
{
    const command_t *c = LH_CLI_FIND(commands, argv[0]);
    if (!c) {
        return lh_err_set(err, LH_EINVAL, "unknown command '%s' (try help)", argv[0]);
    }
    /* `--native` anywhere: this one command in the block view. */
    char *av[LH_SHELL_MAX_WORDS + 1];
    int ac = 0, native = sh->native, once = 0;
    for (int i = 0; i < argc && ac < LH_SHELL_MAX_WORDS; i++) {
        if (i > 0 && strcmp(argv[i], "--native") == 0) {
            once = 1;
        } else {
            av[ac++] = argv[i];
        }
    }
    av[ac] = NULL;
    if (once) {
        sh->native = 1;
    }
    int rc = c->fn(sh, ac, av, err);
    if (once) {
        sh->native = native;
    }
    return rc;
}

int
lh_shell_run_line(lh_shell_t *sh, const char *line)
{
    lh_shell_line_t l;
    lh_err_t err = {{0}};
    int failed = 0;
    if (lh_shell_parse(line, &l, &err) < 0) {
        fprintf(sh->errs, "error: %s\n", err.msg);
        lh_shell_line_fini(&l);
        sh->n_failed++;
        return 1;
    }
    for (size_t i = 0; i < l.n && !sh->quit; i++) {
        err.msg[0] = '\0';
        fflush(sh->out);
        if (shell_exec(sh, l.cmds[i].argc, l.cmds[i].argv, &err) < 0) {
            fflush(sh->out);
            fprintf(sh->errs, "error: %s\n", err.msg[0] ? err.msg : "failed");
            fflush(sh->errs);
            failed++;
        }
    }
    fflush(sh->out);
    lh_shell_line_fini(&l);
    sh->n_failed += failed;
    return failed;
}

int
lh_shell_open(lh_shell_t *sh, const char *trace_path, const char *snapshot, int salvage,
              unsigned heuristics, int no_index, FILE *out, FILE *errs, lh_err_t *err)
{
    memset(sh, 0, sizeof *sh);
    sh->out = out;
    sh->errs = errs;
    sh->salvage = salvage;
    sh->heuristics = heuristics;
    sh->no_index = no_index;
    if (!(sh->trace_path = strdup(trace_path))) {
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    return sh_load(sh, snapshot, -1, err);
}

void
lh_shell_fini(lh_shell_t *sh)
{
    lh_objheap_free(sh->oh);
    lh_heapgraph_free(sh->hg);
    free(sh->obj_note);
    free(sh->trace_path);
    free(sh->rows);
    memset(sh, 0, sizeof *sh);
}
