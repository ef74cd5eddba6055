/* leakhound - SPDX-License-Identifier: MIT
 *
 * funcs_view.c: the per-function table.
 */
#include "funcs_view.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "json.h"
#include "text.h"

const char *
lh_view_metric_str(char *buf, size_t len, lh_metric_t m, double v, int per_snapshot)
{
    char h[32];
    if (m == LH_METRIC_GROWTH) {
        snprintf(buf, len, "%s%s/%s", v < 0 ? "-" : "+",
                 lh_text_human_bytes(h, sizeof h, (uint64_t)llround(fabs(v))),
                 per_snapshot ? "snapshot" : "mark");
    } else if (m == LH_METRIC_ALLOCATIONS) {
        snprintf(buf, len, "%.0f", v > 0 ? v : 0);
    } else {
        lh_text_human_bytes(buf, len, v > 0 ? (uint64_t)v : 0);
    }
    return buf;
}

static double
pct(double v, double total)
{
    return total > 0 ? 100.0 * v / total : 0.0;
}

int
lh_view_funcs_text(FILE *out, const lh_funcs_t *f, const lh_funcs_view_t *v, lh_err_t *err)
{
    char a[48], b[48], h[32];
    double total = lh_fmetrics_value(&f->total, v->metric);
    size_t n = v->top && v->top < f->n ? v->top : f->n;
    fputs("leakhound report: ", out);
    lh_text_clean(out, v->trace_path);
    fprintf(out, ", by function, sorted by %s %s\n", v->inclusive ? "inclusive" : "exclusive",
            lh_metric_name(v->metric));
    fprintf(out, "  total: %s allocated in %" PRIu64 " allocations, %s at the peak, %s leaked",
            lh_text_human_bytes(a, sizeof a, f->total.allocated), f->total.n_allocs,
            lh_text_human_bytes(b, sizeof b, f->total.peak),
            lh_text_human_bytes(h, sizeof h, f->total.leaked));
    if (f->n_growth_points) {
        fprintf(out, ", growth %s over %d %s",
                lh_view_metric_str(a, sizeof a, LH_METRIC_GROWTH, f->total.growth,
                                   f->growth_is_snapshots),
                f->n_growth_points, f->growth_is_snapshots ? "snapshots" : "marks");
    }
    fputc('\n', out);
    if (f->n_suppressed_stacks) {
        fprintf(out, "  suppressed: %" PRIu64 " stack%s\n", f->n_suppressed_stacks,
                f->n_suppressed_stacks == 1 ? "" : "s");
    }
    if (v->metric == LH_METRIC_GROWTH && !f->n_growth_points) {
        fputs("  (no growth: the trace has fewer than two marks or snapshots)\n", out);
    }
    fprintf(out, "\n%12s %6s %12s %6s %9s  %s\n", "exclusive", "%", "inclusive", "%", "allocs",
            "function");
    for (size_t i = 0; i < n; i++) {
        const lh_func_t *x = &f->v[i];
        double ve = lh_fmetrics_value(&x->excl, v->metric);
        double vi = lh_fmetrics_value(&x->incl, v->metric);
        if ((v->inclusive ? vi : ve) == 0) {
            break;
        }
        int per_snap = f->growth_is_snapshots;
        fprintf(out, "%12s %5.1f%% %12s %5.1f%% %9" PRIu64 "  ",
                lh_view_metric_str(a, sizeof a, v->metric, ve, per_snap), pct(ve, total),
                lh_view_metric_str(b, sizeof b, v->metric, vi, per_snap), pct(vi, total),
                v->inclusive ? x->incl.n_allocs : x->excl.n_allocs);
        lh_text_clean(out, x->name);
        if (x->file) {
            fputs(" (", out);
            lh_text_clean(out, lh_text_rel_path(x->file, v->cwd));
            fputc(')', out);
        } else if (x->module) {
            fputs(" (in ", out);
            lh_text_clean(out, lh_sym_module_label(x->module));
            fputc(')', out);
        }
        fputc('\n', out);
    }
    return lh_view_flush(out, "the report", err);
}

static void
json_figures(FILE *out, const lh_fmetrics_t *m)
{
    fprintf(out, "{\"allocated\": %" PRIu64 ", \"allocations\": %" PRIu64 ", \"leaked\": %" PRIu64
                 ", \"leaked_blocks\": %" PRIu64 ", \"peak\": %" PRIu64 ", \"growth\": %.3f}",
            m->allocated, m->n_allocs, m->leaked, m->leaked_blocks, m->peak, m->growth);
}

int
lh_view_funcs_json(FILE *out, const lh_funcs_t *f, const lh_funcs_view_t *v, lh_err_t *err)
{
    size_t n = v->top && v->top < f->n ? v->top : f->n;
    fputs("{\"trace\": ", out);
    lh_json_str(out, v->trace_path);
    fprintf(out, ", \"metric\": \"%s\", \"sort\": \"%s\", \"growth_points\": %d, "
                 "\"growth_over\": %s, \"suppressed_stacks\": %" PRIu64 ", \"total\": ",
            lh_metric_name(v->metric), v->inclusive ? "inclusive" : "exclusive",
            f->n_growth_points,
            !f->n_growth_points ? "null" : f->growth_is_snapshots ? "\"snapshots\"" : "\"marks\"",
            f->n_suppressed_stacks);
    json_figures(out, &f->total);
    fputs(", \"functions\": [", out);
    for (size_t i = 0; i < n; i++) {
        const lh_func_t *x = &f->v[i];
        fputs(i ? ",\n  {\"function\": " : "\n  {\"function\": ", out);
        lh_json_str(out, x->name);
        fputs(", \"module\": ", out);
        lh_json_str(out, x->module);
        fputs(", \"file\": ", out);
        lh_json_str(out, x->file);
        fprintf(out, ", \"line\": %" PRIu32 ", \"program\": %s, \"inclusive\": ", x->line,
                x->is_program ? "true" : "false");
        json_figures(out, &x->incl);
        fputs(", \"exclusive\": ", out);
        json_figures(out, &x->excl);
        fputc('}', out);
    }
    fputs("]}\n", out);
    return lh_view_flush(out, "the report", err);
}
