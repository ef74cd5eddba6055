/* leakhound - SPDX-License-Identifier: MIT
 *
 * html.c: the HTML report page.
 */
#include "html.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "flamegraph.h"
#include "funcs_view.h"
#include "svg_plot.h"
#include "svgutil.h"
#include "text.h"

static const char css[] =
    ":root{--fg:#1f2328;--muted:#656d76;--line:#d8dee4;--bg:#f6f8fa;--accent:#b4361d;"
    "--card:#fff}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;font:15px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',"
    "sans-serif;color:var(--fg);background:var(--bg)}\n"
    "header{background:#20242a;color:#f3f4f6;padding:18px 28px 0}\n"
    "header .brand{font-weight:700;letter-spacing:.04em;color:#f59e0b;font-size:13px;"
    "text-transform:uppercase}\n"
    "header h1{margin:2px 0 2px;font-size:24px;font-weight:600}\n"
    "header .cmd{color:#b6bcc6;font:13px ui-monospace,Menlo,Consolas,'DejaVu Sans Mono',"
    "monospace;word-break:break-all}\n"
    "nav{position:sticky;top:0;z-index:5;background:#20242a;padding:10px 28px;display:flex;"
    "gap:20px;flex-wrap:wrap;border-bottom:1px solid #000}\n"
    "nav a{color:#d1d5db;text-decoration:none;font-size:14px}nav a:hover{color:#fff}\n"
    "main{max-width:1260px;margin:0 auto;padding:8px 28px 40px}\n"
    "section{background:var(--card);border:1px solid var(--line);border-radius:8px;"
    "padding:18px 22px;margin:20px 0;scroll-margin-top:56px}\n"
    "h2{margin:0 0 12px;font-size:19px}\n"
    ".cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(180px,1fr));gap:12px}\n"
    ".card{border:1px solid var(--line);border-radius:8px;padding:12px 14px;background:#fcfcfd}\n"
    ".card .k{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}\n"
    ".card .v{font-size:22px;font-weight:600;margin-top:2px}\n"
    ".card .d{color:var(--muted);font-size:13px}\n"
    ".card.bad .v{color:var(--accent)}\n"
    "table{border-collapse:collapse;width:100%;font-size:14px}\n"
    "th,td{text-align:left;padding:6px 10px;border-bottom:1px solid var(--line);"
    "vertical-align:top}\n"
    "th{font-size:12px;text-transform:uppercase;letter-spacing:.03em;color:var(--muted);"
    "background:#fafbfc}\n"
    "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "tbody tr:hover{background:#f6f8fa}\n"
    "code,.mono{font:13px ui-monospace,Menlo,Consolas,'DejaVu Sans Mono',monospace}\n"
    "details summary{cursor:pointer}\n"
    "ol.stack{margin:6px 0 2px;padding-left:22px;font:12.5px ui-monospace,Menlo,Consolas,"
    "'DejaVu Sans Mono',monospace;color:#374151}\n"
    "ol.stack li.loc{font-weight:700;color:var(--fg)}\n"
    ".muted{color:var(--muted)}\n"
    ".sw{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:6px;"
    "vertical-align:-1px}\n"
    "svg{max-width:100%;height:auto;display:block}\n"
    ".tools{display:flex;gap:12px;align-items:center;margin-bottom:8px}\n"
    ".tools input{font:14px system-ui,sans-serif;padding:5px 9px;border:1px solid var(--line);"
    "border-radius:6px;width:300px}\n"
    ".bar{background:#f1f3f5;border-radius:3px;height:8px;width:120px;display:inline-block;"
    "vertical-align:middle;margin-left:8px}\n"
    ".bar i{display:block;height:8px;border-radius:3px;background:#e07a5f}\n"
    "footer{color:var(--muted);font-size:12px;text-align:center;padding:10px}\n";

static const char page_script[] =
    "(function(){var s=document.getElementById('flame-search'),"
    "m=document.getElementById('flame-matched'),f=document.getElementById('flame');\n"
    "if(s&&f&&f.lhSearch){s.addEventListener('input',function(){\n"
    "var r=f.lhSearch(s.value);m.textContent=s.value?('matched '+(100*r).toFixed(1)+'%'):'';"
    "});}\n"
    "if(f&&f.lhSearch){document.body.setAttribute('data-lh-ready','1');}})();\n";

static void
h(FILE *out, const char *s)
{
    lh_xml_text(out, s, 0);
}

static const char *
bytes(char *buf, size_t len, uint64_t b)
{
    return lh_text_human_bytes(buf, len, b);
}

static void
card(FILE *out, int bad, const char *k, const char *v, const char *d)
{
    fprintf(out, "<div class=\"card%s\"><div class=\"k\">", bad ? " bad" : "");
    h(out, k);
    fputs("</div><div class=\"v\">", out);
    h(out, v);
    fputs("</div><div class=\"d\">", out);
    h(out, d);
    fputs("</div></div>\n", out);
}

static void
summary(FILE *out, const lh_html_page_t *p)
{
    const lh_report_t *r = p->rep;
    const lh_replay_totals_t *t = r->totals;
    char a[64], b[200];
    fputs("<section id=\"summary\"><h2>Summary</h2><div class=\"cards\">\n", out);
    snprintf(b, sizeof b, "%" PRIu64 " block%s from %zu site%s", t->heap_blocks,
             t->heap_blocks == 1 ? "" : "s", r->n_leak_sites, r->n_leak_sites == 1 ? "" : "s");
    card(out, t->heap_bytes > 0, r->end->present ? "Live at exit" : "Live at the end",
         bytes(a, sizeof a, t->heap_bytes), b);
    snprintf(b, sizeof b, "at %.3f s", r->peak_time_s);
    card(out, 0, "Peak heap", bytes(a, sizeof a, t->peak_bytes), b);
    snprintf(b, sizeof b, "%" PRIu64 " allocations, %" PRIu64 " frees", t->n_allocs, t->n_frees);
    card(out, 0, "Allocated in total", bytes(a, sizeof a, t->alloc_bytes), b);
    snprintf(a, sizeof a, "%.3f s", r->duration_s);
    snprintf(b, sizeof b, "%" PRIu64 " events", r->stats->n_events);
    card(out, 0, "Run time", a, b);
    if (p->evo && p->evo->n_rss) {
        char c2[32];
        snprintf(b, sizeof b, "from %s, %zu samples", bytes(c2, sizeof c2, p->evo->rss[0]),
                 p->evo->n_rss);
        card(out, 0, "RSS at the end", bytes(a, sizeof a, p->evo->rss[p->evo->n_rss - 1]), b);
    }
    const lh_trace_end_t *e = r->end;
    if (!e->present) {
        card(out, 1, "Exit", "none", "killed or crashed: data up to the last flush");
    } else if (e->kind == LH_EXIT_SCRIPT) {
        card(out, 1, "Exit", "killed", "in teardown, after the main program ended");
    } else if (e->kind == LH_EXIT_SIGNAL) {
        char name[32];
        snprintf(b, sizeof b, "by %s; the trace ended as at exit",
                 lh_text_signal_name(name, sizeof name, e->status));
        card(out, 0, "Exit", "terminated", b);
    } else {
        snprintf(a, sizeof a, "status %" PRIu64, e->status);
        card(out, 0, "Exit", a,
             e->kind == LH_EXIT_NORMAL       ? "clean exit"
             : e->kind == LH_EXIT_UNDERSCORE ? "_exit()"
             : e->kind == LH_EXIT_DETACH     ? "detached"
                                             : "exec");
    }
    fputs("</div></section>\n", out);
}

/* " <span class=muted>S</span>": the secondary text after a name (a path, a mark). */
static void
muted(FILE *out, const char *s)
{
    fputs(" <span class=\"muted\">", out);
    h(out, s);
    fputs("</span>", out);
}

/* One frame; folded: the C++ library inlines left out inside it (text.h). */
static void
frame_li(FILE *out, const lh_frame_t *f, int is_loc, const char *cwd, size_t folded)
{
    char name[512], where[4200];
    fprintf(out, "<li%s>", is_loc ? " class=\"loc\"" : "");
    h(out, lh_funcs_frame_name(f, name, sizeof name));
    if (*lh_text_frame_where(f, cwd, where, sizeof where)) {
        muted(out, where);
    }
    if (f->inlined) {
        muted(out, lh_text_inline_note(where, sizeof where, f, folded));
    }
    fputs("</li>", out);
}

static void
site_cell(FILE *out, const lh_site_t *s, const char *cwd)
{
    char name[600];
    fputs("<details><summary>", out);
    h(out, lh_plot_site_name(name, sizeof name, s));
    fprintf(out, " <span class=\"muted\">(site %" PRIu32 ")</span></summary><ol class=\"stack\">",
            s->stack_id);
    for (size_t i = 0; i < s->n_frames; i++) {
        size_t run = lh_text_cxx_lib_run(s, i), last = run >= 2 ? i + run - 1 : i;
        int loc = s->location >= (long)i && s->location <= (long)last;
        frame_li(out, &s->frames[last], loc, cwd, last - i);
        i = last;
    }
    if (!s->n_frames) {
        fputs("<li class=\"muted\">no stack recorded</li>", out);
    }
    fputs("</ol></details>", out);
}

static void
sites(FILE *out, const lh_html_page_t *p)
{
    const lh_report_t *r = p->rep;
    char a[32], b[32];
    /* report.h: when the run shows growth, what grows first, in the growth table's order */
    fputs(r->growth ? "<section id=\"sites\"><h2>Top sites: growing first, then by leaked "
                      "bytes</h2>\n"
                    : "<section id=\"sites\"><h2>Top sites by leaked bytes</h2>\n",
          out);
    if (!r->n_sites) {
        fputs("<p>No leaks: every block allocated while tracing was freed.</p></section>\n", out);
        return;
    }
    fprintf(out, "<p class=\"muted\">%zu of %zu site%s with blocks live at exit",
            r->n_sites, r->n_leak_sites, r->n_leak_sites == 1 ? "" : "s");
    if (r->growth) {
        fprintf(out, "; the %zu that grow%s over the run's %s (marked <b>growing</b>) first, by "
                     "bytes per %s, as in Growth below",
                r->n_growing, r->n_growing == 1 ? "s" : "", lh_bound_noun(r->growth->kind, 1),
                lh_bound_noun(r->growth->kind, 0));
    }
    fputs("; click a site for its stack (the highlighted frame is the line to look at).</p>\n",
          out);
    fputs("<table id=\"sites-table\"><thead><tr><th class=\"n\">#</th><th class=\"n\">Leaked</th>"
          "<th class=\"n\">Blocks</th><th class=\"n\">Allocations</th><th class=\"n\">Allocated"
          "</th><th>Site</th></tr></thead><tbody>\n",
          out);
    uint64_t top = 0; /* the bars' scale: the largest (growing sites rank first) */
    for (size_t i = 0; i < r->n_sites; i++) {
        top = r->sites[i].stats.live_bytes > top ? r->sites[i].stats.live_bytes : top;
    }
    for (size_t i = 0; i < r->n_sites; i++) {
        const lh_site_t *s = &r->sites[i];
        double w = top ? 100.0 * (double)s->stats.live_bytes / (double)top : 0;
        fprintf(out, "<tr><td class=\"n\">%zu</td><td class=\"n\">%s<span class=\"bar\"><i "
                     "style=\"width:%.1f%%\"></i></span></td><td class=\"n\">%" PRIu64 "</td>"
                     "<td class=\"n\">%" PRIu64 "</td><td class=\"n\">%s</td><td>",
                i + 1, bytes(a, sizeof a, s->stats.live_bytes), w, s->stats.live_blocks,
                s->stats.n_allocs, bytes(b, sizeof b, s->stats.alloc_bytes));
        if (s->growth) {
            fputs("<b>growing</b> ", out);
        }
        site_cell(out, s, p->cwd);
        fputs("</td></tr>\n", out);
    }
    fputs("</tbody></table></section>\n", out);
}

static void
functions(FILE *out, const lh_html_page_t *p)
{
    const lh_funcs_t *f = p->funcs;
    char a[32], b[32], c[32], d[32];
    size_t n = 0;
    fputs("<section id=\"functions\"><h2>Functions</h2>\n<p class=\"muted\">Exclusive: the "
          "function is the site's location (its first frame outside the C/C++ runtime). "
          "Inclusive: the function is anywhere on the stack (recursion counted once).</p>\n"
          "<table id=\"functions-table\"><thead><tr><th>Function</th><th class=\"n\">Leaked "
          "(excl.)</th><th class=\"n\">Leaked (incl.)</th><th class=\"n\">At peak (incl.)</th>"
          "<th class=\"n\">Allocated (incl.)</th><th class=\"n\">Allocations</th></tr></thead>"
          "<tbody>\n",
          out);
    for (size_t i = 0; i < f->n && n < 25; i++) {
        const lh_func_t *x = &f->v[i];
        if (!x->excl.leaked && !x->excl.allocated) {
            continue;
        }
        n++;
        fputs("<tr><td><code>", out);
        h(out, x->name);
        fputs("</code>", out);
        if (x->file) {
            muted(out, lh_text_rel_path(x->file, p->cwd));
        }
        fprintf(out, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
                     "<td class=\"n\">%s</td><td class=\"n\">%" PRIu64 "</td></tr>\n",
                bytes(a, sizeof a, x->excl.leaked), bytes(b, sizeof b, x->incl.leaked),
                bytes(c, sizeof c, x->incl.peak), bytes(d, sizeof d, x->incl.allocated),
                x->incl.n_allocs);
    }
    fputs("</tbody></table></section>\n", out);
}

static void
growth(FILE *out, const lh_html_page_t *p)
{
    const lh_growth_t *g = p->growth;
    char a[48], b[32], c[32];
    fputs("<section id=\"growth\"><h2>Growth</h2>\n", out);
    if (!g || g->n_points < 2) {
        fputs("<p class=\"muted\">No growth ranking: the trace has fewer than two marks or "
              "snapshots. Call <code>lh_mark(\"request\")</code> once per iteration, or run with "
              "<code>leakhound run --snapshot-every 10s</code>.</p></section>\n",
              out);
        return;
    }
    fprintf(out, "<p class=\"muted\">Live bytes per site at each of the %d %s%s", (int)g->n_points,
            lh_bound_noun(g->kind, 1), g->kind == LH_BOUND_ACTIVITY ? lh_bound_note(g->kind) : "");
    if (g->n_points < g->n_all_points) { /* as report --growth says it */
        fprintf(out, ", up to the last before teardown (the heap fell over the %zu after it)",
                g->n_all_points - g->n_points);
    }
    fprintf(out, "; the sites that grow (an upward trend with 95%% confidence, still growing at "
                 "the end: docs/GROWTH.md), by least-squares slope per %s.</p>\n",
            lh_bound_noun(g->kind, 0));
    if (!p->n_growth_sites) {
        fputs("<p>No site grew.</p></section>\n", out);
        return;
    }
    fputs("<table id=\"growth-table\"><thead><tr><th class=\"n\">Slope</th><th class=\"n\">First"
          "</th><th class=\"n\">Last</th><th class=\"n\">Grew in</th><th>Site</th></tr></thead>"
          "<tbody>\n",
          out);
    for (size_t i = 0; i < p->n_growth_sites; i++) {
        const lh_growth_site_t *x = &g->sites[i];
        /* per point of the kind the growth was measured over, as report --growth says */
        fprintf(out, "<tr><td class=\"n\">%s%s/%s</td><td class=\"n\">%s</td><td class=\"n\">"
                     "%s</td><td class=\"n\">%zu of %zu</td><td>",
                x->slope_bytes < 0 ? "-" : "+",
                bytes(a, sizeof a, (uint64_t)llround(fabs(x->slope_bytes))),
                lh_bound_noun(g->kind, 0), bytes(b, sizeof b, x->bytes[0]), bytes(c, sizeof c, x->bytes[g->n_points - 1]),
                x->grew_intervals, x->intervals);
        site_cell(out, p->growth_sites[i], p->cwd);
        fputs("</td></tr>\n", out);
    }
    fputs("</tbody></table></section>\n", out);
}

int
lh_view_html(FILE *out, const lh_html_page_t *p, lh_err_t *err)
{
    const lh_trace_info_t *in = p->rep->info;
    int rc;
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
          "<title>leakhound \xe2\x80\x94 ",
          out);
    h(out, p->title);
    fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header><div class=\"brand\">"
                 "leakhound</div><h1>",
            css);
    h(out, p->title);
    fputs("</h1><div class=\"cmd\">", out);
    for (size_t i = 0; i < in->argc; i++) {
        if (i) {
            fputc(' ', out);
        }
        h(out, in->argv[i]);
    }
    fprintf(out, " &#183; pid %" PRIu64 " &#183; trace ", in->pid);
    h(out, p->rep->trace_path);
    fputs("</div></header>\n<nav><a href=\"#summary\">Summary</a><a href=\"#evolution\">Heap "
          "over time</a><a href=\"#flamegraph\">Flame graph</a><a href=\"#sites\">Top sites</a>"
          "<a href=\"#functions\">Functions</a><a href=\"#growth\">Growth</a>"
          "<a href=\"#reachability\">Lost / reachable</a></nav>\n<main>\n",
          out);
    summary(out, p);
    fputs("<section id=\"evolution\"><h2>Heap over time</h2>\n", out);
    if (p->evo && p->evo->n) {
        lh_plot_opts_t po = {"plot", 1, p->plot_title, p->plot_subtitle, p->cwd, 1200};
        if ((rc = lh_view_svg_plot(out, p->evo, &po, err)) < 0) {
            return rc;
        }
    } else {
        fputs("<p class=\"muted\">No allocations to draw.</p>\n", out);
    }
    fputs("</section>\n<section id=\"flamegraph\"><h2>Flame graph</h2>\n<div class=\"tools\">"
          "<input id=\"flame-search\" type=\"search\" placeholder=\"Highlight functions "
          "(regular expression)\"><span id=\"flame-matched\" class=\"muted\"></span></div>\n",
          out);
    lh_flame_opts_t fo = {"flame", 1, p->flame_title, p->cwd, 1200};
    if ((rc = lh_view_flamegraph(out, p->flame, p->funcs, &fo, err)) < 0) {
        return rc;
    }
    fputs("</section>\n", out);
    sites(out, p);
    functions(out, p);
    growth(out, p);
    fputs("<section id=\"reachability\"><h2>Lost / reachable</h2>\n<p class=\"muted\">No exit "
          "snapshot with contents in this trace: which leaked blocks are still reachable from "
          "globals and stacks, and which are lost, needs the heap's contents at exit (coming "
          "with heap-graph support).</p></section>\n",
          out);
    fprintf(out, "</main>\n<footer>generated by leakhound %s</footer>\n<script>\n%s</script>\n"
                 "</body></html>\n",
            p->version ? p->version : "", page_script);
    return lh_view_flush(out, "the page", err);
}
