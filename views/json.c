/* leakhound - SPDX-License-Identifier: MIT
 *
 * json.c: the JSON report.
 */
#include "json.h"

#include "split_view.h"
#include "text.h"

#include <inttypes.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is invalid (overlong
 * forms, surrogates and code points above U+10FFFF included). */
static size_t
utf8_len(const unsigned char *s, size_t left)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t cp;
    if (c < 0x80) {
        return 1;
    } else if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (left < n) {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            return 0;
        }
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff)) {
        return 0;
    }
    return n;
}

/* JSON's two-character escapes; the other control characters get a six-character one. */
static const char *const json_esc[0x80] = {
    ['"'] = "\\\"", ['\\'] = "\\\\", ['\n'] = "\\n", ['\r'] = "\\r",
    ['\t'] = "\\t", ['\b'] = "\\b",  ['\f'] = "\\f",
};

void
lh_json_string(FILE *out, const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', out);
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        size_t n;
        if (c < 0x80 && json_esc[c]) {
            fputs(json_esc[c], out);
        } else if (c < 0x20) {
            fprintf(out, "\\u%04x", c);
        } else if ((n = utf8_len(s + i, len - i)) == 0) {
            fputs("\\ufffd", out);
        } else {
            /* The run of bytes that need no escape, in one write (names and paths are
             * mostly that; a 400 MB report spent half its time per character). */
            while (i + n < len && s[i + n] >= 0x20 && s[i + n] < 0x80 && s[i + n] != '"' &&
                   s[i + n] != '\\') {
                n++;
            }
            fwrite(s + i, 1, n, out);
            i += n;
            continue;
        }
        i++;
    }
    fputc('"', out);
}

void
lh_json_str(FILE *out, const char *s)
{
    if (s) {
        lh_json_string(out, s, strlen(s));
    } else {
        fputs("null", out);
    }
}

static const char *
exit_kind(const lh_trace_end_t *e)
{
    if (!e->present) {
        return "none";
    }
    switch (e->kind) {
    case LH_EXIT_NORMAL:
        return "exit";
    case LH_EXIT_UNDERSCORE:
        return "_exit";
    case LH_EXIT_EXEC:
        return "exec";
    case LH_EXIT_DETACH:
        return "detach";
    case LH_EXIT_SCRIPT:
        return "killed_in_teardown";
    case LH_EXIT_SIGNAL:
        return "signal";
    default:
        return "unknown";
    }
}

static void
print_summary(FILE *out, const lh_report_t *rep)
{
    const lh_trace_info_t *in = rep->info;
    const lh_replay_totals_t *tot = rep->totals;
    const lh_trace_end_t *e = rep->end;

    fputs("{\"program\": ", out);
    lh_json_str(out, in->exe[0] ? in->exe : in->argc ? in->argv[0] : NULL);
    fputs(", \"argv\": [", out);
    for (size_t i = 0; i < in->argc; i++) {
        fputs(i ? ", " : "", out);
        lh_json_str(out, in->argv[i]);
    }
    fprintf(out, "], \"pid\": %" PRIu64 ", \"ppid\": %" PRIu64, in->pid, in->ppid);
    fputs(", \"trace\": ", out);
    lh_json_str(out, rep->trace_path);
    fprintf(out, ", \"duration_s\": %.6f", rep->duration_s);
    fprintf(out, ", \"total_events\": %" PRIu64, rep->stats->n_events);
    fprintf(out, ", \"total_allocations\": %" PRIu64, tot->n_allocs);
    fprintf(out, ", \"total_frees\": %" PRIu64, tot->n_frees);
    fprintf(out, ", \"total_reallocs\": %" PRIu64, tot->n_reallocs);
    fprintf(out, ", \"total_allocated_bytes\": %" PRIu64, tot->alloc_bytes);
    fprintf(out, ", \"peak_bytes\": %" PRIu64, tot->peak_bytes);
    /* A sampled trace: counts and bytes are unbiased estimates, not exact. */
    fprintf(out, ", \"sample_rate_bytes\": %" PRIu64 ", \"estimated\": %s",
            rep->info->sample_rate_bytes, rep->info->sample_rate_bytes ? "true" : "false");
    fprintf(out, ", \"peak_time_s\": %.6f", rep->peak_time_s);
    /* As the text report and the sites list: what suppressions hid is not counted. */
    fprintf(out, ", \"leaked_bytes\": %" PRIu64, lh_report_leaked_bytes(rep));
    fprintf(out, ", \"leaked_blocks\": %" PRIu64, lh_report_leaked_blocks(rep));
    if (rep->info->inherited) { /* a seeded fork child (trace.h): not counted as leaked */
        fprintf(out, ", \"inherited\": {\"from\": ");
        lh_json_str(out, rep->info->inherited_from);
        fprintf(out, ", \"fork_time_s\": %.6f, \"blocks\": %" PRIu64 ", \"bytes\": %" PRIu64
                     ", \"live_blocks\": %" PRIu64 ", \"live_bytes\": %" PRIu64 "}",
                rep->info->fork_ts_ns > rep->start_ns
                    ? (double)(rep->info->fork_ts_ns - rep->start_ns) / 1e9
                    : 0.0,
                rep->info->inherited_blocks, rep->info->inherited_bytes, rep->inherited_blocks,
                rep->inherited_bytes);
    }
    fprintf(out, ", \"leak_sites\": %zu", rep->n_leak_sites);
    /* the keys that ordered "sites", first to last (report.h) */
    fprintf(out, ", \"ranked_by\": [%s%s\"bytes\"]", rep->growth ? "\"growth\", " : "",
            rep->ranked_by_class ? "\"class\", " : "");
    if (rep->growth) {
        fprintf(out, ", \"growing_sites\": %zu, \"growth_boundaries\": \"%s\""
                     ", \"growth_points\": %zu",
                rep->n_growing, lh_bound_noun(rep->growth->kind, 1), rep->growth->n_points);
    }
    if (rep->n_suppressed_sites) { /* report --suppressions */
        fprintf(out, ", \"suppressed_bytes\": %" PRIu64 ", \"suppressed_blocks\": %" PRIu64
                     ", \"suppressed_sites\": %zu",
                rep->suppressed_bytes, rep->suppressed_blocks, rep->n_suppressed_sites);
    }
    fprintf(out, ", \"unmatched_frees\": %" PRIu64, tot->n_unmatched_frees);
    fprintf(out, ", \"clean_exit\": %s",
            e->present && e->kind == LH_EXIT_NORMAL ? "true" : "false");
    fprintf(out, ", \"exit_kind\": \"%s\"", exit_kind(e));
    if (e->present && e->kind == LH_EXIT_SIGNAL) {
        char name[32];
        fprintf(out, ", \"exit_signal\": \"%s\"",
                lh_text_signal_name(name, sizeof name, e->status));
    }
    if (e->present) {
        fprintf(out, ", \"exit_status\": %" PRIu64 ", \"dropped_events\": %" PRIu64, e->status,
                e->dropped);
    } else {
        fputs(", \"exit_status\": null, \"dropped_events\": null", out);
    }
    fprintf(out, ", \"salvaged\": %s", rep->stats->salvaged ? "true" : "false");
    if (rep->rss && rep->rss->n_samples >= 2) {
        const lh_rss_cmp_t *c = rep->rss;
        fprintf(out, ", \"rss\": {\"samples\": %" PRIu64 ", \"first_bytes\": %" PRIu64
                     ", \"last_bytes\": %" PRIu64 ", \"heap_first_bytes\": %" PRIu64
                     ", \"heap_last_bytes\": %" PRIu64 ", \"outside_heap\": %s}",
                c->n_samples, c->first_rss, c->last_rss, c->first_heap, c->last_heap,
                lh_rss_cmp_suspicious(c) ? "true" : "false");
    }
    fputs("}", out);
}

/* One frame object: {"function", "file", "line", "module", "inlined", "address",
 * "offset"}; null for no frame (f NULL). */
static void
json_frame(FILE *out, const lh_frame_t *f)
{
    if (!f) {
        fputs("null", out);
        return;
    }
    fputs("{\"function\": ", out);
    lh_json_str(out, f->function);
    fputs(", \"file\": ", out);
    lh_json_str(out, f->file);
    fprintf(out, ", \"line\": %" PRIu32 ", \"module\": ", f->line);
    lh_json_str(out, f->module);
    fprintf(out, ", \"inlined\": %s, \"address\": \"0x%" PRIx64 "\", \"offset\": \"0x%" PRIx64
                 "\"",
            f->inlined ? "true" : "false", f->ip, f->offset);
    if (f->phase) { /* file names an interpreter phase, not a file (scriptstack.h) */
        fputs(", \"phase\": true", out);
    }
    if (f->lang) { /* a script frame (scriptstack.h): which language */
        fprintf(out, ", \"language\": \"%s\"", f->lang == 1 ? "perl" : f->lang == 2 ? "python"
                                                                                : "script");
    }
    fputc('}', out);
}

static void
print_site(FILE *out, const lh_report_t *rep, const lh_site_t *site)
{
    const lh_stack_stats_t *s = &site->stats;
    fprintf(out,
            "{\"leaked_bytes\": %" PRIu64 ", \"leaked_blocks\": %" PRIu64
            ", \"allocations\": %" PRIu64 ", \"allocated_bytes\": %" PRIu64
            ", \"frees\": %" PRIu64 ", \"stack_id\": %" PRIu32 ", \"rank\": \"%s\", ",
            s->live_bytes, s->live_blocks, s->n_allocs, s->alloc_bytes, s->n_frees,
            site->stack_id, lh_site_rank_name(site->rank));
    lh_json_site_frames(out, site);
    lh_json_site_split(out, rep, site); /* issue 5: nothing without an exit snapshot */
    if (site->growth) { /* ranked first because it grows (report.h) */
        fputs(", \"growth\": {", out);
        lh_json_growth(out, site->growth, rep->growth);
        fputs("}", out);
    } else if (rep->growth) {
        fputs(", \"growth\": null", out);
    }
    fputs("}", out);
}

void
lh_json_site_frames(FILE *out, const lh_site_t *site)
{
    fputs("\"location\": ", out);
    json_frame(out, site->location >= 0 ? &site->frames[site->location] : NULL);
    /* the user's own frame (report.h, lh_site_user_frame); may be the location itself */
    fputs(", \"user_frame\": ", out);
    json_frame(out, site->user_frame >= 0 && (size_t)site->user_frame < site->n_frames
                        ? &site->frames[site->user_frame]
                        : NULL);
    fputs(", \"frames\": [", out);
    for (size_t i = 0; i < site->n_frames; i++) {
        fputs(i ? ",\n      " : "\n      ", out);
        json_frame(out, &site->frames[i]);
    }
    fputs("]", out);
    size_t shown = site->n_grown_by < LH_SITE_MAX_GROWERS ? site->n_grown_by
                                                           : LH_SITE_MAX_GROWERS;
    if (site->n_grown_by) {
        fprintf(out, ", \"grown_by_sites\": %zu, \"grown_by\": [", site->n_grown_by);
        for (size_t i = 0; i < shown; i++) {
            fputs(i ? ", " : "", out);
            json_frame(out, &site->grown_by[i]);
        }
        fputs("]", out);
    }
}

void
lh_json_num(FILE *out, double x)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.6f", x);
    char *p = buf + strlen(buf) - 1;
    while (*p == '0') {
        *p-- = '\0';
    }
    if (*p == '.') {
        *p = '\0';
    }
    fputs(strcmp(buf, "-0") == 0 ? "0" : buf, out);
}

void
lh_json_growth(FILE *out, const lh_growth_site_t *s, const lh_growth_t *g)
{
    size_t last = g->n_points - 1;
    fprintf(out, "\"growing\": %s, \"trend\": \"%s\", \"trend_z\": %.3f"
                 ", \"growth_bytes_per_mark\": ",
            s->growing ? "true" : "false", lh_trend_name(s->trend.kind), s->trend.z);
    lh_json_num(out, s->slope_bytes);
    fputs(", \"growth_blocks_per_mark\": ", out);
    lh_json_num(out, s->slope_blocks);
    fprintf(out, ", \"grew_intervals\": %zu, \"intervals\": %zu, \"gained_bytes\": %" PRIu64
                 ", \"first_bytes\": %" PRIu64 ", \"last_bytes\": %" PRIu64
                 ", \"first_blocks\": %" PRIu64 ", \"last_blocks\": %" PRIu64,
            s->grew_intervals, s->intervals, s->gained_bytes, s->bytes[0], s->bytes[last],
            s->blocks[0], s->blocks[last]);
}

int
lh_view_json(FILE *out, const lh_report_t *rep, lh_err_t *err)
{
    fputs("{\"summary\": ", out);
    print_summary(out, rep);
    fputs(",\n \"sites\": [", out);
    for (size_t i = 0; i < rep->n_sites; i++) {
        fputs(i ? ",\n  " : "\n  ", out);
        print_site(out, rep, &rep->sites[i]);
    }
    fputs("]", out);
    lh_json_leak_split(out, rep);
    fputs("}\n", out);
    return lh_view_flush(out, "the report", err);
}
