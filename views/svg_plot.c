/* leakhound - SPDX-License-Identifier: MIT
 *
 * svg_plot.c: the evolution chart.
 */
#include "svg_plot.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "funcs.h"
#include "svgutil.h"
#include "text.h"

#define ML 78   /* margins of the plot area */
#define MR 28
#define MT 96
#define PH 330  /* plot area height */
/* Mark and snapshot labels are drawn above the plot, rotated by LABEL_ANGLE degrees. Two
 * such parallel labels dx apart horizontally are dx * sin(LABEL_ANGLE) apart across their
 * baselines: that must be at least a line of their font, or the glyphs overlap (at 14 px
 * apart, ticks taken in quick succession did). */
#define LABEL_FONT_PX 10
#define LABEL_ANGLE 35
#define LABEL_LINE_PX 12.0
#define LEG_ROW 19

static const char *palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#86bcb6",
                                "#d37295", "#8cd17d"};

/* The colour of series k of the chart (k == n_series: "other"). */
static const char *
plot_color(size_t k, size_t n_series)
{
    return k >= n_series ? "#cfcfcf" : palette[k % 12];
}

const char *
lh_plot_site_name(char *buf, size_t len, const lh_site_t *site)
{
    char fn[400];
    if (!site || site->location < 0) {
        snprintf(buf, len, "%s", site && site->has_stack ? "(empty stack)" : "(no stack)");
        return buf;
    }
    const lh_frame_t *f = &site->frames[site->location];
    lh_funcs_frame_name(f, fn, sizeof fn);
    if (f->file && f->line) {
        const char *b = strrchr(f->file, '/');
        snprintf(buf, len, "%s \xe2\x80\x94 %s:%" PRIu32, fn, b ? b + 1 : f->file, f->line);
    } else if (f->file) { /* no line: a Perl main, an interpreter phase (scriptstack.h) */
        const char *b = strrchr(f->file, '/');
        snprintf(buf, len, "%s \xe2\x80\x94 %s", fn, b ? b + 1 : f->file);
    } else {
        snprintf(buf, len, "%s", fn);
    }
    return buf;
}

typedef struct geo {
    double x0, x1, y0, y1; /* plot area in pixels */
    double xmax, ymax;
    double rss_max; /* the RSS line's own scale (right axis), or ymax when they share one */
} geo_t;

static double
px(const geo_t *g, double x)
{
    return g->x0 + (g->xmax > 0 ? x / g->xmax : 0) * (g->x1 - g->x0);
}

static double
py(const geo_t *g, double y)
{
    return g->y1 - (g->ymax > 0 ? y / g->ymax : 0) * (g->y1 - g->y0);
}

static double
py_rss(const geo_t *g, double y)
{
    return g->y1 - (g->rss_max > 0 ? y / g->rss_max : 0) * (g->y1 - g->y0);
}

static void
axis_bytes(char *buf, size_t len, double v, double unit, const char *uname)
{
    double q = v / unit;
    if (fabs(q - round(q)) < 1e-9) {
        snprintf(buf, len, "%.0f %s", q, uname);
    } else {
        snprintf(buf, len, "%.1f %s", q, uname);
    }
}

/* One stacked layer: between the cumulative sums lo[] and hi[]. */
static void
layer(FILE *out, const geo_t *g, const lh_evolution_t *e, const uint64_t *lo,
      const uint64_t *hi, const char *fill, const char *name)
{
    fprintf(out, "<path fill=\"%s\" fill-opacity=\"0.88\" stroke=\"%s\" stroke-width=\"0.6\" d=\"",
            fill, fill);
    int start0 = !e->x_marks; /* in time, the heap starts at 0 */
    if (start0) {
        fprintf(out, "M%.1f,%.1f", px(g, 0), py(g, 0));
    }
    for (size_t i = 0; i < e->n; i++) {
        fprintf(out, "%s%.1f,%.1f", i == 0 && !start0 ? "M" : "L", px(g, e->x[i]),
                py(g, (double)hi[i]));
    }
    for (size_t i = e->n; i-- > 0;) {
        fprintf(out, "L%.1f,%.1f", px(g, e->x[i]), py(g, (double)lo[i]));
    }
    if (start0) {
        fprintf(out, "L%.1f,%.1f", px(g, 0), py(g, 0));
    }
    fputs("Z\"><title>", out);
    lh_xml_text(out, name, 0);
    fputs("</title></path>\n", out);
}

int
lh_view_svg_plot(FILE *out, const lh_evolution_t *e, const lh_plot_opts_t *o, lh_err_t *err)
{
    int width = o->width ? o->width : 1000;
    const char *id = o->id ? o->id : "plot";
    size_t n_leg = e->n_series + 1 + (e->n_rss ? 1 : 0);
    int legend_top = MT + PH + 52;
    int height = legend_top + (int)((n_leg + 1) / 2) * LEG_ROW + 16;
    geo_t g = {ML, width - MR, MT, MT + PH, e->x_max, 0, 0};
    char buf[600], name[512];
    uint64_t *lo = NULL, *hi = NULL;

    for (size_t i = 0; i < e->n; i++) {
        if ((double)e->total[i] > g.ymax) {
            g.ymax = (double)e->total[i];
        }
    }
    double rss_max = 0;
    for (size_t i = 0; i < e->n_rss; i++) {
        if ((double)e->rss[i] > rss_max) {
            rss_max = (double)e->rss[i];
        }
        if (e->rss_x[i] > g.xmax) {
            g.xmax = e->rss_x[i];
        }
    }
    /* RSS includes the program's code, libraries and stacks: when it dwarfs the heap, one
     * shared scale would flatten the heap to a line at the bottom, so RSS gets its own
     * axis on the right. */
    int rss_axis = rss_max > 3 * g.ymax && g.ymax > 0;
    if (rss_axis) {
        g.x1 = width - ML; /* room for the right axis' labels */
    }
    if (!rss_axis && rss_max > g.ymax) {
        g.ymax = rss_max;
    }
    const char *uname;
    double unit = lh_axis_unit(g.ymax > 0 ? g.ymax : 1, &uname);
    double ystep = lh_nice_step(g.ymax / unit > 0 ? g.ymax / unit : 1, 5) * unit;
    g.ymax = ystep * ceil((g.ymax > 0 ? g.ymax * 1.04 : 1) / ystep);
    const char *rss_uname = uname;
    double rss_unit = unit, rss_step = ystep;
    g.rss_max = g.ymax;
    if (rss_axis) {
        rss_unit = lh_axis_unit(rss_max, &rss_uname);
        rss_step = lh_nice_step(rss_max / rss_unit, 5) * rss_unit;
        g.rss_max = rss_step * ceil(rss_max * 1.04 / rss_step);
    }
    if (g.xmax <= 0) {
        g.xmax = 1;
    }

    if (!o->embedded) {
        fputs("<?xml version=\"1.0\" standalone=\"no\"?>\n", out);
    }
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"%s\" class=\"lh-plot\" "
                 "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n",
            id, width, height, width, height);
    fprintf(out, "<style>#%s text{font:12px system-ui,-apple-system,'Segoe UI',Roboto,"
                 "'DejaVu Sans',sans-serif;fill:#333}#%s .h{font-weight:600;font-size:16px;"
                 "fill:#111}#%s .s{fill:#666}#%s .ax{stroke:#999;stroke-width:1}"
                 "#%s .gr{stroke:#e5e5e5;stroke-width:1}</style>\n",
            id, id, id, id, id);
    fprintf(out, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", width, height);
    fputs("<text class=\"h\" x=\"16\" y=\"26\">", out);
    lh_xml_text(out, o->title, 0);
    fputs("</text>\n", out);
    if (o->subtitle) {
        fputs("<text class=\"s\" x=\"16\" y=\"46\">", out);
        lh_xml_text(out, o->subtitle, 0);
        fputs("</text>\n", out);
    }
    /* grid and y axis */
    for (double y = 0; y <= g.ymax * 1.0001; y += ystep) {
        axis_bytes(buf, sizeof buf, y, unit, uname);
        fprintf(out, "<line class=\"gr\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                     "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                g.x0, g.x1, py(&g, y), py(&g, y), g.x0 - 8, py(&g, y) + 4, buf);
    }
    if (rss_axis) {
        for (double y = 0; y <= g.rss_max * 1.0001; y += rss_step) {
            axis_bytes(buf, sizeof buf, y, rss_unit, rss_uname);
            fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#b91c1c\" style=\"fill:#b91c1c\">"
                         "%s</text>\n", g.x1 + 6, py_rss(&g, y) + 4, buf);
        }
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" style=\"fill:#b91c1c\">"
                     "RSS (right axis)</text>\n", g.x1, g.y0 - 8);
    }
    /* x axis */
    double xstep = e->x_marks ? fmax(1, ceil(lh_nice_step(g.xmax, 10))) : lh_nice_step(g.xmax, 10);
    for (double x = e->x_marks ? 1 : 0; x <= g.xmax * 1.0001; x += xstep) {
        if (e->x_marks) {
            snprintf(buf, sizeof buf, "%.0f", x);
        } else {
            snprintf(buf, sizeof buf, "%g s", round(x * 1e6) / 1e6);
        }
        fprintf(out, "<line class=\"ax\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                     "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                px(&g, x), px(&g, x), g.y1, g.y1 + 5, px(&g, x), g.y1 + 19, buf);
    }
    fprintf(out, "<text class=\"s\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
            (g.x0 + g.x1) / 2, g.y1 + 38, e->x_snapshots ? "snapshot" : e->x_marks ? "mark" : "time since start");
    /* stacked areas, the biggest site at the bottom, "other" on top */
    lo = calloc(e->n ? e->n : 1, sizeof *lo);
    hi = calloc(e->n ? e->n : 1, sizeof *hi);
    if (!lo || !hi) {
        free(lo);
        free(hi);
        return lh_err_set(err, LH_ENOMEM, "out of memory drawing the chart");
    }
    for (size_t k = 0; k <= e->n_series; k++) {
        const uint64_t *v = k < e->n_series ? e->series[k].bytes : e->other;
        for (size_t i = 0; i < e->n; i++) {
            hi[i] = lo[i] + v[i];
        }
        if (k < e->n_series) {
            lh_plot_site_name(name, sizeof name, e->series[k].site);
        } else {
            snprintf(name, sizeof name, "other sites");
        }
        layer(out, &g, e, lo, hi, plot_color(k, e->n_series), name);
        memcpy(lo, hi, e->n * sizeof *lo);
    }
    free(lo);
    free(hi);
    /* RSS */
    if (e->n_rss) {
        fputs("<polyline fill=\"none\" stroke=\"#b91c1c\" stroke-width=\"2\" points=\"", out);
        for (size_t i = 0; i < e->n_rss; i++) {
            fprintf(out, "%s%.1f,%.1f", i ? " " : "", px(&g, e->rss_x[i]),
                    py_rss(&g, (double)e->rss[i]));
        }
        fputs("\"><title>RSS</title></polyline>\n", out);
        for (size_t i = 0; e->n_rss < 40 && i < e->n_rss; i++) {
            fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#b91c1c\"><title>RSS "
                         "sample</title></circle>\n", px(&g, e->rss_x[i]),
                    py_rss(&g, (double)e->rss[i]));
        }
    }
    /* marks and snapshots */
    double last_label = -1e9; /* a label too close to the previous one is left out */
    double label_dx = LABEL_LINE_PX / sin(LABEL_ANGLE * 3.14159265358979 / 180);
    size_t stride = e->n_lines > 60 ? (e->n_lines + 59) / 60 : 1; /* at most ~60 lines */
    size_t every = e->n_lines > 24 ? ((e->n_lines + 23) / 24 + stride - 1) / stride * stride
                                   : 1;
    for (size_t i = 0; i < e->n_lines; i++) {
        const lh_evo_line_t *l = &e->lines[i];
        if (i % stride != 0) {
            continue;
        }
        const char *col = l->is_snapshot ? "#7c3aed" : "#6b7280";
        double x = px(&g, l->x);
        fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                     "stroke-dasharray=\"4 3\" stroke-width=\"1\"><title>",
                x, x, g.y0 - 4, g.y1, col);
        fputs(l->is_snapshot ? "snapshot " : "mark ", out);
        lh_xml_text(out, l->label, 0);
        fputs("</title></line>\n", out);
        if (i % every == 0 && x - last_label >= label_dx) {
            last_label = x;
            fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" transform=\"rotate(-%d %.1f %.1f)\" "
                         "style=\"font-size:%dpx;fill:%s\">",
                    x + 2, g.y0 - 6, LABEL_ANGLE, x + 2, g.y0 - 6, LABEL_FONT_PX, col);
            lh_xml_text(out, l->label, 24);
            fputs("</text>\n", out);
        }
    }
    fprintf(out, "<line class=\"ax\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n", g.x0,
            g.x1, g.y1, g.y1);
    fprintf(out, "<line class=\"ax\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n", g.x0,
            g.x0, g.y0, g.y1);
    /* legend, two columns */
    size_t row = 0;
    int colw = (width - 32) / 2;
    for (size_t k = 0; k < n_leg; k++, row++) {
        int lx = 16 + (int)(row % 2) * colw, ly = legend_top + (int)(row / 2) * LEG_ROW;
        if (k < e->n_series) {
            char h[32];
            lh_plot_site_name(name, sizeof name, e->series[k].site);
            lh_text_human_bytes(h, sizeof h, e->series[k].max);
            snprintf(buf, sizeof buf, "%s (max %s%s%s)", name, h,
                     e->series[k].trend != LH_TREND_NONE ? ", " : "",
                     e->series[k].trend != LH_TREND_NONE ? lh_trend_name(e->series[k].trend)
                                                         : "");
        } else if (k == e->n_series) {
            snprintf(buf, sizeof buf, "other sites");
        } else {
            snprintf(buf, sizeof buf, "RSS (resident set size)");
        }
        if (k <= e->n_series) {
            fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" rx=\"2\" "
                         "fill=\"%s\"/>",
                    lx, ly - 10, plot_color(k, e->n_series));
        } else {
            fprintf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#b91c1c\" "
                         "stroke-width=\"2\"/>",
                    lx, lx + 12, ly - 4, ly - 4);
        }
        fprintf(out, "<text class=\"lg\" x=\"%d\" y=\"%d\">", lx + 18, ly);
        lh_xml_text(out, buf, (size_t)(colw - 40) / 7);
        fputs("</text>\n", out);
    }
    fputs("</svg>\n", out);
    return lh_view_flush(out, "the chart", err);
}
