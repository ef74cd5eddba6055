/* leakhound - SPDX-License-Identifier: MIT
 *
 * objects.c: the shell's commands on a language object heap (objheap.h): when the
 * snapshot is of a perl (or python) process whose heap was decoded, count, largest,
 * identify, roots, unreachable, diff and show speak the language: SVs with their types,
 * classes and names instead of malloc blocks. `--native` on any of them, or `native on`,
 * gives the block view back. Issue 12 (perl), issue 13 (python).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bound.h"
#include "dupstr.h"
#include "grow.h"
#include "keyindex.h"
#include "shell_int.h"

/* Hops of a path shown (a longer one shows its two ends, lh_objheap_path): a chain of 4096
 * closures or list nodes is still shown whole, its repetition folded (fold_repeats). */
#define PATH_MAX_HOPS 4096

static const char *
lang_name(const lh_objheap_t *oh)
{
    return oh->lang == LH_OBJLANG_PYTHON ? "python" : "perl";
}

/* What unreachable objects are. Python's collector frees such cycles at its next run
 * (the decoder applies the collector's own rule, pyheap.h): garbage, not a leak; unless
 * the program turned automatic collection off, and then nothing ever frees them. */
static const char *
unreachable_what(const lh_objheap_t *oh, int plural)
{
    if (oh->lang != LH_OBJLANG_PYTHON) {
        return plural ? "reference cycles nothing refers to"
                      : "a reference cycle nothing refers to any more";
    }
    switch (oh->collector_off) {
    case 1:
        return plural ? "reference cycles the collector never frees: it is disabled "
                        "(gc.disable()), so they are leaks"
                      : "a reference cycle the collector never frees: it is disabled "
                        "(gc.disable()), so it is a leak";
    case 2:
        return plural ? "reference cycles the collector never frees: automatic collection "
                        "is off (gc.set_threshold(0)), so they are leaks"
                      : "a reference cycle the collector never frees: automatic collection "
                        "is off (gc.set_threshold(0)), so it is a leak";
    default:
        return plural ? "reference cycles the collector has not freed yet: garbage, not leaks"
                      : "a reference cycle the collector has not freed yet: garbage, not a "
                        "leak";
    }
}

/* With the collector off, the unreachable objects are a leak no root shows: one line
 * where the heap is summed up (summary, roots). */
static void
never_freed_line(const lh_objheap_t *oh, FILE *out)
{
    char b1[32];
    if (oh->collector_off && oh->n_unreachable) {
        fprintf(out, "unreachable: %" PRIu64 " objects, %s, %s: `unreachable` lists them\n",
                oh->n_unreachable, sh_bytes(b1, sizeof b1, oh->unreachable_bytes),
                unreachable_what(oh, 1));
    }
}

int
sh_obj_mode(const lh_shell_t *sh)
{
    return sh->oh && sh->oh->n_objs > 0 && !sh->native;
}

/* "SCALAR(PV)" / "MyApp::Session" and, when named, its name; else what holds it. */
static const char *
obj_desc(lh_shell_t *sh, uint32_t v, char *buf, size_t len);
static uint64_t
node_size(const lh_objheap_t *oh, uint32_t v);

/* The path of v from its nearest name or root, in the language's terms:
 *   %MyApp::SESSION_CACHE{"5f3a"} -> HASH -> {rendered} -> SCALAR(PV)
 * Returns 0, -1 when nothing reaches v, LH_ENOMEM. */
static void render_edges(lh_shell_t *sh, uint32_t start, const lh_objedge_t *const *path,
                         int n, uint32_t v, char *buf, size_t len);

static int
render_path(lh_shell_t *sh, uint32_t v, char *buf, size_t len)
{
    const lh_objedge_t *path[PATH_MAX_HOPS];
    uint32_t start;
    int n = lh_objheap_path(sh->oh, v, &start, path, PATH_MAX_HOPS);
    if (n < 0) {
        return n == -1 ? -1 : n;
    }
    render_edges(sh, start, path, n, v, buf, len);
    return 0;
}

/* The edges path[0..n) from start to v into buf, unfolded; seg (may be NULL): where each
 * edge's text starts, seg[n] where the text after the last one does. */
static void
render_raw(lh_shell_t *sh, uint32_t start, const lh_objedge_t *const *path, int n,
           uint32_t v, char *buf, size_t len, size_t *seg)
{
    const lh_objheap_t *oh = sh->oh;
    char lab[300];
    size_t k = 0;
    uint32_t nn = oh->n_objs + oh->n_ext;
#define PUT(...)                                                                             \
    do {                                                                                     \
        if (k < len) {                                                                       \
            int w_ = snprintf(buf + k, len - k, __VA_ARGS__);                                \
            k += w_ > 0 ? (size_t)w_ : 0;                                                    \
        }                                                                                    \
    } while (0)
    uint32_t cur = start;
    if (start >= nn) {
        PUT("[%s] -> ", oh->strs[oh->roots[start - nn].name]);
        /* the hop root -> first object has no label: name the first object */
        cur = n > 0 && path[0] ? LH_NODE_NONE : v;
        if (n > 0) {
            /* find the root's target: the holder of path[0] */
            for (uint32_t u = 0; u < nn; u++) {
                if (path[0] >= oh->edges + oh->eoff[u] && path[0] < oh->edges + oh->eoff[u + 1]) {
                    cur = u;
                    break;
                }
            }
        }
        PUT("%s", cur < nn ? lh_objheap_type(oh, cur) : "?");
    } else {
        const lh_obj_t *o = start < oh->n_objs ? &oh->objs[start] : NULL;
        if (o && o->name) {
            PUT("%s", oh->strs[o->name]);
        } else {
            PUT("%s", lh_objheap_type(oh, start));
        }
    }
    int attach = start < oh->n_objs && oh->objs[start].name &&
                 strchr("$@%&*", oh->strs[oh->objs[start].name][0]) != NULL;
    int last_ref = 0;
    for (int i = 0; i < n; i++) {
        const lh_objedge_t *e = path[i];
        if (seg) {
            seg[i] = k < len ? k : len - 1;
        }
        if (!e) {
            PUT(" -> ..."); /* hops left out of a path longer than PATH_MAX_HOPS */
            continue;
        }
        if (e->kind == LH_OBJEDGE_REF || e->kind == LH_OBJEDGE_XS) {
            PUT(" -> %s%s", e->kind == LH_OBJEDGE_XS ? "XS struct -> " : "",
                lh_objheap_type(oh, e->dst));
            last_ref = 1;
        } else if (e->kind == LH_OBJEDGE_NATIVE) {
            /* A malloc block hanging under the object (an XS module's struct). */
            char sz[32];
            PUT(" -> native block (%s, allocated in %s)",
                sh_bytes(sz, sizeof sz, node_size(oh, e->dst)), lh_objheap_type(oh, e->dst));
            last_ref = 1;
        } else {
            lh_objheap_edge_label(oh, e, lab, sizeof lab);
            int direct = i == 0 && attach &&
                         (e->kind == LH_OBJEDGE_KEY || e->kind == LH_OBJEDGE_ELEM);
            PUT("%s%s", direct ? "" : " -> ", lab);
            last_ref = 0;
            /* an object that says what it is (a Python function and its line) is shown
             * where the path passes it */
            if (i + 1 < n && e->dst < oh->n_objs && oh->objs[e->dst].detail) {
                PUT(" -> %s", oh->strs[oh->objs[e->dst].detail]);
            }
        }
    }
    if (seg) {
        seg[n > 0 ? n : 0] = k < len ? k : len - 1;
    }
    if (n > 0 && !last_ref) {
        PUT(" -> %s", v < oh->n_objs && oh->objs[v].detail ? oh->strs[oh->objs[v].detail]
                                                             : lh_objheap_type(oh, v));
    }
#undef PUT
    if (k >= len && len > 4) {
        memcpy(buf + len - 4, "...", 4);
    }
}

/* The longest run of edges that repeat folding looks for: a closure that captures the one
 * before it is two edges (CODE -> closure $prev), a linked list's node one or two. */
#define FOLD_MAX_PERIOD 4
/* Repeats shown as they are: fewer than this many are read at a glance. */
#define FOLD_MIN_REPEATS 3

/* Edges i..i+p and j..j+p of raw (pieces between seg[]) say the same. */
static int
same_pieces(const char *raw, const size_t *seg, int i, int j, int p)
{
    size_t a = seg[i + p] - seg[i], b = seg[j + p] - seg[j];
    return a == b && memcmp(raw + seg[i], raw + seg[j], a) == 0;
}

/* raw with every run of FOLD_MIN_REPEATS or more of the same edges written once, as
 * "(CODE -> closure $prev) x 299": a path through a chain (a __WARN__ handler that wraps
 * the one before, each request's) says how long the chain is and what is at its end,
 * instead of 600 hops. Only edges that begin with " -> " fold (not a variable's first
 * subscript). */
static void
fold_repeats(const char *raw, const size_t *seg, int n, char *buf, size_t len)
{
    size_t k = 0;
#define PUTN(s_, n_)                                                                         \
    do {                                                                                     \
        size_t m_ = (n_) < len - k ? (n_) : len - k;                                         \
        memcpy(buf + k, (s_), m_);                                                           \
        k += m_;                                                                             \
    } while (0)
    static const char arrow[] = " -> ";
    const size_t na = sizeof arrow - 1;
    if (len == 0) {
        return;
    }
    len--; /* room for the NUL */
    PUTN(raw, seg[0]);
    for (int i = 0; i < n;) {
        int best_p = 0, best_r = 0;
        for (int p = 1; p <= FOLD_MAX_PERIOD && i + FOLD_MIN_REPEATS * p <= n; p++) {
            int ok = 1;
            for (int j = i; j < i + p && ok; j++) {
                ok = seg[j + 1] - seg[j] > na && memcmp(raw + seg[j], arrow, na) == 0;
            }
            int r = 1;
            while (ok && i + (r + 1) * p <= n && same_pieces(raw, seg, i, i + r * p, p)) {
                r++;
            }
            if (ok && r >= FOLD_MIN_REPEATS && r * p > best_r * best_p) {
                best_p = p;
                best_r = r;
            }
        }
        if (!best_r) {
            PUTN(raw + seg[i], seg[i + 1] - seg[i]);
            i++;
            continue;
        }
        PUTN(" -> (", 5);
        PUTN(raw + seg[i] + na, seg[i + best_p] - seg[i] - na);
        char times[32];
        int w = snprintf(times, sizeof times, ") x %d", best_r);
        PUTN(times, (size_t)w);
        i += best_p * best_r;
    }
    PUTN(raw + seg[n], strlen(raw + seg[n]));
#undef PUTN
    buf[k] = '\0';
    if (k >= len && len > 3) {
        memcpy(buf + len - 3, "...", 3);
    }
}

/* The edges path[0..n) from start (a name, a root or any object) to v, as render_path
 * writes them: repeated runs folded (fold_repeats). */
static void
render_edges(lh_shell_t *sh, uint32_t start, const lh_objedge_t *const *path, int n,
             uint32_t v, char *buf, size_t len)
{
    /* an edge's text is at most a label (300) and an object's detail */
    size_t cap = (size_t)(n > 0 ? n : 0) * 1024 + len + 1024;
    char *raw = malloc(cap);
    size_t *seg = malloc((size_t)(n > 0 ? n + 1 : 1) * sizeof *seg);
    if (!raw || !seg) {
        LH_FREE_ALL(raw, seg);
        render_raw(sh, start, path, n, v, buf, len, NULL); /* unfolded: no memory to fold */
        return;
    }
    render_raw(sh, start, path, n, v, raw, cap, seg);
    fold_repeats(raw, seg, n, buf, len);
    LH_FREE_ALL(raw, seg);
}

static const char *
obj_desc(lh_shell_t *sh, uint32_t v, char *buf, size_t len)
{
    const lh_objheap_t *oh = sh->oh;
    if (v < oh->n_objs && oh->objs[v].name) {
        snprintf(buf, len, "%s", oh->strs[oh->objs[v].name]);
        return buf;
    }
    int rc = render_path(sh, v, buf, len);
    if (rc == -1) {
        snprintf(buf, len, "(unreachable)");
    } else if (rc < 0) {
        snprintf(buf, len, "?");
    }
    return buf;
}

static uint64_t
node_size(const lh_objheap_t *oh, uint32_t v)
{
    return v < oh->n_objs + oh->n_ext ? oh->node_size[v] : 0;
}

/* ---------------------------------------------------------------------------------------
 * count --by type|site
 * ------------------------------------------------------------------------------------- */

static uint64_t
key_hash(const char *key, uint32_t stack_id)
{
    uint64_t h = 0xcbf29ce484222325ull ^ stack_id;
    for (const char *p = key; *p; p++) {
        h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
    }
    return h ? h : 1;
}

sh_group_t *
sh_group_get(sh_grouping_t *gr, const char *key, uint32_t stack_id)
{
    lh_keyindex_t *ix = &gr->ix;
    if (lh_keyindex_reserve(ix, gr->n) < 0) {
        return NULL;
    }
    uint64_t h = key_hash(key, stack_id);
    size_t j = lh_keyindex_start(ix, h);
    for (; ix->hash[j]; j = (j + 1) & ix->mask) {
        sh_group_t *g = &gr->v[ix->pos[j]];
        if (ix->hash[j] == h && g->stack_id == stack_id && strcmp(g->key, key) == 0) {
            return g;
        }
    }
    if (lh_grow(&gr->v, &gr->cap, gr->n, sizeof *gr->v, 64) < 0) {
        return NULL;
    }
    ix->hash[j] = h;
    ix->pos[j] = (uint32_t)gr->n;
    sh_group_t *g = &gr->v[gr->n++];
    *g = (sh_group_t){key, stack_id, 0, 0, 0, 0, LH_NODE_NONE};
    return g;
}

void
sh_grouping_fini(sh_grouping_t *gr)
{
    free(gr->v);
    lh_keyindex_fini(&gr->ix);
}

static int
cmp_ogroup(const void *a, const void *b)
{
    const sh_group_t *x = a, *y = b;
    int c = SH_DESC(x->n, y->n);
    c = c ? c : SH_DESC(x->bytes, y->bytes);
    return c ? c : sh_cmp_key_stack(x->key, x->stack_id, y->key, y->stack_id);
}

/* The printed site of a group of objects (count --by site, unreachable). */
static const char *
obj_site_str(lh_shell_t *sh, uint32_t stack_id, char *buf, size_t len)
{
    return stack_id ? lh_heapgraph_site_str(sh->hg, stack_id, buf, len)
                    : "(no block of its own: static data, or an arena's)";
}

/* Makes one group of the groups whose key and printed site are the same: a Perl line
 * reached through several native paths (hash value, key, arena) is many stack ids with one
 * label, and one row, as the default report merges them (sitecanon.h). Keeps the first
 * group's stack id; an unreachable group's example stays a definitely lost object when
 * one is. remap[i] gets the index group i ended in. Returns 0 or LH_ENOMEM (gr untouched). */
static int
merge_same_site(lh_shell_t *sh, sh_grouping_t *gr, int unreachable, uint32_t *remap)
{
    const lh_objheap_t *oh = sh->oh;
    sh_grouping_t by = {0};
    size_t n = gr->n, m = 0;
    char **labels = calloc(n + 1, sizeof *labels);
    char site[512];
    int rc = labels ? 0 : LH_ENOMEM;
    for (size_t i = 0; i < n && rc == 0; i++) {
        /* the printed site names a file by its base name: the whole path keeps two
         * files of one name (List/Util.pm, Scalar/Util.pm) apart */
        const char *l = obj_site_str(sh, gr->v[i].stack_id, site, sizeof site);
        const lh_site_t *s = gr->v[i].stack_id ? lh_heapgraph_site(sh->hg, gr->v[i].stack_id)
                                               : NULL;
        const lh_frame_t *f = s && s->location >= 0 ? &s->frames[s->location] : NULL;
        const char *path = !f ? "" : f->file ? f->file : f->module ? f->module : "";
        size_t nk = strlen(gr->v[i].key), nl = strlen(l), np = strlen(path);
        labels[i] = malloc(nk + nl + np + 3);
        if (!labels[i]) {
            rc = LH_ENOMEM;
            break;
        }
        memcpy(labels[i], gr->v[i].key, nk);
        labels[i][nk] = '\n';
        memcpy(labels[i] + nk + 1, l, nl);
        labels[i][nk + 1 + nl] = '\n';
        memcpy(labels[i] + nk + nl + 2, path, np + 1);
        if (!sh_group_get(&by, labels[i], 0)) {
            rc = LH_ENOMEM;
        }
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        sh_group_t *b = sh_group_get(&by, labels[i], 0); /* found: added above */
        remap[i] = b->example == LH_NODE_NONE ? (uint32_t)m : b->example;
        if (b->example == LH_NODE_NONE) {
            b->example = (uint32_t)m;
            gr->v[m++] = gr->v[i];
            continue;
        }
        sh_group_t *to = &gr->v[b->example], *from = &gr->v[i];
        to->n += from->n;
        to->bytes += from->bytes;
        to->n2 += from->n2;
        to->bytes2 += from->bytes2;
        if (unreachable && oh->g.cls[to->example] != LH_CLASS_DEFINITE &&
            oh->g.cls[from->example] == LH_CLASS_DEFINITE) {
            to->example = from->example;
        }
    }
    if (rc == 0) {
        gr->n = m;
    }
    for (size_t i = 0; labels && i < n; i++) {
        free(labels[i]);
    }
    free(labels);
    sh_grouping_fini(&by);
    return rc;
}

#define SH_KEEPER_DEPTH 256

/* The nodes above v on its dominator chain, nearest first, below the super root and
 * SH_KEEPER_DEPTH at most, into chain; returns how many. */
static size_t
keeper_chain(const lh_refgraph_t *g, uint32_t v, uint32_t chain[SH_KEEPER_DEPTH])
{
    size_t d = 0;
    for (uint32_t u = g->idom[v]; d < SH_KEEPER_DEPTH && u < g->n_nodes && u != g->super;
         u = g->idom[u]) {
        chain[d++] = u;
    }
    return d;
}

/* The deepest node of the dominator tree that dominates more than half of the members
 * (mem[0..n)), or LH_NODE_NONE: the objects' common keeper, the variable or container that
 * holds most of them. cnt: zeroes (n_nodes), zeroes again on return. Nodes that dominate
 * more than half of the members share one, so they form a chain: the deepest has the
 * smallest count. A chain is followed SH_KEEPER_DEPTH hops at most (a long linked list). */
static uint32_t
majority_keeper(const lh_refgraph_t *g, const uint32_t *mem, size_t n, uint32_t *cnt)
{
    uint32_t best = LH_NODE_NONE, chain[SH_KEEPER_DEPTH];
    for (int pass = 0; pass < 3; pass++) {
        for (size_t i = 0; i < n; i++) {
            size_t len = keeper_chain(g, mem[i], chain);
            for (size_t d = 0; d < len; d++) {
                uint32_t u = chain[d];
                if (pass == 0) {
                    cnt[u]++;
                } else if (pass == 1) {
                    if ((uint64_t)cnt[u] * 2 > n) {
                        if (best == LH_NODE_NONE || cnt[u] < cnt[best]) {
                            best = u;
                        }
                        break; /* the rest of this chain is above it */
                    }
                } else {
                    cnt[u] = 0;
                }
            }
        }
    }
    return best;
}

/* Whether keeper k is on v's dominator chain (keeper_chain). */
static int
kept_by(const lh_refgraph_t *g, uint32_t v, uint32_t k)
{
    uint32_t chain[SH_KEEPER_DEPTH];
    size_t len = keeper_chain(g, v, chain);
    for (size_t d = 0; d < len; d++) {
        if (chain[d] == k) {
            return 1;
        }
    }
    return 0;
}

/* The object @N of a count row names: one held where most of the group is. The first one
 * by address was the example, and `identify` on it answered for the odd one out (a route
 * handler's `my $body`, the last of 1003 strings, while 1001 hung under the package cache
 * that leaked them). gi[v]: the group of object v (UINT32_MAX: none). Keeps the examples
 * when memory runs short (they are still members). */
static void
pick_examples(const lh_objheap_t *oh, sh_grouping_t *gr, const uint32_t *gi)
{
    const lh_refgraph_t *g = &oh->g;
    if (!g->idom) {
        return;
    }
    size_t *start = calloc(gr->n + 1, sizeof *start);
    uint32_t *mem = malloc(((size_t)oh->n_objs + 1) * sizeof *mem);
    uint32_t *cnt = calloc((size_t)g->n_nodes + 1, sizeof *cnt);
    if (!start || !mem || !cnt) {
        goto out;
    }
    for (uint32_t v = 0; v < oh->n_objs; v++) {
        if (gi[v] != UINT32_MAX) {
            start[gi[v] + 1]++;
        }
    }
    for (size_t i = 0; i < gr->n; i++) {
        start[i + 1] += start[i];
    }
    for (uint32_t v = 0; v < oh->n_objs; v++) { /* start[i]: filled to, while filling */
        if (gi[v] != UINT32_MAX) {
            mem[start[gi[v]]++] = v;
        }
    }
    for (size_t i = gr->n; i > 0; i--) { /* back to where each group begins */
        start[i] = start[i - 1];
    }
    start[0] = 0;
    for (size_t i = 0; i < gr->n; i++) {
        const uint32_t *m = mem + start[i];
        size_t n = start[i + 1] - start[i];
        uint32_t k = n > 2 ? majority_keeper(g, m, n, cnt) : LH_NODE_NONE;
        for (size_t j = 0; k != LH_NODE_NONE && j < n; j++) {
            if (kept_by(g, m[j], k)) {
                gr->v[i].example = m[j];
                break;
            }
        }
    }
out:
    free(start);
    free(mem);
    free(cnt);
}

/* Groups objects (filter: unreachable only) by type, site or both. */
static int
group_objects(lh_shell_t *sh, int by_type, int by_site, int unreachable, sh_grouping_t *gr)
{
    const lh_objheap_t *oh = sh->oh;
    /* count: each object's group, for pick_examples (without it: the first ones) */
    uint32_t *gi = unreachable ? NULL : malloc(((size_t)oh->n_objs + 1) * sizeof *gi);
    uint64_t *under; /* bytes: the objects' own and the native memory only they hold */
    if (lh_objheap_native_under(oh, &under, NULL) < 0) {
        free(gi);
        return LH_ENOMEM;
    }
    for (uint32_t v = 0; v < oh->n_objs; v++) {
        if ((unreachable && oh->g.cls[v] == LH_CLASS_REACHABLE) ||
            (by_type == 2 && !oh->objs[v].cls)) {
            if (gi) {
                gi[v] = UINT32_MAX; /* in no group */
            }
            continue; /* by_type 2: the objects of a class only */
        }
        const char *key = by_type ? lh_objheap_type(oh, v) : "";
        uint32_t sid = by_site ? oh->objs[v].stack_id : 0;
        sh_group_t *g = sh_group_get(gr, key, sid);
        if (!g) {
            free(gi);
            free(under);
            return LH_ENOMEM;
        }
        if (gi) {
            gi[v] = (uint32_t)(g - gr->v);
        }
        g->n++;
        g->bytes += oh->objs[v].size_bytes + under[v];
        if (g->example == LH_NODE_NONE || (unreachable && oh->g.cls[v] == LH_CLASS_DEFINITE &&
                                            oh->g.cls[g->example] != LH_CLASS_DEFINITE)) {
            g->example = v;
        }
    }
    free(under);
    uint32_t *remap = by_site ? malloc((gr->n + 1) * sizeof *remap) : NULL;
    if (by_site && (!remap || merge_same_site(sh, gr, unreachable, remap) < 0)) {
        free(remap);
        free(gi);
        return LH_ENOMEM;
    }
    if (gi) {
        for (uint32_t v = 0; remap && v < oh->n_objs; v++) {
            gi[v] = gi[v] == UINT32_MAX ? gi[v] : remap[gi[v]];
        }
        pick_examples(oh, gr, gi);
    }
    free(remap);
    free(gi);
    lh_qsort(gr->v, gr->n, sizeof *gr->v, cmp_ogroup);
    return 0;
}

int
sh_obj_count(lh_shell_t *sh, int by_site, int by_class, lh_err_t *err)
{
    const lh_objheap_t *oh = sh->oh;
    sh_grouping_t gr = {0};
    char b1[32], site[512];
    if (group_objects(sh, by_class ? 2 : !by_site, by_site, 0, &gr) < 0) {
        sh_grouping_fini(&gr);
        return lh_err_set(err, LH_ENOMEM, "count: out of memory");
    }
    fprintf(sh->out, "   @  %10s %10s  %s\n", "count", "bytes",
            by_site ? "site" : by_class ? "class" : "type");
    sh_rows_reset(sh);
    sh->rows_obj = 1;
    uint64_t total = 0;
    for (size_t i = 0; i < gr.n; i++) {
        sh_row_add(sh, gr.v[i].example);
        total += gr.v[i].bytes;
        /* an object with no block of its own has no allocation: a builtin type or
         * singleton in the interpreter's data, an SV head in an arena (not "no stack",
         * which says a block's stack was not recorded) */
        fprintf(sh->out, "%4zu  %10" PRIu64 " %10s  %s\n", i + 1, gr.v[i].n,
                sh_bytes(b1, sizeof b1, gr.v[i].bytes),
                by_site ? obj_site_str(sh, gr.v[i].stack_id, site, sizeof site)
                        : gr.v[i].key);
    }
    if (by_class) {
        uint64_t n = 0;
        for (size_t i = 0; i < gr.n; i++) {
            n += gr.v[i].n;
        }
        fprintf(sh->out, "total %" PRIu64 " %s of %u %s objects, %s in %zu class%s\n", n,
                oh->lang == LH_OBJLANG_PERL ? "blessed" : "class instances", oh->n_objs,
                lang_name(oh), sh_bytes(b1, sizeof b1, total), gr.n, gr.n == 1 ? "" : "es");
    } else {
        fprintf(sh->out, "total %u %s objects, %s in %zu group%s\n", oh->n_objs,
                lang_name(oh), sh_bytes(b1, sizeof b1, total), gr.n, gr.n == 1 ? "" : "s");
    }
    sh_grouping_fini(&gr);
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * largest, roots
 * ------------------------------------------------------------------------------------- */

/* key[id], for sh_top_n */
static uint64_t
key_at(const void *key, uint32_t id)
{
    return ((const uint64_t *)key)[id];
}

#define LARGEST_WHAT_MAX 160

int
sh_obj_largest(lh_shell_t *sh, unsigned long n, int retained, lh_err_t *err)
{
    const lh_objheap_t *oh = sh->oh;
    uint32_t *cand = malloc(((size_t)oh->n_objs + 1) * sizeof *cand);
    char b1[32], b2[32], desc[1024], site[512];
    if (!cand) {
        return lh_err_set(err, LH_ENOMEM, "largest: out of memory");
    }
    size_t k = sh_top_n(NULL, oh->n_objs, key_at, retained ? oh->g.retained : oh->node_size,
                        cand, n);
    /* "what" is as wide as the longest shown (a path to a root can be long: a fixed 40 ran
     * into "created at"), at most LARGEST_WHAT_MAX */
    int w = 40;
    for (size_t i = 0; i < k; i++) {
        size_t l = strlen(obj_desc(sh, cand[i], desc, sizeof desc));
        w = l > (size_t)w ? (l < LARGEST_WHAT_MAX ? (int)l : LARGEST_WHAT_MAX) : w;
    }
    fprintf(sh->out, "   @  %-16s %10s %10s  %-*s  %s\n", "type", "size", "retained", w, "what",
            "created at");
    sh_rows_reset(sh);
    sh->rows_obj = 1;
    for (size_t i = 0; i < k; i++) {
        uint32_t v = cand[i];
        sh_row_add(sh, v);
        fprintf(sh->out, "%4zu  %-16s %10s %10s  %-*s  %s\n", i + 1, lh_objheap_type(oh, v),
                sh_bytes(b1, sizeof b1, oh->objs[v].size_bytes),
                sh_bytes(b2, sizeof b2, oh->g.retained[v]), w,
                obj_desc(sh, v, desc, sizeof desc),
                oh->objs[v].stack_id ? lh_heapgraph_site_str(sh->hg, oh->objs[v].stack_id,
                                                             site, sizeof site)
                                     : "-");
    }
    free(cand);
    return 0;
}

/* A name roots lists: a package variable or a lexical (not a glob, stash or sub: they hold
 * code). */
static int
variable_name(const char *s)
{
    size_t l = strlen(s);
    return s[0] != '*' && s[0] != '&' && !(l > 2 && s[l - 1] == ':' && s[l - 2] == ':');
}

/* The holders of a shared object, for its roots row. */
#define SHARED_HOLDERS 3

typedef struct shared_holders {
    const lh_objheap_t *oh;
    uint32_t start[SHARED_HOLDERS + 1];
    size_t n;
    int variable; /* one of them is a variable */
} shared_holders_t;

static void
add_holder(void *arg, uint32_t start, const lh_objedge_t *const *path, int n)
{
    shared_holders_t *h = arg;
    (void)path;
    (void)n;
    const lh_objheap_t *oh = h->oh;
    if (start < oh->n_objs && oh->objs[start].name && variable_name(oh->strs[oh->objs[start].name])) {
        h->variable = 1;
    }
    if (h->n < SHARED_HOLDERS + 1) {
        h->start[h->n++] = start;
    }
}

/* The named python module whose namespace v is (module -> .__dict__ -> v), or NONE. */
static uint32_t
module_of_dict(const lh_objheap_t *oh, uint32_t v)
{
    const lh_refgraph_t *g = &oh->g;
    if (oh->lang != LH_OBJLANG_PYTHON) {
        return LH_NODE_NONE;
    }
    for (uint64_t j = g->roff[v]; j < g->roff[v + 1]; j++) {
        uint32_t m = LH_EDGE_NODE(g->rsrc[j]);
        if (m >= oh->n_objs || !oh->objs[m].name ||
            strcmp(lh_objheap_type(oh, m), "module") != 0) {
            continue;
        }
        for (uint64_t e = oh->eoff[m]; e < oh->eoff[m + 1]; e++) {
            const lh_objedge_t *x = &oh->edges[e];
            if (x->dst == v && x->kind == LH_OBJEDGE_ATTR &&
                strcmp(oh->strs[x->label], "__dict__") == 0) {
                return m;
            }
        }
    }
    return LH_NODE_NONE;
}

/* "IO::Async::Loop::Poll held by my $loop in main and $IO::Async::Loop::ONE_TRUE_LOOP" */
static const char *
shared_desc(lh_shell_t *sh, uint32_t v, const shared_holders_t *h, char *buf, size_t len)
{
    const lh_objheap_t *oh = sh->oh;
    size_t k = 0, shown = h->n > SHARED_HOLDERS ? SHARED_HOLDERS - 1 : h->n;
    uint32_t nn = oh->n_objs + oh->n_ext;
    uint32_t mod = module_of_dict(oh, v);
    if (mod != LH_NODE_NONE) {
        /* a module's namespace, which its functions hold too (.__globals__): what a Python
         * developer calls vars(app), not "dict held by app, app.handle and more" */
        snprintf(buf, len, "%s.__dict__ (%s: the module's globals)",
                 oh->strs[oh->objs[mod].name], lh_objheap_type(oh, v));
        return buf;
    }
    k += (size_t)snprintf(buf, len, "%s held by", lh_objheap_type(oh, v));
    for (size_t i = 0; i < shown && k < len; i++) {
        uint32_t s = h->start[i];
        const char *sep = i == 0 ? " " : i + 1 == shown && h->n <= SHARED_HOLDERS ? " and " : ", ";
        if (s < oh->n_objs && oh->objs[s].name) {
            k += (size_t)snprintf(buf + k, len - k, "%s%s", sep, oh->strs[oh->objs[s].name]);
        } else if (s >= nn && s - nn < oh->n_roots) {
            k += (size_t)snprintf(buf + k, len - k, "%s[%s]", sep,
                                  oh->strs[oh->roots[s - nn].name]);
        } else {
            k += (size_t)snprintf(buf + k, len - k, "%s%s", sep, lh_objheap_type(oh, s));
        }
    }
    if (h->n > SHARED_HOLDERS && k < len) {
        snprintf(buf + k, len - k, " and more");
    }
    return buf;
}

/* The objects no one variable keeps alive, which roots would otherwise credit to no one: the
 * largest held by two variables or more (an event loop in `my $loop` and in its class's
 * singleton, $IO::Async::Loop::ONE_TRUE_LOOP), with no named object dominating them and
 * not inside one already found. Up to n, in shared[] (retained first), their holders in
 * hs[]. Returns how many, or LH_ENOMEM. */
static int
shared_objects(const lh_objheap_t *oh, size_t n, uint32_t *shared, shared_holders_t *hs)
{
    const lh_refgraph_t *g = &oh->g;
    /* named[v]: 1 when a named object dominates v, 2 when none does, 0 not known yet */
    uint8_t *named = calloc(g->n_nodes ? g->n_nodes : 1, 1);
    uint8_t *taken = calloc(g->n_nodes ? g->n_nodes : 1, 1);
    uint32_t *chain = malloc((size_t)(g->n_nodes ? g->n_nodes : 1) * sizeof *chain);
    uint32_t *cand = malloc((size_t)(oh->n_objs ? oh->n_objs : 1) * sizeof *cand);
    const lh_objedge_t *path[PATH_MAX_HOPS];
    if (!named || !taken || !chain || !cand) {
        LH_FREE_ALL(named, taken, chain, cand);
        return LH_ENOMEM;
    }
    size_t nc = 0;
    for (uint32_t v = 0; v < oh->n_objs; v++) {
        if (oh->objs[v].name || g->cls[v] != LH_CLASS_REACHABLE) {
            continue;
        }
        size_t c = 0;
        uint32_t d = g->idom[v];
        while (d != g->super && d < g->n_nodes && !named[d] &&
               !(d < oh->n_objs && oh->objs[d].name)) {
            chain[c++] = d;
            d = g->idom[d];
        }
        uint8_t r = d < oh->n_objs && oh->objs[d].name ? 1 : d < g->n_nodes && named[d] ? named[d] : 2;
        for (size_t i = 0; i < c; i++) {
            named[chain[i]] = r;
        }
        named[v] = r; /* v is unnamed: what dominates it is what its chain says */
        /* the top of what is shared: held from two places or more */
        if (r == 2 && g->roff[v + 1] - g->roff[v] >= 2) {
            cand[nc++] = v;
        }
    }
    size_t k = sh_top_n(cand, nc, key_at, g->retained, cand, nc < 4 * n + 16 ? nc : 4 * n + 16);
    size_t got = 0;
    for (size_t i = 0; i < k && got < n; i++) {
        uint32_t v = cand[i], d = g->idom[v];
        while (d != g->super && d < g->n_nodes && !taken[d] && g->idom[d] != d) {
            d = g->idom[d];
        }
        if (d < g->n_nodes && taken[d]) {
            continue; /* inside one already listed */
        }
        shared_holders_t h = {oh, {0}, 0, 0};
        int rc = lh_objheap_holders(oh, v, SHARED_HOLDERS + 1, path, PATH_MAX_HOPS, add_holder,
                                    &h);
        if (rc == LH_ENOMEM) {
            LH_FREE_ALL(named, taken, chain, cand);
            return LH_ENOMEM;
        }
        if (h.n >= 2 && h.variable) {
            taken[v] = 1;
            hs[got] = h;
            shared[got++] = v;
        }
    }
    LH_FREE_ALL(named, taken, chain, cand);
    return (int)got;
}

int
sh_obj_roots(lh_shell_t *sh, unsigned long n, lh_err_t *err)
{
    const lh_objheap_t *oh = sh->oh;
    size_t n_max = n < oh->n_objs ? n : oh->n_objs;
    uint32_t *cand = malloc((oh->n_names + n_max + 1) * sizeof *cand);
    uint32_t *shared = malloc((n_max + 1) * sizeof *shared);
    shared_holders_t *hs = malloc((n_max + 1) * sizeof *hs);
    char b1[32], b2[32], desc[1024];
    size_t nc = 0;
    int ns = cand && shared && hs ? shared_objects(oh, n_max, shared, hs) : LH_ENOMEM;
    if (ns < 0) {
        free(cand);
        free(shared);
        free(hs);
        return lh_err_set(err, LH_ENOMEM, "roots: out of memory");
    }
    for (size_t i = 0; i < oh->n_names; i++) {
        const lh_objname_t *nm = &oh->names[i];
        const char *s = oh->strs[nm->name];
        if ((i > 0 && oh->names[i - 1].node == nm->node) || oh->strs[oh->objs[nm->node].name] != s ||
            !variable_name(s)) {
            continue;
        }
        cand[nc++] = nm->node;
    }
    size_t n_named = nc;
    for (int i = 0; i < ns; i++) {
        cand[nc++] = shared[i];
    }
    size_t k = sh_top_n(cand, nc, key_at, oh->g.retained, cand, n);
    fprintf(sh->out, "   @  %10s %10s  %s\n", "retained", "size", "variable");
    sh_rows_reset(sh);
    sh->rows_obj = 1;
    for (size_t i = 0; i < k; i++) {
        uint32_t v = cand[i];
        int j = 0;
        while (j < ns && shared[j] != v) {
            j++;
        }
        sh_row_add(sh, v);
        if (j < ns) {
            shared_desc(sh, v, &hs[j], desc, sizeof desc);
        } else {
            snprintf(desc, sizeof desc, "%s (%s)", oh->strs[oh->objs[v].name],
                     lh_objheap_type(oh, v));
        }
        fprintf(sh->out, "%4zu  %10s %10s  %s\n", i + 1, sh_bytes(b1, sizeof b1, oh->g.retained[v]),
                sh_bytes(b2, sizeof b2, oh->objs[v].size_bytes), desc);
    }
    fprintf(sh->out, "%zu named variables; %u %s objects, %s reachable\n", n_named, oh->n_objs,
            lang_name(oh),
            sh_bytes(b1, sizeof b1, oh->g.retained[oh->g.super] - oh->unreachable_bytes));
    never_freed_line(oh, sh->out);
    LH_FREE_ALL(cand, shared, hs);
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * identify, show
 * ------------------------------------------------------------------------------------- */

/* The node an address names: an object's head, an owned buffer's object, an ext node. */
static int
node_arg(lh_shell_t *sh, const char *cmd, const char *arg, uint32_t *node,
                lh_err_t *err)
{
    const lh_objheap_t *oh = sh->oh;
    uint64_t addr;
    lh_err_t e2;
    int rc = lh_shell_parse_addr(arg, sh->rows, sh->n_rows, &addr, node, &e2);
    if (rc < 0) {
        return lh_err_set(err, rc, "%s: %s", cmd, e2.msg);
    }
    if (*node != LH_NODE_NONE) {
        if (!sh->rows_obj) {
            uint32_t b = *node;
            if (b >= sh->hg->n_blocks) {
                return lh_err_set(err, LH_EINVAL, "%s: row %s is not a block or an object",
                                  cmd, arg);
            }
            addr = sh->hg->blocks[b].addr;
        } else {
            return 0;
        }
    }
    if ((*node = lh_objheap_find(oh, addr)) != LH_NODE_NONE) {
        return 0;
    }
    uint32_t b = lh_heapgraph_block_at(sh->hg, addr);
    if (b != LH_NODE_NONE && oh->blk_owner[b] < oh->n_objs) {
        *node = oh->blk_owner[b];
        return 0;
    }
    for (uint32_t x = 0; b != LH_NODE_NONE && x < oh->n_ext; x++) {
        if (oh->ext[x] == b) {
            *node = oh->n_objs + x;
            return 0;
        }
    }
    return lh_err_set(err, LH_EINVAL, "%s: 0x%" PRIx64 " is not a %s object of snapshot %zu "
                      "(--native: the block view)", cmd, addr, lang_name(oh), sh->hg->cur + 1);
}

static void
obj_line(lh_shell_t *sh, uint32_t v, FILE *out)
{
    const lh_objheap_t *oh = sh->oh;
    char b1[32], b2[32], site[512], nm[512];
    fprintf(out, "%s, %s, retained %s", lh_objheap_node_name(oh, v, nm, sizeof nm),
            sh_bytes(b1, sizeof b1, node_size(oh, v)),
            sh_bytes(b2, sizeof b2, oh->g.retained[v]));
    if (v < oh->n_objs && oh->objs[v].stack_id) {
        fprintf(out, ", created at %s",
                lh_heapgraph_site_str(sh->hg, oh->objs[v].stack_id, site, sizeof site));
        /* made in the stdlib or a package (asyncio's create_task): the program's own line
         * that asked for it (report.h, lh_site_user_frame) */
        const lh_site_t *st = lh_heapgraph_site(sh->hg, oh->objs[v].stack_id);
        if (st->user_frame >= 0 && st->user_frame != st->location &&
            (size_t)st->user_frame < st->n_frames) {
            const lh_frame_t *f = &st->frames[st->user_frame];
            const char *base = strrchr(f->file, '/');
            fprintf(out, ", called from %s:%" PRIu32 " in %s", base ? base + 1 : f->file,
                    f->line, f->function ? f->function : "?");
        }
    }
    fputc('\n', out);
}

/* identify's holders: one line each (the first IDENTIFY_SHOWN unless --all). */
#define IDENTIFY_SHOWN 4

typedef struct holder_list {
    lh_shell_t *sh;
    uint32_t v;
    size_t n, max; /* printed so far, most to print */
} holder_list_t;

static void
print_holder(void *arg, uint32_t start, const lh_objedge_t *const *path, int n)
{
    holder_list_t *hl = arg;
    char buf[4096];
    if (hl->n >= hl->max) {
        return;
    }
    hl->n++;
    render_edges(hl->sh, start, path, n, hl->v, buf, sizeof buf);
    fprintf(hl->sh->out, "  %s\n", buf);
}

int
sh_obj_identify(lh_shell_t *sh, const char *arg, int all, lh_err_t *err)
{
    const lh_objheap_t *oh = sh->oh;
    uint32_t v;
    char buf[4096];
    if (node_arg(sh, "identify", arg, &v, err) < 0) {
        return LH_EINVAL;
    }
    obj_line(sh, v, sh->out);
    /* one path per variable that keeps it alive, shortest first: with two, undefining one
     * frees nothing (IDENTIFY_SHOWN of them; --all: every one) */
    const lh_objedge_t *path[PATH_MAX_HOPS];
    size_t limit = all ? (size_t)-1 : IDENTIFY_SHOWN + 1;
    holder_list_t hl = {sh, v, 0, all ? limit : IDENTIFY_SHOWN};
    int rc = lh_objheap_holders(oh, v, limit, path, PATH_MAX_HOPS, print_holder, &hl);
    if (rc == LH_ENOMEM) {
        return lh_err_set(err, LH_ENOMEM, "identify: out of memory");
    }
    if (rc > 0 && (size_t)rc > IDENTIFY_SHOWN && !all) {
        fprintf(sh->out, "  and more: identify %s --all\n", arg);
    }
    if (rc == -1) {
        fprintf(sh->out, "  unreachable: no root reaches it (%s); the cycle is held by:\n",
                unreachable_what(oh, 0));
        uint32_t d = v;
        while (d < oh->g.n_nodes && oh->g.idom[d] != oh->g.super && oh->g.idom[d] != d) {
            d = oh->g.idom[d];
        }
        fprintf(sh->out, "  ");
        obj_line(sh, d, sh->out);
        /* and the cycle itself, the reference a Perl developer has to weaken or break:
         * through v when v is on it, else through what holds v */
        const lh_objedge_t *cyc[PATH_MAX_HOPS];
        uint32_t c = v;
        int nc = lh_objheap_cycle(oh, v, cyc, PATH_MAX_HOPS);
        if (nc == -1 && d != v) {
            nc = lh_objheap_cycle(oh, c = d, cyc, PATH_MAX_HOPS);
        }
        if (nc == LH_ENOMEM) {
            return lh_err_set(err, LH_ENOMEM, "identify: out of memory");
        }
        if (nc > 0) {
            render_edges(sh, c, cyc, nc, c, buf, sizeof buf);
            fprintf(sh->out, "  the cycle: %s\n", buf);
        }
        return 0;
    }
    return 0;
}

int
sh_obj_show(lh_shell_t *sh, const char *arg, lh_err_t *err)
{
    const lh_objheap_t *oh = sh->oh;
    uint32_t v;
    char lab[300], nm[512];
    if (node_arg(sh, "show", arg, &v, err) < 0) {
        return LH_EINVAL;
    }
    obj_line(sh, v, sh->out);
    size_t first, nn = lh_objheap_names(oh, v, &first);
    for (size_t i = 0; i < nn; i++) {
        fprintf(sh->out, "  name: %s\n", oh->strs[oh->names[first + i].name]);
    }
    char val[1024];
    lh_err_t e2;
    /* a graph loaded from its index has no pages: read them for the value */
    if (v < oh->n_objs && lh_heapgraph_load_pages(sh->hg, &e2) == 0 &&
        lh_objheap_value(oh, v, val, sizeof val) > 0) {
        fprintf(sh->out, "  value: %s\n", val);
    }
    if (v < oh->n_objs) {
        for (uint64_t j = oh->own_off[v]; j < oh->own_off[v + 1]; j++) {
            const lh_hblock_t *b = &sh->hg->blocks[oh->own_blk[j]];
            char b1[32];
            fprintf(sh->out, "  owns block 0x%" PRIx64 " (%s)\n", b->addr,
                    sh_bytes(b1, sizeof b1, b->size));
        }
    }
    sh_rows_reset(sh);
    sh->rows_obj = 1;
    uint64_t ne = oh->eoff[v + 1] - oh->eoff[v];
    uint64_t shown = 0;
    for (uint64_t j = oh->eoff[v]; j < oh->eoff[v + 1] && shown < 50; j++, shown++) {
        const lh_objedge_t *e = &oh->edges[j];
        int row = sh_row_add(sh, e->dst);
        fprintf(sh->out, "%4d  %-24s %s\n", row, lh_objheap_edge_label(oh, e, lab, sizeof lab),
                lh_objheap_node_name(oh, e->dst, nm, sizeof nm));
    }
    if (ne > shown) {
        fprintf(sh->out, "  ... %" PRIu64 " more references\n", ne - shown);
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * unreachable, summary
 * ------------------------------------------------------------------------------------- */

int
sh_obj_unreachable(lh_shell_t *sh, lh_err_t *err)
{
    const lh_objheap_t *oh = sh->oh;
    sh_grouping_t gr = {0};
    char b1[32], site[512];
    if (group_objects(sh, 1, 1, 1, &gr) < 0) {
        sh_grouping_fini(&gr);
        return lh_err_set(err, LH_ENOMEM, "unreachable: out of memory");
    }
    fprintf(sh->out, "unreachable %s objects (%s): %" PRIu64 " objects, %s\n",
            lang_name(oh), unreachable_what(oh, 1), oh->n_unreachable,
            sh_bytes(b1, sizeof b1, oh->unreachable_bytes));
    /* A reference never released (a C extension's missing Py_DECREF, ctypes' Py_IncRef)
     * leaves an object no object refers to, which the decoder never reaches: the native
     * graph has it, as a block nothing points to. */
    const lh_heapgraph_t *hg = sh->hg;
    if (hg->has_graph && hg->class_blocks[LH_CLASS_DEFINITE]) {
        fprintf(sh->out, "native blocks nothing points to (definitely lost): %s in %" PRIu64
                " blocks, not objects of the %s heap (C code that never freed them%s): "
                "`native on; unreachable` lists them by site\n",
                sh_bytes(b1, sizeof b1, hg->class_bytes[LH_CLASS_DEFINITE]),
                hg->class_blocks[LH_CLASS_DEFINITE], lang_name(oh),
                oh->lang == LH_OBJLANG_PYTHON ? ", or an object whose reference was never "
                                                "released: a missing Py_DECREF"
                                              : "");
    }
    if (gr.n) {
        fprintf(sh->out, "   @  %10s %10s  %-24s %s\n", "count", "bytes", "type", "created at");
    }
    sh_rows_reset(sh);
    sh->rows_obj = 1;
    for (size_t i = 0; i < gr.n; i++) {
        sh_row_add(sh, gr.v[i].example);
        fprintf(sh->out, "%4zu  %10" PRIu64 " %10s  %-24s %s\n", i + 1, gr.v[i].n,
                sh_bytes(b1, sizeof b1, gr.v[i].bytes), gr.v[i].key,
                gr.v[i].stack_id ? lh_heapgraph_site_str(sh->hg, gr.v[i].stack_id, site,
                                                         sizeof site)
                                 : "-");
    }
    sh_grouping_fini(&gr);
    return 0;
}

void
sh_obj_summary(lh_shell_t *sh, FILE *out)
{
    const lh_objheap_t *oh = sh->oh;
    char b1[32], b2[32], b3[32];
    if (!oh || oh->lang == LH_OBJLANG_NONE) {
        return;
    }
    if (oh->note[0]) {
        char advice[128];
        fprintf(out, "%s heap: %s", lang_name(oh), oh->note);
        if (oh->needs_full) {
            fprintf(out, ": %s to see the %s heap", sh_contents_advice(sh, "full", advice,
                    sizeof advice), oh->lang == LH_OBJLANG_PYTHON ? "Python" : "Perl");
        }
        fputc('\n', out);
        return;
    }
    uint64_t bytes = 0, ext_bytes = 0, *under = NULL;
    for (uint32_t v = 0; v < oh->n_objs; v++) {
        bytes += oh->objs[v].size_bytes;
    }
    if (lh_objheap_native_under(oh, &under, &ext_bytes) == 0) {
        free(under);
    }
    fprintf(out, "%s %s heap: %u objects, %s; %u native blocks (%s) hang under them; "
            "unreachable: %" PRIu64 " objects, %s%s\n", lang_name(oh), oh->version, oh->n_objs,
            sh_bytes(b1, sizeof b1, bytes), oh->n_ext, sh_bytes(b3, sizeof b3, ext_bytes),
            oh->n_unreachable,
            sh_bytes(b2, sizeof b2, oh->unreachable_bytes),
            sh->native ? " (native view: `native off` for the objects)" : "");
    never_freed_line(oh, out);
}

/* ---------------------------------------------------------------------------------------
 * diff: objects by type between two snapshots
 * ------------------------------------------------------------------------------------- */

typedef struct tcount {
    char *key;
    uint64_t n, bytes;
} tcount_t;

static int
cmp_tcount(const void *a, const void *b)
{
    return strcmp(((const tcount_t *)a)->key, ((const tcount_t *)b)->key);
}

/* Object counts by type of snapshot index idx: sorted by key. addrs (may be NULL): gets
 * the snapshot's object addresses, ascending (n_out's count of them in *n_addrs). */
static int
type_counts(lh_shell_t *sh, long idx, tcount_t **out, size_t *n_out, uint64_t **addrs,
            size_t *n_addrs, lh_err_t *err)
{
    lh_snapshot_t other = {0};
    const lh_objheap_t *oh = sh->oh;
    sh_grouping_t gr = {0};
    uint64_t *under = NULL;
    int rc;
    *out = NULL;
    *n_out = 0;
    if (idx != (long)sh->hg->cur) {
        /* from its index when there is one (and written when there was none) */
        if ((rc = sh_open_snapshot(sh, NULL, idx, &other, err)) < 0) {
            return rc;
        }
        if (!(oh = other.oh)) {
            rc = lh_err_set(err, LH_EINVAL, "diff: snapshot %ld has no %s objects%s%s",
                            idx + 1, lang_name(sh->oh), other.note ? ": " : "",
                            other.note ? other.note : "");
            sh_snapshot_fini(&other);
            return rc;
        }
    }
    rc = LH_ENOMEM;
    if (oh->n_objs == 0) {
        rc = lh_err_set(err, LH_EINVAL, "diff: snapshot %ld has no %s objects%s%s", idx + 1,
                        lang_name(sh->oh), oh->note[0] ? ": " : "", oh->note);
        goto done;
    }
    if (lh_objheap_native_under(oh, &under, NULL) < 0) {
        goto done;
    }
    for (uint32_t v = 0; v < oh->n_objs; v++) {
        sh_group_t *g = sh_group_get(&gr, lh_objheap_type(oh, v), 0);
        if (!g) {
            goto done;
        }
        g->n++;
        g->bytes += oh->objs[v].size_bytes + under[v];
    }
    if (addrs) {
        if (!(*addrs = malloc((size_t)oh->n_objs * sizeof **addrs))) {
            goto done;
        }
        for (uint32_t v = 0; v < oh->n_objs; v++) { /* objs are sorted by address */
            (*addrs)[v] = oh->objs[v].addr;
        }
        *n_addrs = oh->n_objs;
    }
    if (!(*out = calloc(gr.n ? gr.n : 1, sizeof **out))) {
        goto done;
    }
    for (size_t i = 0; i < gr.n; i++) {
        if (!((*out)[i].key = strdup(gr.v[i].key))) {
            *n_out = i;
            goto done;
        }
        (*out)[i].n = gr.v[i].n;
        (*out)[i].bytes = gr.v[i].bytes;
    }
    *n_out = gr.n;
    lh_qsort(*out, *n_out, sizeof **out, cmp_tcount);
    rc = 0;
done:
    if (rc == LH_ENOMEM) {
        lh_err_set(err, LH_ENOMEM, "diff: out of memory");
    }
    free(under);
    sh_grouping_fini(&gr);
    sh_snapshot_fini(&other);
    return rc;
}

static int
in_sorted(const uint64_t *v, size_t n, uint64_t x)
{
    size_t i = lh_bound_u64(v, n, sizeof *v, 0, x, 0);
    return i < n && v[i] == x;
}

/* The objects of the shell's snapshot at no address of an object in the earlier one
 * (old: its addresses, ascending), grouped by type; each group's example one held where
 * most of them are (pick_examples). An address freed and reused in between counts as old:
 * the example is always a new object. Returns 0 or LH_ENOMEM. */
static int
new_by_type(const lh_objheap_t *oh, const uint64_t *old, size_t n_old, sh_grouping_t *gr)
{
    uint32_t *gi = malloc(((size_t)oh->n_objs + 1) * sizeof *gi);
    if (!gi) {
        return LH_ENOMEM;
    }
    for (uint32_t v = 0; v < oh->n_objs; v++) {
        gi[v] = UINT32_MAX;
        if (in_sorted(old, n_old, oh->objs[v].addr)) {
            continue;
        }
        sh_group_t *g = sh_group_get(gr, lh_objheap_type(oh, v), 0);
        if (!g) {
            free(gi);
            return LH_ENOMEM;
        }
        gi[v] = (uint32_t)(g - gr->v);
        if (g->example == LH_NODE_NONE) {
            g->example = v;
        }
    }
    pick_examples(oh, gr, gi);
    free(gi);
    return 0;
}

static int
cmp_tgrowth(const void *a, const void *b)
{
    const sh_growth_t *x = a, *y = b;
    int c = SH_DESC(x->dcount, y->dcount);
    c = c ? c : SH_DESC(x->dbytes, y->dbytes);
    return c ? c : strcmp(x->key, y->key);
}

int
sh_obj_diff(lh_shell_t *sh, long ia, long ib, lh_err_t *err)
{
    tcount_t *a = NULL, *b = NULL;
    size_t na = 0, nb = 0, ng = 0, n_old = 0;
    sh_growth_t *g = NULL;
    uint64_t *old = NULL;
    sh_grouping_t fresh = {0};
    /* rows name objects of the shell's snapshot: when it is the later one, a new object
     * of each type that grew (`identify @N`: what holds the growth) */
    int rows = ib == (long)sh->hg->cur && ia != ib;
    int rc;
    if ((rc = type_counts(sh, ia, &a, &na, rows ? &old : NULL, &n_old, err)) < 0 ||
        (rc = type_counts(sh, ib, &b, &nb, NULL, NULL, err)) < 0) {
        goto done;
    }
    if (rows && new_by_type(sh->oh, old, n_old, &fresh) < 0) {
        rc = lh_err_set(err, LH_ENOMEM, "diff: out of memory");
        goto done;
    }
    if (!(g = calloc(na + nb + 1, sizeof *g))) {
        rc = lh_err_set(err, LH_ENOMEM, "diff: out of memory");
        goto done;
    }
    for (size_t i = 0, j = 0; i < na || j < nb;) {
        int c = i == na ? 1 : j == nb ? -1 : strcmp(a[i].key, b[j].key);
        uint64_t ca = c <= 0 ? a[i].n : 0, cb = c >= 0 ? b[j].n : 0;
        uint64_t ya = c <= 0 ? a[i].bytes : 0, yb = c >= 0 ? b[j].bytes : 0;
        g[ng++] = (sh_growth_t){c <= 0 ? a[i].key : b[j].key, (int64_t)cb - (int64_t)ca,
                                (int64_t)yb - (int64_t)ya, ca, cb, 0};
        i += c <= 0;
        j += c >= 0;
    }
    lh_qsort(g, ng, sizeof *g, cmp_tgrowth);
    fprintf(sh->out, "from snapshot %ld '%s' to %ld '%s', %s objects by type:\n", ia + 1,
            sh->hg->snaps[ia].label, ib + 1, sh->hg->snaps[ib].label, lang_name(sh->oh));
    fprintf(sh->out, "%s %10s %10s  %17s  %s\n", rows ? "   @" : "   ", "+count", "+bytes",
            "count", "type");
    size_t shown = 0;
    sh_rows_reset(sh);
    sh->rows_obj = 1;
    for (size_t i = 0; i < ng; i++) {
        if (g[i].dcount <= 0 && g[i].dbytes <= 0) {
            continue;
        }
        if (rows) {
            const sh_group_t *f = fresh.n ? sh_group_get(&fresh, g[i].key, 0) : NULL;
            sh_row_add(sh, f ? f->example : LH_NODE_NONE); /* NONE: no new one of it */
            fprintf(sh->out, "%4zu", shown + 1);
        } else {
            fputs("   ", sh->out);
        }
        fprintf(sh->out, " %10" PRId64 " %10" PRId64 "  %7" PRIu64 " -> %-7" PRIu64 "  %s\n",
                g[i].dcount, g[i].dbytes, g[i].count_a, g[i].count_b, g[i].key);
        shown++;
    }
    if (!shown) {
        fputs("   nothing grew\n", sh->out);
    } else if (!rows && ib != ia) {
        fprintf(sh->out, "(`use %ld`, then diff again, to identify @N a new object of a row)\n",
                ib + 1);
    }
    rc = 0;
done:
    free(old);
    sh_grouping_fini(&fresh);
    for (size_t i = 0; i < na; i++) {
        free(a[i].key);
    }
    for (size_t i = 0; i < nb; i++) {
        free(b[i].key);
    }
    free(a);
    free(b);
    free(g);
    return rc;
}
