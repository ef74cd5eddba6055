/* leakhound - SPDX-License-Identifier: MIT
 *
 * identify.c: `identify ADDR`: why a block is alive. A breadth-first search backwards over
 * the reverse index, from the block to the roots, finds the shortest paths; they are
 * printed root first as a tree, each hop naming the offset of the pointer in its holder
 * ("+0x18") and the block it points to (size, type, allocation site).
 *
 * Sources: the roots; for a lost block (which no root reaches), the definitely lost blocks,
 * so the answer is the lost block that holds it. Default: start pointers only, and when
 * none reaches the block (possibly lost), interior pointers too, saying so.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "shell_int.h"

#define MAX_PATHS 20

typedef struct path {
    uint32_t *nodes; /* source first, the block last */
    size_t n;
} path_t;

typedef struct search {
    lh_heapgraph_t *hg;
    uint32_t target;
    int weak, all, lost;
    path_t paths[MAX_PATHS];
    size_t n_paths;
    uint64_t n_sources; /* sources found (more than MAX_PATHS are not kept) */
} search_t;

static int
is_source(const search_t *s, uint32_t v)
{
    const lh_refgraph_t *g = &s->hg->g;
    if (s->lost) {
        return v < g->n_blocks && g->cls[v] == LH_CLASS_DEFINITE;
    }
    return v >= g->n_blocks && v < g->super;
}

static int
keep_path(search_t *s, const uint32_t *next, uint32_t src)
{
    size_t n = 1;
    for (uint32_t v = src; v != s->target; v = next[v]) {
        n++;
    }
    uint32_t *nodes = malloc(n * sizeof *nodes);
    if (!nodes) {
        return LH_ENOMEM;
    }
    size_t k = 0;
    for (uint32_t v = src;; v = next[v]) {
        nodes[k++] = v;
        if (v == s->target) {
            break;
        }
    }
    s->paths[s->n_paths++] = (path_t){nodes, n};
    return 0;
}

/* BFS from the target over reverse edges. */
static int
bfs(search_t *s)
{
    const lh_refgraph_t *g = &s->hg->g;
    uint32_t *next = malloc((size_t)g->n_nodes * sizeof *next);
    uint32_t *queue = malloc((size_t)g->n_nodes * sizeof *queue);
    int rc = 0;
    if (!next || !queue) {
        rc = LH_ENOMEM;
        goto done;
    }
    memset(next, 0xff, (size_t)g->n_nodes * sizeof *next);
    size_t head = 0, tail = 0;
    next[s->target] = s->target;
    if (is_source(s, s->target)) {
        s->n_sources++;
        rc = keep_path(s, next, s->target); /* a definitely lost block: nothing holds it */
        goto done;
    }
    queue[tail++] = s->target;
    while (head < tail) {
        size_t level_end = tail;
        for (; head < level_end; head++) {
            uint32_t v = queue[head];
            for (uint64_t e = g->roff[v]; e < g->roff[v + 1]; e++) {
                uint32_t u = LH_EDGE_NODE(g->rsrc[e]);
                if ((!s->weak && (g->rsrc[e] & LH_EDGE_INTERIOR)) || next[u] != LH_NODE_NONE) {
                    continue;
                }
                next[u] = v;
                if (is_source(s, u)) {
                    s->n_sources++;
                    if (s->n_paths < MAX_PATHS && (rc = keep_path(s, next, u)) < 0) {
                        goto done;
                    }
                } else {
                    queue[tail++] = u;
                }
            }
        }
        if (s->n_sources && !s->all) {
            break; /* the shortest level is complete */
        }
    }
done:
    free(next);
    free(queue);
    return rc;
}

static void
free_paths(search_t *s)
{
    for (size_t i = 0; i < s->n_paths; i++) {
        free(s->paths[i].nodes);
    }
    s->n_paths = 0;
    s->n_sources = 0;
}

/* Nodes shared at the start of two paths. */
static size_t
common(const path_t *a, const path_t *b)
{
    size_t k = 0;
    while (k < a->n && k < b->n && a->nodes[k] == b->nodes[k]) {
        k++;
    }
    return k;
}

static int
cmp_path(const void *x, const void *y)
{
    const path_t *a = x, *b = y;
    if (a->n != b->n) {
        return a->n < b->n ? -1 : 1;
    }
    for (size_t k = 0; k < a->n; k++) {
        if (a->nodes[k] != b->nodes[k]) {
            return a->nodes[k] < b->nodes[k] ? -1 : 1;
        }
    }
    return 0;
}

/* The first word of holder pointing into block t. */
static const lh_word_t *
hop_word(lh_heapgraph_t *hg, uint32_t holder, uint32_t t)
{
    uint64_t lo = hg->blocks[t].addr, sz = hg->blocks[t].size;
    if (holder < hg->n_blocks) {
        size_t first;
        size_t n = lh_heapgraph_block_words(hg, holder, &first);
        for (size_t k = first; k < first + n; k++) {
            uint64_t v = hg->sf.words[k].val;
            if (v == lo || (v > lo && v - lo < sz)) {
                return &hg->sf.words[k];
            }
        }
        return NULL;
    }
    uint32_t r = holder - hg->n_blocks;
    for (uint64_t k = hg->root_woff[r]; k < hg->root_woff[r + 1]; k++) {
        const lh_word_t *w = &hg->sf.words[hg->root_words[k]];
        if (w->val == lo || (w->val > lo && w->val - lo < sz)) {
            return w;
        }
    }
    return NULL;
}

static void
print_source(lh_shell_t *sh, uint32_t v)
{
    lh_heapgraph_t *hg = sh->hg;
    char name[512];
    if (v >= hg->n_blocks) {
        const lh_hroot_t *r = &hg->roots[v - hg->n_blocks];
        fputs(lh_heapgraph_node_name(hg, v, name, sizeof name), sh->out);
        if (r->kind == LH_ROOT_DATA) {
            const char *m = r->module ? strrchr(r->module, '/') : NULL;
            fprintf(sh->out, " [global in %s]", m ? m + 1 : r->module ? r->module : "?");
        }
    } else {
        fprintf(sh->out, "0x%" PRIx64 " [definitely lost]: ",
                hg->blocks[v].addr);
        sh_block_brief(sh, v, sh->out);
    }
}

static void
print_hop(lh_shell_t *sh, uint32_t holder, uint32_t t)
{
    lh_heapgraph_t *hg = sh->hg;
    const lh_word_t *w = hop_word(hg, holder, t);
    if (w && holder < hg->n_blocks) {
        fprintf(sh->out, "+0x%" PRIx64 " -> ", w->addr - hg->blocks[holder].addr);
    } else if (w && hg->roots[holder - hg->n_blocks].kind == LH_ROOT_DATA &&
               w->addr >= hg->roots[holder - hg->n_blocks].start) {
        fprintf(sh->out, "+0x%" PRIx64 " -> ", w->addr - hg->roots[holder - hg->n_blocks].start);
    } else if (w) {
        fprintf(sh->out, "[0x%" PRIx64 "] -> ", w->addr);
    }
    fprintf(sh->out, "0x%" PRIx64, hg->blocks[t].addr);
    if (w && w->val != hg->blocks[t].addr) {
        lh_err_t e2;
        /* No heuristic accepted any pointer into t (via_heur, computed over the same
         * words): none accepts this one. Otherwise multipleinheritance may read data
         * symbols (vtables), which a graph loaded from its index opens the trace for. */
        unsigned h = !hg->via_heur || !hg->via_heur[t] || sh_need_trace(sh, &e2) < 0
                         ? 0 : lh_heapgraph_heuristic(hg, t, w->val);
        fprintf(sh->out, " (interior pointer to +0x%" PRIx64 "%s%s%s)", w->val - hg->blocks[t].addr,
                h ? ", the " : "", h ? lh_heuristic_name(h) : "", h ? " heuristic" : "");
    }
    fputs(": ", sh->out);
    sh_block_brief(sh, t, sh->out);
}

/* Has path i a later path that shares exactly k nodes (a sibling after it at depth k)? */
static int
sibling_after(const search_t *s, size_t i, size_t k)
{
    for (size_t j = i + 1; j < s->n_paths; j++) {
        size_t c = common(&s->paths[i], &s->paths[j]);
        if (c == k) {
            return 1;
        }
        if (c < k) {
            return 0;
        }
    }
    return 0;
}

static void
indent(lh_shell_t *sh, const search_t *s, size_t i, size_t depth, size_t shown_depth)
{
    size_t cap = shown_depth > 12 ? shown_depth - 12 : 0; /* deep chains stop indenting */
    for (size_t k = 1 + cap; k < shown_depth; k++) {
        fputs(sibling_after(s, i, k + (depth - shown_depth)) ? "│  " : "   ", sh->out);
    }
    fputs(sibling_after(s, i, depth) ? "├─ " : "└─ ", sh->out);
}

static void
print_paths(lh_shell_t *sh, search_t *s, unsigned long max_hops)
{
    lh_qsort(s->paths, s->n_paths, sizeof *s->paths, cmp_path);
    for (size_t i = 0; i < s->n_paths; i++) {
        const path_t *p = &s->paths[i];
        size_t from = i ? common(&s->paths[i - 1], p) : 0;
        size_t hops = p->n - 1;
        size_t head = hops > max_hops ? max_hops / 2 : hops;   /* hops shown first */
        size_t tail_from = hops > max_hops ? p->n - (max_hops - head) : p->n;
        for (size_t d = from; d < p->n; d++) {
            if (d > head && d < tail_from) {
                if (d == head + 1) {
                    indent(sh, s, i, head + 1, head + 1);
                    fprintf(sh->out, "... %zu more hops ...\n", tail_from - head - 1);
                }
                continue;
            }
            size_t shown = d < tail_from ? d : head + 2 + (d - tail_from);
            if (d == 0) {
                /* @N: the sources, numbered as shown (shell.h: the rows of the last listing) */
                fprintf(sh->out, "@%d ", sh_row_add(sh, p->nodes[0]));
                print_source(sh, p->nodes[0]);
            } else {
                indent(sh, s, i, d, shown);
                print_hop(sh, p->nodes[d - 1], p->nodes[d]);
            }
            if (d + 1 == p->n && d > 0) {
                fputs("  <==", sh->out);
            }
            fputc('\n', sh->out);
        }
    }
}

int
sh_cmd_identify(lh_shell_t *sh, int argc, char **argv, lh_err_t *err)
{
    lh_heapgraph_t *hg = sh->hg;
    search_t s = {0};
    const char *a = NULL;
    unsigned long depth = 24;
    char b1[32];
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--all") == 0) {
            s.all = 1;
        } else if (strcmp(argv[i], "--weak") == 0) {
            s.weak = 1;
        } else if (strcmp(argv[i], "--depth") == 0) {
            if (i + 1 >= argc) {
                return lh_err_set(err, LH_EINVAL, "identify: --depth needs a number");
            }
            if (lh_cli_parse_uint("identify --depth", argv[++i], 2, 100000, &depth, err) < 0) {
                return LH_EINVAL;
            }
        } else if (!a && argv[i][0] != '-') {
            a = argv[i];
        } else {
            return lh_err_set(err, LH_EINVAL, "identify: unexpected '%s' (identify ADDR "
                              "[--depth N] [--all] [--weak])", argv[i]);
        }
    }
    if (!a) {
        return lh_err_set(err, LH_EINVAL, "identify: which block? identify ADDR");
    }
    if (sh_obj_mode(sh)) {
        return sh_obj_identify(sh, a, s.all, err); /* the path in the language's terms */
    }
    uint32_t t;
    uint64_t addr;
    if (sh_need_graph(sh, "identify", err) < 0 || sh_node_arg(sh, "identify", a, &t, &addr,
                                                              err) < 0) {
        return LH_EINVAL;
    }
    if (t >= hg->n_blocks) {
        return lh_err_set(err, LH_EINVAL, "identify: %s is a root, not a block", a);
    }
    s.hg = hg;
    s.target = t;
    int cls = hg->g.cls[t];
    s.lost = cls == LH_CLASS_DEFINITE || cls == LH_CLASS_INDIRECT;
    int rc = bfs(&s);
    int widened = 0;
    if (rc == 0 && !s.n_paths && !s.weak) {
        s.weak = 1;
        widened = 1;
        rc = bfs(&s);
    }
    if (rc < 0) {
        free_paths(&s);
        return lh_err_set(err, LH_ENOMEM, "identify: out of memory");
    }
    fprintf(sh->out, "0x%" PRIx64 ": ", hg->blocks[t].addr);
    sh_block_brief(sh, t, sh->out);
    fprintf(sh->out, "; %s, retains %s\n", lh_leak_class_name(cls),
            sh_bytes(b1, sizeof b1, hg->g.retained[t]));
    if (s.lost) {
        fprintf(sh->out, "no root reaches it; %s:\n",
                cls == LH_CLASS_DEFINITE ? "it is where the leak starts"
                                         : "held by lost blocks only, from");
    } else {
        fprintf(sh->out, "%" PRIu64 " %s%s%s:\n", s.n_sources,
                s.all ? (s.n_sources == 1 ? "root reaches it" : "roots reach it")
                      : (s.n_sources == 1 ? "shortest path from a root"
                                          : "shortest paths from roots"),
                widened ? " (only through interior pointers: possibly lost)"
                        : s.weak ? " (interior pointers included)" : "",
                s.n_sources > s.n_paths ? " (the first ones)" : "");
    }
    sh_rows_reset(sh);
    print_paths(sh, &s, depth);
    free_paths(&s);
    return 0;
}
