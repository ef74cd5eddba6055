/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_counts.c: `leakhound counts FILE`: live blocks per allocation site (or per function)
 * at each mark, with the change since the previous mark: the per-iteration object count
 * of Devel::MAT or ocp-memprof, for C.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dupstr.h"
#include "grow.h"
#include "pass.h"

const char lh_cmd_counts_usage[] =
    "usage: leakhound counts FILE [--by site|function] [--top N] [--rows N]\n"
    "                        [--use marks|snapshots]\n"
    "\n"
    "Live blocks at each mark (or, without marks, at each snapshot taken while running),\n"
    "per allocation site or per function, with the change since the previous mark. The\n"
    "groups with the most live blocks at the last mark come first.\n"
    "\n"
    "  --by site|function  group by allocation site (default) or by the function of the\n"
    "                      site's location (the line the report points at)\n"
    "  --top N             groups to show (default 5; 0: all)\n"
    "  --rows N            text: at most N marks, evenly spread (default 20; 0: all)\n"
    "  --use KIND          marks or snapshots, instead of choosing\n"
    "  (json has every mark)\n";

typedef struct counts_args {
    lh_trace_args_t load;
    lh_timeline_opts_t tlo; /* what the pass builds */
    unsigned long top, rows;
    int by_function;
    int kind;               /* lh_bound_kind_t (--use) */
} counts_args_t;

static int
parse_args(int argc, char **argv, counts_args_t *a, lh_err_t *err)
{
    int rc;
    const lh_opt_t opts[] = {
        {"--by", NULL, LH_OPT_CHOICE, &a->by_function, 0, 0, "site|function"},
        LH_OPT_TOP(&a->top),
        {"--rows", NULL, LH_OPT_UINT, &a->rows, 0, 100000000, NULL},
        LH_OPT_USE(&a->kind),
    };
    a->kind = LH_BOUND_AUTO;
    a->top = 5;
    a->rows = 20;
    a->tlo.series = 1;
    if ((rc = LH_ARGS_PARSE(counts, LH_ARGS_FORMAT, opts, argc, argv, &a->load, err)) != 0) {
        return rc;
    }
    return 0;
}

/* Puts the sites a suppression rule matches in no group (group_of[id] = UINT32_MAX),
 * grouping by site (the identity) when *group_of is NULL. */
static int
drop_suppressed(lh_pass_t *p, uint32_t **group_of, size_t *n_groups, lh_err_t *err)
{
    size_t n_ids = lh_timeline_n_sites(p->tl);
    if (!p->supp.n) {
        return 0;
    }
    if (!*group_of) {
        if (!(*group_of = malloc((n_ids ? n_ids : 1) * sizeof **group_of))) {
            return lh_err_set(err, LH_ENOMEM, "out of memory");
        }
        for (size_t id = 0; id < n_ids; id++) {
            (*group_of)[id] = (uint32_t)id;
        }
        *n_groups = n_ids;
    }
    for (size_t id = 0; id < n_ids; id++) {
        int rc = lh_timeline_site_active(p->tl, (uint32_t)id)
                     ? lh_pass_suppressed(p, (uint32_t)id, err) : 0;
        if (rc < 0) {
            return rc;
        }
        if (rc) {
            (*group_of)[id] = UINT32_MAX;
        }
    }
    return 0;
}

/* The function a site's location points at ("??" when unknown). */
static const char *
site_function(const lh_site_t *s)
{
    if (s->location >= 0 && s->frames[s->location].function) {
        return s->frames[s->location].function;
    }
    return "??";
}

/* Groups every active site by its location's function: group_of[id], and the names. */
static int
group_by_function(lh_pass_t *p, uint32_t **group_of_out, char ***names_out, size_t *n_out,
                  lh_err_t *err)
{
    size_t n_ids = lh_timeline_n_sites(p->tl), n = 0, cap = 0;
    uint32_t *group_of = calloc(n_ids ? n_ids : 1, sizeof *group_of);
    char **names = NULL;
    int rc = 0;
    if (!group_of) {
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    for (size_t id = 0; id < n_ids; id++) {
        if (!lh_timeline_site_active(p->tl, (uint32_t)id)) {
            continue;
        }
        lh_site_t s = {0};
        s.stack_id = (uint32_t)id;
        if ((rc = lh_site_symbolize(&s, p->t, p->sym, err)) < 0) {
            goto fail;
        }
        const char *fn = site_function(&s);
        size_t g;
        for (g = 0; g < n && strcmp(names[g], fn) != 0; g++) {
        }
        if (g == n) {
            if (lh_grow(&names, &cap, n, sizeof *names, 64) < 0) {
                lh_site_fini(&s);
                goto nomem;
            }
            if (!(names[n] = strdup(fn))) {
                lh_site_fini(&s);
                goto nomem;
            }
            n++;
        }
        group_of[id] = (uint32_t)g;
        lh_site_fini(&s);
    }
    *group_of_out = group_of;
    *names_out = names;
    *n_out = n;
    return 0;
nomem:
    rc = lh_err_set(err, LH_ENOMEM, "out of memory");
fail:
    lh_strv_free(names, n);
    free(group_of);
    return rc;
}

int
lh_cmd_counts(int argc, char **argv, lh_err_t *err)
{
    counts_args_t a = {0};
    lh_pass_t p;
    lh_counts_t c = {0};
    uint32_t *group_of = NULL;
    char **names = NULL;
    const char **shown_names = NULL;
    size_t n_names = 0, n_groups = 0;
    int rc = parse_args(argc, argv, &a, err);
    if (rc != 0 || (rc = lh_pass_run(&p, &a.load, &a.tlo, NULL, NULL, err)) < 0) {
        return rc < 0 ? rc : 0;
    }
    if (a.by_function && (rc = group_by_function(&p, &group_of, &names, &n_names, err)) < 0) {
        goto done;
    }
    n_groups = n_names;
    if ((rc = drop_suppressed(&p, &group_of, &n_groups, err)) < 0) {
        goto done;
    }
    if ((rc = lh_timeline_counts(p.tl, a.kind, group_of, n_groups, a.top, &c, err)) < 0) {
        rc = lh_pass_advise(rc, c.why, err);
        goto done;
    }
    if (!a.by_function && (rc = lh_counts_trends(p.tl, &c, err)) < 0) {
        goto done;
    }
    if (!(shown_names = malloc((c.n_shown ? c.n_shown : 1) * sizeof *shown_names))) {
        rc = lh_err_set(err, LH_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < c.n_shown; i++) {
        shown_names[i] = names ? names[c.groups[i].group] : NULL;
    }
    if ((rc = lh_pass_show(&p, c.groups, sizeof *c.groups, offsetof(lh_count_group_t, first_stack),
                           c.n_shown, err)) < 0) {
        goto done;
    }
    rc = lh_view_counts(stdout, &p.view, &c, p.sites, names ? shown_names : NULL, a.rows, err);
done:
    lh_counts_fini(&c);
    lh_strv_free(names, n_names);
    free(shown_names);
    free(group_of);
    lh_pass_close(&p);
    return rc < 0 ? rc : 0;
}
