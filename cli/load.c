/* leakhound - SPDX-License-Identifier: MIT
 *
 * load.c: one collecting pass for the picture and export subcommands.
 */
#include "load.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "progress.h"
#include "text.h"

int
lh_load_supp(lh_supp_t *s, int defaults, const lh_opt_files_t *files, lh_err_t *err)
{
    int rc = 0;
    *s = (lh_supp_t){0};
    if (defaults) {
        rc = lh_supp_add_defaults(s, err);
    }
    for (size_t k = 0; rc >= 0 && k < files->n; k++) {
        rc = lh_supp_load(s, files->v[k], err);
    }
    if (rc < 0) {
        lh_supp_fini(s);
    }
    return rc;
}

int
lh_load_suppressions(const lh_trace_args_t *a, lh_supp_t *s, lh_err_t *err)
{
    return lh_load_supp(s, a->default_supp, &a->supp_files, err);
}

int
lh_load_embedded_supp(lh_supp_t *s, const lh_trace_t *t, lh_err_t *err)
{
    static const char origin[] = "__lsan_default_suppressions()";
    const char *text = lh_trace_parts(t)->lsan_supp;
    if (!text) {
        return 0;
    }
    lh_supp_t trial = {0};
    lh_err_t e2 = {{0}};
    int rc = lh_supp_parse(&trial, text, strlen(text), origin, &e2);
    lh_supp_fini(&trial);
    if (rc == LH_EINVAL) {
        fprintf(stderr, "leakhound: warning: the program's embedded suppressions are not used: "
                        "%s\n", e2.msg);
        return 0;
    }
    if (rc < 0) {
        return lh_err_set(err, rc, "%s", e2.msg);
    }
    return lh_supp_parse(s, text, strlen(text), origin, err);
}

int
lh_load_split(lh_leak_split_t *s, lh_trace_t *t, const char *then)
{
    if (!lh_leak_split_captured(s)) {
        return 0;
    }
    lh_err_t e2 = {{0}};
    if (lh_leak_split_build(s, t, &e2) < 0) {
        fprintf(stderr, "leakhound: warning: %s%s\n", e2.msg, then);
        return 0;
    }
    return 1;
}

void
lh_load_warnings(const lh_warnings_t *w)
{
    for (size_t i = 0; i < w->n; i++) {
        fprintf(stderr, "leakhound: warning: %s\n", w->msgs[i]);
    }
}

/* Adds the flag advice to a trace reader's error rc (a truncated or corrupt tail: what
 * --salvage does); returns rc. */
static int
load_advise(int rc, lh_err_t *err)
{
    if (rc == LH_ETRUNC || rc == LH_EFORMAT) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        rc = lh_err_set(err, rc, "%s (--salvage reads the events before it)", msg);
    }
    return rc;
}

int
lh_load_stream(const lh_trace_args_t *a, const lh_consumer_t *cs, size_t n, lh_trace_t **t,
               lh_replay_t **r, lh_err_t *err)
{
    lh_progress_t bar;
    lh_stream_opts_t so = {a->salvage, cs, n, lh_progress_update, &bar};
    lh_progress_init(&bar, a->name, a->quiet);
    int rc = lh_stream_run(a->path, &so, t, r, err);
    lh_progress_done(&bar);
    return load_advise(rc, err);
}

int
lh_load_run(const lh_trace_args_t *a, const lh_collect_opts_t *opts, lh_supp_t *supp,
            lh_collect_t **out, lh_err_t *err)
{
    lh_collect_opts_t o = {0};
    lh_progress_t bar;
    int rc;
    *out = NULL;
    if (supp && (rc = lh_load_suppressions(a, supp, err)) < 0) {
        return rc;
    }
    if (opts) {
        o = *opts;
    }
    o.salvage = a->salvage;
    lh_progress_init(&bar, a->name, a->quiet);
    o.on_progress = lh_progress_update;
    o.progress_ctx = &bar;
    rc = load_advise(lh_collect_run(a->path, &o, out, err), err);
    lh_progress_done(&bar);
    if (rc < 0) {
        if (supp) {
            lh_supp_fini(supp);
        }
        return rc;
    }
    lh_load_warnings(&lh_trace_parts(lh_collect_trace(*out))->warnings);
    if (supp && a->default_supp &&
        (rc = lh_load_embedded_supp(supp, lh_collect_trace(*out), err)) < 0) {
        lh_supp_fini(supp);
        lh_collect_free(*out);
        *out = NULL;
        return rc;
    }
    return 0;
}

void
lh_load_sym_warnings(lh_collect_t *c)
{
    if (c && lh_collect_symbolizer(c)) {
        lh_load_warnings(lh_sym_warnings(lh_collect_symbolizer(c)));
    }
}

const char *
lh_load_prog(const lh_collect_t *c)
{
    const lh_trace_info_t *in = &lh_trace_parts(lh_collect_trace(c))->info;
    const char *exe = in->exe[0] ? in->exe : lh_trace_parts(lh_collect_trace(c))->path;
    const char *b = strrchr(exe, '/');
    return b ? b + 1 : exe;
}

void
lh_load_title(const lh_collect_t *c, const char *what, char *buf, size_t len)
{
    snprintf(buf, len, "%s \xe2\x80\x94 %s (pid %llu)", what, lh_load_prog(c),
             (unsigned long long)lh_trace_parts(lh_collect_trace(c))->info.pid);
}

void
lh_load_subtitle(const lh_collect_t *c, char *buf, size_t len)
{
    const lh_replay_totals_t *t = lh_replay_totals(lh_collect_replay(c));
    const lh_trace_end_t *end = &lh_trace_parts(lh_collect_trace(c))->end;
    char p[32], l[32], a[32];
    uint64_t start = lh_collect_start_ns(c);
    snprintf(buf, len, "peak %s at %.3f s \xc2\xb7 %s live at %s \xc2\xb7 %s allocated in "
             "%llu allocations \xc2\xb7 %.3f s run",
             lh_text_human_bytes(p, sizeof p, t->peak_bytes),
             t->peak_ts_ns > start ? (double)(t->peak_ts_ns - start) / 1e9 : 0.0,
             lh_text_human_bytes(l, sizeof l, t->heap_bytes), end->present ? "exit" : "the end",
             lh_text_human_bytes(a, sizeof a, t->alloc_bytes), (unsigned long long)t->n_allocs,
             (double)(lh_collect_end_ns(c) - start) / 1e9);
}

int
lh_load_funcs(const lh_trace_args_t *a, const lh_tree_opts_t *tree_opts, lh_load_funcs_t *lf,
              lh_err_t *err)
{
    int rc;
    memset(lf, 0, sizeof *lf);
    if ((rc = lh_load_run(a, NULL, &lf->supp, &lf->c, err)) < 0) {
        return rc;
    }
    const lh_supp_t *sp = lf->supp.n ? &lf->supp : NULL;
    if ((rc = lh_funcs_build(&lf->f, lf->c, sp, err)) < 0) {
        lh_supp_fini(&lf->supp);
        lh_collect_free(lf->c);
        return rc;
    }
    if (tree_opts && (rc = lh_tree_build(&lf->t, lf->c, &lf->f, sp, tree_opts, err)) < 0) {
        lh_funcs_fini(&lf->f);
        lh_supp_fini(&lf->supp);
        lh_collect_free(lf->c);
        return rc;
    }
    lf->has_tree = tree_opts != NULL;
    lf->cwd = getcwd(lf->cwd_buf, sizeof lf->cwd_buf);
    return 0;
}

void
lh_load_funcs_fini(lh_load_funcs_t *lf)
{
    lh_load_sym_warnings(lf->c);
    if (lf->has_tree) {
        lh_tree_fini(&lf->t);
    }
    lh_funcs_fini(&lf->f);
    lh_supp_fini(&lf->supp);
    lh_collect_free(lf->c);
}

FILE *
lh_load_out_open(const char *path, lh_err_t *err)
{
    if (strcmp(path, "-") == 0) {
        return stdout;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!out) {
        lh_err_set(err, LH_EIO, "cannot write %s: %s", path,
                   errno == ELOOP ? "it is a symbolic link" : strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
    }
    return out;
}

int
lh_load_out_close(FILE *out, const char *path, int rc, lh_err_t *err)
{
    if (out != stdout && fclose(out) != 0 && rc >= 0) {
        rc = lh_err_set(err, LH_EIO, "error writing %s", path);
    }
    return rc;
}
