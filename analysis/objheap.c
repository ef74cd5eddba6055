/* leakhound - SPDX-License-Identifier: MIT
 *
 * objheap.c: the language object heap (objheap.h): the builder the decoders fill, the
 * resolution of addresses into nodes at the end, and the queries the shell uses.
 */
#include "objheap.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bound.h"
#include "dupstr.h"
#include "grow.h"
#include "hash.h"

/* ---------------------------------------------------------------------------------------
 * Builder state
 * ------------------------------------------------------------------------------------- */

typedef struct bobj {
    uint64_t addr, size;
    uint32_t kind, cls, detail;
} bobj_t;

typedef struct bedge {
    uint64_t dst_addr, label;
    uint32_t src;
    uint8_t kind, flags;
} bedge_t;

typedef struct bname {
    uint32_t obj, name;
    uint8_t kind;
} bname_t;

typedef struct broot {
    uint64_t dst_addr;
    uint32_t name;
    uint8_t kind;
} broot_t;

typedef struct bown {
    uint64_t addr;
    int64_t obj;
} bown_t;

typedef struct builder {
    bobj_t *objs;
    size_t n_objs, cap_objs;
    bedge_t *edges;
    size_t n_edges, cap_edges;
    bname_t *names;
    size_t n_names, cap_names;
    broot_t *roots;
    size_t n_roots, cap_roots;
    bown_t *owns;
    size_t n_owns, cap_owns;
    uint32_t *str_hash; /* open addressing: string index, UINT32_MAX empty (hash.h) */
    size_t str_mask;
    size_t cap_strs;
} builder_t;

/* Room for one more element after n in *v (arrays start at 256). */
static int
grow(void *v, size_t *cap, size_t n, size_t elem)
{
    return lh_grow(v, cap, n, elem, 256);
}

static uint64_t
strs_hash(const void *oh, size_t i)
{
    return lh_hash_str(((const lh_objheap_t *)oh)->strs[i]);
}

/* The index of s in oh->strs, interning it. Returns 0 for NULL or "", UINT32_MAX when out of
 * memory. */
static uint32_t
intern(lh_objheap_t *oh, const char *s)
{
    builder_t *b = oh->build_;
    if (!s || !*s) {
        return 0;
    }
    if ((size_t)oh->n_strs * 2 >= b->str_mask &&
        lh_index_rebuild(&b->str_hash, &b->str_mask, b->str_mask ? (b->str_mask + 1) * 2 : 1024,
                         1, oh->n_strs, strs_hash, oh) < 0) {
        return UINT32_MAX;
    }
    size_t h = lh_hash_str(s) & b->str_mask;
    while (b->str_hash[h] != UINT32_MAX) {
        uint32_t i = b->str_hash[h];
        if (strcmp(oh->strs[i], s) == 0) {
            return i;
        }
        h = (h + 1) & b->str_mask;
    }
    char *copy = strdup(s);
    if (!copy || grow(&oh->strs, &b->cap_strs, oh->n_strs, sizeof *oh->strs) < 0) {
        free(copy);
        return UINT32_MAX;
    }
    oh->strs[oh->n_strs] = copy;
    b->str_hash[h] = oh->n_strs;
    return oh->n_strs++;
}

static void
builder_free(builder_t *b)
{
    if (!b) {
        return;
    }
    LH_FREE_ALL(b->objs, b->edges, b->names, b->roots, b->owns, b->str_hash, b);
}

/* ---------------------------------------------------------------------------------------
 * Builder calls (objheap.h: decoders)
 * ------------------------------------------------------------------------------------- */

int64_t
lh_objheap_add(lh_objheap_t *oh, uint64_t addr, uint64_t size_bytes, const char *kind,
               const char *cls)
{
    builder_t *b = oh->build_;
    uint32_t k = intern(oh, kind), c = intern(oh, cls);
    if (k == UINT32_MAX || c == UINT32_MAX ||
        grow(&b->objs, &b->cap_objs, b->n_objs, sizeof *b->objs) < 0 ||
        b->n_objs >= LH_REFGRAPH_MAX_NODES / 2) {
        return LH_ENOMEM;
    }
    b->objs[b->n_objs] = (bobj_t){addr, size_bytes, k, c, 0};
    return (int64_t)b->n_objs++;
}

int
lh_objheap_set_detail(lh_objheap_t *oh, int64_t obj, const char *detail)
{
    builder_t *b = oh->build_;
    if (obj < 0 || (size_t)obj >= b->n_objs) {
        return LH_EINVAL;
    }
    uint32_t s = intern(oh, detail);
    if (s == UINT32_MAX) {
        return LH_ENOMEM;
    }
    b->objs[obj].detail = s;
    return 0;
}

int
lh_objheap_add_edge(lh_objheap_t *oh, int64_t src, uint64_t dst_addr, int kind, int flags,
                    const char *label_str, uint64_t label_idx)
{
    builder_t *b = oh->build_;
    if (src < 0 || (size_t)src >= b->n_objs || dst_addr == 0) {
        return src < 0 || (size_t)src >= b->n_objs ? LH_EINVAL : 0;
    }
    uint64_t label = label_idx;
    if (kind != LH_OBJEDGE_ELEM) {
        uint32_t s = intern(oh, label_str);
        if (s == UINT32_MAX) {
            return LH_ENOMEM;
        }
        label = s;
    }
    if (grow(&b->edges, &b->cap_edges, b->n_edges, sizeof *b->edges) < 0) {
        return LH_ENOMEM;
    }
    b->edges[b->n_edges++] = (bedge_t){dst_addr, label, (uint32_t)src, (uint8_t)kind,
                                       (uint8_t)flags};
    return 0;
}

int
lh_objheap_add_name(lh_objheap_t *oh, int64_t obj, int kind, const char *name)
{
    builder_t *b = oh->build_;
    if (obj < 0 || (size_t)obj >= b->n_objs) {
        return LH_EINVAL;
    }
    uint32_t s = intern(oh, name);
    if (s == UINT32_MAX || grow(&b->names, &b->cap_names, b->n_names,
                                sizeof *b->names) < 0) {
        return LH_ENOMEM;
    }
    b->names[b->n_names++] = (bname_t){(uint32_t)obj, s, (uint8_t)kind};
    return 0;
}

int
lh_objheap_add_root(lh_objheap_t *oh, int kind, const char *name, uint64_t dst_addr)
{
    builder_t *b = oh->build_;
    uint32_t s = intern(oh, name);
    if (s == UINT32_MAX || grow(&b->roots, &b->cap_roots, b->n_roots,
                                sizeof *b->roots) < 0) {
        return LH_ENOMEM;
    }
    b->roots[b->n_roots++] = (broot_t){dst_addr, s, (uint8_t)kind};
    return 0;
}

int
lh_objheap_own(lh_objheap_t *oh, int64_t obj, uint64_t addr)
{
    builder_t *b = oh->build_;
    if (obj >= (int64_t)b->n_objs || addr == 0) {
        return obj >= (int64_t)b->n_objs ? LH_EINVAL : 0;
    }
    if (grow(&b->owns, &b->cap_owns, b->n_owns, sizeof *b->owns) < 0) {
        return LH_ENOMEM;
    }
    b->owns[b->n_owns++] = (bown_t){addr, obj};
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Reading the snapshot
 * ------------------------------------------------------------------------------------- */

int
lh_objheap_value(const lh_objheap_t *oh, uint32_t v, char *buf, size_t len)
{
    if (v >= oh->n_objs || oh->lang != LH_OBJLANG_PERL) {
        return 0;
    }
    return lh_objheap_perl_value(oh, oh->objs[v].addr, buf, len);
}

int
lh_objheap_read(const lh_objheap_t *oh, uint64_t addr, void *dst, size_t len)
{
    const lh_snapfile_t *sf = &oh->hg->sf;
    uint8_t *out = dst;
    while (len > 0) {
        /* the first page starting after addr */
        size_t lo = LH_UPPER(sf->pages, sf->n_pages, lh_page_t, addr, addr);
        if (lo == 0) {
            return -1;
        }
        const lh_page_t *pg = &sf->pages[lo - 1];
        if (addr - pg->addr >= pg->len) {
            return -1;
        }
        size_t n = pg->len - (size_t)(addr - pg->addr);
        n = n < len ? n : len;
        memcpy(out, pg->bytes + (addr - pg->addr), n);
        out += n;
        addr += n;
        len -= n;
    }
    return 0;
}

int
lh_objheap_symbol(const lh_objheap_t *oh, const char *module_prefix,
                  const char *const *names, int n_names, uint64_t *addr)
{
    return lh_datasym_find(oh->hg->ds, module_prefix, names, n_names, oh->hg->epoch, addr);
}

/* ---------------------------------------------------------------------------------------
 * The end of the build: nodes by address, edges resolved, the refgraph
 * ------------------------------------------------------------------------------------- */

static const bobj_t *sort_objs_base;

static int
cmp_obj_idx(const void *a, const void *b)
{
    uint64_t x = sort_objs_base[*(const uint32_t *)a].addr;
    uint64_t y = sort_objs_base[*(const uint32_t *)b].addr;
    return x < y ? -1 : x > y;
}

static int
cmp_name(const void *a, const void *b)
{
    const lh_objname_t *x = a, *y = b;
    return lh_order2(x->node, y->node, x->kind, y->kind);
}

static int
cmp_broot(const void *a, const void *b)
{
    const broot_t *x = a, *y = b;
    return lh_order2(x->kind, y->kind, x->name, y->name);
}

/* Where an address lands: an object, an ext node (added on demand), or nothing. */
typedef struct resolver {
    lh_objheap_t *oh;
    uint32_t *ext_of_block; /* hg->n_blocks: ext node index + 1, 0: none */
    size_t cap_ext;
} resolver_t;

static uint32_t
ext_node(resolver_t *r, uint32_t blk)
{
    lh_objheap_t *oh = r->oh;
    if (r->ext_of_block[blk]) {
        return oh->n_objs + r->ext_of_block[blk] - 1;
    }
    if (grow(&oh->ext, &r->cap_ext, oh->n_ext, sizeof *oh->ext) < 0) {
        return LH_NODE_NONE - 1;
    }
    oh->ext[oh->n_ext++] = blk;
    r->ext_of_block[blk] = oh->n_ext;
    return oh->n_objs + oh->n_ext - 1;
}

/* The node at addr: the object starting there, the owner of the block containing it, or
 * an ext node for an unowned live block. LH_NODE_NONE: nothing (or interpreter storage);
 * LH_NODE_NONE - 1: out of memory. */
static uint32_t
resolve(resolver_t *r, uint64_t addr, int *is_native)
{
    lh_objheap_t *oh = r->oh;
    uint32_t o = lh_objheap_find(oh, addr);
    *is_native = 0;
    if (o != LH_NODE_NONE) {
        return o;
    }
    uint32_t blk = lh_heapgraph_block_at(oh->hg, addr);
    if (blk == LH_NODE_NONE || oh->blk_owner[blk] == LH_OBJOWN_ARENA) {
        return LH_NODE_NONE;
    }
    if (oh->blk_owner[blk] != LH_OBJOWN_NONE) {
        return oh->blk_owner[blk];
    }
    *is_native = 1;
    return ext_node(r, blk);
}

/* Native block t (unowned) hangs under node v: an ext node for it and a NATIVE edge from v,
 * appended to the edge list (*tmp, *tsrc: ne of cap). Returns 0, or -1 out of memory. */
static int
hang_under(resolver_t *r, uint32_t v, uint32_t t, lh_objedge_t **tmp, uint32_t **tsrc,
           size_t *ne, size_t *cap)
{
    uint32_t d = ext_node(r, t);
    if (d == LH_NODE_NONE - 1) {
        return -1;
    }
    if (*ne == *cap) {
        size_t c = *cap * 2;
        lh_objedge_t *t2 = realloc(*tmp, c * sizeof **tmp);
        if (!t2) {
            return -1;
        }
        *tmp = t2;
        uint32_t *s2 = realloc(*tsrc, c * sizeof **tsrc);
        if (!s2) {
            return -1;
        }
        *tsrc = s2;
        *cap = c;
    }
    (*tsrc)[*ne] = v;
    (*tmp)[(*ne)++] = (lh_objedge_t){d, LH_OBJEDGE_NATIVE, 0, 0, 0};
    return 0;
}

/* An object that owns no block because it lies in memory the program mapped itself (a
 * Python object in a pymalloc arena, pymalloc kept): the unowned blocks its own words
 * point to the start of (a bytearray's buffer, a numpy array's data) hang under it, as
 * they do under an object that is a block. Returns 0, or -1 out of memory. */
static int
mapped_object_hangs(resolver_t *r, uint32_t v, lh_objedge_t **tmp, uint32_t **tsrc,
                    size_t *ne, size_t *cap)
{
    lh_objheap_t *oh = r->oh;
    const lh_snapfile_t *sf = &oh->hg->sf;
    const lh_obj_t *o = &oh->objs[v];
    const lh_region_t *rg = lh_snapfile_region(sf, o->addr);
    if (!rg || rg->kind != LH_REGION_MAPPED) {
        return 0;
    }
    size_t i = LH_UPPER(sf->words, sf->n_words, lh_word_t, addr, o->addr - 1);
    size_t first = *ne; /* this object's edges: a block two of its words point to (a
                           bytearray's ob_bytes and ob_start) hangs under it once */
    for (; i < sf->n_words && sf->words[i].addr - o->addr < o->size_bytes; i++) {
        uint32_t t = lh_heapgraph_block_at(oh->hg, sf->words[i].val);
        if (t == LH_NODE_NONE || oh->hg->blocks[t].addr != sf->words[i].val ||
            oh->blk_owner[t] != LH_OBJOWN_NONE) {
            continue;
        }
        size_t k = first;
        while (k < *ne && !(r->ext_of_block[t] && (*tmp)[k].dst == oh->n_objs +
                                                                r->ext_of_block[t] - 1)) {
            k++;
        }
        if (k == *ne && hang_under(r, v, t, tmp, tsrc, ne, cap) < 0) {
            return -1;
        }
    }
    return 0;
}

static int
finish(lh_objheap_t *oh, lh_err_t *err)
{
    builder_t *b = oh->build_;
    lh_heapgraph_t *hg = oh->hg;
    uint32_t *perm = NULL, *remap = NULL, *esrc = NULL, *edst = NULL;
    resolver_t r = {oh, NULL, 0};
    lh_objedge_t *tmp = NULL;
    uint32_t *tsrc = NULL;
    int rc = LH_ENOMEM;
    size_t n = b->n_objs;

    /* Objects by address. */
    if (!(perm = malloc((n ? n : 1) * sizeof *perm)) ||
        !(remap = malloc((n ? n : 1) * sizeof *remap)) ||
        !(oh->objs = calloc(n ? n : 1, sizeof *oh->objs))) {
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        perm[i] = (uint32_t)i;
    }
    sort_objs_base = b->objs;
    lh_qsort(perm, n, sizeof *perm, cmp_obj_idx);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const bobj_t *o = &b->objs[perm[i]];
        if (k > 0 && oh->objs[k - 1].addr == o->addr) {
            remap[perm[i]] = (uint32_t)(k - 1); /* the same SV seen twice: keep one */
            continue;
        }
        remap[perm[i]] = (uint32_t)k;
        oh->objs[k++] = (lh_obj_t){o->addr, o->size, o->kind, o->cls, 0, 0, o->detail};
    }
    oh->n_objs = (uint32_t)k;

    /* Ownership of native blocks: objects first, then arenas. */
    if (!(oh->blk_owner = malloc((hg->n_blocks ? hg->n_blocks : 1) * sizeof *oh->blk_owner)) ||
        !(oh->own_off = calloc((size_t)oh->n_objs + 1, sizeof *oh->own_off))) {
        goto fail;
    }
    for (uint32_t i = 0; i < hg->n_blocks; i++) {
        oh->blk_owner[i] = LH_OBJOWN_NONE;
    }
    uint32_t last = LH_NODE_NONE; /* consecutive owns mostly share an arena */
    for (size_t i = 0; i < b->n_owns; i++) {
        uint64_t a = b->owns[i].addr;
        uint32_t blk;
        if (last != LH_NODE_NONE && a >= hg->blocks[last].addr &&
            a - hg->blocks[last].addr < hg->blocks[last].size) {
            blk = last;
        } else if ((blk = lh_heapgraph_block_at(hg, a)) != LH_NODE_NONE) {
            last = blk;
        }
        if (blk == LH_NODE_NONE || oh->blk_owner[blk] != LH_OBJOWN_NONE) {
            continue;
        }
        if (b->owns[i].obj < 0) {
            oh->blk_owner[blk] = LH_OBJOWN_ARENA;
        } else {
            uint32_t o = remap[b->owns[i].obj];
            oh->blk_owner[blk] = o;
            oh->own_off[o + 1]++;
            oh->objs[o].size_bytes += hg->blocks[blk].size;
        }
    }
    for (uint32_t i = 0; i < oh->n_objs; i++) {
        oh->own_off[i + 1] += oh->own_off[i];
    }
    if (!(oh->own_blk = malloc((oh->own_off[oh->n_objs] ? oh->own_off[oh->n_objs] : 1) *
                               sizeof *oh->own_blk))) {
        goto fail;
    }
    {
        uint64_t *fill = calloc((size_t)oh->n_objs + 1, sizeof *fill);
        if (!fill) {
            goto fail;
        }
        for (uint32_t blk = 0; blk < hg->n_blocks; blk++) { /* by address within an object */
            uint32_t o = oh->blk_owner[blk];
            if (o < oh->n_objs) {
                oh->own_blk[oh->own_off[o] + fill[o]++] = blk;
            }
        }
        free(fill);
    }
    /* The line that created an object: its earliest owned block's allocation. */
    for (uint32_t o = 0; o < oh->n_objs; o++) {
        uint64_t best = UINT64_MAX;
        for (uint64_t j = oh->own_off[o]; j < oh->own_off[o + 1]; j++) {
            const lh_hblock_t *blk = &hg->blocks[oh->own_blk[j]];
            if (blk->ts_ns < best) {
                best = blk->ts_ns;
                oh->objs[o].stack_id = blk->stack_id;
            }
        }
    }

    /* Edges: resolve targets (creating ext nodes), then the ext nodes' native edges. */
    if (!(r.ext_of_block = calloc(hg->n_blocks ? hg->n_blocks : 1, sizeof *r.ext_of_block)) ||
        !(tmp = malloc((b->n_edges ? b->n_edges : 1) * sizeof *tmp)) ||
        !(tsrc = malloc((b->n_edges ? b->n_edges : 1) * sizeof *tsrc))) {
        goto fail;
    }
    size_t ne = 0, cap_e = b->n_edges ? b->n_edges : 1;
    for (size_t i = 0; i < b->n_edges; i++) {
        const bedge_t *e = &b->edges[i];
        int native;
        uint32_t d = resolve(&r, e->dst_addr, &native);
        if (d == LH_NODE_NONE - 1) {
            goto fail;
        }
        if (d == LH_NODE_NONE) {
            continue;
        }
        tsrc[ne] = remap[e->src];
        tmp[ne++] = (lh_objedge_t){d, native ? LH_OBJEDGE_NATIVE : e->kind, e->flags, 0,
                                   e->label};
    }
    if (hg->has_graph) {
        /* Native blocks only reached through objects hang under them: the unowned blocks
         * an object's own blocks point to the start of (a buffer the decoder does not
         * know the object owns: a bytearray's bytes, a C extension object's malloc'd
         * struct), then the same from each ext node (the list grows as we go). Node v's
         * blocks: an object's own blocks, an ext node's one block. Not a word that falls
         * inside a block: a str's bytes, a hash or a stale word of a table does, for a
         * 100 KB buffer in a python heap, one time in five (it then hung under no one). */
        uint32_t nobj = oh->n_objs;
        for (uint32_t v = 0; v < nobj + oh->n_ext; v++) {
            uint64_t j0 = v < nobj ? oh->own_off[v] : 0;
            uint64_t j1 = v < nobj ? oh->own_off[v + 1] : 1;
            for (uint64_t j = j0; j < j1; j++) {
                uint32_t blk = v < nobj ? oh->own_blk[j] : oh->ext[v - nobj];
                for (uint64_t k2 = hg->g.off[blk]; k2 < hg->g.off[blk + 1]; k2++) {
                    uint32_t t = LH_EDGE_NODE(hg->g.dst[k2]);
                    if (t >= hg->n_blocks || oh->blk_owner[t] != LH_OBJOWN_NONE ||
                        (hg->g.dst[k2] & LH_EDGE_INTERIOR)) {
                        continue;
                    }
                    if (hang_under(&r, v, t, &tmp, &tsrc, &ne, &cap_e) < 0) {
                        goto fail;
                    }
                }
            }
            if (v < nobj && j0 == j1 && mapped_object_hangs(&r, v, &tmp, &tsrc, &ne, &cap_e) < 0) {
                goto fail;
            }
        }
    }
    uint32_t nn = oh->n_objs + oh->n_ext;
    if (!(oh->eoff = calloc((size_t)nn + 1, sizeof *oh->eoff)) ||
        !(oh->edges = malloc((ne ? ne : 1) * sizeof *oh->edges)) ||
        !(oh->node_size = malloc((nn ? nn : 1) * sizeof *oh->node_size))) {
        goto fail;
    }
    for (size_t i = 0; i < ne; i++) {
        oh->eoff[tsrc[i] + 1]++;
    }
    for (uint32_t v = 0; v < nn; v++) {
        oh->eoff[v + 1] += oh->eoff[v];
    }
    {
        uint64_t *fill = calloc((size_t)nn + 1, sizeof *fill);
        if (!fill) {
            goto fail;
        }
        for (size_t i = 0; i < ne; i++) { /* stable: the decoder's order within a holder */
            oh->edges[oh->eoff[tsrc[i]] + fill[tsrc[i]]++] = tmp[i];
        }
        free(fill);
    }
    oh->n_edges = ne;
    for (uint32_t v = 0; v < oh->n_objs; v++) {
        oh->node_size[v] = oh->objs[v].size_bytes;
    }
    for (uint32_t x = 0; x < oh->n_ext; x++) {
        oh->node_size[oh->n_objs + x] = hg->blocks[oh->ext[x]].size;
    }

    /* Names. */
    if (!(oh->names = malloc((b->n_names ? b->n_names : 1) * sizeof *oh->names))) {
        goto fail;
    }
    for (size_t i = 0; i < b->n_names; i++) {
        oh->names[i] = (lh_objname_t){remap[b->names[i].obj], b->names[i].kind,
                                      b->names[i].name};
    }
    oh->n_names = b->n_names;
    lh_qsort(oh->names, oh->n_names, sizeof *oh->names, cmp_name);
    for (size_t i = oh->n_names; i-- > 0;) {
        oh->objs[oh->names[i].node].name = oh->names[i].name; /* the first one wins */
    }

    /* Roots: one node per (kind, name). */
    lh_qsort(b->roots, b->n_roots, sizeof *b->roots, cmp_broot);
    if (!(oh->roots = malloc((b->n_roots ? b->n_roots : 1) * sizeof *oh->roots)) ||
        !(oh->root_dst = malloc((b->n_roots ? b->n_roots : 1) * sizeof *oh->root_dst))) {
        goto fail;
    }
    uint64_t nrd = 0;
    for (size_t i = 0; i < b->n_roots; i++) {
        const broot_t *br = &b->roots[i];
        uint32_t d = lh_objheap_find(oh, br->dst_addr); /* roots hold objects */
        if (oh->n_roots == 0 || oh->roots[oh->n_roots - 1].kind != br->kind ||
            oh->roots[oh->n_roots - 1].name != br->name) {
            oh->roots[oh->n_roots++] = (lh_objroot_t){br->kind, br->name, nrd, 0};
        }
        if (d != LH_NODE_NONE && d < oh->n_objs) {
            oh->root_dst[nrd++] = d;
            oh->roots[oh->n_roots - 1].n++;
        }
    }
    /* The refgraph: strong edges only. */
    uint64_t n_strong = 0;
    for (size_t i = 0; i < ne; i++) {
        n_strong += !(oh->edges[i].flags & LH_OBJEDGE_WEAK);
    }
    n_strong += nrd;
    if (!(esrc = malloc((n_strong ? n_strong : 1) * sizeof *esrc)) ||
        !(edst = malloc((n_strong ? n_strong : 1) * sizeof *edst))) {
        goto fail;
    }
    uint64_t m = 0;
    for (uint32_t v = 0; v < nn; v++) {
        for (uint64_t j = oh->eoff[v]; j < oh->eoff[v + 1]; j++) {
            if (!(oh->edges[j].flags & LH_OBJEDGE_WEAK)) {
                esrc[m] = v;
                edst[m++] = oh->edges[j].dst;
            }
        }
    }
    for (uint32_t i = 0; i < oh->n_roots; i++) {
        for (uint64_t j = 0; j < oh->roots[i].n; j++) {
            esrc[m] = nn + i;
            edst[m++] = oh->root_dst[oh->roots[i].first + j];
        }
    }
    if ((rc = lh_refgraph_build(&oh->g, nn, oh->n_roots, oh->node_size, 1, esrc, edst, m,
                                err)) < 0 ||
        (rc = lh_refgraph_classify(&oh->g, err)) < 0 ||
        (!oh->claim_only && (rc = lh_refgraph_dominators(&oh->g, err)) < 0)) {
        goto out;
    }
    for (uint32_t v = 0; v < oh->n_objs; v++) {
        if (oh->g.cls[v] != LH_CLASS_REACHABLE) {
            oh->n_unreachable++;
            oh->unreachable_bytes += oh->objs[v].size_bytes;
        }
    }
    rc = 0;
    goto out;
fail:
    rc = lh_err_set(err, LH_ENOMEM, "out of memory decoding the %s heap",
                    oh->lang == LH_OBJLANG_PERL ? "perl" : "python");
out:
    LH_FREE_ALL(perm, remap, esrc, edst, tmp, tsrc, r.ext_of_block);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * Open, free
 * ------------------------------------------------------------------------------------- */

void
lh_objheap_free(lh_objheap_t *oh)
{
    if (!oh) {
        return;
    }
    builder_free(oh->build_);
    lh_refgraph_fini(&oh->g);
    lh_strv_free(oh->strs, oh->n_strs);
    LH_FREE_ALL(oh->objs, oh->ext, oh->node_size, oh->eoff, oh->edges, oh->roots, oh->root_dst,
                oh->names, oh->own_off, oh->own_blk, oh->blk_owner, oh);
}

int
lh_objheap_begin(lh_heapgraph_t *hg, int lang, lh_objheap_t **out, lh_err_t *err)
{
    lh_objheap_t *oh = calloc(1, sizeof *oh);
    *out = NULL;
    if (!oh || !(oh->build_ = calloc(1, sizeof(builder_t))) ||
        !(oh->strs = malloc(16 * sizeof *oh->strs)) || !(oh->strs[0] = strdup(""))) {
        lh_objheap_free(oh);
        return lh_err_set(err, LH_ENOMEM, "out of memory decoding the language heap");
    }
    ((builder_t *)oh->build_)->cap_strs = 16;
    oh->n_strs = 1;
    oh->hg = hg;
    oh->lang = (uint8_t)lang;
    *out = oh;
    return 0;
}

int
lh_objheap_end(lh_objheap_t *oh, lh_err_t *err)
{
    int rc = finish(oh, err);
    builder_free(oh->build_);
    oh->build_ = NULL;
    return rc;
}

int
lh_objheap_open(lh_heapgraph_t *hg, lh_objheap_t **out, lh_err_t *err)
{
    return lh_objheap_open_for(hg, LH_OBJHEAP_ALL, out, err);
}

int
lh_objheap_open_for(lh_heapgraph_t *hg, int what, lh_objheap_t **out, lh_err_t *err)
{
    lh_objheap_t *oh = NULL;
    int rc = lh_objheap_begin(hg, LH_OBJLANG_NONE, &oh, err);
    *out = NULL;
    if (rc < 0) {
        return rc;
    }
    oh->claim_only = what == LH_OBJHEAP_CLAIM;
    /* One decoder per language: each returns 0 when its interpreter is not there. */
    if ((rc = lh_objheap_perl_decode(oh, err)) == 0) {
        rc = lh_objheap_python_decode(oh, err);
    }
    if (rc < 0 || (rc = lh_objheap_end(oh, err)) < 0) {
        if (rc == LH_ENOMEM && !err->msg[0]) {
            lh_err_set(err, LH_ENOMEM, "out of memory decoding the language heap");
        }
        lh_objheap_free(oh);
        return rc;
    }
    *out = oh;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Queries
 * ------------------------------------------------------------------------------------- */

static void
reclassify(lh_heapgraph_t *hg, uint32_t b)
{
    int c = hg->g.cls[b];
    hg->class_blocks[c]--;
    hg->class_bytes[c] -= hg->blocks[b].size;
    hg->g.cls[b] = LH_CLASS_REACHABLE;
    hg->class_blocks[LH_CLASS_REACHABLE]++;
    hg->class_bytes[LH_CLASS_REACHABLE] += hg->blocks[b].size;
}

uint32_t
lh_objheap_claim(lh_objheap_t *oh)
{
    lh_heapgraph_t *hg = oh->hg;
    uint32_t n = 0;
    if (!hg->has_graph || oh->n_objs == 0) {
        return 0;
    }
    /* The blocks of live Perl data (and what they point to, interior pointers included:
     * op slabs, pad names, regex programs), breadth first; an unreachable object's blocks
     * are left alone, and so is what only they reach. */
    uint32_t *queue = malloc((size_t)(hg->n_blocks ? hg->n_blocks : 1) * sizeof *queue);
    uint8_t *seen = calloc(hg->n_blocks ? hg->n_blocks : 1, 1);
    size_t qh = 0, qt = 0;
    if (!queue || !seen) {
        LH_FREE_ALL(queue, seen);
        return 0;
    }
    for (uint32_t b = 0; b < hg->n_blocks; b++) {
        uint32_t o = oh->blk_owner[b];
        if (o == LH_OBJOWN_ARENA || (o < oh->n_objs && oh->g.cls[o] == LH_CLASS_REACHABLE)) {
            seen[b] = 1;
            queue[qt++] = b;
        }
    }
    for (uint32_t x = 0; x < oh->n_ext; x++) {
        uint32_t b = oh->ext[x];
        if (!seen[b] && oh->g.cls[oh->n_objs + x] == LH_CLASS_REACHABLE) {
            seen[b] = 1;
            queue[qt++] = b;
        }
    }
    while (qh < qt) {
        uint32_t b = queue[qh++];
        if (hg->g.cls[b] != LH_CLASS_REACHABLE) {
            reclassify(hg, b);
            n++;
        }
        for (uint64_t j = hg->g.off[b]; j < hg->g.off[b + 1]; j++) {
            uint32_t t = LH_EDGE_NODE(hg->g.dst[j]);
            if (t < hg->n_blocks && !seen[t] &&
                (oh->blk_owner[t] == LH_OBJOWN_NONE || oh->blk_owner[t] == LH_OBJOWN_ARENA ||
                 oh->g.cls[oh->blk_owner[t]] == LH_CLASS_REACHABLE)) {
                seen[t] = 1;
                queue[qt++] = t;
            }
        }
    }
    LH_FREE_ALL(queue, seen);
    return n;
}

uint32_t
lh_objheap_find(const lh_objheap_t *oh, uint64_t addr)
{
    size_t lo = LH_LOWER(oh->objs, oh->n_objs, lh_obj_t, addr, addr);
    return lo < oh->n_objs && oh->objs[lo].addr == addr ? (uint32_t)lo : LH_NODE_NONE;
}

const char *
lh_objheap_type(const lh_objheap_t *oh, uint32_t node)
{
    if (node < oh->n_objs) {
        const lh_obj_t *o = &oh->objs[node];
        return oh->strs[o->cls ? o->cls : o->kind];
    }
    if (node - oh->n_objs < oh->n_ext) {
        return lh_heapgraph_type(oh->hg, oh->ext[node - oh->n_objs]);
    }
    return "root";
}

const char *
lh_objheap_node_name(const lh_objheap_t *oh, uint32_t node, char *buf, size_t len)
{
    uint32_t nn = oh->n_objs + oh->n_ext;
    if (node < oh->n_objs) {
        const lh_obj_t *o = &oh->objs[node];
        if (o->name) {
            snprintf(buf, len, "%s (%s 0x%" PRIx64 ")", oh->strs[o->name],
                     lh_objheap_type(oh, node), o->addr);
        } else {
            snprintf(buf, len, "%s 0x%" PRIx64, lh_objheap_type(oh, node), o->addr);
        }
    } else if (node < nn) {
        snprintf(buf, len, "native 0x%" PRIx64 " (%s)", oh->hg->blocks[oh->ext[node -
                 oh->n_objs]].addr, lh_objheap_type(oh, node));
    } else if (node - nn < oh->n_roots) {
        snprintf(buf, len, "%s", oh->strs[oh->roots[node - nn].name]);
    } else {
        snprintf(buf, len, "[all roots]");
    }
    return buf;
}

/* A key for display: printable as is, else with \x escapes; long keys shortened. */
static void
quote_key(char *buf, size_t len, const char *key, char q)
{
    size_t k = 0, n = strlen(key);
    if (len < 8) {
        buf[0] = '\0';
        return;
    }
    buf[k++] = q;
    for (size_t i = 0; i < n && k + 8 < len; i++) {
        unsigned char c = (unsigned char)key[i];
        if (i == 40 && n > 48) {
            memcpy(buf + k, "...", 3);
            k += 3;
            break;
        }
        if (c == (unsigned char)q || c == '\\') {
            buf[k++] = '\\';
            buf[k++] = (char)c;
        } else if (c < 0x20 || c == 0x7f) {
            k += (size_t)snprintf(buf + k, len - k, "\\x%02x", c);
        } else {
            buf[k++] = (char)c;
        }
    }
    buf[k++] = q;
    buf[k] = '\0';
}

const char *
lh_objheap_edge_label(const lh_objheap_t *oh, const lh_objedge_t *e, char *buf, size_t len)
{
    const char *s = e->kind == LH_OBJEDGE_ELEM || e->label >= oh->n_strs ? ""
                                                                        : oh->strs[e->label];
    /* the name between a prefix and a suffix; REF and NATIVE show no name */
    static const struct {
        const char *pre, *post;
        int named;
    } fix[] = {
        [LH_OBJEDGE_REF] = {"->", "", 0},        [LH_OBJEDGE_PAD] = {"my ", "", 1},
        [LH_OBJEDGE_GLOB] = {"{", "}", 1},       [LH_OBJEDGE_CAPTURE] = {"closure ", "", 1},
        [LH_OBJEDGE_MAGIC] = {"magic '", "'", 1}, [LH_OBJEDGE_ATTR] = {".", "", 1},
        [LH_OBJEDGE_NATIVE] = {"native", "", 0}, [LH_OBJEDGE_XS] = {"XS struct", "", 0},
    };
    int py = oh->lang == LH_OBJLANG_PYTHON;
    char q[200];
    if (e->kind == LH_OBJEDGE_ELEM) {
        snprintf(buf, len, "[%" PRIu64 "]", e->label);
    } else if (e->kind == LH_OBJEDGE_KEY) {
        quote_key(q, sizeof q, s, py ? '\'' : '"');
        snprintf(buf, len, py ? "[%s]" : "{%s}", q);
    } else if (e->kind < sizeof fix / sizeof fix[0] && fix[e->kind].pre) {
        snprintf(buf, len, "%s%s%s", fix[e->kind].pre, fix[e->kind].named ? s : "",
                 fix[e->kind].post);
    } else {
        snprintf(buf, len, "%s", s[0] ? s : "internal");
    }
    if (e->flags & LH_OBJEDGE_WEAK) {
        size_t l = strlen(buf);
        snprintf(buf + l, len - l, " (weak)");
    }
    return buf;
}

size_t
lh_objheap_names(const lh_objheap_t *oh, uint32_t v, size_t *first)
{
    size_t lo = 0, hi = oh->n_names;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (oh->names[mid].node < v) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    *first = lo;
    size_t n = 0;
    while (lo + n < oh->n_names && oh->names[lo + n].node == v) {
        n++;
    }
    return n;
}

/* The strong labelled edge holder -> v (the first one), or NULL. */
static const lh_objedge_t *
edge_to(const lh_objheap_t *oh, uint32_t holder, uint32_t v)
{
    for (uint64_t j = oh->eoff[holder]; j < oh->eoff[holder + 1]; j++) {
        if (oh->edges[j].dst == v && !(oh->edges[j].flags & LH_OBJEDGE_WEAK)) {
            return &oh->edges[j];
        }
    }
    return NULL;
}

/* The arrays of a breadth-first search over g, one slot a node each: prev[] (the node each
 * was reached from) and the queue. Returns 0 or LH_ENOMEM (with nothing allocated). */
static int
bfs_alloc(const lh_refgraph_t *g, uint32_t **prev, uint32_t **queue)
{
    *prev = malloc((size_t)g->n_nodes * sizeof **prev);
    *queue = malloc((size_t)g->n_nodes * sizeof **queue);
    if (!*prev || !*queue) {
        LH_FREE_ALL(*prev, *queue);
        return LH_ENOMEM;
    }
    return 0;
}

/* A search from v: nothing reached (LH_NODE_NONE) but v, which is queued. Returns the
 * queue's length. */
static size_t
bfs_start(const lh_refgraph_t *g, uint32_t v, uint32_t *prev, uint32_t *queue)
{
    memset(prev, 0xff, (size_t)g->n_nodes * sizeof *prev);
    prev[v] = v;
    queue[0] = v;
    return 1;
}

int
lh_objheap_cycle(const lh_objheap_t *oh, uint32_t v, const lh_objedge_t **path, size_t max)
{
    const lh_refgraph_t *g = &oh->g;
    if (v >= oh->n_objs + oh->n_ext) {
        return -1;
    }
    /* Forward breadth-first search from v until an edge comes back to it. */
    uint32_t *prev, *queue;
    if (bfs_alloc(g, &prev, &queue) < 0) {
        return LH_ENOMEM;
    }
    size_t qh = 0, qt = bfs_start(g, v, prev, queue);
    uint32_t last = LH_NODE_NONE; /* the holder whose edge closes the cycle */
    while (qh < qt && last == LH_NODE_NONE) {
        uint32_t u = queue[qh++];
        for (uint64_t j = g->off[u]; j < g->off[u + 1]; j++) {
            uint32_t d = LH_EDGE_NODE(g->dst[j]);
            if (d == v) {
                last = u;
                break;
            }
            if (d != g->super && prev[d] == LH_NODE_NONE) {
                prev[d] = u;
                queue[qt++] = d;
            }
        }
    }
    int n = -1;
    if (last != LH_NODE_NONE) {
        /* length first, then the edges from v's end */
        size_t len = 1;
        for (uint32_t u = last; u != v; u = prev[u]) {
            len++;
        }
        n = (int)(len < max ? len : max);
        size_t i = len;
        uint32_t to = v;
        for (uint32_t u = last;; u = prev[u]) {
            i--;
            if (i < max) {
                path[i] = edge_to(oh, u, to);
            }
            if (u == v) {
                break;
            }
            to = u;
        }
    }
    LH_FREE_ALL(prev, queue);
    return n;
}

/* The path from holder h to v that a backward search left in prev[] (h: its first edge;
 * a root: from its target), written to path[0..max); returns its length (at most max). A
 * path longer than max keeps its two ends, the hops next to the holder and those next to
 * v, with one NULL for the hops left out between them: what holds v and what v is in
 * stay readable (the 300th closure of a chain each link of which wraps the one before). */
static int
path_back(const lh_objheap_t *oh, const uint32_t *prev, uint32_t h, uint32_t v,
          const lh_objedge_t **path, size_t max)
{
    uint32_t first = h >= oh->n_objs + oh->n_ext ? prev[h] : h;
    size_t total = 0;
    for (uint32_t u = first; u != v; u = prev[u]) {
        total++;
    }
    size_t head = total <= max ? total : max / 2;
    size_t tail_from = total <= max ? total : total - (max - head - 1);
    size_t n = 0, i = 0;
    for (uint32_t u = first; u != v; u = prev[u], i++) {
        if (i < head || i >= tail_from) {
            path[n++] = edge_to(oh, u, prev[u]);
        } else if (i == head) {
            path[n++] = NULL;
        }
    }
    return (int)n;
}

/* Whether every name of the named object v is a frame's variable (LH_OBJNAME_LEXICAL). */
static int
only_lexical(const lh_objheap_t *oh, uint32_t v)
{
    size_t first, n = lh_objheap_names(oh, v, &first);
    for (size_t i = 0; i < n; i++) {
        if (oh->names[first + i].kind != LH_OBJNAME_LEXICAL) {
            return 0;
        }
    }
    return n > 0;
}

/* Whether holder h -> v is what makes v a frame's variable: a stack or main program root,
 * a pad entry. */
static int
names_it(const lh_objheap_t *oh, uint32_t h, uint32_t v)
{
    uint32_t nn = oh->n_objs + oh->n_ext;
    if (h >= nn) {
        return h - nn < oh->n_roots && (oh->roots[h - nn].kind == LH_OBJROOT_STACK ||
                                        oh->roots[h - nn].kind == LH_OBJROOT_MAIN);
    }
    const lh_objedge_t *e = edge_to(oh, h, v);
    return e && e->kind == LH_OBJEDGE_PAD;
}

int
lh_objheap_holders(const lh_objheap_t *oh, uint32_t v, size_t limit,
                   const lh_objedge_t **path, size_t max, lh_objheap_holder_fn *fn, void *arg)
{
    uint32_t nn = oh->n_objs + oh->n_ext;
    const lh_refgraph_t *g = &oh->g;
    int self_named = v < oh->n_objs && oh->objs[v].name;
    if (v >= nn || (self_named && (limit <= 1 || !only_lexical(oh, v)))) {
        fn(arg, v, path, 0);
        return 1;
    }
    /* A variable of a frame being run (a local, a `my`) is its own first holder, but not
     * the reason it outlives that frame: what else holds it follows (a per-request logger
     * in a local is also in logging's loggerDict). The frame's own reference to it (its
     * stack root, its pad entry) is not searched again. */
    size_t found = 0;
    if (self_named) {
        fn(arg, v, path, 0);
        found = 1;
    }
    /* Backwards breadth-first search to the nearest named objects and roots, not past
     * them: shortest first. */
    uint32_t *prev, *queue;
    if (bfs_alloc(g, &prev, &queue) < 0) {
        return LH_ENOMEM;
    }
    for (int pass = 0; pass < 2 && found == (size_t)self_named; pass++) {
        size_t qh = 0, qt = bfs_start(g, v, prev, queue);
        int held_seen = 0;
        while (qh < qt && found < limit) {
            uint32_t u = queue[qh++];
            for (uint64_t j = g->roff[u]; j < g->roff[u + 1] && found < limit; j++) {
                uint32_t h = LH_EDGE_NODE(g->rsrc[j]);
                if (h == g->super || prev[h] != LH_NODE_NONE ||
                    (self_named && u == v && names_it(oh, h, v))) {
                    continue;
                }
                if (pass == 0 && h >= nn && h - nn < oh->n_roots &&
                    oh->roots[h - nn].kind == LH_OBJROOT_HELD) {
                    held_seen = 1; /* the last resort: first look for a name */
                    continue;
                }
                prev[h] = u;
                if (h >= nn || (h < oh->n_objs && oh->objs[h].name)) {
                    fn(arg, h, path, path_back(oh, prev, h, v, path, max));
                    found++;
                    continue;
                }
                queue[qt++] = h;
            }
        }
        if (!held_seen) {
            break; /* the second pass would find nothing more */
        }
    }
    LH_FREE_ALL(prev, queue);
    return found ? (int)found : -1;
}

/* lh_objheap_path's holder: the first one, its path copied. */
typedef struct first_holder {
    uint32_t *start;
    const lh_objedge_t **path;
    int n;
} first_holder_t;

static void
take_first(void *arg, uint32_t start, const lh_objedge_t *const *path, int n)
{
    first_holder_t *f = arg;
    *f->start = start;
    if (f->path != (const lh_objedge_t **)path) {
        memcpy(f->path, path, (size_t)n * sizeof *path);
    }
    f->n = n;
}

int
lh_objheap_path(const lh_objheap_t *oh, uint32_t v, uint32_t *start,
                const lh_objedge_t **path, size_t max)
{
    first_holder_t f = {start, path, -1};
    *start = v;
    int rc = lh_objheap_holders(oh, v, 1, path, max, take_first, &f);
    return rc < 0 ? rc : f.n;
}

int
lh_objheap_native_under(const lh_objheap_t *oh, uint64_t **out, uint64_t *total)
{
    uint32_t nobj = oh->n_objs, next = oh->n_ext;
    uint64_t *under = calloc(nobj ? nobj : 1, sizeof *under);
    /* owner[x]: the object ext node nobj + x hangs under; NONE: none; UNSET: not found yet */
    const uint32_t none = UINT32_MAX, unset = UINT32_MAX - 1;
    uint32_t *owner = malloc((next ? next : 1) * sizeof *owner);
    uint32_t *chain = malloc((next ? next : 1) * sizeof *chain);
    if (!under || !owner || !chain) {
        LH_FREE_ALL(under, owner, chain);
        return LH_ENOMEM;
    }
    for (uint32_t x = 0; x < next; x++) {
        owner[x] = unset;
    }
    uint64_t sum = 0;
    for (uint32_t x = 0; x < next; x++) {
        /* up the dominator tree through ext nodes, then set the whole chain at once */
        size_t n = 0;
        uint32_t d = nobj + x, found = none;
        while (d >= nobj && d - nobj < next && owner[d - nobj] == unset) {
            chain[n++] = d - nobj;
            uint32_t up = oh->g.idom ? oh->g.idom[d] : d;
            if (up == d || n > next) {
                d = none;
                break;
            }
            d = up;
        }
        if (d < nobj) {
            found = d;
        } else if (d != none && d - nobj < next) {
            found = owner[d - nobj];
        }
        for (size_t i = 0; i < n; i++) {
            owner[chain[i]] = found;
        }
        sum += oh->node_size[nobj + x];
        if (owner[x] != none) {
            under[owner[x]] += oh->node_size[nobj + x];
        }
    }
    LH_FREE_ALL(owner, chain);
    *out = under;
    if (total) {
        *total = sum;
    }
    return 0;
}
