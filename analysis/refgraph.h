/* leakhound - SPDX-License-Identifier: MIT
 *
 * refgraph.h: the reference graph of a heap snapshot, as plain arrays, and the two
 * analyses on it: Valgrind's leak classification and the dominator tree with retained
 * sizes. Pure functions over integers (no trace, no file), so they are unit-tested on small
 * hand-made graphs; heapgraph.h builds the real one from a trace and a .lhs file.
 *
 * Nodes: [0, n_blocks) are heap blocks, [n_blocks, n_blocks + n_roots) are roots (a global
 * variable, a thread's stack), and the last node, n_blocks + n_roots, is a virtual
 * super-root. Indices are 32-bit (at most 2^31 - 2 nodes); edges are CSR arrays, forward
 * (holder -> target) and reverse (target <- holder), each edge carrying LH_EDGE_INTERIOR when
 * the pointer is to the inside of the target rather than its start. The super-root has no
 * stored edges: its children are the roots and, once classified, the definitely lost blocks.
 *
 * Classification (memcheck's rules, mc_leakcheck.c):
 *   - reachable: a chain of start pointers leads from a root to the block;
 *   - possibly lost: reached from a root, but only through a chain in which some pointer
 *     is interior (or through a possibly lost block);
 *   - lost blocks (not reached from any root) are grouped into cliques: in address order
 *     (node order), each lost block not yet in a clique leads one and is "definitely lost";
 *     every other lost block reachable from it by any pointer (start or interior) is
 *     "indirectly lost", including the leader of an earlier clique (which then joins this
 *     one). So a chain A -> B -> C is A definite, B and C indirect; a ring that nothing
 *     outside reaches is lost as a whole with its lowest-address block "definitely lost"
 *     and the others "indirectly lost" (Valgrind's representative rule).
 *
 * Dominators: node d dominates v when every path from the super-root to v passes through
 * d. Computed with the semi-NCA algorithm (Georgiadis, Tarjan): Lengauer-Tarjan's
 * semidominators by iterative path compression, then the nearest common ancestor walk;
 * O(E log N), no recursion, so 10 million nodes in a chain are fine. Lost blocks hang off
 * the super-root through the definitely lost leaders, so they get dominators and retained
 * sizes too. retained[v] = sum of the sizes of the blocks v dominates, itself included.
 *
 * Not thread-safe; all arrays are owned by the graph.
 */
#ifndef LH_REFGRAPH_H
#define LH_REFGRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define LH_EDGE_INTERIOR 0x80000000u
#define LH_EDGE_NODE(e) ((e) & ~LH_EDGE_INTERIOR)
#define LH_NODE_NONE UINT32_MAX
#define LH_REFGRAPH_MAX_NODES 0x7ffffff0u

enum lh_leak_class {
    LH_CLASS_REACHABLE = 0,
    LH_CLASS_POSSIBLE = 1,
    LH_CLASS_INDIRECT = 2,
    LH_CLASS_DEFINITE = 3,
    LH_CLASS_COUNT
};

typedef struct lh_refgraph {
    uint32_t n_blocks, n_roots, n_nodes; /* n_nodes = n_blocks + n_roots + 1 */
    uint32_t super;           /* the super-root: n_nodes - 1 */
    const uint64_t *size;     /* borrowed: block v's size is size[v * size_stride] */
    size_t size_stride;
    uint64_t n_edges;
    uint64_t *off;            /* n_nodes + 1: edges of v are dst[off[v] .. off[v+1]) */
    uint32_t *dst;            /* target | LH_EDGE_INTERIOR */
    uint64_t *roff;           /* n_nodes + 1: reverse edges */
    uint32_t *rsrc;           /* holder | LH_EDGE_INTERIOR */
    uint64_t n_strong, n_interior; /* edges by kind */
    uint8_t *cls;             /* n_blocks: lh_leak_class (after lh_refgraph_classify) */
    uint32_t *idom;           /* n_nodes (after lh_refgraph_dominators); super: itself */
    uint64_t *retained;       /* n_nodes */
} lh_refgraph_t;

/* Builds the CSR arrays from an edge list: src[i] -> dst[i] (dst may carry
 * LH_EDGE_INTERIOR). Node indices must be < n_blocks + n_roots (checked). Block v's size is
 * size[v * size_stride] (borrowed: lets the sizes live inside an array of structs). The
 * lists are not kept. Returns 0, LH_EINVAL (bad index or too many nodes), LH_ENOMEM. */
int lh_refgraph_build(lh_refgraph_t *g, uint32_t n_blocks, uint32_t n_roots,
                      const uint64_t *size, size_t size_stride, const uint32_t *src,
                      const uint32_t *dst, uint64_t n_edges, lh_err_t *err);
void lh_refgraph_fini(lh_refgraph_t *g);

/* Fills g->cls (see the rules above). Returns 0 or LH_ENOMEM. */
int lh_refgraph_classify(lh_refgraph_t *g, lh_err_t *err);

/* Fills g->idom and g->retained; needs g->cls. Returns 0 or LH_ENOMEM. */
int lh_refgraph_dominators(lh_refgraph_t *g, lh_err_t *err);

const char *lh_leak_class_name(int cls); /* "reachable", "possibly lost", ... */

#endif /* LH_REFGRAPH_H */
