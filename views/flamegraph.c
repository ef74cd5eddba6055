/* leakhound - SPDX-License-Identifier: MIT
 *
 * flamegraph.c: the flame graph SVG (after Brendan Gregg's flamegraph.pl).
 */
#include "flamegraph.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "funcs_view.h"
#include "report.h"
#include "svgutil.h"
#include "text.h"

#define FRAME_H 17
#define PAD 10
#define TOP 58
#define BOTTOM 34
#define CHAR_W 7.0

static const char script[] =
    "(function(svg){\n"
    "var W=+svg.getAttribute('data-width'),pad=10,total=+svg.getAttribute('data-total');\n"
    "var frames=[].slice.call(svg.querySelectorAll('g.f'));\n"
    "var details=svg.querySelector('.details'),matched=svg.querySelector('.matched');\n"
    "var reset=svg.querySelector('.reset'),zx=0,zw=total;\n"
    "function fit(g){var r=g.querySelector('rect'),t=g.querySelector('text');\n"
    " var w=+r.getAttribute('width'),name=g.getAttribute('data-n'),n=Math.floor((w-6)/7);\n"
    " t.textContent=n<3?'':(name.length<=n?name:name.slice(0,n-2)+'..');\n"
    " t.setAttribute('x',+r.getAttribute('x')+3);}\n"
    "function layout(){frames.forEach(function(g){\n"
    " var x=+g.getAttribute('data-x'),w=+g.getAttribute('data-w'),r=g.querySelector('rect');\n"
    " var x0=Math.max(x,zx),x1=Math.min(x+w,zx+zw),px=(x1-x0)/zw*(W-2*pad);\n"
    " if(x1<=x0||px<0.3){g.style.display='none';return;}\n"
    " g.style.display='';r.setAttribute('x',pad+(x0-zx)/zw*(W-2*pad));\n"
    " r.setAttribute('width',px);fit(g);});\n"
    " reset.style.display=zw<total?'':'none';}\n"
    "frames.forEach(function(g){\n"
    " g.addEventListener('click',function(e){zx=+g.getAttribute('data-x');\n"
    "  zw=+g.getAttribute('data-w')||total;layout();e.stopPropagation();});\n"
    " g.addEventListener('mouseover',function(){details.textContent=g.getAttribute('data-i');});\n"
    " g.addEventListener('mouseout',function(){details.textContent=' ';});});\n"
    "reset.addEventListener('click',function(e){zx=0;zw=total;layout();e.stopPropagation();});\n"
    "svg.lhSearch=function(term){var re=null;if(term){try{re=new RegExp(term);}catch(x){re=null;}}\n"
    " var iv=[];frames.forEach(function(g){var r=g.querySelector('rect');\n"
    "  var m=re!==null&&re.test(g.getAttribute('data-n'));\n"
    "  r.setAttribute('fill',m?'rgb(225,0,225)':g.getAttribute('data-c'));\n"
    "  if(m){var x=+g.getAttribute('data-x');iv.push([x,x+(+g.getAttribute('data-w'))]);}});\n"
    " iv.sort(function(a,b){return a[0]-b[0];});var sum=0,end=-1;\n"
    " iv.forEach(function(v){if(v[0]>=end){sum+=v[1]-v[0];end=v[1];}\n"
    "  else if(v[1]>end){sum+=v[1]-end;end=v[1];}});\n"
    " matched.textContent=re?'Matched: '+(total>0?100*sum/total:0).toFixed(1)+'%':'';\n"
    " return total>0?sum/total:0;};\n"
    "var sb=svg.querySelector('.search');\n"
    "sb.addEventListener('click',function(e){\n"
    " var t=window.prompt('Search for functions (regular expression):','');\n"
    " svg.lhSearch(t);e.stopPropagation();});\n"
    "layout();svg.setAttribute('data-ready','1');\n"
    "})(document.getElementById('";

typedef struct ctx {
    FILE *out;
    const lh_tree_t *t;
    const lh_funcs_t *f;
    const lh_flame_opts_t *o;
    double scale;  /* pixels per unit of value */
    int height;
    const char *exe;
} ctx_t;

static size_t
max_depth(const lh_tree_t *t, uint32_t node)
{
    size_t m = 0;
    for (uint32_t c = t->v[node].first_child; c != LH_TNODE_NONE; c = t->v[c].next_sibling) {
        if (t->v[c].value > 0) {
            size_t d = 1 + max_depth(t, c);
            if (d > m) {
                m = d;
            }
        }
    }
    return m;
}

static uint32_t
name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * 16777619u;
    }
    return h;
}

/* The fill of a function: warm for the program, blue for the runtime, green for other
 * libraries, grey when unknown; the name varies the shade a little. */
static void
color(char *buf, size_t len, const lh_func_t *fn)
{
    if (!fn) {
        snprintf(buf, len, "rgb(190,190,190)");
        return;
    }
    uint32_t h = name_hash(fn->name);
    double a = (double)(h & 0xff) / 255.0, b = (double)((h >> 8) & 0xff) / 255.0;
    lh_frame_t fr = {0};
    fr.module = fn->module;
    if (!fn->module) {
        snprintf(buf, len, "rgb(%d,%d,%d)", 180 + (int)(30 * a), 180 + (int)(30 * a),
                 180 + (int)(30 * a));
    } else if (fn->is_program) {
        snprintf(buf, len, "rgb(%d,%d,%d)", 225 + (int)(30 * a), 90 + (int)(100 * b),
                 40 + (int)(35 * a));
    } else if (lh_frame_is_runtime(&fr)) {
        snprintf(buf, len, "rgb(%d,%d,%d)", 80 + (int)(40 * a), 140 + (int)(40 * b), 220);
    } else {
        snprintf(buf, len, "rgb(%d,%d,%d)", 60 + (int)(50 * a), 185 + (int)(40 * b),
                 100 + (int)(50 * a));
    }
}

static void
frame(ctx_t *c, uint32_t node, double x, size_t depth)
{
    const lh_tnode_t *n = &c->t->v[node];
    const lh_func_t *fn = node ? &c->f->v[n->func] : NULL;
    double w = n->value * c->scale;
    if (w < 0.3) {
        return;
    }
    char fill[64], val[48], where[4200];
    const lh_frame_t at = {.file = n->file, .line = n->line}; /* "file.c:42" or "" */
    lh_text_frame_where(&at, c->o->cwd, where, sizeof where);
    color(fill, sizeof fill, fn);
    double y = c->height - BOTTOM - (double)(depth + 1) * FRAME_H;
    double pct = c->t->total > 0 ? 100.0 * n->value / c->t->total : 0;
    const char *name = fn ? fn->name : "all";
    FILE *out = c->out;
    lh_view_metric_str(val, sizeof val, c->t->metric, n->value,
                       c->t->growth_is_snapshots);
    fprintf(out, "<g class=\"f\" data-x=\"%.17g\" data-w=\"%.17g\" data-c=\"%s\" data-n=\"", x,
            n->value, fill);
    lh_xml_text(out, name, 0);
    fputs("\" data-i=\"", out);
    lh_xml_text(out, name, 0);
    if (*where) {
        fputs(" \xe2\x80\x94 ", out);
        lh_xml_text(out, where, 0);
    }
    fprintf(out, " \xe2\x80\x94 %s (%.2f%%), %" PRIu64 " allocation%s\"><title>", val, pct,
            n->n_allocs, n->n_allocs == 1 ? "" : "s");
    lh_xml_text(out, name, 0);
    if (*where) {
        fputs("\n", out);
        lh_xml_text(out, where, 0);
    } else if (fn && fn->module) {
        fputs("\nin ", out);
        lh_xml_text(out, fn->module, 0);
    }
    fprintf(out, "\n%s (%.2f%%), %" PRIu64 " allocation%s</title>", val, pct, n->n_allocs,
            n->n_allocs == 1 ? "" : "s");
    fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" rx=\"2\"/>",
            PAD + x * c->scale, y, w, FRAME_H - 1, fill);
    int nch = (int)((w - 6) / CHAR_W);
    fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", PAD + x * c->scale + 3, y + FRAME_H - 5);
    if (nch >= 3) {
        lh_xml_text(out, name, strlen(name) <= (size_t)nch ? 0 : (size_t)(nch - 2));
    }
    fputs("</text></g>\n", out);
    double cx = x;
    for (uint32_t ch = n->first_child; ch != LH_TNODE_NONE; ch = c->t->v[ch].next_sibling) {
        if (c->t->v[ch].value > 0) {
            frame(c, ch, cx, depth + 1);
            cx += c->t->v[ch].value;
        }
    }
}

int
lh_view_flamegraph(FILE *out, const lh_tree_t *t, const lh_funcs_t *f, const lh_flame_opts_t *o,
                   lh_err_t *err)
{
    ctx_t c = {out, t, f, o, 0, 0, NULL};
    int width = o->width ? o->width : 1200;
    const char *id = o->id ? o->id : "flame";
    double total = t->v[0].value;
    size_t depth = total > 0 ? max_depth(t, 0) + 1 : 1;
    char val[48];
    c.height = TOP + (int)depth * FRAME_H + BOTTOM;
    c.scale = total > 0 ? (width - 2.0 * PAD) / total : 0;
    if (!o->embedded) {
        fputs("<?xml version=\"1.0\" standalone=\"no\"?>\n", out);
    }
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"%s\" class=\"lh-flame\" "
                 "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" data-width=\"%d\" "
                 "data-total=\"%.17g\">\n",
            id, width, c.height, width, c.height, width, total > 0 ? total : 1);
    fprintf(out, "<style>#%s text{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,"
                 "'DejaVu Sans Mono',monospace;fill:#1a1a1a}#%s g.f{cursor:pointer}"
                 "#%s g.f:hover rect{stroke:#222;stroke-width:0.8}"
                 "#%s .ui{cursor:pointer;fill:#2563eb}#%s .h{font:600 15px system-ui,sans-serif}"
                 "</style>\n",
            id, id, id, id, id);
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fbfaf7\"/>\n", width,
            c.height);
    fputs("<text class=\"h\" x=\"10\" y=\"22\">", out);
    lh_xml_text(out, o->title ? o->title : "Flame graph", 0);
    fputs("</text>\n", out);
    fprintf(out, "<text x=\"10\" y=\"42\">total %s; hover for details, click to zoom</text>\n",
            lh_view_metric_str(val, sizeof val, t->metric, total, t->growth_is_snapshots));
    fprintf(out, "<text class=\"ui reset\" x=\"%d\" y=\"42\" text-anchor=\"end\" "
                 "style=\"display:none\">Reset zoom</text>\n", width - 150);
    fprintf(out, "<text class=\"ui search\" x=\"%d\" y=\"42\" text-anchor=\"end\">Search"
                 "</text>\n", width - 10);
    fprintf(out, "<text class=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"> </text>\n",
            width - 10, c.height - 12);
    fprintf(out, "<text class=\"details\" x=\"10\" y=\"%d\"> </text>\n", c.height - 12);
    /* legend */
    static const struct {
        const char *label, *fill;
    } legend[] = {{"program", "rgb(240,140,55)"},
                  {"C/C++ runtime", "rgb(100,160,220)"},
                  {"other libraries", "rgb(85,205,125)"}};
    for (int i = 0; i < 3; i++) {
        int lx = width - 560 + i * 135;
        fprintf(out, "<rect x=\"%d\" y=\"12\" width=\"12\" height=\"12\" fill=\"%s\" rx=\"2\"/>"
                     "<text x=\"%d\" y=\"22\">%s</text>\n",
                lx, legend[i].fill, lx + 17, legend[i].label);
    }
    if (total > 0) {
        frame(&c, 0, 0, 0);
    } else {
        fprintf(out, "<text x=\"10\" y=\"%d\">nothing to show: the %s total is 0</text>\n",
                TOP + 14, lh_metric_name(t->metric));
    }
    fputs("<script><![CDATA[\n", out);
    fputs(script, out);
    fputs(id, out);
    fputs("'));\n", out);
    fputs("]]></script>\n</svg>\n", out);
    return lh_view_flush(out, "the flame graph", err);
}
