/* leakhound - SPDX-License-Identifier: MIT
 *
 * tree_view.c: call trees as text and JSON.
 */
#include "tree_view.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "funcs_view.h"
#include "json.h"
#include "text.h"

static double
pct(const lh_tree_t *t, double v)
{
    return t->total > 0 ? 100.0 * v / t->total : 0.0;
}

static int
shown(const lh_tree_t *t, const lh_tree_view_t *v, uint32_t node)
{
    return t->v[node].value > 0 && pct(t, t->v[node].value) >= v->min_percent;
}

/* prefix holds the guide for the current depth ("│  " / "   " per level) */
static void
text_node(FILE *out, const lh_tree_t *t, const lh_funcs_t *f, const lh_tree_view_t *v,
          uint32_t node, char *prefix, size_t plen, size_t cap, size_t depth, int last)
{
    const lh_tnode_t *x = &t->v[node];
    char val[48];
    fprintf(out, "%6.2f%% %12s  ", pct(t, x->value),
            lh_view_metric_str(val, sizeof val, t->metric, x->value, t->growth_is_snapshots));
    if (node != 0) {
        fputs(prefix, out);
        fputs(last ? "└─ " : "├─ ", out);
    }
    if (node == 0) {
        fputs("all", out);
    } else {
        const lh_func_t *fn = &f->v[x->func];
        lh_text_clean(out, fn->name);
        if (x->file) {
            fputs("  ", out);
            lh_text_clean(out, lh_text_rel_path(x->file, v->cwd));
            if (x->line) {
                fprintf(out, ":%" PRIu32, x->line);
            }
        } else if (fn->module) {
            fputs("  (in ", out);
            lh_text_clean(out, lh_sym_module_label(fn->module));
            fputc(')', out);
        }
    }
    fputc('\n', out);
    if (v->max_depth && depth >= v->max_depth) {
        return;
    }
    size_t add = node == 0 ? 0 : strlen(last ? "   " : "│  ");
    if (plen + add + 1 > cap) {
        return; /* absurdly deep: stop indenting further */
    }
    if (node != 0) {
        strcpy(prefix + plen, last ? "   " : "│  ");
    }
    uint32_t lastc = LH_TNODE_NONE;
    for (uint32_t c = x->first_child; c != LH_TNODE_NONE; c = t->v[c].next_sibling) {
        if (shown(t, v, c)) {
            lastc = c;
        }
    }
    for (uint32_t c = x->first_child; c != LH_TNODE_NONE; c = t->v[c].next_sibling) {
        if (shown(t, v, c)) {
            text_node(out, t, f, v, c, prefix, plen + add, cap, depth + 1, c == lastc);
        }
    }
    prefix[plen] = '\0';
}

int
lh_view_tree_text(FILE *out, const lh_tree_t *t, const lh_funcs_t *f, const lh_tree_view_t *v,
                  lh_err_t *err)
{
    char val[48];
    size_t cap = 16384;
    char *prefix = calloc(cap, 1);
    if (!prefix) {
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    fputs("leakhound tree: ", out);
    lh_text_clean(out, v->trace_path);
    fprintf(out, ", %s, %s (100%% = %s)", t->bottom_up ? "bottom-up" : "top-down",
            lh_metric_name(t->metric),
            lh_view_metric_str(val, sizeof val, t->metric, t->total, t->growth_is_snapshots));
    if (v->focus) {
        fputs(", focus on ", out);
        lh_text_clean(out, v->focus);
    }
    if (v->min_percent > 0) {
        fprintf(out, ", nodes under %g%% hidden", v->min_percent);
    }
    fputs("\n\n", out);
    if (t->total <= 0) {
        fprintf(out, "nothing %s in this trace\n",
                t->metric == LH_METRIC_GROWTH ? "grew over the marks" : lh_metric_name(t->metric));
    } else {
        text_node(out, t, f, v, 0, prefix, 0, cap, 0, 1);
    }
    free(prefix);
    return lh_view_flush(out, "the tree", err);
}

static void
json_node(FILE *out, const lh_tree_t *t, const lh_funcs_t *f, const lh_tree_view_t *v,
          uint32_t node, size_t depth)
{
    const lh_tnode_t *x = &t->v[node];
    const lh_func_t *fn = node ? &f->v[x->func] : NULL;
    fputs("{\"function\": ", out);
    lh_json_str(out, fn ? fn->name : "all");
    fputs(", \"file\": ", out);
    lh_json_str(out, x->file);
    fprintf(out, ", \"line\": %" PRIu32 ", \"module\": ", x->line);
    lh_json_str(out, fn ? fn->module : NULL);
    fprintf(out, ", \"value\": %.3f, \"percent\": %.4f, \"allocations\": %" PRIu64
                 ", \"children\": [",
            x->value, pct(t, x->value), x->n_allocs);
    int first = 1;
    if (!v->max_depth || depth < v->max_depth) {
        for (uint32_t c = x->first_child; c != LH_TNODE_NONE; c = t->v[c].next_sibling) {
            if (shown(t, v, c)) {
                if (!first) {
                    fputs(", ", out);
                }
                first = 0;
                json_node(out, t, f, v, c, depth + 1);
            }
        }
    }
    fputs("]}", out);
}

int
lh_view_tree_json(FILE *out, const lh_tree_t *t, const lh_funcs_t *f, const lh_tree_view_t *v,
                  lh_err_t *err)
{
    fputs("{\"trace\": ", out);
    lh_json_str(out, v->trace_path);
    fprintf(out, ", \"metric\": \"%s\", \"direction\": \"%s\", \"focus\": ",
            lh_metric_name(t->metric), t->bottom_up ? "bottom-up" : "top-down");
    lh_json_str(out, v->focus);
    fprintf(out, ", \"total\": %.3f, \"root\": ", t->total);
    json_node(out, t, f, v, 0, 0);
    fputs("}\n", out);
    return lh_view_flush(out, "the tree", err);
}
