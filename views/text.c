/* leakhound - SPDX-License-Identifier: MIT
 *
 * text.c: the text report.
 */
#include "text.h"

#include "split_view.h"

#include <inttypes.h>
#include <string.h>

const char *
lh_text_trigger_name(int t, const char *other)
{
    static const char *const names[] = {
        [LH_SNAP_API] = "api",       [LH_SNAP_SIGNAL] = "signal", [LH_SNAP_PERIOD] = "period",
        [LH_SNAP_GROWTH] = "growth", [LH_SNAP_EXIT] = "exit",
    };
    return t >= 0 && (size_t)t < sizeof names / sizeof names[0] ? names[t] : other;
}

const char *
lh_text_signal_name(char *buf, size_t len, uint64_t sig)
{
    const char *abbrev = sig > 0 && sig < 65 ? sigabbrev_np((int)sig) : NULL;
    if (abbrev) {
        snprintf(buf, len, "SIG%s", abbrev);
    } else {
        snprintf(buf, len, "signal %" PRIu64, sig);
    }
    return buf;
}

const char *
lh_text_human_bytes(char *buf, size_t len, uint64_t bytes)
{
    static const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(buf, len, "%" PRIu64 " B", bytes);
        return buf;
    }
    double v = (double)bytes / 1024.0;
    size_t u = 0;
    while (v >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, len, "%.1f %s", v, units[u]);
    return buf;
}

void
lh_text_shell_word(FILE *out, const char *s, int escapes)
{
    int plain = *s != '\0';
    for (const char *p = s; *p; p++) {
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                    "-_./=:,+@%", *p)) {
            plain = 0;
            break;
        }
    }
    if (plain) {
        fputs(s, out);
        return;
    }
    fputc('\'', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\'') {
            fputs("'\\''", out);
        } else if (escapes && (*p == '\n' || *p == '\t')) {
            fputs(*p == '\n' ? "\\n" : "\\t", out);
        } else {
            fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, out); /* no control characters */
        }
    }
    fputc('\'', out);
}

void
lh_text_clean(FILE *out, const char *s)
{
    for (; *s; s++) {
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, out);
    }
}

const char *
lh_text_rel_path(const char *path, const char *cwd)
{
    size_t n = cwd ? strlen(cwd) : 0;
    if (n > 1 && path[0] == '/' && strncmp(path, cwd, n) == 0 && path[n] == '/') {
        return path + n + 1;
    }
    return path;
}

static void
print_exit(FILE *out, const lh_report_t *rep)
{
    const lh_trace_end_t *e = rep->end;
    if (!e->present) {
        fputs("no trailer: the process did not exit cleanly (killed?); data up to the last "
              "flush\n",
              out);
        return;
    }
    switch (e->kind) {
    case LH_EXIT_NORMAL:
        fprintf(out, "clean exit (status %" PRIu64 ")\n", e->status);
        break;
    case LH_EXIT_UNDERSCORE:
        fprintf(out, "_exit(%" PRIu64 "): destructors and atexit handlers did not run\n",
                e->status);
        break;
    case LH_EXIT_EXEC:
        fputs("exec: the process replaced itself with another program\n", out);
        break;
    case LH_EXIT_DETACH:
        fputs("detached: leakhound attach ended, the process runs on (live blocks are those "
              "still live at the detach)\n",
              out);
        break;
    case LH_EXIT_SIGNAL: {
        char name[32];
        fprintf(out, "terminated by %s (signal %" PRIu64 "; the trace ended as at exit)\n",
                lh_text_signal_name(name, sizeof name, e->status), e->status);
        break;
    }
    case LH_EXIT_SCRIPT:
        fputs("killed during teardown: the main program ended, then the process was killed "
              "before its exit (by a signal; python re-raises SIGINT after an uncaught "
              "KeyboardInterrupt)\n",
              out);
        break;
    default:
        fprintf(out, "exit of unknown kind %" PRIu64 " (status %" PRIu64 ")\n", e->kind,
                e->status);
        break;
    }
}

/* "+3.0 MiB", "-512 B", "+0 B" */
static const char *
signed_bytes(char *buf, size_t len, uint64_t from, uint64_t to)
{
    char h[32];
    snprintf(buf, len, "%s%s", to >= from ? "+" : "-",
             lh_text_human_bytes(h, sizeof h, to >= from ? to - from : from - to));
    return buf;
}

/* The "RSS: ..." summary line(s): RSS growth against heap growth, first to last sample,
 * and, when RSS grew by much more, what that means. */
static void
text_rss(FILE *out, const lh_rss_cmp_t *c)
{
    char a[40], b[40], h1[32], h2[32];
    fprintf(out, "  RSS:           %s -> %s (%s) while the heap went %s -> %s (%s), first to "
                 "last of %" PRIu64 " samples\n",
            lh_text_human_bytes(h1, sizeof h1, c->first_rss),
            lh_text_human_bytes(h2, sizeof h2, c->last_rss),
            signed_bytes(a, sizeof a, c->first_rss, c->last_rss),
            lh_text_human_bytes((char[32]){0}, 32, c->first_heap),
            lh_text_human_bytes((char[32]){0}, 32, c->last_heap),
            signed_bytes(b, sizeof b, c->first_heap, c->last_heap), c->n_samples);
    if (lh_rss_cmp_suspicious(c)) {
        fprintf(out, "                 RSS grew %s while the heap grew %s: memory outside "
                     "malloc (mmap, fragmentation, thread stacks)\n",
                lh_text_human_bytes(h1, sizeof h1, c->last_rss - c->first_rss),
                lh_text_human_bytes(h2, sizeof h2, c->last_heap > c->first_heap
                                                       ? c->last_heap - c->first_heap : 0));
    }
}

static void
print_summary(FILE *out, const lh_report_t *rep)
{
    const lh_trace_info_t *in = rep->info;
    const lh_replay_totals_t *tot = rep->totals;
    char h[32];

    fputs("leakhound report: ", out);
    lh_text_clean(out, rep->trace_path);
    fputs("\n  program:       ", out);
    lh_text_clean(out, in->exe[0] ? in->exe : in->argc ? in->argv[0] : "(unknown)");
    if (in->argc) {
        fputs("\n  command:      ", out);
        for (size_t i = 0; i < in->argc; i++) {
            fputc(' ', out);
            lh_text_shell_word(out, in->argv[i], 0);
        }
    }
    fprintf(out, "\n  pid:           %" PRIu64, in->pid);
    if (in->has_parent) {
        fprintf(out, " (forked from %" PRIu64 ")", in->parent_pid);
    } else if (in->ppid) {
        fprintf(out, " (parent %" PRIu64 ")", in->ppid);
    }
    fprintf(out, "\n  run time:      %.3f s\n", rep->duration_s);
    fprintf(out, "  events:        %" PRIu64 " (%" PRIu64 " frames, %s of trace)\n",
            rep->stats->n_events, rep->stats->n_frames,
            lh_text_human_bytes(h, sizeof h, rep->stats->file_bytes));
    if (in->sample_rate_bytes) {
        fprintf(out, "  sampled:       one allocation per %s allocated, on average: the counts "
                     "and bytes below are estimates (~)\n",
                lh_text_human_bytes(h, sizeof h, in->sample_rate_bytes));
    }
    fprintf(out, "  allocations:   %s%" PRIu64 ", frees: %" PRIu64 ", reallocs: %" PRIu64 "\n",
            in->sample_rate_bytes ? "~" : "", tot->n_allocs, tot->n_frees, tot->n_reallocs);
    fprintf(out, "  allocated:     %s (%" PRIu64 " bytes) in total\n",
            lh_text_human_bytes(h, sizeof h, tot->alloc_bytes), tot->alloc_bytes);
    fprintf(out, "  peak heap:     %s (%" PRIu64 " bytes) at %.3f s\n",
            lh_text_human_bytes(h, sizeof h, tot->peak_bytes), tot->peak_bytes,
            rep->peak_time_s);
    fprintf(out, "  %s  %s (%" PRIu64 " bytes) in %" PRIu64 " block%s from %zu site%s\n",
            rep->end->present ? "live at exit:" : "live at end: ",
            lh_text_human_bytes(h, sizeof h, lh_report_leaked_bytes(rep)),
            lh_report_leaked_bytes(rep), lh_report_leaked_blocks(rep),
            lh_report_leaked_blocks(rep) == 1 ? "" : "s", rep->n_leak_sites,
            rep->n_leak_sites == 1 ? "" : "s");
    if (in->inherited) { /* a fork child seeded with the heap it inherited (trace.h) */
        fprintf(out, "  inherited:     %s (%" PRIu64 " bytes) in %" PRIu64 " block%s live at the "
                     "fork, from %s; %" PRIu64 " block%s (%" PRIu64 " bytes) still live, not "
                     "counted above\n",
                lh_text_human_bytes(h, sizeof h, in->inherited_bytes), in->inherited_bytes,
                in->inherited_blocks, in->inherited_blocks == 1 ? "" : "s", in->inherited_from,
                rep->inherited_blocks, rep->inherited_blocks == 1 ? "" : "s",
                rep->inherited_bytes);
    }
    if (rep->n_suppressed_sites) { /* report --suppressions */
        fprintf(out, "  suppressed:    %s (%" PRIu64 " bytes) in %" PRIu64 " block%s from %zu "
                     "site%s, not counted above\n",
                lh_text_human_bytes(h, sizeof h, rep->suppressed_bytes), rep->suppressed_bytes,
                rep->suppressed_blocks, rep->suppressed_blocks == 1 ? "" : "s",
                rep->n_suppressed_sites, rep->n_suppressed_sites == 1 ? "" : "s");
    }
    fputs("  exit:          ", out);
    print_exit(out, rep);
    if (tot->n_unmatched_frees) {
        fprintf(out,
                "  unmatched:     %" PRIu64
                " frees of blocks allocated before tracing started (ignored)\n",
                tot->n_unmatched_frees);
    }
    if (rep->end->present && rep->end->dropped) {
        fprintf(out, "  dropped:       %" PRIu64 " events the agent could not record\n",
                rep->end->dropped);
    }
    if (rep->end->present && rep->end->has_unwind &&
        (rep->end->table_walks || rep->end->table_fallbacks)) {
        fprintf(out, "  unwinding:     %" PRIu64 " stacks by the unwind table, %" PRIu64
                     " by libunwind (what the table cannot express)",
                rep->end->table_walks, rep->end->table_fallbacks);
        if (rep->end->verify_checked) {
            fprintf(out, "; %" PRIu64 " checked against libunwind, %" PRIu64 " differed",
                    rep->end->verify_checked, rep->end->verify_mismatches);
        }
        fputc('\n', out);
    }
    if (rep->stats->salvaged) {
        fputs("  salvaged:      the trace's damaged tail was skipped\n", out);
    }
    if (rep->rss && rep->rss->n_samples >= 2) {
        text_rss(out, rep->rss);
    }
}

const char *
lh_text_frame_where(const lh_frame_t *f, const char *cwd, char *buf, size_t len)
{
    const char *file = f->file ? lh_text_rel_path(f->file, cwd) : NULL;
    if (file && f->line) {
        snprintf(buf, len, "%s:%" PRIu32, file, f->line);
    } else {
        snprintf(buf, len, "%s%s", file || !f->module ? "" : "in ",
                 file ? file : f->module ? lh_sym_module_label(f->module) : "");
    }
    return buf;
}

/* One "    at f (file.c:42)" (first) or "    by ..." line; folded: how many frames of the
 * same inlined run were left out inside it (lh_text_cxx_lib_run). */
static void
text_frame_folded(FILE *out, const lh_frame_t *f, int first, const char *cwd, size_t folded)
{
    char where[4200];
    fputs(first ? "    at " : "    by ", out);
    if (f->function) {
        lh_text_clean(out, f->function);
    } else if (!f->file && f->module) {
        lh_text_clean(out, lh_sym_module_label(f->module));
        fprintf(out, "+0x%" PRIx64 "\n", f->offset);
        return;
    } else if (!f->file) {
        fprintf(out, "0x%" PRIx64 " (in no known module)\n", f->ip);
        return;
    } else {
        fputs("???", out);
    }
    if (*lh_text_frame_where(f, cwd, where, sizeof where)) {
        fputs(" (", out);
        lh_text_clean(out, where);
        fputc(')', out);
    }
    if (f->inlined) {
        fputc(' ', out);
        fputs(lh_text_inline_note(where, sizeof where, f, folded), out);
    }
    fputc('\n', out);
}

const char *
lh_text_inline_note(char *buf, size_t len, const lh_frame_t *f, size_t folded)
{
    if (!f->inlined) {
        snprintf(buf, len, "%s", "");
    } else if (folded) {
        snprintf(buf, len, "[inlined; %zu more inlined frame%s of the C++ library inside it]",
                 folded, folded == 1 ? "" : "s");
    } else {
        snprintf(buf, len, "%s", "[inlined]");
    }
    return buf;
}

static void
text_frame(FILE *out, const lh_frame_t *f, int first, const char *cwd)
{
    text_frame_folded(out, f, first, cwd, 0);
}

/* Whether f is a template of the C++ standard library inlined into its caller: its file is
 * under an include/c++/ directory (libstdc++'s and libc++'s headers). */
static int
is_cxx_lib_inline(const lh_frame_t *f)
{
    return f->inlined && f->file && strstr(f->file, "/include/c++/") != NULL;
}

/* new_allocator, allocator_traits, shared_ptr_base, ...: seven frames of long template
 * names between operator new and the user's make_shared. */
size_t
lh_text_cxx_lib_run(const lh_site_t *site, size_t i)
{
    size_t j = i;
    while (j < site->n_frames && is_cxx_lib_inline(&site->frames[j])) {
        j++;
    }
    return j - i;
}

const char *
lh_text_rate_bytes(char *buf, size_t len, double bytes)
{
    if (bytes < 0) {
        char h[48];
        snprintf(buf, len, "-%s", lh_text_rate_bytes(h, sizeof h, -bytes));
        return buf;
    }
    if (bytes < 1024) {
        snprintf(buf, len, bytes == (double)(uint64_t)bytes ? "%.0f B" : "%.2f B", bytes);
        return buf;
    }
    return lh_text_human_bytes(buf, len, (uint64_t)(bytes + 0.5));
}

void
lh_text_growth(FILE *out, const lh_growth_site_t *s, const lh_growth_t *g)
{
    char h[48], h2[48], h3[48];
    size_t last = g->n_points - 1;
    fprintf(out, "%s%s per %s (%+.2f blocks), grows in %zu of %zu intervals; %s -> %s; "
                 "%s (z %.2f)",
            s->slope_bytes >= 0 ? "+" : "", lh_text_rate_bytes(h, sizeof h, s->slope_bytes),
            lh_bound_noun(g->kind, 0), s->slope_blocks, s->grew_intervals, s->intervals,
            lh_text_human_bytes(h2, sizeof h2, s->bytes[0]),
            lh_text_human_bytes(h3, sizeof h3, s->bytes[last]), lh_trend_name(s->trend.kind),
            s->trend.z);
}

static void
print_site(FILE *out, size_t rank, const lh_site_t *site, const char *cwd)
{
    char h[32];
    const lh_stack_stats_t *s = &site->stats;
    fprintf(out, "\n#%zu: %s (%" PRIu64 " bytes) leaked in %" PRIu64 " block%s, %" PRIu64
                 " allocation%s",
            rank, lh_text_human_bytes(h, sizeof h, s->live_bytes), s->live_bytes,
            s->live_blocks, s->live_blocks == 1 ? "" : "s", s->n_allocs,
            s->n_allocs == 1 ? "" : "s");
    /* a location without a file (no debug information): its function, or module+offset */
    if (site->location >= 0 && (site->frames[site->location].file ||
                                site->frames[site->location].function ||
                                site->frames[site->location].module)) {
        fputs(", at ", out);
        lh_text_location(out, site, cwd);
        lh_text_user_frame(out, site, cwd);
    }
    fprintf(out, " [site %" PRIu32 "]\n", site->stack_id);
    lh_text_stack(out, site, 0, cwd);
}

void
lh_text_location(FILE *out, const lh_site_t *site, const char *cwd)
{
    if (site->location < 0) {
        fputs(site->has_stack ? "(empty stack)" : "(no stack)", out);
        return;
    }
    const lh_frame_t *f = &site->frames[site->location];
    if (f->function && lh_frame_is_perl_eval(f)) {
        lh_text_clean(out, f->function); /* "(eval 7):57" alone names nothing to open */
        fputs(" in ", out);
    }
    if (f->file) {
        lh_text_clean(out, lh_text_rel_path(f->file, cwd));
        if (f->line) {
            fprintf(out, ":%" PRIu32, f->line);
        }
    } else if (f->function) {
        lh_text_clean(out, f->function);
    } else if (f->module) {
        lh_text_clean(out, lh_sym_module_label(f->module));
        fprintf(out, "+0x%" PRIx64, f->offset);
    } else {
        fprintf(out, "0x%" PRIx64, f->ip);
    }
}

void
lh_text_user_frame(FILE *out, const lh_site_t *site, const char *cwd)
{
    if (site->user_frame < 0 || (size_t)site->user_frame >= site->n_frames ||
        site->user_frame == site->location) {
        return;
    }
    const lh_frame_t *f = &site->frames[site->user_frame];
    fputs(" (called from ", out);
    lh_text_clean(out, lh_text_rel_path(f->file, cwd));
    if (f->line) {
        fprintf(out, ":%" PRIu32, f->line);
    }
    if (f->function) {
        fputs(" in ", out);
        lh_text_clean(out, f->function);
    }
    fputc(')', out);
}

void
lh_text_stack(FILE *out, const lh_site_t *site, size_t max, const char *cwd)
{
    if (!site->has_stack) {
        fputs(site->stack_id ? "    (stack not found in the trace)\n"
                             : "    (no stack recorded: allocated before leakhound started, by a "
                               "library's constructor or the loader)\n",
              out);
        return;
    }
    if (site->n_frames == 0) {
        fputs("    (empty stack)\n", out);
    }
    /* A run of C++ library inlines prints as its outermost frame (the call the program
     * made: std::make_shared<Session>()), counting as one line against max. */
    size_t next = 0, lines = 0;
    while (next < site->n_frames && (!max || lines < max)) {
        size_t run = lh_text_cxx_lib_run(site, next);
        size_t last = run >= 2 ? next + run - 1 : next;
        text_frame_folded(out, &site->frames[last], next == 0, cwd, last - next);
        next = last + 1;
        lines++;
    }
    if (next < site->n_frames) {
        fprintf(out, "    ... %zu more frame%s\n", site->n_frames - next,
                site->n_frames - next == 1 ? "" : "s");
    }
    size_t shown = site->n_grown_by < LH_SITE_MAX_GROWERS ? site->n_grown_by
                                                           : LH_SITE_MAX_GROWERS;
    if (shown) {
        /* one object: created at the site above, grown by realloc at these */
        fprintf(out, "    grown by realloc at %zu other site%s:\n", site->n_grown_by,
                site->n_grown_by == 1 ? "" : "s");
        for (size_t i = 0; i < shown; i++) {
            text_frame(out, &site->grown_by[i], 0, cwd);
        }
    }
}

int
lh_view_text(FILE *out, const lh_report_t *rep, const lh_text_opts_t *opts, lh_err_t *err)
{
    const char *cwd = opts ? opts->cwd : NULL;
    print_summary(out, rep);
    lh_text_leak_split(out, rep); /* issue 5: nothing without an exit snapshot */
    if (rep->n_leak_sites == 0 && rep->n_suppressed_sites) {
        fputs("\nNo leaks once the suppressed sites are left out.\n", out);
    } else if (rep->n_leak_sites == 0) {
        fputs("\nNo leaks: every block allocated while tracing was freed.\n", out);
    } else {
        const char *order = rep->ranked_by_class ? " (lost blocks first)" : "";
        if (rep->n_sites < rep->n_leak_sites) {
            fprintf(out, "\nTop %zu of %zu sites", rep->n_sites, rep->n_leak_sites);
        } else {
            fprintf(out, "\n%zu site%s", rep->n_sites, rep->n_sites == 1 ? "" : "s");
        }
        if (rep->growth) { /* report.h: what grows first, in report --growth's order */
            fprintf(out, ": the %zu growing first, by bytes per %s (report --growth), then by "
                         "leaked bytes%s:\n",
                    rep->n_growing, lh_bound_noun(rep->growth->kind, 0), order);
        } else {
            fprintf(out, " by leaked bytes%s:\n", order);
        }
        for (size_t i = 0; i < rep->n_sites; i++) {
            const lh_site_t *site = &rep->sites[i], *prev = i ? &rep->sites[i - 1] : NULL;
            /* report.h: each group after the first said once where it starts */
            if (site->growth && !prev) {
                fprintf(out, "\n-- growing over the run's %zu %s:\n", rep->growth->n_points,
                        lh_bound_noun(rep->growth->kind, 1));
            } else if (!site->growth && prev && prev->growth) {
                fputs("\n-- not growing:\n", out);
            }
            if (!site->growth && rep->ranked_by_class && site->rank != LH_RANK_LEAK &&
                (!prev || prev->growth || prev->rank != site->rank)) {
                fputs(site->rank == LH_RANK_REACHABLE
                          ? "\n-- still reachable at exit (the program kept them):\n"
                          : "\n-- still reachable at exit, allocated once (start-up, buffers):\n",
                      out);
            }
            print_site(out, i + 1, site, cwd);
            lh_text_site_split(out, rep, site);
            if (site->growth) {
                fputs("    growth: ", out);
                lh_text_growth(out, site->growth, rep->growth);
                fputc('\n', out);
            }
        }
    }
    return lh_view_flush(out, "the report", err);
}

int
lh_view_flush(FILE *out, const char *what, lh_err_t *err)
{
    if (fflush(out) != 0 || ferror(out)) {
        return lh_err_set(err, LH_EIO, "error writing %s", what);
    }
    return 0;
}
