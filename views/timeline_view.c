/* leakhound - SPDX-License-Identifier: MIT
 *
 * timeline_view.c: text and JSON for leaks, growth, temporaries, counts and the event log.
 */
#include "timeline_view.h"

#include <inttypes.h>
#include <string.h>

#include "json.h"
#include "scriptstack.h"
#include "text.h"

/* ---------------------------------------------------------------------------------------
 * Shared pieces
 * ------------------------------------------------------------------------------------- */

static double
secs(const lh_tl_view_t *v, uint64_t ts)
{
    return ts > v->start_ns ? (double)(ts - v->start_ns) / 1e9 : 0.0;
}

static const char *
program(const lh_tl_view_t *v)
{
    const lh_trace_info_t *in = v->info;
    return in->exe[0] ? in->exe : in->argc ? in->argv[0] : "(unknown)";
}

static const char *
trigger_name(const lh_boundary_t *b)
{
    return b->is_snapshot ? lh_text_trigger_name(b->trigger, "unknown")
           : b->is_slice  ? "slice"
                          : "mark";
}

static void
text_header(FILE *out, const lh_tl_view_t *v, const char *what)
{
    fprintf(out, "leakhound %s: ", what);
    lh_text_clean(out, v->trace_path);
    fputs("\n  program:     ", out);
    lh_text_clean(out, program(v));
    fputc('\n', out);
}

static void
text_bound(FILE *out, const lh_boundary_t *b, size_t idx)
{
    fprintf(out, "#%zu '", idx + 1);
    lh_text_clean(out, b->label);
    fputc('\'', out);
}

static void
json_head(FILE *out, const lh_tl_view_t *v)
{
    fputs("{\"summary\": {\"trace\": ", out);
    lh_json_string(out, v->trace_path, strlen(v->trace_path));
    fputs(", \"program\": ", out);
    const char *p = program(v);
    lh_json_string(out, p, strlen(p));
}

static void
json_bounds(FILE *out, const lh_tl_view_t *v, const lh_boundary_t *b, size_t n)
{
    fputs(",\n \"bounds\": [", out);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "%s{\"index\": %zu, \"label\": ", i ? ",\n  " : "\n  ", i);
        lh_json_string(out, b[i].label, strlen(b[i].label));
        fprintf(out, ", \"time_s\": %.6f, \"trigger\": \"%s\", \"heap_bytes\": %" PRIu64 "}",
                secs(v, b[i].ts_ns), trigger_name(&b[i]), b[i].heap_bytes);
    }
    fputs("]", out);
}

static void
json_u64_array(FILE *out, const char *name, const uint64_t *a, size_t n)
{
    fprintf(out, ", \"%s\": [", name);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, i ? ", %" PRIu64 : "%" PRIu64, a[i]);
    }
    fputc(']', out);
}

/* The end of a site object of leaks or growth: its two series (named k1 and k2, n values
 * each), its frames, the closing brace. */
static void
json_site_end(FILE *out, const char *k1, const uint64_t *v1, const char *k2, const uint64_t *v2,
              size_t n, const lh_site_t *site)
{
    json_u64_array(out, k1, v1, n);
    json_u64_array(out, k2, v2, n);
    fputs(", ", out);
    lh_json_site_frames(out, site);
    fputc('}', out);
}

static void
text_site_head(FILE *out, const lh_tl_view_t *v, size_t rank, const lh_site_t *site)
{
    fprintf(out, "\n#%zu [site %" PRIu32 "] ", rank, site->stack_id);
    lh_text_location(out, site, v->cwd);
    lh_text_user_frame(out, site, v->cwd);
    fputs(": ", out);
}

/* ---------------------------------------------------------------------------------------
 * leaks
 * ------------------------------------------------------------------------------------- */

int
lh_view_leaks(FILE *out, const lh_tl_view_t *v, const lh_diff_t *d, const lh_site_t *sites,
              size_t n_shown, lh_err_t *err)
{
    char h[48], h2[48];
    const char *noun = lh_bound_noun(d->kind, 1);
    if (v->json) {
        json_head(out, v);
        fprintf(out, ", \"boundaries\": \"%s\", \"from\": %zu, \"to\": %zu, \"skip\": %zu"
                     ", \"first\": %zu, \"intervals\": %zu, \"marks\": %" PRIu64
                     ", \"leaked_bytes\": %" PRIu64 ", \"leaked_blocks\": %" PRIu64
                     ", \"leak_sites\": %zu, \"to_before_teardown\": %s}",
                noun, d->from, d->to, d->skip, d->first, d->n_intervals, d->n_marks,
                d->total_bytes, d->total_blocks, d->n_sites,
                d->to_before_teardown ? "true" : "false");
        json_bounds(out, v, d->bounds, d->n_bounds);
        fputs(",\n \"sites\": [", out);
        double per_mark = (double)(d->n_marks ? d->n_marks : d->n_intervals);
        for (size_t i = 0; i < n_shown; i++) {
            const lh_diff_site_t *s = &d->sites[i];
            fprintf(out, "%s{\"stack_id\": %" PRIu32 ", \"trend\": \"%s\", \"score\": ",
                    i ? ",\n  " : "\n  ", s->stack_id, lh_trend_name(s->trend));
            lh_json_num(out, s->score);
            fprintf(out, ", \"leaked_intervals\": %zu, \"intervals\": %zu, \"share\": ",
                    s->leaked_intervals, d->n_intervals);
            lh_json_num(out, s->share);
            fprintf(out, ", \"leaked_bytes\": %" PRIu64 ", \"leaked_blocks\": %" PRIu64,
                    s->total_bytes, s->total_blocks);
            fputs(", \"bytes_per_interval\": ", out);
            lh_json_num(out, (double)s->total_bytes / (double)d->n_intervals);
            fputs(", \"blocks_per_interval\": ", out);
            lh_json_num(out, (double)s->total_blocks / (double)d->n_intervals);
            fputs(", \"bytes_per_mark\": ", out);
            lh_json_num(out, (double)s->total_bytes / per_mark);
            fputs(", \"blocks_per_mark\": ", out);
            lh_json_num(out, (double)s->total_blocks / per_mark);
            json_site_end(out, "interval_blocks", s->blocks, "interval_bytes", s->bytes,
                          d->n_intervals, &sites[i]);
        }
        fputs("]}\n", out);
        return lh_view_flush(out, "the report", err);
    }
    text_header(out, v, "leaks");
    fprintf(out, "  boundaries:  %zu %s, from ", d->n_bounds, noun);
    text_bound(out, &d->bounds[d->from], d->from);
    fputs(" to ", out);
    text_bound(out, &d->bounds[d->to], d->to);
    int at_exit = d->kind == LH_BOUND_SNAPSHOTS && d->bounds[d->to].is_snapshot &&
                  d->bounds[d->to].trigger == LH_SNAP_EXIT;
    fprintf(out, " (%s)\n",
            at_exit ? "one snapshot taken while running: the range ends at the exit snapshot"
            : d->kind == LH_BOUND_SNAPSHOTS
                ? "snapshots taken while running"
                : "marks: the trace has no snapshots taken while running");
    if (d->to_before_teardown) {
        fprintf(out, "  end:         %s #%zu, the last before teardown: the heap fell from %s to "
                     "%s over the %zu after it (--to '#%zu' for the last)\n",
                lh_bound_noun(d->kind, 0), d->to + 1,
                lh_text_human_bytes(h, sizeof h, d->bounds[d->to].heap_bytes),
                lh_text_human_bytes(h2, sizeof h2, d->bounds[d->n_last].heap_bytes),
                d->n_last - d->to, d->n_last + 1);
    }
    fprintf(out, "  intervals:   %zu counted (%s #%zu to #%zu), the first %zu skipped as "
                 "start-up; interval #k runs from %s #k to #k+1\n",
            d->n_intervals, noun, d->first + 1, d->to + 1, d->skip, lh_bound_noun(d->kind, 0));
    fprintf(out, "  leaked:      %s (%" PRIu64 " bytes) in %" PRIu64 " block%s from %zu site%s: "
                 "blocks allocated in an interval and still live at every later %s up to "
                 "#%zu\n",
            lh_text_human_bytes(h, sizeof h, d->total_bytes), d->total_bytes, d->total_blocks,
            d->total_blocks == 1 ? "" : "s", d->n_sites, d->n_sites == 1 ? "" : "s",
            lh_bound_noun(d->kind, 0), d->to + 1);
    if (d->n_sites == 0) {
        fprintf(out, "\nNo growth: every block allocated in the counted intervals was freed by "
                     "%s #%zu.\n", lh_bound_noun(d->kind, 0), d->to + 1);
        return lh_view_flush(out, "the report", err);
    }
    fprintf(out, "\n%s %zu of %zu site%s by score (leaked bytes x share of intervals in which "
                 "the site leaked):\n",
            n_shown < d->n_sites ? "Top" : "All", n_shown, d->n_sites,
            d->n_sites == 1 ? "" : "s");
    for (size_t i = 0; i < n_shown; i++) {
        const lh_diff_site_t *s = &d->sites[i];
        text_site_head(out, v, i + 1, &sites[i]);
        fprintf(out, "leaked in %zu of %zu intervals (%.1f%%), %s (%" PRIu64 " bytes) in %" PRIu64
                     " block%s; %s per interval",
                s->leaked_intervals, d->n_intervals, 100.0 * s->share,
                lh_text_human_bytes(h, sizeof h, s->total_bytes), s->total_bytes,
                s->total_blocks, s->total_blocks == 1 ? "" : "s",
                lh_text_rate_bytes(h2, sizeof h2, (double)s->total_bytes / (double)d->n_intervals));
        if (d->kind == LH_BOUND_SNAPSHOTS && d->n_marks) {
            fprintf(out, ", %s per mark",
                    lh_text_rate_bytes(h2, sizeof h2, (double)s->total_bytes / (double)d->n_marks));
        }
        fprintf(out, ", score %.1f; %s\n", s->score, lh_trend_name(s->trend));
        lh_text_stack(out, &sites[i], v->max_frames, v->cwd);
        fputs("    leaked per interval:", out);
        size_t shown = 0;
        for (size_t j = 0; j < d->n_intervals; j++) {
            if (!s->blocks[j]) {
                continue;
            }
            if (shown++ == 8) {
                fprintf(out, " ... (%zu more)", s->leaked_intervals - 8);
                break;
            }
            fprintf(out, " #%zu: %" PRIu64 " (%s)", d->first + j + 1, s->blocks[j],
                    lh_text_human_bytes(h, sizeof h, s->bytes[j]));
        }
        fputc('\n', out);
    }
    return lh_view_flush(out, "the report", err);
}

/* ---------------------------------------------------------------------------------------
 * growth
 * ------------------------------------------------------------------------------------- */

/* Up to max indices spread evenly over 0..n-1, first and last included. */
static size_t
sample_points(size_t n, size_t max, size_t *idx)
{
    if (!max || n <= max) {
        for (size_t i = 0; i < n; i++) {
            idx[i] = i;
        }
        return n;
    }
    for (size_t i = 0; i < max; i++) {
        idx[i] = (size_t)((double)i * (double)(n - 1) / (double)(max - 1) + 0.5);
    }
    return max;
}

/* Whether a site is located at perl's SV arena (scriptstack.h). */
static int
at_perl_arena(const lh_site_t *site)
{
    return site->location >= 0 && site->frames[site->location].function &&
           strcmp(site->frames[site->location].function, LH_SCRIPTSTACK_PERL_ARENA) == 0;
}

/* perl's SV arena sites, which report --growth puts after the other growing sites (cli's
 * perl_arena_last), sites[first .. n): one entry, their growth summed, then one line per
 * site naming the Perl line that happened to take the slabs. */
static void
perl_arena_entry(FILE *out, const lh_tl_view_t *v, const lh_growth_t *g, const lh_site_t *sites,
                 size_t first, size_t n)
{
    char h[48], h2[48], h3[48];
    double slope = 0;
    uint64_t b0 = 0, b1 = 0;
    size_t m = 0;
    for (size_t i = first; i < n && at_perl_arena(&sites[i]); i++, m++) {
        slope += g->sites[i].slope_bytes;
        b0 += g->sites[i].bytes[0];
        b1 += g->sites[i].bytes[g->n_points - 1];
    }
    fprintf(out, "\n#%zu %s: %s%s per %s in %zu site%s; %s -> %s\n"
                 "    interpreter bookkeeping: slabs of SV heads and bodies, which grow as the live "
                 "SVs of the lines above do;\n    the Perl line that took each slab (not the "
                 "owner of what it holds):\n",
            first + 1, LH_SCRIPTSTACK_PERL_ARENA, slope >= 0 ? "+" : "",
            lh_text_rate_bytes(h, sizeof h, slope), lh_bound_noun(g->kind, 0), m, m == 1 ? "" : "s",
            lh_text_human_bytes(h2, sizeof h2, b0), lh_text_human_bytes(h3, sizeof h3, b1));
    for (size_t i = first; i < first + m; i++) {
        const lh_site_t *st = &sites[i];
        fprintf(out, "      %s%s per %s [site %" PRIu32 "] ", g->sites[i].slope_bytes >= 0 ? "+" : "",
                lh_text_rate_bytes(h, sizeof h, g->sites[i].slope_bytes), lh_bound_noun(g->kind, 0),
                st->stack_id);
        if ((size_t)st->location + 1 < st->n_frames) {
            const lh_frame_t *f = &st->frames[st->location + 1];
            lh_text_clean(out, f->function ? f->function : "?");
            if (f->file) {
                fprintf(out, " (%s:%u)", lh_text_rel_path(f->file, v->cwd), f->line);
            }
        }
        fputc('\n', out);
    }
}

int
lh_view_growth(FILE *out, const lh_tl_view_t *v, const lh_growth_t *g, const lh_site_t *sites,
               size_t n_shown, lh_err_t *err)
{
    char h[48], h2[48];
    if (v->json) {
        json_head(out, v);
        fprintf(out, ", \"boundaries\": \"%s\", \"points\": %zu, \"all_points\": %zu"
                     ", \"end_before_teardown\": %s, \"growing_sites\": %zu"
                     ", \"active_sites\": %zu, \"step_sites\": %zu, \"saturated_sites\": %zu"
                     ", \"peak_sites\": %zu}",
                lh_bound_noun(g->kind, 1), g->n_points, g->n_all_points,
                g->n_points < g->n_all_points ? "true" : "false", g->n_growing, g->n_active,
                g->n_trend[LH_TREND_STEP], g->n_trend[LH_TREND_SATURATED],
                g->n_trend[LH_TREND_PEAK]);
        json_bounds(out, v, g->bounds, g->n_points);
        fputs(",\n \"sites\": [", out);
        for (size_t i = 0; i < n_shown; i++) {
            const lh_growth_site_t *s = &g->sites[i];
            fprintf(out, "%s{\"stack_id\": %" PRIu32 ", ", i ? ",\n  " : "\n  ", s->stack_id);
            lh_json_growth(out, s, g);
            json_site_end(out, "live_bytes", s->bytes, "live_blocks", s->blocks, g->n_points,
                          &sites[i]);
        }
        fputs("]}\n", out);
        return lh_view_flush(out, "the report", err);
    }
    const char *noun = lh_bound_noun(g->kind, 0);
    text_header(out, v, "report --growth");
    fprintf(out, "  points:      %zu %s%s\n", g->n_points, lh_bound_noun(g->kind, 1),
            lh_bound_note(g->kind));
    if (g->n_points < g->n_all_points) {
        fprintf(out, "  end:         %s #%zu, the last before teardown (the heap fell from %s to "
                     "%s over the %zu after it)\n", noun, g->n_points,
                lh_text_human_bytes(h, sizeof h, g->bounds[g->n_points - 1].heap_bytes),
                lh_text_human_bytes(h2, sizeof h2, g->bounds[g->n_all_points - 1].heap_bytes),
                g->n_all_points - g->n_points);
    } else {
        fprintf(out, "  end:         %s #%zu, the last one\n", noun, g->n_points);
    }
    fprintf(out, "  growing:     %zu of %zu sites with live blocks at some %s (growing: an upward "
                 "trend with 95%% confidence, still growing in the last third; docs/GROWTH.md)\n",
            g->n_growing, g->n_active, noun);
    fprintf(out, "  not growth:  %zu one-time step%s, %zu saturated, %zu transient peak%s\n",
            g->n_trend[LH_TREND_STEP], g->n_trend[LH_TREND_STEP] == 1 ? "" : "s",
            g->n_trend[LH_TREND_SATURATED], g->n_trend[LH_TREND_PEAK],
            g->n_trend[LH_TREND_PEAK] == 1 ? "" : "s");
    if (!g->n_growing) {
        fprintf(out, "\nNothing grows from %s to %s.\n", noun, noun);
        return lh_view_flush(out, "the report", err);
    }
    fprintf(out, "\n%s %zu growing site%s by bytes per %s:\n",
            n_shown < g->n_growing ? "Top" : "All", n_shown, n_shown == 1 ? "" : "s", noun);
    size_t idx[8];
    size_t k = sample_points(g->n_points, 8, idx);
    for (size_t i = 0; i < n_shown; i++) {
        const lh_growth_site_t *s = &g->sites[i];
        if (at_perl_arena(&sites[i])) {
            perl_arena_entry(out, v, g, sites, i, n_shown);
            break;
        }
        text_site_head(out, v, i + 1, &sites[i]);
        lh_text_growth(out, s, g);
        fputc('\n', out);
        lh_text_stack(out, &sites[i], v->max_frames, v->cwd);
        fprintf(out, "    live at %s:", noun);
        for (size_t j = 0; j < k; j++) {
            fprintf(out, "%s #%zu %s (%" PRIu64 ")", j ? " |" : "", idx[j] + 1,
                    lh_text_human_bytes(h, sizeof h, s->bytes[idx[j]]), s->blocks[idx[j]]);
        }
        fputc('\n', out);
    }
    return lh_view_flush(out, "the report", err);
}

/* ---------------------------------------------------------------------------------------
 * temporary
 * ------------------------------------------------------------------------------------- */

static void
human_ns(char *buf, size_t len, double ns)
{
    if (ns < 1e3) {
        snprintf(buf, len, "%.0f ns", ns);
    } else if (ns < 1e6) {
        snprintf(buf, len, "%.1f us", ns / 1e3);
    } else if (ns < 1e9) {
        snprintf(buf, len, "%.2f ms", ns / 1e6);
    } else {
        snprintf(buf, len, "%.3f s", ns / 1e9);
    }
}

int
lh_view_temporary(FILE *out, const lh_tl_view_t *v, const lh_temp_t *t, const lh_site_t *sites,
                  size_t n_shown, lh_err_t *err)
{
    if (v->json) {
        json_head(out, v);
        fprintf(out, ", \"threshold_ns\": %" PRIu64 ", \"immediate\": %s"
                     ", \"temporary_blocks\": %" PRIu64
                     ", \"temporary_bytes\": %" PRIu64 ", \"allocations\": %" PRIu64
                     ", \"temporary_sites\": %zu}",
                t->threshold_ns, t->immediate ? "true" : "false", t->n_temp, t->temp_bytes,
                t->n_allocs, t->n_sites);
        fputs(",\n \"sites\": [", out);
        for (size_t i = 0; i < n_shown; i++) {
            const lh_temp_site_t *s = &t->sites[i];
            fprintf(out, "%s{\"stack_id\": %" PRIu32 ", \"temporary_blocks\": %" PRIu64
                         ", \"temporary_bytes\": %" PRIu64 ", \"allocations\": %" PRIu64
                         ", \"mean_lifetime_ns\": %" PRIu64 ", ",
                    i ? ",\n  " : "\n  ", s->stack_id, s->n_temp, s->temp_bytes, s->n_allocs,
                    s->n_temp ? s->lifetime_ns / s->n_temp : 0);
            lh_json_site_frames(out, &sites[i]);
            fputc('}', out);
        }
        fputs("]}\n", out);
        return lh_view_flush(out, "the report", err);
    }
    char h[48], d[48];
    text_header(out, v, "report --temporary");
    human_ns(d, sizeof d, (double)t->threshold_ns);
    if (t->immediate) {
        fputs("  temporary:   blocks freed (by free) by their thread's next call to the allocator "
              "(heaptrack's rule); blocks ended by realloc do not count\n", out);
    } else {
        fprintf(out, "  temporary:   blocks freed (by free) within %s of their allocation; "
                     "blocks ended by realloc do not count\n", d);
    }
    fprintf(out, "  found:       %" PRIu64 " of %" PRIu64 " blocks (%.1f%%), %s in total, from "
                 "%zu site%s\n",
            t->n_temp, t->n_allocs, t->n_allocs ? 100.0 * (double)t->n_temp / (double)t->n_allocs
                                                : 0.0,
            lh_text_human_bytes(h, sizeof h, t->temp_bytes), t->n_sites,
            t->n_sites == 1 ? "" : "s");
    if (!t->n_sites) {
        fputs("\nNo temporary allocations.\n", out);
        return lh_view_flush(out, "the report", err);
    }
    fprintf(out, "\n%s %zu of %zu site%s by count (churn: costs time, does not leak):\n",
            n_shown < t->n_sites ? "Top" : "All", n_shown, t->n_sites, t->n_sites == 1 ? "" : "s");
    for (size_t i = 0; i < n_shown; i++) {
        const lh_temp_site_t *s = &t->sites[i];
        text_site_head(out, v, i + 1, &sites[i]);
        human_ns(d, sizeof d, s->n_temp ? (double)s->lifetime_ns / (double)s->n_temp : 0);
        fprintf(out, "%" PRIu64 " temporary block%s (%.1f%% of its %" PRIu64 "), %s, mean "
                     "lifetime %s\n",
                s->n_temp, s->n_temp == 1 ? "" : "s",
                s->n_allocs ? 100.0 * (double)s->n_temp / (double)s->n_allocs : 0.0,
                s->n_allocs, lh_text_human_bytes(h, sizeof h, s->temp_bytes), d);
        lh_text_stack(out, &sites[i], v->max_frames, v->cwd);
    }
    return lh_view_flush(out, "the report", err);
}

/* ---------------------------------------------------------------------------------------
 * counts
 * ------------------------------------------------------------------------------------- */

int
lh_view_counts(FILE *out, const lh_tl_view_t *v, const lh_counts_t *c, const lh_site_t *sites,
               const char *const *names, size_t rows, lh_err_t *err)
{
    size_t n = c->n_points;
    const char *noun = lh_bound_noun(c->kind, 0);
    if (v->json) {
        json_head(out, v);
        fprintf(out, ", \"by\": \"%s\", \"boundaries\": \"%s\", \"points\": %zu"
                     ", \"groups\": %zu}",
                names ? "function" : "site", lh_bound_noun(c->kind, 1), n, c->n_groups);
        json_bounds(out, v, c->bounds, n);
        fputs(",\n \"groups\": [", out);
        for (size_t i = 0; i < c->n_shown; i++) {
            const lh_count_group_t *gr = &c->groups[i];
            fputs(i ? ",\n  {" : "\n  {", out);
            if (names) {
                fputs("\"function\": ", out);
                lh_json_string(out, names[i], strlen(names[i]));
                fprintf(out, ", \"sites\": %zu, ", gr->n_sites);
            } else {
                fprintf(out, "\"stack_id\": %zu, \"trend\": \"%s\", ", gr->group,
                        lh_trend_name(gr->trend));
            }
            fprintf(out, "\"final_blocks\": %" PRIu64 ", \"final_bytes\": %" PRIu64, gr->final,
                    gr->final_bytes);
            json_u64_array(out, "counts", gr->counts, n);
            fputs(", \"deltas\": [", out);
            for (size_t p = 0; p < n; p++) {
                long long dlt = p ? (long long)gr->counts[p] - (long long)gr->counts[p - 1] : 0;
                fprintf(out, p ? ", %lld" : "%lld", dlt);
            }
            fputs("], ", out);
            lh_json_site_frames(out, &sites[i]);
            fputc('}', out);
        }
        fputs("]}\n", out);
        return lh_view_flush(out, "the report", err);
    }
    text_header(out, v, "counts");
    fprintf(out, "  points:      %zu %s%s; live blocks per %s at each, with the change since the "
                 "previous %s\n",
            n, lh_bound_noun(c->kind, 1),
            lh_bound_note(c->kind),
            names ? "function" : "site", noun);
    if (!c->n_shown) {
        fputs("\nNo live blocks at any point.\n", out);
        return lh_view_flush(out, "the report", err);
    }
    fprintf(out, "  groups:      top %zu of %zu by live blocks at the last %s\n\n", c->n_shown,
            c->n_groups, noun);
    for (size_t i = 0; i < c->n_shown; i++) {
        fprintf(out, "  [%zu] ", i + 1);
        if (names) {
            lh_text_clean(out, names[i]);
            fprintf(out, " (%zu site%s, e.g. ", c->groups[i].n_sites,
                    c->groups[i].n_sites == 1 ? "" : "s");
            lh_text_location(out, &sites[i], v->cwd);
            fputs(")\n", out);
        } else {
            fprintf(out, "site %zu ", c->groups[i].group);
            lh_text_location(out, &sites[i], v->cwd);
            const lh_site_t *s = &sites[i];
            if (s->location >= 0 && s->frames[s->location].function) {
                fputs(" in ", out);
                lh_text_clean(out, s->frames[s->location].function);
            }
            fprintf(out, ": %s\n", lh_trend_name(c->groups[i].trend));
        }
    }
    size_t idx_buf[64];
    size_t k = sample_points(n, rows && rows < 64 ? rows : 64, idx_buf);
    fprintf(out, "\n  %-22s %10s", noun, "time");
    for (size_t i = 0; i < c->n_shown; i++) {
        char col[32];
        snprintf(col, sizeof col, "[%zu]", i + 1);
        fprintf(out, " %18s", col);
    }
    fputc('\n', out);
    for (size_t r = 0; r < k; r++) {
        size_t p = idx_buf[r];
        char name[64];
        snprintf(name, sizeof name, "#%zu %s", p + 1, c->bounds[p].label);
        for (char *q = name; *q; q++) {
            if ((unsigned char)*q < 0x20 || *q == 0x7f) {
                *q = '?';
            }
        }
        fprintf(out, "  %-22.22s %9.3fs", name, secs(v, c->bounds[p].ts_ns));
        for (size_t i = 0; i < c->n_shown; i++) {
            const uint64_t *cnt = c->groups[i].counts;
            long long dlt = p ? (long long)cnt[p] - (long long)cnt[p - 1] : 0;
            char cell[48];
            snprintf(cell, sizeof cell, "%" PRIu64 " (%+lld)", cnt[p], dlt);
            fprintf(out, " %18s", cell);
        }
        fputc('\n', out);
    }
    if (k < n) {
        fprintf(out, "  (%zu of %zu %s shown; --rows N, or --format json for all)\n", k, n,
                lh_bound_noun(c->kind, 1));
    }
    return lh_view_flush(out, "the report", err);
}

/* ---------------------------------------------------------------------------------------
 * log
 * ------------------------------------------------------------------------------------- */

static const lh_site_t *
find_site(const lh_site_t *sites, size_t n, uint32_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sites[mid].stack_id == id) {
            return &sites[mid];
        }
        if (sites[mid].stack_id < id) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return NULL;
}

static const char *
event_name(const lh_hist_entry_t *e)
{
    switch (e->type) {
    case LH_REC_ALLOC:
        switch (e->kind) {
        case LH_AK_CALLOC:
            return "calloc";
        case LH_AK_REALLOC:
            return "realloc";
        case LH_AK_MEMALIGN:
            return "memalign";
        case LH_AK_VALLOC:
            return "valloc";
        case LH_AK_REALLOCARRAY:
            return "reallocarray";
        default:
            return "malloc";
        }
    case LH_REC_FREE:
        return "free";
    case LH_REC_REALLOC:
        return e->half == LH_HALF_FREE ? "realloc-from" : e->half == LH_HALF_ALLOC ? "realloc-to"
                                                                                  : "realloc";
    case LH_REC_MARK:
        return "mark";
    case LH_REC_SNAPSHOT:
        return "snapshot";
    default:
        return "event";
    }
}

static int
is_alloc_entry(const lh_hist_entry_t *e)
{
    return (e->type == LH_REC_ALLOC || (e->type == LH_REC_REALLOC && e->half != LH_HALF_FREE)) &&
           e->addr;
}

int
lh_view_log(FILE *out, const lh_tl_view_t *v, const lh_history_t *h, const lh_site_t *sites,
            size_t n_sites, lh_err_t *err)
{
    if (v->json) {
        json_head(out, v);
        fprintf(out, ", \"matched\": %" PRIu64 ", \"shown\": %zu}", h->n_matched, h->n);
        fputs(",\n \"events\": [", out);
        for (size_t i = 0; i < h->n; i++) {
            const lh_hist_entry_t *e = &h->v[i];
            fprintf(out, "%s{\"time_s\": %.9f, \"tid\": %" PRIu32 ", \"event\": \"%s\"",
                    i ? ",\n  " : "\n  ", secs(v, e->ts_ns), e->tid, event_name(e));
            if (e->type == LH_REC_MARK || e->type == LH_REC_SNAPSHOT) {
                fputs(", \"label\": ", out);
                lh_json_string(out, e->label, strlen(e->label));
                fputs("}", out);
                continue;
            }
            fprintf(out, ", \"address\": \"0x%" PRIx64 "\"", e->addr);
            if (e->type == LH_REC_REALLOC) {
                fprintf(out, ", \"old_address\": \"0x%" PRIx64 "\"", e->old_addr);
            }
            if (is_alloc_entry(e)) {
                fprintf(out, ", \"size\": %" PRIu64 ", \"site\": %" PRIu32, e->size, e->stack_id);
            }
            if (e->has_block) {
                fprintf(out, ", \"freed_size\": %" PRIu64 ", \"freed_site\": %" PRIu32
                             ", \"lived_ns\": %" PRIu64,
                        e->block_size, e->block_stack, e->block_age_ns);
            }
            fputc('}', out);
        }
        fputs("],\n \"sites\": {", out);
        for (size_t i = 0; i < n_sites; i++) {
            fprintf(out, "%s\"%" PRIu32 "\": {", i ? ",\n  " : "\n  ", sites[i].stack_id);
            lh_json_site_frames(out, &sites[i]);
            fputc('}', out);
        }
        fputs("}}\n", out);
        return lh_view_flush(out, "the report", err);
    }
    text_header(out, v, "log");
    fprintf(out, "  events:      %" PRIu64 " matched, %zu shown\n\n", h->n_matched, h->n);
    fprintf(out, "  %12s %8s  %-12s %-18s %10s %6s\n", "time (s)", "thread", "event", "address",
            "size", "site");
    for (size_t i = 0; i < h->n; i++) {
        const lh_hist_entry_t *e = &h->v[i];
        fprintf(out, "  %12.6f %8" PRIu32 "  %-12s ", secs(v, e->ts_ns), e->tid, event_name(e));
        if (e->type == LH_REC_MARK || e->type == LH_REC_SNAPSHOT) {
            fputc('\'', out);
            lh_text_clean(out, e->label);
            fputs("'\n", out);
            continue;
        }
        char addr[24];
        snprintf(addr, sizeof addr, "0x%" PRIx64, e->type == LH_REC_REALLOC &&
                 e->half == LH_HALF_FREE ? e->old_addr : e->addr);
        if (is_alloc_entry(e)) {
            fprintf(out, "%-18s %10" PRIu64 " %6" PRIu32, addr, e->size, e->stack_id);
            if (e->type == LH_REC_REALLOC && e->half != LH_HALF_ALLOC && e->old_addr) {
                fprintf(out, "  from 0x%" PRIx64, e->old_addr);
            }
        } else {
            fprintf(out, "%-18s %10s %6s", addr, e->has_block ? "" : "-", e->has_block ? "" : "-");
        }
        if (e->has_block) {
            char life[32];
            human_ns(life, sizeof life, (double)e->block_age_ns);
            fprintf(out, "  frees %" PRIu64 " B of site %" PRIu32 " after %s", e->block_size,
                    e->block_stack, life);
        } else if (!is_alloc_entry(e) && e->type != LH_REC_ALLOC) {
            fputs("  (not a live block)", out);
        }
        fputc('\n', out);
        if (is_alloc_entry(e)) {
            const lh_site_t *s = find_site(sites, n_sites, e->stack_id);
            if (s) {
                lh_text_stack(out, s, v->max_frames ? v->max_frames : 4, v->cwd);
            }
        }
    }
    if (h->n < h->n_matched) {
        fprintf(out, "  ... %" PRIu64 " more (--limit N)\n", h->n_matched - h->n);
    }
    return lh_view_flush(out, "the report", err);
}
