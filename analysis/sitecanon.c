/* leakhound - SPDX-License-Identifier: MIT
 *
 * sitecanon.c: canonical site ids of stacks with script frames (sitecanon.h).
 */
#include "sitecanon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dupstr.h"
#include "grow.h"
#include "hash.h"
#include "scriptstack.h"
#include "symbolize.h"

typedef struct entry {
    char *key; /* NULL: empty slot */
    size_t key_len;
    uint64_t hash;
    uint32_t id;
} entry_t;

struct lh_sitecanon {
    lh_symbolizer_t *sym;
    const lh_modules_t *mods;
    uint32_t *ident; /* per module index + 1: 0 not known yet, else its identity + 1 */
    size_t n_ident;
    int unloaded;    /* a module was unloaded: native stacks are keyed from then on */
    uint32_t *canon; /* per stack id: 0 not mapped yet, else the canonical id */
    size_t n_canon;
    entry_t *tab;    /* open addressing, power-of-two size */
    size_t cap, n;
    char *buf;       /* key being built */
    size_t buf_len, buf_cap;
};

void
lh_sitecanon_free(lh_sitecanon_t *c)
{
    if (!c) {
        return;
    }
    LH_FREE_EACH(c->tab, c->cap, entry_t, key);
    lh_sym_free(c->sym);
    LH_FREE_ALL(c->canon, c->ident, c->buf, c);
}

int
lh_sitecanon_new(const lh_modules_t *mods, const char *exe_path, lh_sitecanon_t **out,
                 lh_err_t *err)
{
    lh_sym_opts_t so = {0};
    lh_sitecanon_t *c = calloc(1, sizeof *c);
    int rc;
    *out = NULL;
    if (!c) {
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    so.exe_path = exe_path;
    c->mods = mods;
    if ((rc = lh_sym_new(mods, &so, &c->sym, err)) < 0) {
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

/* Inline (with put_num's constant size the copy is two moves): a call per field was 5% of
 * a python report (callgrind). */
static inline int
put(lh_sitecanon_t *c, const void *p, size_t n)
{
    if (c->buf_len + n > c->buf_cap &&
        lh_grow_to(&c->buf, &c->buf_cap, c->buf_len + n, 1, 256) < 0) {
        return -1;
    }
    memcpy(c->buf + c->buf_len, p, n);
    c->buf_len += n;
    return 0;
}

static int
put_str(lh_sitecanon_t *c, const char *s)
{
    /* A NUL ends each string, so "ab"+"c" and "a"+"bc" differ; \1 marks a missing one. */
    return s ? put(c, s, strlen(s) + 1) : put(c, "\1", 2);
}

static int
put_num(lh_sitecanon_t *c, uint64_t v)
{
    return put(c, &v, sizeof v);
}

/* The key of what a frame shows: function, file:line, module, whether inlined; the offset
 * only when no source line names the frame (then the address is what is shown). Perl code
 * a string eval compiled is keyed without the eval's number: each eval is "(eval N)" with
 * a new N, so a line that evals a new string per request (a validator built from the
 * path, a generated accessor) was a site per request, 400 sites of 5 KiB that no list
 * ranked, not one of 2 MiB; the site shows the first eval's number. */
static int
put_frame(lh_sitecanon_t *c, const lh_frame_t *f)
{
    const char *file = f->file;
    if (lh_frame_is_perl_eval(f)) {
        file = f->file[1] == 'r' ? "(re_eval)" : "(eval)";
    }
    if (put_num(c, (uint64_t)f->lang) < 0 || put_num(c, (uint64_t)f->inlined) < 0 ||
        put_str(c, f->function) < 0 || put_str(c, file) < 0 || put_num(c, f->line) < 0 ||
        put_str(c, f->module) < 0) {
        return -1;
    }
    if (!f->function || !f->file) {
        return put_num(c, f->offset);
    }
    return 0;
}

static int
grow_tab(lh_sitecanon_t *c)
{
    size_t cap = c->cap ? 2 * c->cap : 64;
    entry_t *t = calloc(cap, sizeof *t);
    if (!t) {
        return -1;
    }
    for (size_t i = 0; i < c->cap; i++) {
        if (c->tab[i].key) {
            size_t j = c->tab[i].hash & (cap - 1);
            while (t[j].key) {
                j = (j + 1) & (cap - 1);
            }
            t[j] = c->tab[i];
        }
    }
    free(c->tab);
    c->tab = t;
    c->cap = cap;
    return 0;
}

/* The id already holding the key in c->buf, or id after adding it. */
static int
intern(lh_sitecanon_t *c, uint32_t id, uint32_t *out)
{
    uint64_t h = lh_hash_bytes(c->buf, c->buf_len);
    if (2 * (c->n + 1) > c->cap && grow_tab(c) < 0) {
        return -1;
    }
    size_t j = h & (c->cap - 1);
    for (; c->tab[j].key; j = (j + 1) & (c->cap - 1)) {
        entry_t *e = &c->tab[j];
        if (e->hash == h && e->key_len == c->buf_len && !memcmp(e->key, c->buf, c->buf_len)) {
            *out = e->id;
            return 0;
        }
    }
    char *k = malloc(c->buf_len ? c->buf_len : 1);
    if (!k) {
        return -1;
    }
    memcpy(k, c->buf, c->buf_len);
    c->tab[j].key = k;
    c->tab[j].key_len = c->buf_len;
    c->tab[j].hash = h;
    c->tab[j].id = id;
    c->n++;
    *out = id;
    return 0;
}

/* The identity of module mi: the first module with its path and build id, so that a
 * library loaded again (dlopen after dlclose) is the same module. -1: out of memory. */
static long
module_ident(lh_sitecanon_t *c, long mi)
{
    if (lh_grow_zeroed(&c->ident, &c->n_ident, (size_t)mi + 1, sizeof *c->ident, 64) < 0) {
        return -1;
    }
    if (!c->ident[mi]) {
        const lh_module_t *m = &c->mods->mods[mi];
        long j = 0;
        for (; j < mi; j++) {
            const lh_module_t *o = &c->mods->mods[j];
            if (strcmp(o->path, m->path) == 0 && o->build_id_len == m->build_id_len &&
                (!m->build_id_len || !memcmp(o->build_id, m->build_id, m->build_id_len))) {
                break;
            }
        }
        c->ident[mi] = (uint32_t)j + 1;
    }
    return (long)c->ident[mi] - 1;
}

/* The key of a native stack: each return address as (module, offset in it), so that the
 * stack recorded again after the module map changed (a dlopen of anything gives later
 * stacks a new epoch, hence new ids) or in a library loaded again elsewhere is the same
 * site, and different code is never merged. A leading all-ones word keeps these keys apart
 * from the script stacks' (which begin with a frame's language). */
static int
native_key(lh_sitecanon_t *c, const lh_stack_t *st)
{
    c->buf_len = 0;
    if (put_num(c, UINT64_MAX) < 0) {
        return -1;
    }
    long hint = -1;
    for (uint32_t i = 0; i < st->n_ips; i++) {
        uint64_t ip = st->ips[i];
        long mi = lh_modules_find_near(c->mods, ip, st->epoch, hint);
        long id = mi >= 0 ? module_ident(c, mi) : 0;
        if (id < 0) {
            return -1;
        }
        hint = mi >= 0 ? mi : hint;
        if (put_num(c, mi >= 0 ? (uint64_t)id : UINT64_MAX) < 0 ||
            put_num(c, mi >= 0 ? ip - c->mods->mods[mi].load_bias : ip) < 0) {
            return -1;
        }
    }
    return 0;
}

/* Whether a module has been unloaded by now (the trace is read in order). */
static int
any_unloaded(const lh_modules_t *mods)
{
    for (size_t i = 0; i < mods->n; i++) {
        if (mods->mods[i].epoch_unloaded != LH_EPOCH_NEVER) {
            return 1;
        }
    }
    return 0;
}

/* The site of native stack id. Only code that was unloaded can come back under other ids
 * (loaded again, or at another address), so until the trace has unloaded a module each
 * stack is its own site and costs no key (a key per stack made a 14 MiB redis trace's
 * report 1.8x slower). At the first unload, the native stacks read so far (mapped to
 * themselves already, or not asked about yet: trace.c asks only from the first unload or
 * script stack on) are keyed in id order, so each stays canonical; from then on every new
 * one is keyed. */
static int
native_site(lh_sitecanon_t *c, const lh_stacks_t *stacks, uint32_t id, uint32_t *out)
{
    if (!c->unloaded && any_unloaded(c->mods)) {
        c->unloaded = 1;
        for (uint32_t k = 1; k < stacks->cap; k++) {
            const lh_stack_t *o = lh_stacks_get(stacks, k);
            uint32_t ignored;
            int self = k >= c->n_canon || !c->canon[k] || c->canon[k] == k;
            if (self && o && o->ips && !o->n_script &&
                (native_key(c, o) < 0 || intern(c, k, &ignored) < 0)) {
                return -1;
            }
        }
    }
    if (c->unloaded && (native_key(c, lh_stacks_get(stacks, id)) < 0 ||
                        intern(c, id, out) < 0)) {
        return -1;
    }
    c->canon[id] = *out;
    return 0;
}

static int
script_known(const lh_stack_t *st)
{
    for (uint32_t i = 0; i < st->n_script; i++) {
        if (!st->sframes || !lh_sframes_get(st->sframes, st->script[i])) {
            return 0;
        }
    }
    return 1;
}

int
lh_sitecanon_map(lh_sitecanon_t *c, const lh_stacks_t *stacks, uint32_t id, uint32_t *out,
                 lh_err_t *err)
{
    const lh_stack_t *st = lh_stacks_get(stacks, id);
    lh_frame_t *frames = NULL;
    size_t n = 0;
    int rc;
    *out = id;
    if (!st || !st->ips || (st->n_script && lh_sym_get_native())) {
        return 0;
    }
    if (id < c->n_canon && c->canon[id]) {
        *out = c->canon[id];
        return 0;
    }
    if (lh_grow_zeroed(&c->canon, &c->n_canon, (size_t)id + 1, sizeof *c->canon, 256) < 0) {
        return lh_err_set(err, LH_ENOMEM, "out of memory mapping sites");
    }
    if (!st->n_script) {
        int rc2 = native_site(c, stacks, id, out);
        if (rc2 < 0) {
            *out = id;
            return lh_err_set(err, LH_ENOMEM, "out of memory mapping sites");
        }
        return 0;
    }
    /* A script frame not recorded yet would show as "?": keep such a stack its own site
     * rather than merge it with another "?" (the format emits SFRAMEs before use). */
    if (script_known(st)) {
        if ((rc = lh_sym_stack(c->sym, st, &frames, &n, err)) < 0) {
            return rc;
        }
        c->buf_len = 0;
        rc = 0;
        for (size_t i = 0; i < n && rc == 0; i++) {
            rc = put_frame(c, &frames[i]);
        }
        free(frames);
        if (rc < 0 || intern(c, id, out) < 0) {
            *out = id;
            return lh_err_set(err, LH_ENOMEM, "out of memory mapping sites");
        }
    }
    c->canon[id] = *out;
    return 0;
}
