/* leakhound - SPDX-License-Identifier: MIT
 *
 * folded.c: folded stacks.
 */
#include "folded.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

#include "calltree.h"

typedef struct line {
    char *path;
    double value;
} line_t;

typedef struct lines {
    line_t *v;
    size_t n, cap;
} lines_t;

static int
add_path(void *ctx, const lh_frame_t *const *path, size_t n, double value, lh_err_t *err)
{
    lines_t *ls = ctx;
    char name[512];
    size_t len = 0, cap = 256;
    char *s = malloc(cap);
    if (!s) {
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(lh_funcs_frame_name(path[i], name, sizeof name));
        if (len + k + 2 > cap) {
            while (len + k + 2 > cap) {
                cap *= 2;
            }
            char *t = realloc(s, cap);
            if (!t) {
                free(s);
                return lh_err_set(err, LH_ENOMEM, "out of memory");
            }
            s = t;
        }
        if (i) {
            s[len++] = ';';
        }
        for (size_t j = 0; j < k; j++) {
            char ch = name[j];
            s[len++] = ch == ';' ? ':' : ((unsigned char)ch < 0x20 || ch == 0x7f) ? '?' : ch;
        }
    }
    s[len] = '\0';
    if (lh_grow(&ls->v, &ls->cap, ls->n, sizeof *ls->v, 256) < 0) {
        free(s);
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    ls->v[ls->n++] = (line_t){s, value};
    return 0;
}

static int
cmp_line(const void *a, const void *b)
{
    return strcmp(((const line_t *)a)->path, ((const line_t *)b)->path);
}

int
lh_view_folded(FILE *out, lh_collect_t *c, const lh_funcs_t *f, const lh_supp_t *supp,
               lh_metric_t m, lh_err_t *err)
{
    lines_t ls = {0};
    int rc = lh_tree_paths(c, f, supp, m, add_path, &ls, err);
    if (rc >= 0) {
        lh_qsort(ls.v, ls.n, sizeof *ls.v, cmp_line);
        for (size_t i = 0; i < ls.n;) {
            size_t j = i;
            double v = 0;
            while (j < ls.n && strcmp(ls.v[j].path, ls.v[i].path) == 0) {
                v += ls.v[j++].value;
            }
            long long r = llround(v);
            if (r > 0) {
                fprintf(out, "%s %lld\n", ls.v[i].path, r);
            }
            i = j;
        }
        if (fflush(out) != 0 || ferror(out)) {
            rc = lh_err_set(err, LH_EIO, "error writing folded stacks");
        }
    }
    for (size_t i = 0; i < ls.n; i++) {
        free(ls.v[i].path);
    }
    free(ls.v);
    return rc;
}
