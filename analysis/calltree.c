/* leakhound - SPDX-License-Identifier: MIT
 *
 * calltree.c: top-down and bottom-up call trees, and root-first paths.
 */
#include "calltree.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hash.h"

static uint64_t
hash_key(uint32_t parent, uint32_t func)
{
    uint64_t h = ((uint64_t)parent << 32 | func) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 31);
}

static uint64_t
node_hash(const void *t, size_t k)
{
    const lh_tnode_t *x = &((const lh_tree_t *)t)->v[k];
    return hash_key(x->parent, x->func);
}

/* The child of parent for func, created when new; LH_TNODE_NONE when out of memory. */
static uint32_t
child(lh_tree_t *t, uint32_t parent, uint32_t func, const lh_frame_t *fr)
{
    size_t i = hash_key(parent, func) & t->hash_mask;
    while (t->hash[i] != LH_TNODE_NONE) {
        lh_tnode_t *x = &t->v[t->hash[i]];
        if (x->parent == parent && x->func == func) {
            return t->hash[i];
        }
        i = (i + 1) & t->hash_mask;
    }
    /* the index holds nodes 1.. (node 0, the root, is no one's child) */
    int grown = lh_index_room(&t->hash, &t->hash_mask, 1, t->n, node_hash, t);
    if (grown != 0) {
        return grown < 0 ? LH_TNODE_NONE : child(t, parent, func, fr);
    }
    if (lh_grow(&t->v, &t->cap, t->n, sizeof *t->v, 1024) < 0) {
        return LH_TNODE_NONE;
    }
    uint32_t k = (uint32_t)t->n++;
    t->v[k] = (lh_tnode_t){func, parent, LH_TNODE_NONE, t->v[parent].first_child, 0, 0,
                           fr->file, fr->line};
    t->v[parent].first_child = k;
    t->hash[i] = k;
    return k;
}

static lh_tree_t *sort_tree;

static int
cmp_node(const void *a, const void *b)
{
    const lh_tnode_t *x = &sort_tree->v[*(const uint32_t *)a];
    const lh_tnode_t *y = &sort_tree->v[*(const uint32_t *)b];
    if (x->value != y->value) {
        return x->value > y->value ? -1 : 1;
    }
    return x->func < y->func ? -1 : x->func > y->func;
}

/* Sorts every node's children by value, descending. */
static int
sort_children(lh_tree_t *t)
{
    uint32_t *buf = malloc((t->n ? t->n : 1) * sizeof *buf);
    if (!buf) {
        return -1;
    }
    sort_tree = t;
    for (size_t p = 0; p < t->n; p++) {
        size_t k = 0;
        for (uint32_t c = t->v[p].first_child; c != LH_TNODE_NONE; c = t->v[c].next_sibling) {
            buf[k++] = c;
        }
        if (k < 2) {
            continue;
        }
        lh_qsort(buf, k, sizeof *buf, cmp_node);
        t->v[p].first_child = buf[0];
        for (size_t i = 0; i + 1 < k; i++) {
            t->v[buf[i]].next_sibling = buf[i + 1];
        }
        t->v[buf[k - 1]].next_sibling = LH_TNODE_NONE;
    }
    free(buf);
    return 0;
}

/* The value of a stack in a tree: growth counts only growing stacks. */
static double
stack_value(const lh_funcs_t *f, const lh_collect_t *c, uint32_t id, lh_metric_t m,
            uint64_t *n_allocs)
{
    lh_fmetrics_t fm;
    lh_funcs_stack_metrics(f, c, id, &fm);
    double v = lh_fmetrics_value(&fm, m);
    *n_allocs = fm.n_allocs;
    return v > 0 ? v : 0;
}

/* The counted stack id's site, or NULL (not counted, suppressed). */
static int
counted_site(lh_collect_t *c, const lh_supp_t *supp, uint32_t id, const lh_site_t **site,
             lh_err_t *err)
{
    const lh_cstack_t *s = lh_collect_stack(c, id);
    *site = NULL;
    if (!s->n_allocs && !s->live_blocks) {
        return 0;
    }
    int rc = lh_collect_site(c, id, site, err);
    if (rc < 0) {
        return rc;
    }
    if (supp && lh_supp_match(supp, (*site)->frames, (*site)->n_frames) >= 0) {
        *site = NULL;
    }
    return 0;
}

int
lh_tree_build(lh_tree_t *t, lh_collect_t *c, const lh_funcs_t *f, const lh_supp_t *supp,
              const lh_tree_opts_t *opts, lh_err_t *err)
{
    size_t n_stacks = lh_collect_n_stacks(c);
    int found_focus = 0;
    int rc = 0;
    memset(t, 0, sizeof *t);
    t->metric = opts->metric;
    t->growth_is_snapshots = f->growth_is_snapshots;
    t->bottom_up = opts->bottom_up;
    t->cap = 1024;
    if (!(t->v = malloc(t->cap * sizeof *t->v)) ||
        lh_index_rebuild(&t->hash, &t->hash_mask, 2048, 1, 0, node_hash, t) < 0) {
        rc = lh_err_set(err, LH_ENOMEM, "out of memory building the call tree");
        goto fail;
    }
    t->v[0] = (lh_tnode_t){LH_TNODE_NONE, LH_TNODE_NONE, LH_TNODE_NONE, LH_TNODE_NONE, 0, 0,
                           NULL, 0};
    t->n = 1;
    for (uint32_t id = 0; id < n_stacks; id++) {
        const lh_site_t *site;
        uint64_t n_allocs;
        if ((rc = counted_site(c, supp, id, &site, err)) < 0) {
            goto fail;
        }
        if (!site) {
            continue;
        }
        double v = stack_value(f, c, id, opts->metric, &n_allocs);
        t->total += v;
        if (v == 0 && opts->metric != LH_METRIC_ALLOCATED &&
            opts->metric != LH_METRIC_ALLOCATIONS) {
            continue;
        }
        size_t n = lh_funcs_trim(site->frames, site->n_frames);
        /* the path is frames[from] .. frames[to] walked by step */
        long from = t->bottom_up ? 0 : (long)n - 1, to = t->bottom_up ? (long)n - 1 : 0;
        long step = t->bottom_up ? 1 : -1;
        if (opts->focus) {
            long at = -1;
            for (long i = from; i != to + step; i += step) {
                if (site->frames[i].function && strcmp(site->frames[i].function, opts->focus) == 0) {
                    at = i;
                    break;
                }
            }
            if (at < 0) {
                continue;
            }
            found_focus = 1;
            from = at;
        }
        uint32_t node = 0;
        t->v[0].value += v;
        t->v[0].n_allocs += n_allocs;
        for (long i = from; n && i != to + step; i += step) {
            long fn = lh_funcs_find(f, &site->frames[i]);
            if (fn < 0) {
                continue; /* cannot happen: f named every frame of counted stacks */
            }
            node = child(t, node, (uint32_t)fn, &site->frames[i]);
            if (node == LH_TNODE_NONE) {
                rc = lh_err_set(err, LH_ENOMEM, "out of memory building the call tree");
                goto fail;
            }
            t->v[node].value += v;
            t->v[node].n_allocs += n_allocs;
        }
    }
    if (opts->focus && !found_focus) {
        rc = lh_err_set(err, LH_ENOENT, "no function named '%s' on the %s stacks",
                        opts->focus, lh_metric_name(opts->metric));
        goto fail;
    }
    if (sort_children(t) < 0) {
        rc = lh_err_set(err, LH_ENOMEM, "out of memory building the call tree");
        goto fail;
    }
    return 0;
fail:
    lh_tree_fini(t);
    return rc;
}

void
lh_tree_fini(lh_tree_t *t)
{
    free(t->v);
    free(t->hash);
    memset(t, 0, sizeof *t);
}

int
lh_tree_paths(lh_collect_t *c, const lh_funcs_t *f, const lh_supp_t *supp, lh_metric_t m,
              int (*fn)(void *ctx, const lh_frame_t *const *path, size_t n, double value,
                        lh_err_t *err),
              void *ctx, lh_err_t *err)
{
    size_t n_stacks = lh_collect_n_stacks(c);
    const lh_frame_t **path = NULL;
    size_t cap = 0;
    int rc = 0;
    for (uint32_t id = 0; id < n_stacks; id++) {
        const lh_site_t *site;
        uint64_t n_allocs;
        if ((rc = counted_site(c, supp, id, &site, err)) < 0) {
            break;
        }
        if (!site) {
            continue;
        }
        double v = stack_value(f, c, id, m, &n_allocs);
        if (v <= 0) {
            continue;
        }
        size_t n = lh_funcs_trim(site->frames, site->n_frames);
        if (lh_grow_to(&path, &cap, n, sizeof *path, 64) < 0) {
            rc = lh_err_set(err, LH_ENOMEM, "out of memory");
            break;
        }
        for (size_t i = 0; i < n; i++) {
            path[i] = &site->frames[n - 1 - i];
        }
        if ((rc = fn(ctx, path, n, v, err)) < 0) {
            break;
        }
    }
    free(path);
    return rc < 0 ? rc : 0;
}
