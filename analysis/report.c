/* leakhound - SPDX-License-Identifier: MIT
 *
 * report.c: building the leak report model.
 */
#include "report.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bound.h"
#include "leaksplit.h"
#include "rank.h"
#include "scriptstack.h"

static const char *
module_base(const lh_frame_t *f)
{
    if (!f->module) {
        return "";
    }
    const char *b = strrchr(f->module, '/');
    return b ? b + 1 : f->module;
}

static int
starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

int
lh_frame_is_agent(const lh_frame_t *f)
{
    return lh_sym_module_is_agent(module_base(f));
}

int
lh_frame_is_runtime(const lh_frame_t *f)
{
    const char *b = module_base(f);
    return starts_with(b, "libc.so") || starts_with(b, "libstdc++.so") ||
           starts_with(b, "libgcc_s") || starts_with(b, "ld-linux");
}

/* Code inlined from the system's headers (the C++ standard library's templates) is the
 * runtime's too, even though it sits in the user's module. */
static int
is_system_header(const char *file)
{
    return starts_with(file, "/usr/include/") || starts_with(file, "/usr/lib/gcc/");
}

long
lh_site_location(const lh_frame_t *frames, size_t n)
{
    /* An allocation made by script code is located at its innermost script frame (Perl
     * sub and line), even under the C frames of an XS module it called. */
    /* A phase frame inside the script frames is perl's arena (scriptstack.h): the line
     * that took the slab does not own what it holds. */
    for (size_t i = 0; i < n; i++) {
        if (frames[i].lang != LH_LANG_NATIVE || frames[i].phase) {
            return (long)i;
        }
    }
    /* An interpreter's allocator wrapper (Perl_safesysmalloc, PyObject_Malloc) says nothing
     * to a script author: the frame that called it does (scriptstack.h). */
    for (size_t i = 0; i < n; i++) {
        if (frames[i].file && !lh_frame_is_runtime(&frames[i]) &&
            !is_system_header(frames[i].file) && !lh_scriptstack_is_interp_alloc(&frames[i])) {
            return (long)i;
        }
    }
    /* No debug information (a stripped program, no -dbgsym package): the first frame
     * outside the runtime, the program's call to strdup, not strdup. */
    for (size_t i = 0; i < n; i++) {
        if (!lh_frame_is_runtime(&frames[i]) && !lh_scriptstack_is_interp_alloc(&frames[i])) {
            return (long)i;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (!lh_scriptstack_is_interp_alloc(&frames[i])) {
            return (long)i;
        }
    }
    return n ? 0 : -1;
}

/* Whether file is under a directory named pythonX.Y (X.Y digits) that sits in a lib or
 * lib64 directory: the stdlib of whatever prefix the interpreter has. */
static int
in_python_lib(const char *file)
{
    static const char *const dirs[] = {"/lib/python", "/lib64/python", NULL};
    for (int k = 0; dirs[k]; k++) {
        for (const char *p = strstr(file, dirs[k]); p; p = strstr(p + 1, dirs[k])) {
            const char *q = p + strlen(dirs[k]);
            if (q[0] >= '0' && q[0] <= '9') {
                while ((*q >= '0' && *q <= '9') || *q == '.') {
                    q++;
                }
                if (*q == '/') {
                    return 1;
                }
            }
        }
    }
    return 0;
}

/* Whether file is in an installed perl library: perl's own (/usr/share/perl/5.36,
 * .../perl/5.36, perl-base), the distribution's and CPAN's (perl5, site_perl,
 * vendor_perl; local::lib and carton's local/lib/perl5). */
static int
in_perl_lib(const char *file)
{
    static const char *const dirs[] = {"/perl5/", "/perl-base/", "/site_perl/",
                                       "/vendor_perl/", "/perl/5.", NULL};
    for (int k = 0; dirs[k]; k++) {
        if (strstr(file, dirs[k])) {
            return 1;
        }
    }
    return 0;
}

/* A frame of CPython's site module: "<frozen site>" (3.11+) or the stdlib's site.py. */
static int
is_site_frame(const lh_frame_t *f)
{
    if (f->lang != LH_LANG_PYTHON || f->phase || !f->file) {
        return 0;
    }
    const char *base = strrchr(f->file, '/');
    return strcmp(f->file, "<frozen site>") == 0 ||
           (base && strcmp(base, "/site.py") == 0 && in_python_lib(f->file));
}

int
lh_frame_is_user_code(const lh_frame_t *f)
{
    if (f->lang == LH_LANG_PERL) {
        return !f->phase && f->file && f->line && !lh_frame_is_perl_eval(f) &&
               !in_perl_lib(f->file);
    }
    return f->lang == LH_LANG_PYTHON && !f->phase && f->file && f->file[0] != '<' &&
           !strstr(f->file, "/site-packages/") && !strstr(f->file, "/dist-packages/") &&
           !in_python_lib(f->file);
}

long
lh_site_user_frame(const lh_frame_t *frames, size_t n)
{
    /* Perl: code a string eval compiled (Moo's generated constructor, a Sub::Quote
     * accessor) is at "(eval 7):57", no file to open: the caller with a file is the line
     * to act on. */
    long loc = lh_site_location(frames, n);
    if (loc >= 0 && lh_frame_is_perl_eval(&frames[loc])) {
        for (size_t i = (size_t)loc + 1; i < n; i++) {
            if (frames[i].lang == LH_LANG_PERL && !frames[i].phase && frames[i].file &&
                !lh_frame_is_perl_eval(&frames[i])) {
                return (long)i;
            }
        }
        return -1;
    }
    if (loc >= 0 && frames[loc].phase && frames[loc].function &&
        strcmp(frames[loc].function, LH_SCRIPTSTACK_PERL_ARENA) == 0) {
        return -1; /* shared by all code: the line under it took the slab, nothing more */
    }
    for (size_t i = 0; i < n; i++) {
        if (lh_frame_is_user_code(&frames[i])) {
            return (long)i;
        }
    }
    /* Python start-up before the script (its site module: a .pth file's import line,
     * sitecustomize, usercustomize): no code of the user's runs, the site function that
     * asked is the line to act on ("called from <frozen site>:192 in site.addpackage"),
     * not nothing. */
    for (size_t i = 0; i < n; i++) {
        if (is_site_frame(&frames[i])) {
            return (long)i;
        }
    }
    return -1;
}

static int
site_frames(lh_site_t *site, const lh_stack_t *st, lh_symbolizer_t *sym, lh_err_t *err)
{
    lh_frame_t *v = NULL;
    size_t n = 0;
    if (sym) {
        int rc = lh_sym_stack(sym, st, &v, &n, err);
        if (rc < 0) {
            return rc;
        }
    } else {
        v = calloc(st->n_ips ? st->n_ips : 1, sizeof *v);
        if (!v) {
            return lh_err_set(err, LH_ENOMEM, "out of memory building the report");
        }
        for (n = 0; n < st->n_ips; n++) {
            v[n].ip = v[n].offset = st->ips[n];
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!lh_frame_is_agent(&v[i])) {
            v[k++] = v[i];
        }
    }
    site->frames = v;
    site->n_frames = k;
    site->location = lh_site_location(v, k);
    site->user_frame = lh_site_user_frame(v, k);
    return 0;
}

int
lh_site_symbolize(lh_site_t *site, const lh_trace_t *t, lh_symbolizer_t *sym, lh_err_t *err)
{
    const lh_stack_t *st = lh_stacks_get(&lh_trace_parts(t)->stacks, site->stack_id);
    site->frames = NULL;
    site->n_frames = 0;
    site->location = -1;
    site->user_frame = -1;
    site->has_stack = st != NULL;
    return st ? site_frames(site, st, sym, err) : 0;
}

void
lh_site_fini(lh_site_t *site)
{
    free(site->frames);
    free(site->grown_by);
    site->frames = NULL;
    site->n_frames = 0;
    site->grown_by = NULL;
    site->n_grown_by = 0;
}

int
lh_site_growers(lh_site_t *site, const lh_trace_t *t, const lh_replay_t *r,
                lh_symbolizer_t *sym, lh_err_t *err)
{
    uint32_t ids[LH_SITE_MAX_GROWERS];
    size_t n = lh_replay_growers(r, site->stack_id, ids, LH_SITE_MAX_GROWERS);
    size_t k = n < LH_SITE_MAX_GROWERS ? n : LH_SITE_MAX_GROWERS;
    site->n_grown_by = n;
    if (!n) {
        return 0;
    }
    if (!(site->grown_by = calloc(k, sizeof *site->grown_by))) {
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < k; i++) {
        lh_site_t g = {0};
        g.stack_id = ids[i];
        int rc = lh_site_symbolize(&g, t, sym, err);
        if (rc < 0) {
            return rc;
        }
        if (g.location >= 0) {
            site->grown_by[i] = g.frames[g.location];
        }
        lh_site_fini(&g);
    }
    return 0;
}

static double
seconds_between(uint64_t from, uint64_t to)
{
    return to > from ? (double)(to - from) / 1e9 : 0.0;
}

/* In a seeded fork child: per stack, the inherited blocks (born before the fork) that are
 * still live, in live_blocks and live_bytes of a zeroed array of n_stacks. */
static int
inherited_live(const lh_replay_t *r, uint64_t fork_ts, size_t n_stacks, lh_stack_stats_t **out)
{
    lh_stack_stats_t *v = calloc(n_stacks ? n_stacks : 1, sizeof *v);
    lh_live_block_t b;
    size_t cur = 0;
    if (!v) {
        return LH_ENOMEM;
    }
    while (lh_replay_live_next(r, &cur, &b)) {
        if (b.ts_ns < fork_ts && b.stack_id < n_stacks) {
            v[b.stack_id].live_blocks++;
            v[b.stack_id].live_bytes += b.size;
        }
    }
    *out = v;
    return 0;
}

lh_site_rank_t
lh_site_rank(uint32_t stack_id, const lh_stack_stats_t *s, const lh_leak_split_t *split)
{
    const lh_class_counts_t *c = split ? lh_leak_split_site(split, stack_id) : NULL;
    if (!split || !split->present) {
        return stack_id == 0 ? LH_RANK_ONCE : LH_RANK_LEAK;
    }
    /* blocks born after the snapshot are not in it: not known to be reachable */
    if (!c || c->blocks[LH_CLASS_REACHABLE] < s->live_blocks ||
        c->blocks[LH_CLASS_POSSIBLE] || c->blocks[LH_CLASS_INDIRECT] ||
        c->blocks[LH_CLASS_DEFINITE]) {
        return LH_RANK_LEAK;
    }
    return stack_id == 0 || s->n_allocs <= 1 ? LH_RANK_ONCE : LH_RANK_REACHABLE;
}

const char *
lh_site_rank_name(lh_site_rank_t r)
{
    static const char *names[] = {"leak", "reachable", "reachable_once"};
    return r <= LH_RANK_ONCE ? names[r] : "leak";
}

/* Whether the agent recorded script frames of language lang (LH_LANG_PERL, LH_LANG_PYTHON)
 * in trace t (an INTERP record saying so). */
static int
records_lang(const lh_trace_t *t, int lang)
{
    size_t n = 0;
    const lh_trace_interp_t *v = lh_trace_interps(t, &n);
    int recorded = 0;
    for (size_t i = 0; i < n; i++) {
        recorded |= (int)v[i].lang == lang && v[i].status == LH_INTERP_RECORDED;
    }
    /* and ran: a native program linked with libpython that never runs Python (unbound
     * without its python module) has the INTERP record but no script frame */
    const lh_sframes_t *sf = &lh_trace_parts(t)->stacks.sframes;
    for (size_t i = 1; recorded && i < sf->cap; i++) {
        if (sf->v[i].function && (int)sf->v[i].lang == lang) {
            return 1;
        }
    }
    return 0;
}

/* A site to rank: its place among the growing sites (report.h), its group, then
 * lh_rank_t's keys (bytes, blocks, id). */
typedef struct ranked {
    lh_rank_t k;
    lh_site_rank_t group;
    size_t growth; /* index in the growth listing when the site grows, else SIZE_MAX */
} ranked_t;

static int
ranked_cmp(const void *a, const void *b)
{
    const ranked_t *x = a, *y = b;
    if (x->growth != y->growth || x->group != y->group) {
        return lh_order2(x->growth, y->growth, x->group, y->group);
    }
    return lh_rank_cmp(&x->k, &y->k);
}

/* Per stack id below n: the index in g's listing of the site when it grows, else SIZE_MAX;
 * *out NULL when g is NULL, nothing grows or g was not measured over marks or snapshots
 * (report.h). Returns 0 or LH_ENOMEM. */
static int
growth_index(const lh_growth_t *g, size_t n, size_t **out)
{
    *out = NULL;
    if (!g || !g->n_growing || g->kind == LH_BOUND_ACTIVITY) {
        return 0;
    }
    size_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) {
        return LH_ENOMEM;
    }
    for (size_t id = 0; id < n; id++) {
        v[id] = SIZE_MAX;
    }
    for (size_t i = 0; i < g->n_sites; i++) {
        if (g->sites[i].growing && g->sites[i].stack_id < n) {
            v[g->sites[i].stack_id] = i;
        }
    }
    *out = v;
    return 0;
}

int
lh_report_build(lh_report_t *rep, const lh_trace_t *t, const lh_replay_t *r,
                lh_symbolizer_t *sym, const lh_report_opts_t *opts, lh_err_t *err)
{
    ranked_t *ranks = NULL;
    size_t n_ranks = 0;
    size_t n_stacks = lh_replay_n_stacks(r);
    size_t top = opts ? opts->top : 0;
    const lh_leak_split_t *split = opts ? opts->split : NULL;
    /* A Python or Perl program's leaks are still reachable (the collector frees cycles;
     * perl's data is held by variables): grouping by the native classes ranked a site with
     * a few "possibly lost" words of the interpreter's start-up above a list of 2000
     * documents the program kept (perl: the loader's dlopen of DBI's XS module above 1000
     * SQLite statements). Its sites rank by bytes (site 0 last); the split still gives each
     * site's kinds. */
    const lh_leak_split_t *by_class =
        records_lang(t, LH_LANG_PYTHON) || records_lang(t, LH_LANG_PERL)
            ? NULL : split;
    int rc;

    memset(rep, 0, sizeof *rep);
    rep->trace_path = lh_trace_parts(t)->path;
    rep->info = &lh_trace_parts(t)->info;
    rep->end = &lh_trace_parts(t)->end;
    rep->stats = &lh_trace_parts(t)->stats;
    rep->totals = lh_replay_totals(r);
    rep->start_ns = rep->info->has_clock ? rep->info->mono_start_ns : rep->stats->first_ts_ns;
    if (rep->stats->n_events && rep->stats->first_ts_ns < rep->start_ns) {
        rep->start_ns = rep->stats->first_ts_ns; /* a clock record from another clock */
    }
    uint64_t stop = rep->end->present ? rep->end->ts_ns : rep->stats->last_ts_ns;
    if (rep->stats->last_ts_ns > stop) {
        stop = rep->stats->last_ts_ns;
    }
    rep->duration_s = seconds_between(rep->start_ns, stop);
    rep->peak_time_s = seconds_between(rep->start_ns, rep->totals->peak_ts_ns);

    ranks = malloc((n_stacks ? n_stacks : 1) * sizeof *ranks);
    lh_stack_stats_t *inh = NULL; /* per stack: inherited blocks still live */
    size_t *grows = NULL;         /* per stack: its index in the growth listing, or SIZE_MAX */
    if (!ranks || (rep->info->inherited &&
                   (rc = inherited_live(r, rep->info->fork_ts_ns, n_stacks, &inh)) < 0) ||
        (rc = growth_index(opts ? opts->growth : NULL, n_stacks, &grows)) < 0) {
        free(ranks);
        free(inh);
        return lh_err_set(err, LH_ENOMEM, "out of memory building the report");
    }
    for (size_t id = 0; id < n_stacks; id++) {
        lh_stack_stats_t s = *lh_replay_stack(r, (uint32_t)id);
        if (inh) {
            s.live_blocks -= inh[id].live_blocks;
            s.live_bytes -= inh[id].live_bytes;
            rep->inherited_blocks += inh[id].live_blocks;
            rep->inherited_bytes += inh[id].live_bytes;
        }
        if (s.live_blocks) {
            size_t gi = grows ? grows[id] : SIZE_MAX;
            ranks[n_ranks++] = (ranked_t){{(uint32_t)id, s.live_bytes, s.live_blocks},
                                          lh_site_rank((uint32_t)id, &s, by_class), gi};
            rep->n_growing += gi != SIZE_MAX;
        }
    }
    rep->growth = rep->n_growing ? opts->growth : NULL;
    rep->ranked_by_class = by_class && by_class->present;
    lh_qsort(ranks, n_ranks, sizeof *ranks, ranked_cmp);
    rep->n_leak_sites = n_ranks;
    rep->n_sites = top && top < n_ranks ? top : n_ranks;
    rep->sites = calloc(rep->n_sites ? rep->n_sites : 1, sizeof *rep->sites);
    if (!rep->sites) {
        rc = lh_err_set(err, LH_ENOMEM, "out of memory building the report");
        goto fail;
    }
    for (size_t i = 0; i < rep->n_sites; i++) {
        lh_site_t *site = &rep->sites[i];
        const lh_stack_t *st = lh_stacks_get(&lh_trace_parts(t)->stacks, ranks[i].k.id);
        site->stack_id = ranks[i].k.id;
        site->stats = *lh_replay_stack(r, ranks[i].k.id);
        site->stats.live_blocks = ranks[i].k.key2;
        site->stats.live_bytes = ranks[i].k.key1;
        /* (a Python site's kind still says what the split found: JSON "rank") */
        site->rank = by_class == split ? ranks[i].group
                                       : lh_site_rank(site->stack_id, &site->stats, split);
        site->growth = ranks[i].growth != SIZE_MAX ? &rep->growth->sites[ranks[i].growth]
                                                   : NULL;
        site->location = -1;
        site->user_frame = -1;
        if (st) {
            site->has_stack = 1;
            if ((rc = site_frames(site, st, sym, err)) < 0) {
                goto fail;
            }
        }
        if ((rc = lh_site_growers(site, t, r, sym, err)) < 0) {
            goto fail;
        }
    }
    free(ranks);
    free(inh);
    free(grows);
    return 0;
fail:
    free(ranks);
    free(inh);
    free(grows);
    lh_report_fini(rep);
    return rc;
}

void
lh_report_fini(lh_report_t *rep)
{
    for (size_t i = 0; rep->sites && i < rep->n_sites; i++) {
        lh_site_fini(&rep->sites[i]);
    }
    free(rep->sites);
    rep->sites = NULL;
    rep->n_sites = 0;
}

/* Whether stack id's site is located at perl's SV arena (scriptstack.h): 1, 0 or an error. */
static int
at_perl_arena(const lh_trace_t *t, lh_symbolizer_t *sym, uint32_t id, lh_err_t *err)
{
    lh_site_t s;
    memset(&s, 0, sizeof s);
    s.stack_id = id;
    int rc = lh_site_symbolize(&s, t, sym, err);
    if (rc == 0) {
        rc = s.location >= 0 && s.frames[s.location].function &&
             strcmp(s.frames[s.location].function, LH_SCRIPTSTACK_PERL_ARENA) == 0;
    }
    lh_site_fini(&s);
    return rc;
}

int
lh_growth_arena_last(lh_growth_t *g, const lh_trace_t *t, lh_symbolizer_t *sym, lh_err_t *err)
{
    if (!records_lang(t, LH_LANG_PERL)) {
        return 0;
    }
    size_t n = g->n_growing < g->n_sites ? g->n_growing : g->n_sites, k = 0, m = 0;
    lh_growth_site_t *arena = malloc((n ? n : 1) * sizeof *arena);
    if (!arena) {
        return lh_err_set(err, LH_ENOMEM, "out of memory ranking the growing sites");
    }
    for (size_t i = 0; i < n; i++) {
        int rc = at_perl_arena(t, sym, g->sites[i].stack_id, err);
        if (rc < 0) {
            free(arena);
            return rc;
        }
        if (rc) {
            arena[m++] = g->sites[i];
        } else {
            g->sites[k++] = g->sites[i];
        }
    }
    if (m) { /* g->sites is NULL when there is no site: no memcpy of 0 bytes from it */
        memcpy(g->sites + k, arena, m * sizeof *arena);
    }
    free(arena);
    return 0;
}
