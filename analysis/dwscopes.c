/* leakhound - SPDX-License-Identifier: MIT
 *
 * dwscopes.c: per-CU index of the functions and inlined calls that have code (dwscopes.h).
 */
#include "dwscopes.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>

#include "bound.h"
#include "grow.h"

#define NONE UINT32_MAX

typedef struct ds_range {
    Dwarf_Addr lo, hi; /* [lo, hi) */
    uint32_t node;
    uint32_t encl;     /* the nearest earlier range enclosing this one, or NONE */
} ds_range_t;

typedef struct ds_node {
    Dwarf_Off off;     /* the DIE */
    uint32_t parent;   /* the nearest enclosing function DIE with code, or NONE */
    uint16_t depth;    /* of function DIEs: 0 for one with no parent */
    uint16_t inlined;  /* DW_TAG_inlined_subroutine */
} ds_node_t;

typedef struct ds_cu {
    Dwarf *dbg;        /* key, with off */
    Dwarf_Off off;
    int usable;        /* 0: not indexable (LH_DWSCOPES_NOINDEX) */
    ds_range_t *r;
    size_t nr;
    ds_node_t *nodes;
    size_t nn;
} ds_cu_t;

struct lh_dwscopes {
    ds_cu_t **slot;    /* open addressing on (dbg, off) */
    size_t mask;
    size_t n;
};

lh_dwscopes_t *
lh_dwscopes_new(void)
{
    lh_dwscopes_t *ix = calloc(1, sizeof *ix);
    if (ix && !(ix->slot = calloc(64, sizeof *ix->slot))) {
        free(ix);
        return NULL;
    }
    if (ix) {
        ix->mask = 63;
    }
    return ix;
}

static void
cu_free(ds_cu_t *cu)
{
    if (cu) {
        free(cu->r);
        free(cu->nodes);
        free(cu);
    }
}

void
lh_dwscopes_free(lh_dwscopes_t *ix)
{
    if (!ix) {
        return;
    }
    for (size_t i = 0; i <= ix->mask; i++) {
        cu_free(ix->slot[i]);
    }
    free(ix->slot);
    free(ix);
}

static size_t
cu_hash(const Dwarf *dbg, Dwarf_Off off)
{
    uint64_t h = ((uint64_t)(uintptr_t)dbg ^ (off * 0x9E3779B97F4A7C15ull)) * 0xff51afd7ed558ccdull;
    return (size_t)(h ^ (h >> 29));
}

/* ---------------------------------------------------------------------------------------
 * Building one CU's index
 * ------------------------------------------------------------------------------------- */

/* A growable array (grow.h) and its length. */
typedef struct vec {
    void *v;
    size_t n, cap, size;
} vec_t;

static void *
vec_push(vec_t *g)
{
    if (lh_grow(&g->v, &g->cap, g->n, g->size, 64) < 0) {
        return NULL;
    }
    return (char *)g->v + g->n++ * g->size;
}

typedef struct walk_item {
    Dwarf_Die die;
    uint32_t parent;
} walk_item_t;

static int
is_function(int tag)
{
    return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
           tag == DW_TAG_entry_point;
}

/* One walk of the CU's DIE tree: a node per function DIE with code, a range per pc range. */
static int
collect(Dwarf_Die *cudie, vec_t *ranges, vec_t *nodes)
{
    vec_t stack = {.size = sizeof(walk_item_t)};
    Dwarf_Die child;
    int rc = 0;
    if (dwarf_child(cudie, &child) != 0) {
        return 0;
    }
    walk_item_t *w = vec_push(&stack);
    if (!w) {
        return -1;
    }
    *w = (walk_item_t){child, NONE};
    while (stack.n > 0) {
        walk_item_t it = ((walk_item_t *)stack.v)[--stack.n];
        Dwarf_Die next;
        if (dwarf_siblingof(&it.die, &next) == 0) {
            if (!(w = vec_push(&stack))) {
                rc = -1;
                break;
            }
            *w = (walk_item_t){next, it.parent};
        }
        uint32_t inner = it.parent;
        int tag = dwarf_tag(&it.die);
        if (is_function(tag)) {
            Dwarf_Addr base, lo, hi;
            size_t before = ranges->n;
            uint32_t me = (uint32_t)nodes->n;
            for (ptrdiff_t off = 0; (off = dwarf_ranges(&it.die, off, &base, &lo, &hi)) > 0;) {
                ds_range_t *r = hi > lo ? vec_push(ranges) : NULL;
                if (hi > lo && !r) {
                    rc = -1;
                    break;
                }
                if (r) {
                    *r = (ds_range_t){lo, hi, me, NONE};
                }
            }
            if (rc < 0) {
                break;
            }
            if (ranges->n > before) {
                ds_node_t *nd = vec_push(nodes);
                if (!nd || nodes->n >= NONE) {
                    rc = -1;
                    break;
                }
                uint16_t depth = 0;
                if (it.parent != NONE) {
                    depth = (uint16_t)(((ds_node_t *)nodes->v)[it.parent].depth + 1);
                }
                *nd = (ds_node_t){dwarf_dieoffset(&it.die), it.parent, depth,
                                  tag == DW_TAG_inlined_subroutine};
                inner = me;
            }
        }
        if (dwarf_haschildren(&it.die) > 0 && dwarf_child(&it.die, &next) == 0) {
            if (!(w = vec_push(&stack))) {
                rc = -1;
                break;
            }
            *w = (walk_item_t){next, inner};
        }
    }
    free(stack.v);
    return rc;
}

static const ds_node_t *sort_nodes; /* qsort has no context argument in C11 */

static int
range_cmp(const void *a, const void *b)
{
    const ds_range_t *x = a, *y = b;
    if (x->lo != y->lo || x->hi != y->hi) {
        return lh_order2(x->lo, y->lo, y->hi, x->hi); /* the enclosing (longer) range first */
    }
    uint16_t dx = sort_nodes[x->node].depth, dy = sort_nodes[y->node].depth;
    return dx < dy ? -1 : dx > dy;
}

/* Sorts the ranges and links each to the nearest range enclosing it; 0 when some two
 * ranges overlap without one containing the other (the index cannot answer then). */
static int
link_ranges(ds_cu_t *cu)
{
    sort_nodes = cu->nodes;
    qsort(cu->r, cu->nr, sizeof *cu->r, range_cmp);
    sort_nodes = NULL;
    uint32_t top = NONE; /* the innermost open range; the open ones chain through encl */
    for (size_t i = 0; i < cu->nr; i++) {
        ds_range_t *r = &cu->r[i];
        while (top != NONE && cu->r[top].hi <= r->lo) {
            top = cu->r[top].encl;
        }
        if (top != NONE && cu->r[top].hi < r->hi) {
            return 0;
        }
        r->encl = top;
        top = (uint32_t)i;
    }
    return 1;
}

static ds_cu_t *
cu_build(Dwarf *dbg, Dwarf_Die *cudie)
{
    ds_cu_t *cu = calloc(1, sizeof *cu);
    if (!cu) {
        return NULL;
    }
    cu->dbg = dbg;
    cu->off = dwarf_dieoffset(cudie);
    vec_t ranges = {.size = sizeof(ds_range_t)}, nodes = {.size = sizeof(ds_node_t)};
    if (collect(cudie, &ranges, &nodes) < 0) {
        free(ranges.v);
        free(nodes.v);
        free(cu);
        return NULL;
    }
    cu->r = ranges.v;
    cu->nr = ranges.n;
    cu->nodes = nodes.v;
    cu->nn = nodes.n;
    cu->usable = cu->nr < NONE && link_ranges(cu);
    return cu;
}

static int
table_grow(lh_dwscopes_t *ix)
{
    size_t cap = (ix->mask + 1) * 2;
    ds_cu_t **slot = calloc(cap, sizeof *slot);
    if (!slot) {
        return -1;
    }
    for (size_t i = 0; i <= ix->mask; i++) {
        ds_cu_t *cu = ix->slot[i];
        if (cu) {
            size_t k = cu_hash(cu->dbg, cu->off) & (cap - 1);
            while (slot[k]) {
                k = (k + 1) & (cap - 1);
            }
            slot[k] = cu;
        }
    }
    free(ix->slot);
    ix->slot = slot;
    ix->mask = cap - 1;
    return 0;
}

/* The index of cudie's CU, built on first use; NULL when out of memory. */
static ds_cu_t *
cu_get(lh_dwscopes_t *ix, Dwarf *dbg, Dwarf_Die *cudie)
{
    Dwarf_Off off = dwarf_dieoffset(cudie);
    size_t k = cu_hash(dbg, off) & ix->mask;
    for (; ix->slot[k]; k = (k + 1) & ix->mask) {
        if (ix->slot[k]->dbg == dbg && ix->slot[k]->off == off) {
            return ix->slot[k];
        }
    }
    if ((ix->n + 1) * 2 > ix->mask + 1) {
        if (table_grow(ix) < 0) {
            return NULL;
        }
        k = cu_hash(dbg, off) & ix->mask;
        while (ix->slot[k]) {
            k = (k + 1) & ix->mask;
        }
    }
    ds_cu_t *cu = cu_build(dbg, cudie);
    if (cu) {
        ix->slot[k] = cu;
        ix->n++;
    }
    return cu;
}

/* ---------------------------------------------------------------------------------------
 * Lookup
 * ------------------------------------------------------------------------------------- */

int
lh_dwscopes_at(lh_dwscopes_t *ix, Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Die **out)
{
    *out = NULL;
    Dwarf *dbg = cudie->cu ? dwarf_cu_getdwarf(cudie->cu) : NULL;
    if (!dbg) {
        return LH_DWSCOPES_NOINDEX;
    }
    ds_cu_t *cu = cu_get(ix, dbg, cudie);
    if (!cu) {
        return -1;
    }
    if (!cu->usable) {
        return LH_DWSCOPES_NOINDEX;
    }
    /* The last range starting at or before pc, then out to the first that contains it. */
    size_t lo = LH_UPPER(cu->r, cu->nr, ds_range_t, lo, pc);
    uint32_t i = lo > 0 ? (uint32_t)(lo - 1) : NONE;
    while (i != NONE && pc >= cu->r[i].hi) {
        i = cu->r[i].encl;
    }
    if (i == NONE) {
        return 0;
    }
    int n = 0;
    for (uint32_t k = cu->r[i].node; k != NONE; k = cu->nodes[k].parent) {
        n++;
        if (!cu->nodes[k].inlined) {
            break;
        }
    }
    Dwarf_Die *v = malloc((size_t)n * sizeof *v);
    if (!v) {
        return -1;
    }
    int j = 0;
    for (uint32_t k = cu->r[i].node; j < n; k = cu->nodes[k].parent) {
        if (!dwarf_offdie(dbg, cu->nodes[k].off, &v[j++])) {
            free(v);
            return LH_DWSCOPES_NOINDEX;
        }
    }
    *out = v;
    return n;
}
