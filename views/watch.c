/* leakhound - SPDX-License-Identifier: MIT
 *
 * watch.c: text and JSON renderings of a `leakhound watch` result.
 */
#include "watch.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "json.h"
#include "text.h"

/* ---------------------------------------------------------------------------------------
 * Text
 * ------------------------------------------------------------------------------------- */

/* Signed binary units ("+256.0 KiB", "-4.0 KiB", "0 B"). */
static const char *
signed_bytes(char *buf, size_t len, double v)
{
    char mag[32];
    lh_text_human_bytes(mag, sizeof mag, (uint64_t)llround(fabs(v)));
    snprintf(buf, len, "%s%s", v > 0.5 ? "+" : v < -0.5 ? "-" : "", mag);
    return buf;
}

static void
text_header(FILE *out, const lh_watch_result_t *res)
{
    fprintf(out, "target: pid %ld and its children", (long)res->pid);
    if (res->is_started && res->command) {
        fputs(" (started:", out);
        for (char **a = res->command; *a; a++) {
            fputc(' ', out);
            lh_text_shell_word(out, *a, 1); /* the header stays on one line */
        }
        fputc(')', out);
    }
    fputc('\n', out);
    if (res->by_load) {
        fprintf(out, "load:   %s\n", res->load_cmd);
        fprintf(out, "        %lu round%s of %lu command%s after %lu warm-up round%s\n",
                res->rounds, res->rounds == 1 ? "" : "s", res->loads_per_round,
                res->loads_per_round == 1 ? "" : "s", res->warmup, res->warmup == 1 ? "" : "s");
    } else {
        fputs("load:   none, sampling over time\n", out);
    }
    fputc('\n', out);
}

static void
text_table(FILE *out, const lh_watch_result_t *res)
{
    char rss[32], pss[32], delta[48];
    fprintf(out, "%5s  %8s  %11s  %11s  %11s  %5s\n", "round", res->by_load ? "loads" : "time_s",
            "RSS", "PSS", "delta RSS", "procs");
    for (size_t i = 0; i < res->n_samples; i++) {
        const lh_watch_sample_t *s = &res->samples[i];
        lh_text_human_bytes(rss, sizeof rss, s->mem.rss_bytes);
        if (s->mem.has_pss) {
            lh_text_human_bytes(pss, sizeof pss, s->mem.pss_bytes);
        } else {
            snprintf(pss, sizeof pss, "-");
        }
        if (i == 0) {
            snprintf(delta, sizeof delta, "-");
        } else {
            signed_bytes(delta, sizeof delta,
                         (double)s->mem.rss_bytes - (double)res->samples[i - 1].mem.rss_bytes);
        }
        fprintf(out, "%5u  ", s->round);
        if (res->by_load) {
            fprintf(out, "%8lu  ", s->loads);
        } else {
            fprintf(out, "%8.1f  ", s->t_s);
        }
        fprintf(out, "%11s  %11s  %11s  %5u\n", rss, pss, delta, s->mem.n_procs);
    }
    fputc('\n', out);
}

int
lh_view_watch_text(FILE *out, const lh_watch_result_t *res, lh_err_t *err)
{
    char per[48], lo[48], hi[48], total[48], thr[32];
    const char *unit = res->by_load ? "load" : "second";
    text_header(out, res);
    text_table(out, res);
    if (res->exit_note) {
        fprintf(out, "note: %s; analysing the %zu sample%s taken\n", res->exit_note,
                res->n_samples, res->n_samples == 1 ? "" : "s");
    }
    if (res->load_failures) {
        fprintf(out, "note: %lu load command%s exited with a non-zero status\n",
                res->load_failures, res->load_failures == 1 ? "" : "s");
    }
    const lh_judgement_t *j = &res->judgement;
    if (j->has_fit) {
        fprintf(out, "growth (%s): %s per %s (95%% CI %s to %s), R^2 %.3f; %s over the watch\n",
                res->metric, signed_bytes(per, sizeof per, j->fit.slope), unit,
                signed_bytes(lo, sizeof lo, j->fit.ci95_low),
                signed_bytes(hi, sizeof hi, j->fit.ci95_high), j->fit.r2,
                signed_bytes(total, sizeof total, j->growth_bytes));
        lh_text_human_bytes(thr, sizeof thr, (uint64_t)llround(j->threshold_bytes));
        fprintf(out, "threshold: %s over the watch\n", thr);
    }
    fprintf(out, "verdict: %s: %s\n", lh_verdict_str(j->verdict), j->reason);
    return lh_view_flush(out, "the report", err);
}

/* ---------------------------------------------------------------------------------------
 * JSON
 * ------------------------------------------------------------------------------------- */

static void
json_target(FILE *out, const lh_watch_result_t *res)
{
    fprintf(out, "{\"pid\": %ld, \"command\": ", (long)res->pid);
    if (res->command) {
        fputc('[', out);
        for (char **a = res->command; *a; a++) {
            fputs(a == res->command ? "" : ", ", out);
            lh_json_str(out, *a);
        }
        fputc(']', out);
    } else {
        fputs("null", out);
    }
    fprintf(out, ", \"started\": %s, \"exited\": %s, \"exit_note\": ",
            res->is_started ? "true" : "false", res->exit_note ? "true" : "false");
    lh_json_str(out, res->exit_note);
    fputc('}', out);
}

static void
json_sample(FILE *out, const lh_watch_sample_t *s)
{
    fprintf(out, "{\"round\": %u, \"loads\": %lu, \"rss_bytes\": %" PRIu64 ", \"pss_bytes\": ",
            s->round, s->loads, s->mem.rss_bytes);
    if (s->mem.has_pss) {
        fprintf(out, "%" PRIu64, s->mem.pss_bytes);
    } else {
        fputs("null", out);
    }
    fprintf(out, ", \"anon_bytes\": %" PRIu64 ", \"n_processes\": %u, \"t_s\": %.3f}",
            s->mem.anon_bytes, s->mem.n_procs, s->t_s);
}

static void
json_num(FILE *out, int valid, double v, const char *fmt)
{
    if (valid && isfinite(v)) {
        fprintf(out, fmt, v);
    } else {
        fputs("null", out);
    }
}

int
lh_view_watch_json(FILE *out, const lh_watch_result_t *res, lh_err_t *err)
{
    const lh_judgement_t *j = &res->judgement;
    fputs("{\"target\": ", out);
    json_target(out, res);
    fprintf(out, ",\n \"mode\": \"%s\", \"metric\": ", res->by_load ? "load" : "time");
    lh_json_str(out, res->metric);
    fputs(",\n \"load\": ", out);
    if (res->by_load) {
        fputs("{\"command\": ", out);
        lh_json_str(out, res->load_cmd);
        fprintf(out, ", \"per_round\": %lu, \"rounds\": %lu, \"warmup\": %lu, \"failures\": %lu}",
                res->loads_per_round, res->rounds, res->warmup, res->load_failures);
    } else {
        fputs("null", out);
    }
    fputs(",\n \"samples\": [", out);
    for (size_t i = 0; i < res->n_samples; i++) {
        fputs(i ? ",\n  " : "\n  ", out);
        json_sample(out, &res->samples[i]);
    }
    fprintf(out, "],\n \"%s\": ",
            res->by_load ? "slope_bytes_per_load" : "slope_bytes_per_second");
    json_num(out, j->has_fit, j->fit.slope, "%.3f");
    fputs(", \"ci95_low\": ", out);
    json_num(out, j->has_fit, j->fit.ci95_low, "%.3f");
    fputs(", \"ci95_high\": ", out);
    json_num(out, j->has_fit, j->fit.ci95_high, "%.3f");
    fputs(", \"r2\": ", out);
    json_num(out, j->has_fit, j->fit.r2, "%.6f");
    fputs(",\n \"tail\": ", out);
    if (j->has_fit && j->has_tail) {
        fprintf(out, "{\"first_sample\": %zu, \"slope\": ", j->tail_from);
        json_num(out, 1, j->tail.slope, "%.3f");
        fputs(", \"ci95_low\": ", out);
        json_num(out, 1, j->tail.ci95_low, "%.3f");
        fputs(", \"ci95_high\": ", out);
        json_num(out, 1, j->tail.ci95_high, "%.3f");
        fputc('}', out);
    } else {
        fputs("null", out);
    }
    fputs(",\n \"threshold_bytes\": ", out);
    json_num(out, 1, j->threshold_bytes, "%.0f");
    fputs(", \"growth_bytes\": ", out);
    json_num(out, j->has_fit, j->growth_bytes, "%.0f");
    fputs(",\n \"verdict\": ", out);
    lh_json_str(out, lh_verdict_str(j->verdict));
    fputs(", \"reason\": ", out);
    lh_json_str(out, j->reason);
    fputs("}\n", out);
    return lh_view_flush(out, "the report", err);
}
