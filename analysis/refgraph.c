/* leakhound - SPDX-License-Identifier: MIT
 *
 * refgraph.c: building the CSR arrays of the reference graph.
 */
#include "refgraph.h"

#include <stdlib.h>
#include <string.h>

#include "dupstr.h"

const char *
lh_leak_class_name(int cls)
{
    switch (cls) {
    case LH_CLASS_REACHABLE:
        return "reachable";
    case LH_CLASS_POSSIBLE:
        return "possibly lost";
    case LH_CLASS_INDIRECT:
        return "indirectly lost";
    case LH_CLASS_DEFINITE:
        return "definitely lost";
    default:
        return "?";
    }
}

/* Counting sort of the edges by key[] into (off, out): out[] gets other[] of each edge. */
static int
csr(uint32_t n_nodes, const uint32_t *key, const uint32_t *other, uint64_t n_edges,
    uint64_t **off_out, uint32_t **out_out)
{
    uint64_t *off = calloc((size_t)n_nodes + 1, sizeof *off);
    uint32_t *out = malloc((n_edges ? n_edges : 1) * sizeof *out);
    if (!off || !out) {
        LH_FREE_ALL(off, out);
        return LH_ENOMEM;
    }
    for (uint64_t i = 0; i < n_edges; i++) {
        off[LH_EDGE_NODE(key[i]) + 1]++;
    }
    for (uint32_t v = 0; v < n_nodes; v++) {
        off[v + 1] += off[v];
    }
    /* Fill with a moving cursor per node, then shift the offsets back. */
    for (uint64_t i = 0; i < n_edges; i++) {
        uint32_t k = LH_EDGE_NODE(key[i]);
        out[off[k]++] = other[i];
    }
    for (uint32_t v = n_nodes; v > 0; v--) {
        off[v] = off[v - 1];
    }
    off[0] = 0;
    *off_out = off;
    *out_out = out;
    return 0;
}

int
lh_refgraph_build(lh_refgraph_t *g, uint32_t n_blocks, uint32_t n_roots,
                  const uint64_t *size, size_t size_stride, const uint32_t *src,
                  const uint32_t *dst, uint64_t n_edges, lh_err_t *err)
{
    memset(g, 0, sizeof *g);
    if ((uint64_t)n_blocks + n_roots + 1 > LH_REFGRAPH_MAX_NODES) {
        return lh_err_set(err, LH_EINVAL, "graph too large (%u blocks, %u roots)", n_blocks,
                          n_roots);
    }
    g->n_blocks = n_blocks;
    g->n_roots = n_roots;
    g->n_nodes = n_blocks + n_roots + 1;
    g->super = g->n_nodes - 1;
    g->size = size;
    g->size_stride = size_stride;
    g->n_edges = n_edges;
    uint32_t *rsrc_tmp = NULL;
    for (uint64_t i = 0; i < n_edges; i++) {
        if (src[i] >= g->super || LH_EDGE_NODE(dst[i]) >= g->super) {
            return lh_err_set(err, LH_EINVAL, "edge %llu: node out of range",
                              (unsigned long long)i);
        }
        if (dst[i] & LH_EDGE_INTERIOR) {
            g->n_interior++;
        } else {
            g->n_strong++;
        }
    }
    if (csr(g->n_nodes, src, dst, n_edges, &g->off, &g->dst) < 0) {
        goto nomem;
    }
    /* Reverse: key = target, value = holder with the target's interior flag. */
    rsrc_tmp = malloc((n_edges ? n_edges : 1) * sizeof *rsrc_tmp);
    if (!rsrc_tmp) {
        goto nomem;
    }
    for (uint64_t i = 0; i < n_edges; i++) {
        rsrc_tmp[i] = src[i] | (dst[i] & LH_EDGE_INTERIOR);
    }
    if (csr(g->n_nodes, dst, rsrc_tmp, n_edges, &g->roff, &g->rsrc) < 0) {
        goto nomem;
    }
    free(rsrc_tmp);
    return 0;
nomem:
    free(rsrc_tmp);
    lh_refgraph_fini(g);
    return lh_err_set(err, LH_ENOMEM, "out of memory building the reference graph");
}

void
lh_refgraph_fini(lh_refgraph_t *g)
{
    LH_FREE_ALL(g->off, g->dst, g->roff, g->rsrc, g->cls, g->idom, g->retained);
    memset(g, 0, sizeof *g);
}
