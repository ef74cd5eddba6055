/* leakhound - SPDX-License-Identifier: MIT
 *
 * leaksplit.c: the LEAK SUMMARY of `leakhound report`, from the exit snapshot's graph.
 */
#include "leaksplit.h"
#include "objheap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "heapgraph.h"
#include "report.h"

void
lh_leak_split_init(lh_leak_split_t *ls)
{
    memset(ls, 0, sizeof *ls);
}

void
lh_leak_split_fini(lh_leak_split_t *ls)
{
    free(ls->by_stack);
    lh_heapgraph_free(ls->hg);
    lh_leak_split_init(ls);
}

int
lh_leak_split_begin(lh_leak_split_t *ls, const char *path, lh_consumer_t *c, lh_err_t *err)
{
    lh_heapgraph_opts_t o = {NULL, LH_HG_EXIT_CONTENTS, 0, 0, ls->heuristics};
    int rc = lh_heapgraph_begin(path, &o, &ls->hg, err);
    if (rc == 0) {
        *c = lh_heapgraph_consumer(ls->hg);
    }
    return rc;
}

int
lh_leak_split_captured(const lh_leak_split_t *ls)
{
    return ls->hg && lh_heapgraph_captured(ls->hg);
}

int
lh_leak_split_build(lh_leak_split_t *ls, lh_trace_t *t, lh_err_t *err)
{
    lh_heapgraph_t *hg = ls->hg;
    int rc;
    if (!lh_leak_split_captured(ls)) {
        return 0;
    }
    if ((rc = lh_heapgraph_finish(hg, t, err)) < 0) {
        goto done;
    }
    if (!hg->has_graph) {
        rc = lh_err_set(err, LH_EFORMAT, "no leak summary: %s", hg->no_graph_why);
        goto done;
    }
    /* A perl (python) heap: the blocks its objects are made of are not leaks of their own
     * (objheap.h); a heap that does not decode leaves the classes as they are. */
    lh_objheap_t *oh = NULL;
    lh_err_t e2 = {{0}};
    if (lh_objheap_open_for(hg, LH_OBJHEAP_CLAIM, &oh, &e2) == 0) {
        lh_objheap_claim(oh);
        lh_objheap_free(oh);
    }
    size_t n = 1;
    for (uint32_t b = 0; b < hg->n_blocks; b++) {
        if (hg->blocks[b].stack_id >= n) {
            n = (size_t)hg->blocks[b].stack_id + 1;
        }
    }
    if (!(ls->by_stack = calloc(n, sizeof *ls->by_stack))) {
        rc = lh_err_set(err, LH_ENOMEM, "out of memory");
        goto done;
    }
    ls->n_stacks = n;
    /* A seeded fork child (trace.h): its inherited blocks hold and are held in the graph,
     * but are not counted, as the report leaves them out of its leaks. */
    const lh_trace_info_t *in = &lh_trace_parts(t)->info;
    uint64_t inherited_before = in->inherited ? in->fork_ts_ns : 0;
    for (uint32_t b = 0; b < hg->n_blocks; b++) {
        int c = hg->g.cls[b];
        if (hg->blocks[b].ts_ns < inherited_before) {
            continue;
        }
        lh_class_counts_t *s = &ls->by_stack[hg->blocks[b].stack_id];
        s->blocks[c]++;
        s->bytes[c] += hg->blocks[b].size;
        ls->total.blocks[c]++;
        ls->total.bytes[c] += hg->blocks[b].size;
    }
    snprintf(ls->label, sizeof ls->label, "%s", hg->snaps[hg->cur].label);
    ls->present = 1;
done:
    lh_heapgraph_free(hg);
    ls->hg = NULL;
    return rc;
}

const lh_class_counts_t *
lh_leak_split_site(const lh_leak_split_t *ls, uint32_t stack_id)
{
    if (!ls->present || stack_id >= ls->n_stacks) {
        return NULL;
    }
    const lh_class_counts_t *s = &ls->by_stack[stack_id];
    for (int c = 0; c < LH_CLASS_COUNT; c++) {
        if (s->blocks[c]) {
            return s;
        }
    }
    return NULL;
}

int
lh_leak_split_filter(lh_leak_split_t *ls, int (*drop)(void *ctx, uint32_t id, lh_err_t *err),
                     void *ctx, lh_err_t *err)
{
    for (size_t id = 0; ls->present && id < ls->n_stacks; id++) {
        lh_class_counts_t *c = &ls->by_stack[id];
        int rc = lh_leak_split_site(ls, (uint32_t)id) ? drop(ctx, (uint32_t)id, err) : 0;
        if (rc < 0) {
            return rc;
        }
        for (int k = 0; rc && k < LH_CLASS_COUNT; k++) {
            ls->total.blocks[k] -= c->blocks[k];
            ls->total.bytes[k] -= c->bytes[k];
        }
        if (rc) {
            memset(c, 0, sizeof *c);
        }
    }
    return 0;
}
