/* leakhound - SPDX-License-Identifier: MIT
 *
 * domtree.c: the dominator tree of the reference graph by semi-NCA, and retained sizes.
 *
 * Everything runs in DFS preorder numbers (1 = the super-root, 0 = none): a depth-first
 * search with an explicit stack numbers the nodes; semidominators come from the reverse
 * edges in decreasing preorder with an "eval" that compresses ancestor paths (iteratively:
 * a chain of 10 million blocks must not overflow the C stack); then each node's immediate
 * dominator is found by walking up from its DFS parent until the preorder number is not
 * above its semidominator (the NCA step). Memory: seven 32-bit arrays per node while it
 * runs, then idom and retained stay.
 */
#include "refgraph.h"

#include <stdlib.h>

#include "dupstr.h"

typedef struct dom {
    const lh_refgraph_t *g;
    uint32_t *dfn;      /* node -> preorder number (0: not visited) */
    uint32_t *vertex;   /* preorder number -> node */
    uint32_t *parent;   /* DFS tree parent (preorder numbers) */
    uint32_t *semi, *label, *ancestor, *idom;
    uint32_t *path;     /* scratch for compress, n entries */
    uint32_t n;         /* nodes numbered */
} dom_t;

static int
is_super_child(const lh_refgraph_t *g, uint32_t v)
{
    return v >= g->n_blocks ? v < g->super : g->cls[v] == LH_CLASS_DEFINITE;
}

/* Depth-first numbering from the super-root; its children are the roots, then the
 * definitely lost blocks, in node order. */
static int
dfs(dom_t *d)
{
    const lh_refgraph_t *g = d->g;
    uint32_t *snode = malloc((size_t)g->n_nodes * sizeof *snode);
    uint64_t *spos = malloc((size_t)g->n_nodes * sizeof *spos);
    if (!snode || !spos) {
        LH_FREE_ALL(snode, spos);
        return LH_ENOMEM;
    }
    d->n = 1;
    d->dfn[g->super] = 1;
    d->vertex[1] = g->super;
    d->parent[1] = 0;
    for (uint32_t c0 = 0; c0 < g->super; c0++) {
        uint32_t c = c0 < g->n_roots ? g->n_blocks + c0 : c0 - g->n_roots; /* roots first */
        if (d->dfn[c] || !is_super_child(g, c)) {
            continue;
        }
        size_t sp = 0;
        d->dfn[c] = ++d->n;
        d->vertex[d->n] = c;
        d->parent[d->n] = 1;
        snode[sp] = c;
        spos[sp++] = g->off[c];
        while (sp) {
            uint32_t v = snode[sp - 1];
            uint64_t e = spos[sp - 1];
            if (e == g->off[v + 1]) {
                sp--;
                continue;
            }
            spos[sp - 1] = e + 1;
            uint32_t t = LH_EDGE_NODE(g->dst[e]);
            if (d->dfn[t]) {
                continue;
            }
            d->dfn[t] = ++d->n;
            d->vertex[d->n] = t;
            d->parent[d->n] = d->dfn[v];
            snode[sp] = t;
            spos[sp++] = g->off[t];
        }
    }
    LH_FREE_ALL(snode, spos);
    return 0;
}

/* Path compression without recursion: collect the chain up to the child of the forest
 * root, then fold labels from the top down. */
static void
compress(dom_t *d, uint32_t v)
{
    size_t k = 0;
    uint32_t *anc = d->ancestor, *lab = d->label, *semi = d->semi;
    while (anc[anc[v]] != 0) {
        d->path[k++] = v;
        v = anc[v];
    }
    while (k) {
        uint32_t x = d->path[--k];
        uint32_t a = anc[x];
        if (semi[lab[a]] < semi[lab[x]]) {
            lab[x] = lab[a];
        }
        anc[x] = anc[a];
    }
}

static uint32_t
eval(dom_t *d, uint32_t v)
{
    if (d->ancestor[v] == 0) {
        return v;
    }
    compress(d, v);
    return d->label[v];
}

int
lh_refgraph_dominators(lh_refgraph_t *g, lh_err_t *err)
{
    dom_t d = {0};
    size_t nn = (size_t)g->n_nodes + 1;
    int rc = LH_ENOMEM;
    d.g = g;
    d.dfn = calloc(nn, sizeof *d.dfn);
    d.vertex = malloc(nn * sizeof *d.vertex);
    d.parent = malloc(nn * sizeof *d.parent);
    uint32_t *idom = NULL;
    uint64_t *ret = NULL;
    if (!d.dfn || !d.vertex || !d.parent || !g->cls || dfs(&d) < 0) {
        goto done;
    }
    /* Allocated after the search, whose stack is gone by now: a lower peak. */
    d.semi = malloc(nn * sizeof *d.semi);
    d.label = malloc(nn * sizeof *d.label);
    d.ancestor = calloc(nn, sizeof *d.ancestor);
    d.idom = malloc(nn * sizeof *d.idom);
    d.path = malloc(nn * sizeof *d.path);
    if (!d.semi || !d.label || !d.ancestor || !d.idom || !d.path) {
        goto done;
    }
    for (uint32_t i = 1; i <= d.n; i++) {
        d.semi[i] = i;
        d.label[i] = i;
    }
    /* Semidominators, in decreasing preorder. */
    for (uint32_t w = d.n; w >= 2; w--) {
        uint32_t v = d.vertex[w];
        if (is_super_child(g, v)) {
            d.semi[w] = 1; /* the super-root is a predecessor: nothing is smaller */
        }
        for (uint64_t e = g->roff[v]; e < g->roff[v + 1] && d.semi[w] > 1; e++) {
            uint32_t u = d.dfn[LH_EDGE_NODE(g->rsrc[e])];
            if (u == 0) {
                continue; /* an unvisited holder (cannot happen once all are numbered) */
            }
            uint32_t s = d.semi[eval(&d, u)];
            if (s < d.semi[w]) {
                d.semi[w] = s;
            }
        }
        d.ancestor[w] = d.parent[w]; /* link */
    }
    /* Immediate dominators: nearest common ancestor walk, in increasing preorder. */
    d.idom[1] = 1;
    for (uint32_t w = 2; w <= d.n; w++) {
        uint32_t x = d.parent[w];
        while (x > d.semi[w]) {
            x = d.idom[x];
        }
        d.idom[w] = x;
    }
    LH_FREE_ALL(d.semi, d.label, d.ancestor, d.path);
    d.semi = d.label = d.ancestor = d.path = NULL;
    idom = malloc((size_t)g->n_nodes * sizeof *idom);
    ret = calloc(g->n_nodes, sizeof *ret);
    if (!idom || !ret) {
        goto done;
    }
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        idom[v] = d.dfn[v] ? d.vertex[d.idom[d.dfn[v]]] : LH_NODE_NONE;
    }
    /* Retained sizes: children before their dominators (decreasing preorder). */
    for (uint32_t w = d.n; w >= 1; w--) {
        uint32_t v = d.vertex[w];
        if (v < g->n_blocks) {
            ret[v] += g->size[(size_t)v * g->size_stride];
        }
        if (w > 1) {
            ret[d.vertex[d.idom[w]]] += ret[v];
        }
    }
    LH_FREE_ALL(g->idom, g->retained);
    g->idom = idom;
    g->retained = ret;
    idom = NULL;
    ret = NULL;
    rc = 0;
done:
    LH_FREE_ALL(d.dfn, d.vertex, d.parent, d.semi, d.label, d.ancestor, d.idom, d.path, idom, ret);
    return rc < 0 ? lh_err_set(err, rc, "out of memory computing dominators") : 0;
}
