/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_objheap.c: the language object heap's builder and queries (objheap.h) on a
 * hand-made Perl-like heap: nodes by address, labelled edges resolved, names, roots, the
 * native blocks objects own or point to, paths from names, cycles nothing reaches, weak
 * references, retained sizes. No snapshot, no decoder: the heapgraph holds two blocks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "objheap.h"

/* Native blocks: a hash's bucket array (owned) and an XS module's struct (pointed to). */
static lh_hblock_t blocks[] = {
    {.addr = 0x10000, .size = 4096},
    {.addr = 0x20000, .size = 64},
};

enum {
    CACHE = 0x1000, /* %MyApp::CACHE */
    ENTRY = 0x1018, /* its {"k1"}: a REF */
    ANON = 0x1030,  /* the anonymous hash it refers to */
    PAGE = 0x1048,  /* its {rendered} */
    REQ = 0x1060, REQ_REF = 0x1078, RESP = 0x1090, RESP_REF = 0x10a8, /* a cycle */
    HANDLE = 0x10c0, /* $main::HANDLE: an IV holding an XS struct pointer */
    WEAK = 0x10d8,   /* $main::W: a weakened REF to the cycle */
};

/* The heap below; claim_only: as a decoder fills it for lh_objheap_open_for(.., CLAIM)
 * (objheap_python.c): every edge an unlabelled ELEM (weak ones still weak), no names. */
static lh_objheap_t *
build_for(lh_heapgraph_t *hg, int claim_only)
{
    lh_objheap_t *oh;
    lh_err_t err;
    memset(hg, 0, sizeof *hg);
    hg->blocks = blocks;
    hg->n_blocks = 2;
    assert_int_equal(lh_objheap_begin(hg, LH_OBJLANG_PERL, &oh, &err), 0);
    oh->claim_only = (uint8_t)claim_only;
#define add_edge(oh, src, dst, kind, flags, lab, idx)                                           \
    (claim_only ? lh_objheap_add_edge(oh, src, dst, LH_OBJEDGE_ELEM, flags, NULL, 0)           \
                : lh_objheap_add_edge(oh, src, dst, kind, flags, lab, idx))
#define add_name(oh, obj, kind, name) (claim_only ? 0 : lh_objheap_add_name(oh, obj, kind, name))
    /* Added out of address order on purpose: the end sorts them. */
    int64_t resp = lh_objheap_add(oh, RESP, 56, "HASH", "Resp");
    int64_t cache = lh_objheap_add(oh, CACHE, 56, "HASH", NULL);
    int64_t entry = lh_objheap_add(oh, ENTRY, 24, "REF", NULL);
    int64_t anon = lh_objheap_add(oh, ANON, 56, "HASH", NULL);
    int64_t page = lh_objheap_add(oh, PAGE, 100, "SCALAR(PV)", NULL);
    int64_t req = lh_objheap_add(oh, REQ, 56, "HASH", "Req");
    int64_t req_ref = lh_objheap_add(oh, REQ_REF, 24, "REF", NULL);
    int64_t resp_ref = lh_objheap_add(oh, RESP_REF, 24, "REF", NULL);
    int64_t handle = lh_objheap_add(oh, HANDLE, 24, "SCALAR(IV)", NULL);
    int64_t weak = lh_objheap_add(oh, WEAK, 24, "REF", NULL);
    assert_true(page >= 0 && weak >= 0);
    assert_int_equal(lh_objheap_own(oh, cache, 0x10008), 0); /* inside: the whole block */
    assert_int_equal(lh_objheap_own(oh, -1, 0x30000), 0);    /* no block there: ignored */
    assert_int_equal(add_edge(oh, cache, ENTRY, LH_OBJEDGE_KEY, 0, "k1", 0), 0);
    assert_int_equal(add_edge(oh, entry, ANON, LH_OBJEDGE_REF, 0, NULL, 0), 0);
    assert_int_equal(add_edge(oh, anon, PAGE, LH_OBJEDGE_KEY, 0, "rendered", 0), 0);
    assert_int_equal(add_edge(oh, req, REQ_REF, LH_OBJEDGE_KEY, 0, "resp", 0), 0);
    assert_int_equal(add_edge(oh, req_ref, RESP, LH_OBJEDGE_REF, 0, NULL, 0), 0);
    assert_int_equal(add_edge(oh, resp, RESP_REF, LH_OBJEDGE_KEY, 0, "req", 0), 0);
    assert_int_equal(add_edge(oh, resp_ref, REQ, LH_OBJEDGE_REF, 0, NULL, 0), 0);
    assert_int_equal(add_edge(oh, handle, 0x20010, LH_OBJEDGE_NATIVE, 0, NULL, 0),
                     0);
    assert_int_equal(add_edge(oh, weak, RESP, LH_OBJEDGE_REF, LH_OBJEDGE_WEAK, NULL,
                                         0), 0);
    /* An address that is nothing (freed, immortal): dropped. */
    assert_int_equal(add_edge(oh, anon, 0x50000, LH_OBJEDGE_KEY, 0, "gone", 0), 0);
    assert_int_equal(add_name(oh, cache, LH_OBJNAME_GLOBAL, "%MyApp::CACHE"), 0);
    assert_int_equal(add_name(oh, handle, LH_OBJNAME_GLOBAL, "$main::HANDLE"), 0);
    assert_int_equal(add_name(oh, weak, LH_OBJNAME_GLOBAL, "$main::W"), 0);
    assert_int_equal(lh_objheap_add_root(oh, LH_OBJROOT_SYMTAB, "the symbol table", CACHE), 0);
    assert_int_equal(lh_objheap_add_root(oh, LH_OBJROOT_SYMTAB, "the symbol table", HANDLE),
                     0);
    assert_int_equal(lh_objheap_add_root(oh, LH_OBJROOT_SYMTAB, "the symbol table", WEAK), 0);
    assert_int_equal(lh_objheap_end(oh, &err), 0);
#undef add_edge
#undef add_name
    return oh;
}

static lh_objheap_t *
build(lh_heapgraph_t *hg)
{
    return build_for(hg, 0);
}

static void
test_nodes_and_types(void **state)
{
    (void)state;
    lh_heapgraph_t hg;
    lh_objheap_t *oh = build(&hg);
    assert_int_equal(oh->n_objs, 10);
    for (uint32_t i = 1; i < oh->n_objs; i++) {
        assert_true(oh->objs[i - 1].addr < oh->objs[i].addr);
    }
    assert_int_equal(lh_objheap_find(oh, CACHE), 0);
    assert_int_equal(lh_objheap_find(oh, CACHE + 8), LH_NODE_NONE);
    assert_string_equal(lh_objheap_type(oh, lh_objheap_find(oh, REQ)), "Req");
    assert_string_equal(lh_objheap_type(oh, lh_objheap_find(oh, ANON)), "HASH");
    /* The hash owns its bucket block: its size includes it; the block knows its owner. */
    assert_int_equal(oh->objs[0].size_bytes, 56 + 4096);
    assert_int_equal(oh->blk_owner[0], 0);
    assert_int_equal(oh->own_off[1] - oh->own_off[0], 1);
    /* One root node, holding three objects. */
    assert_int_equal(oh->n_roots, 1);
    assert_int_equal(oh->roots[0].n, 3);
    lh_objheap_free(oh);
}

static void
test_path_and_labels(void **state)
{
    (void)state;
    lh_heapgraph_t hg;
    lh_objheap_t *oh = build(&hg);
    const lh_objedge_t *path[8];
    uint32_t start;
    char buf[64];
    int n = lh_objheap_path(oh, lh_objheap_find(oh, PAGE), &start, path, 8);
    assert_int_equal(n, 3);
    assert_int_equal(start, lh_objheap_find(oh, CACHE));
    assert_string_equal(lh_objheap_edge_label(oh, path[0], buf, sizeof buf), "{\"k1\"}");
    assert_string_equal(lh_objheap_edge_label(oh, path[1], buf, sizeof buf), "->");
    assert_string_equal(lh_objheap_edge_label(oh, path[2], buf, sizeof buf), "{\"rendered\"}");
    assert_int_equal(path[2]->dst, lh_objheap_find(oh, PAGE));
    /* A named object is its own start. */
    assert_int_equal(lh_objheap_path(oh, lh_objheap_find(oh, CACHE), &start, path, 8), 0);
    /* The cycle: nothing strong reaches it (the weak REF does not count). */
    assert_int_equal(lh_objheap_path(oh, lh_objheap_find(oh, REQ), &start, path, 8), -1);
    size_t first;
    assert_int_equal(lh_objheap_names(oh, lh_objheap_find(oh, HANDLE), &first), 1);
    assert_string_equal(oh->strs[oh->names[first].name], "$main::HANDLE");
    lh_objheap_free(oh);
}

static void
test_cycles_weak_and_retained(void **state)
{
    (void)state;
    lh_heapgraph_t hg;
    lh_objheap_t *oh = build(&hg);
    uint32_t req = lh_objheap_find(oh, REQ), resp = lh_objheap_find(oh, RESP);
    assert_int_not_equal(oh->g.cls[req], LH_CLASS_REACHABLE);
    assert_int_not_equal(oh->g.cls[resp], LH_CLASS_REACHABLE);
    assert_int_equal(oh->n_unreachable, 4);
    assert_int_equal(oh->unreachable_bytes, 56 + 24 + 56 + 24);
    /* %MyApp::CACHE retains its entry, the anonymous hash and the page. */
    assert_int_equal(oh->g.retained[lh_objheap_find(oh, CACHE)], 56 + 4096 + 24 + 56 + 100);
    /* The XS struct hangs under $main::HANDLE: an ext node, reached by a NATIVE edge. */
    uint32_t h = lh_objheap_find(oh, HANDLE);
    assert_int_equal(oh->n_ext, 1);
    assert_int_equal(oh->ext[0], 1);
    assert_int_equal(oh->eoff[h + 1] - oh->eoff[h], 1);
    assert_int_equal(oh->edges[oh->eoff[h]].kind, LH_OBJEDGE_NATIVE);
    assert_int_equal(oh->g.retained[h], 24 + 64);
    /* The weak REF is shown but holds nothing. */
    uint32_t w = lh_objheap_find(oh, WEAK);
    char buf[64];
    assert_string_equal(lh_objheap_edge_label(oh, &oh->edges[oh->eoff[w]], buf, sizeof buf),
                        "-> (weak)");
    assert_int_equal(oh->g.retained[w], 24);
    lh_objheap_free(oh);
}

/* Opened for the claim alone: the same nodes, owners and classes (what lh_objheap_claim
 * reads), no dominators. */
static void
test_claim_only(void **state)
{
    (void)state;
    lh_heapgraph_t hg, hg2;
    lh_objheap_t *full = build(&hg), *oh = build_for(&hg2, 1);
    assert_int_equal(oh->n_objs, full->n_objs);
    assert_int_equal(oh->n_ext, full->n_ext);
    assert_int_equal(oh->n_roots, full->n_roots);
    assert_int_equal(oh->n_names, 0);
    for (uint32_t v = 0; v < full->n_objs + full->n_ext; v++) {
        assert_int_equal(oh->g.cls[v], full->g.cls[v]);
    }
    for (uint32_t b = 0; b < 2; b++) {
        assert_int_equal(oh->blk_owner[b], full->blk_owner[b]);
    }
    assert_int_equal(oh->n_unreachable, 4);
    assert_int_equal(oh->unreachable_bytes, full->unreachable_bytes);
    assert_non_null(full->g.idom);
    assert_null(oh->g.idom);
    lh_objheap_free(oh);
    lh_objheap_free(full);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nodes_and_types),
        cmocka_unit_test(test_path_and_labels),
        cmocka_unit_test(test_cycles_weak_and_retained),
        cmocka_unit_test(test_claim_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
