/* leakhound - SPDX-License-Identifier: MIT
 *
 * pass.c: the one pass over a trace (stream.h) for the subcommands that look at time.
 */
#include "pass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "load.h"

int
lh_pass_run(lh_pass_t *p, const lh_trace_args_t *a, const lh_timeline_opts_t *tlo,
            lh_history_t *hist, const lh_consumer_t *hook, lh_err_t *err)
{
    lh_sym_opts_t sopts = {0};
    lh_consumer_t cs[2];
    size_t n = 0;
    int rc;
    memset(p, 0, sizeof *p);
    p->json = a->json;
    p->name = a->name;
    if ((rc = lh_load_suppressions(a, &p->supp, err)) < 0) {
        return rc;
    }
    p->have_supp = 1;
    if (!hist && (rc = lh_timeline_new(tlo, &p->tl, err)) < 0) {
        goto fail;
    }
    cs[n++] = hist ? lh_history_consumer(hist) : lh_timeline_consumer(p->tl);
    if (hook) {
        cs[n++] = *hook;
    }
    if ((rc = lh_load_stream(a, cs, n, &p->t, &p->r, err)) < 0 ||
        (a->default_supp && (rc = lh_load_embedded_supp(&p->supp, p->t, err)) < 0)) {
        goto fail;
    }
    sopts.exe_path = lh_trace_parts(p->t)->info.exe;
    if ((rc = lh_sym_new(&lh_trace_parts(p->t)->modules, &sopts, &p->sym, err)) < 0) {
        goto fail;
    }
    if (!getcwd(p->cwd, sizeof p->cwd)) {
        p->cwd[0] = '\0';
    }
    return 0;
fail:
    lh_pass_close(p);
    return rc;
}

/* The view settings for this trace. */
static void
pass_view(const lh_pass_t *p, lh_tl_view_t *v)
{
    const lh_trace_info_t *in = &lh_trace_parts(p->t)->info;
    const lh_trace_stats_t *st = &lh_trace_parts(p->t)->stats;
    memset(v, 0, sizeof *v);
    v->trace_path = p->name;
    v->info = in;
    v->start_ns = in->has_clock ? in->mono_start_ns : st->first_ts_ns;
    if (st->n_events && st->first_ts_ns < v->start_ns) {
        v->start_ns = st->first_ts_ns;
    }
    v->cwd = p->cwd[0] ? p->cwd : NULL;
    v->max_frames = 8;
    v->json = p->json;
}

static void
sites_free(lh_site_t *sites, size_t n)
{
    for (size_t i = 0; sites && i < n; i++) {
        lh_site_fini(&sites[i]);
    }
    free(sites);
}

int
lh_pass_show(lh_pass_t *p, const void *rows, size_t stride, size_t off, size_t n,
             lh_err_t *err)
{
    lh_site_t *s = calloc(n ? n : 1, sizeof *s);
    int rc;
    if (!s) {
        return lh_err_set(err, LH_ENOMEM, "out of memory symbolizing sites");
    }
    for (size_t i = 0; i < n; i++) {
        memcpy(&s[i].stack_id, (const char *)rows + i * stride + off, sizeof s[i].stack_id);
        if ((rc = lh_site_symbolize(&s[i], p->t, p->sym, err)) < 0 ||
            (rc = lh_site_growers(&s[i], p->t, p->r, p->sym, err)) < 0) {
            sites_free(s, i);
            return rc;
        }
    }
    p->sites = s;
    p->n_sites = n;
    lh_pass_warnings(p);
    pass_view(p, &p->view);
    return 0;
}

void
lh_pass_warnings(const lh_pass_t *p)
{
    lh_load_warnings(&lh_trace_parts(p->t)->warnings);
    if (p->sym) {
        lh_load_warnings(lh_sym_warnings(p->sym));
    }
}

int
lh_pass_suppressed(lh_pass_t *p, uint32_t id, lh_err_t *err)
{
    if (!p->supp.n) {
        return 0;
    }
    if (lh_grow_zeroed(&p->supp_known, &p->n_supp_known, (size_t)id + 1, 1, 64) < 0) {
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    if (!p->supp_known[id]) {
        lh_site_t s = {0};
        int rc;
        s.stack_id = id;
        if ((rc = lh_site_symbolize(&s, p->t, p->sym, err)) < 0) {
            return rc;
        }
        p->supp_known[id] = lh_supp_match(&p->supp, s.frames, s.n_frames) >= 0 ? 2 : 1;
        lh_site_fini(&s);
    }
    return p->supp_known[id] == 2;
}

typedef struct pass_drop {
    lh_pass_t *p;
    uint32_t (*stack_of)(const void *row);
    void (*release)(void *row);
} pass_drop_t;

/* lh_drop_rows's answer for a row of lh_pass_drop_suppressed. */
static int
drop_row(void *ctx, void *row, lh_err_t *err)
{
    const pass_drop_t *d = ctx;
    uint32_t id = d->stack_of(row);
    int rc = id == UINT32_MAX ? 0 : lh_pass_suppressed(d->p, id, err);
    if (rc == 1 && d->release) {
        d->release(row);
    }
    return rc;
}

int
lh_pass_drop_suppressed(lh_pass_t *p, void *rows, size_t *n, size_t size,
                        uint32_t (*stack_of)(const void *row), void (*release)(void *row),
                        lh_err_t *err)
{
    pass_drop_t d = {p, stack_of, release};
    return p->supp.n ? lh_drop_rows(rows, n, size, drop_row, &d, err) : 0;
}

/* The analysis's word for what went wrong, and the flag that sets it. */
static const struct {
    lh_bound_why_t why;
    const char *word;
    const char *flag;
} flag_of[] = {
    {LH_WHY_FROM, "start", "--from"},
    {LH_WHY_TO, "end", "--to"},
    {LH_WHY_SKIP, "skip", "--skip"},
};

int
lh_pass_advise(int rc, lh_bound_why_t why, lh_err_t *err)
{
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    if (why == LH_WHY_NO_POINTS) {
        return lh_err_set(err, rc, "%s: call lh_mark() per iteration, or record with "
                          "--snapshot-every, --snapshot-on-growth or --snapshot-signal", msg);
    }
    if (why == LH_WHY_FEW) {
        return lh_err_set(err, rc, "%s; report --growth answers without them", msg);
    }
    for (size_t i = 0; i < sizeof flag_of / sizeof *flag_of; i++) {
        size_t n = strlen(flag_of[i].word);
        if (flag_of[i].why == why && strncmp(msg, flag_of[i].word, n) == 0) {
            return lh_err_set(err, rc, "%s%s", flag_of[i].flag, msg + n);
        }
    }
    return rc;
}

void
lh_pass_close(lh_pass_t *p)
{
    if (p->have_supp) {
        lh_supp_fini(&p->supp);
        p->have_supp = 0;
    }
    free(p->supp_known);
    sites_free(p->sites, p->n_sites);
    p->sites = NULL;
    p->n_sites = 0;
    p->supp_known = NULL;
    p->n_supp_known = 0;
    lh_sym_free(p->sym);
    lh_timeline_free(p->tl);
    lh_replay_free(p->r);
    lh_trace_close(p->t);
    p->sym = NULL;
    p->tl = NULL;
    p->r = NULL;
    p->t = NULL;
}
