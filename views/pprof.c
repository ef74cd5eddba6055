/* leakhound - SPDX-License-Identifier: MIT
 *
 * pprof.c: the pprof profile writer (protobuf by hand, gzip by zlib).
 *
 * Field numbers from profile.proto (github.com/google/pprof/proto/profile.proto):
 *   Profile   sample_type=1 sample=2 mapping=3 location=4 function=5 string_table=6
 *             time_nanos=9 duration_nanos=10 period_type=11 period=12 comment=13
 *             default_sample_type=14
 *   ValueType type=1 unit=2                 Sample   location_id=1 value=2 label=3
 *   Mapping   id=1 memory_start=2 memory_limit=3 file_offset=4 filename=5 build_id=6
 *             has_functions=7 has_filenames=8 has_line_numbers=9 has_inline_frames=10
 *   Location  id=1 mapping_id=2 address=3 line=4     Line  function_id=1 line=2
 *   Function  id=1 name=2 system_name=3 filename=4
 */
#include "pprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "funcs.h"
#include "report.h"

/* ---------------------------------------------------------------------------------------
 * Protobuf writer: a growable buffer; nested messages are written into their own buffer
 * and appended with their length.
 * ------------------------------------------------------------------------------------- */
typedef struct pb {
    uint8_t *b;
    size_t n, cap;
    int oom;
} pb_t;

static void
pb_raw(pb_t *p, const void *data, size_t len)
{
    if (p->oom) {
        return;
    }
    if (p->n + len > p->cap) {
        size_t cap = p->cap ? p->cap : 256;
        while (cap < p->n + len) {
            cap *= 2;
        }
        uint8_t *v = realloc(p->b, cap);
        if (!v) {
            p->oom = 1;
            return;
        }
        p->b = v;
        p->cap = cap;
    }
    memcpy(p->b + p->n, data, len);
    p->n += len;
}

static void
pb_varint(pb_t *p, uint64_t v)
{
    uint8_t buf[10];
    size_t k = 0;
    do {
        buf[k] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) {
            buf[k] |= 0x80;
        }
        k++;
    } while (v);
    pb_raw(p, buf, k);
}

static void
pb_uint(pb_t *p, unsigned field, uint64_t v)
{
    if (v) { /* proto3: zero is the default and is not written */
        pb_varint(p, (uint64_t)field << 3 | 0);
        pb_varint(p, v);
    }
}

static void
pb_bytes(pb_t *p, unsigned field, const void *data, size_t len)
{
    pb_varint(p, (uint64_t)field << 3 | 2);
    pb_varint(p, len);
    pb_raw(p, data, len);
}

static void
pb_msg(pb_t *p, unsigned field, pb_t *sub)
{
    if (sub->oom) {
        p->oom = 1;
    }
    pb_bytes(p, field, sub->b, sub->n);
    sub->n = 0;
}

static void
pb_packed(pb_t *p, unsigned field, const uint64_t *v, size_t n, pb_t *tmp)
{
    for (size_t i = 0; i < n; i++) {
        pb_varint(tmp, v[i]);
    }
    pb_msg(p, field, tmp);
}

/* ---------------------------------------------------------------------------------------
 * Tables: strings, functions and locations, interned with open-addressing hashes.
 * ------------------------------------------------------------------------------------- */
typedef struct strtab {
    char **s;
    size_t n, cap;
    uint32_t *hash;
    size_t mask;
} strtab_t;

static uint64_t
fnv(const char *s, uint64_t h)
{
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    }
    return h;
}

static int
table_grow(uint32_t **hash, size_t *mask, size_t n, uint64_t (*key)(void *, size_t), void *ctx)
{
    if ((n + 1) * 2 <= *mask + 1 && *hash) {
        return 0;
    }
    size_t cap = *hash ? (*mask + 1) * 2 : 1024;
    uint32_t *h = malloc(cap * sizeof *h);
    if (!h) {
        return -1;
    }
    memset(h, 0xff, cap * sizeof *h);
    for (size_t i = 0; i < n; i++) {
        size_t j = key(ctx, i) & (cap - 1);
        while (h[j] != UINT32_MAX) {
            j = (j + 1) & (cap - 1);
        }
        h[j] = (uint32_t)i;
    }
    free(*hash);
    *hash = h;
    *mask = cap - 1;
    return 0;
}

static uint64_t
str_key(void *ctx, size_t i)
{
    return fnv(((strtab_t *)ctx)->s[i], 1469598103934665603ull);
}

/* The index of s in the string table (added when new), or -1. */
static long
str_id(strtab_t *t, const char *s)
{
    if (!s) {
        s = "";
    }
    if (table_grow(&t->hash, &t->mask, t->n, str_key, t) < 0) {
        return -1;
    }
    size_t j = fnv(s, 1469598103934665603ull) & t->mask;
    while (t->hash[j] != UINT32_MAX) {
        if (strcmp(t->s[t->hash[j]], s) == 0) {
            return t->hash[j];
        }
        j = (j + 1) & t->mask;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        char **v = realloc(t->s, cap * sizeof *v);
        if (!v) {
            return -1;
        }
        t->s = v;
        t->cap = cap;
    }
    if (!(t->s[t->n] = strdup(s))) {
        return -1;
    }
    t->hash[j] = (uint32_t)t->n;
    return (long)t->n++;
}

/* Functions: (name, file) string ids. */
typedef struct fntab {
    uint64_t *key;  /* name id << 32 | file id */
    size_t n, cap;
    uint32_t *hash;
    size_t mask;
} fntab_t;

static uint64_t
mix(uint64_t x)
{
    x *= 0x9e3779b97f4a7c15ull;
    return x ^ (x >> 29);
}

static uint64_t
fn_key(void *ctx, size_t i)
{
    return mix(((fntab_t *)ctx)->key[i]);
}

/* 1-based function id, or 0 when out of memory. */
static uint64_t
fn_id(fntab_t *t, uint64_t key)
{
    if (table_grow(&t->hash, &t->mask, t->n, fn_key, t) < 0) {
        return 0;
    }
    size_t j = mix(key) & t->mask;
    while (t->hash[j] != UINT32_MAX) {
        if (t->key[t->hash[j]] == key) {
            return t->hash[j] + 1;
        }
        j = (j + 1) & t->mask;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        uint64_t *v = realloc(t->key, cap * sizeof *v);
        if (!v) {
            return 0;
        }
        t->key = v;
        t->cap = cap;
    }
    t->key[t->n] = key;
    t->hash[j] = (uint32_t)t->n;
    return ++t->n;
}

/* Locations: (ip, epoch) -> 1-based id; the encoded Location messages accumulate in out. */
typedef struct loctab {
    uint64_t *ip, *epoch;
    uint8_t *agent;     /* the address is in the agent: dropped from samples */
    size_t n, cap;
    uint32_t *hash;
    size_t mask;
} loctab_t;

static uint64_t
loc_key(void *ctx, size_t i)
{
    loctab_t *t = ctx;
    return mix(t->ip[i] ^ mix(t->epoch[i]));
}

typedef struct writer {
    lh_collect_t *c;
    strtab_t str;
    fntab_t fn;
    loctab_t loc;
    pb_t prof, sub, sub2, tmp;
    lh_err_t *err;
} writer_t;

static int
w_oom(writer_t *w)
{
    return lh_err_set(w->err, LH_ENOMEM, "out of memory writing the pprof profile");
}

/* Adds the location of ip (symbolized) if new; returns its id (0: agent frame), or -1. */
static long
location(writer_t *w, uint64_t ip, uint64_t epoch)
{
    loctab_t *t = &w->loc;
    if (table_grow(&t->hash, &t->mask, t->n, loc_key, t) < 0) {
        return -1;
    }
    size_t j = mix(ip ^ mix(epoch)) & t->mask;
    while (t->hash[j] != UINT32_MAX) {
        size_t k = t->hash[j];
        if (t->ip[k] == ip && t->epoch[k] == epoch) {
            return t->agent[k] ? 0 : (long)k + 1;
        }
        j = (j + 1) & t->mask;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        uint64_t *a = realloc(t->ip, cap * sizeof *a);
        if (a) {
            t->ip = a;
        }
        uint64_t *b = a ? realloc(t->epoch, cap * sizeof *b) : NULL;
        if (b) {
            t->epoch = b;
        }
        uint8_t *g = b ? realloc(t->agent, cap) : NULL;
        if (!g) {
            return -1;
        }
        t->agent = g;
        t->cap = cap;
    }
    const lh_frame_t *fr;
    int nf = lh_sym_ip(lh_collect_symbolizer(w->c), ip, epoch, &fr, w->err);
    if (nf < 0) {
        return -1;
    }
    size_t k = t->n++;
    t->ip[k] = ip;
    t->epoch[k] = epoch;
    t->agent[k] = (uint8_t)(nf > 0 && lh_frame_is_agent(&fr[nf - 1]));
    t->hash[j] = (uint32_t)k;
    if (t->agent[k]) {
        return 0;
    }
    /* Location{id, mapping_id, address, line...} */
    const lh_modules_t *mods = lh_trace_modules(lh_collect_trace(w->c));
    long mi = lh_modules_find(mods, ip, epoch);
    pb_uint(&w->sub, 1, k + 1);
    pb_uint(&w->sub, 2, mi >= 0 ? (uint64_t)mi + 1 : 0);
    pb_uint(&w->sub, 3, ip);
    for (int i = 0; i < nf; i++) {
        char name[512];
        long ns = str_id(&w->str, lh_funcs_frame_name(&fr[i], name, sizeof name));
        long fs = str_id(&w->str, fr[i].file);
        if (ns < 0 || fs < 0) {
            return -1;
        }
        uint64_t fid = fn_id(&w->fn, (uint64_t)ns << 32 | (uint64_t)fs);
        if (!fid) {
            return -1;
        }
        pb_uint(&w->sub2, 1, fid);
        pb_uint(&w->sub2, 2, fr[i].line);
        pb_msg(&w->sub, 4, &w->sub2);
    }
    pb_msg(&w->prof, 4, &w->sub);
    return (long)k + 1;
}

/* The location of a script frame (a Perl sub or Python function at a line, scriptstack.h):
 * no mapping, no address, one line. Keyed by its function string, which the trace's frame
 * table owns once per script frame, with an epoch no native stack has. Returns its id, or
 * -1. */
static long
script_location(writer_t *w, const lh_frame_t *f)
{
    loctab_t *t = &w->loc;
    uint64_t key = (uint64_t)(uintptr_t)f->function;
    if (table_grow(&t->hash, &t->mask, t->n, loc_key, t) < 0) {
        return -1;
    }
    size_t j = mix(key ^ mix(UINT64_MAX)) & t->mask;
    while (t->hash[j] != UINT32_MAX) {
        size_t k = t->hash[j];
        if (t->ip[k] == key && t->epoch[k] == UINT64_MAX) {
            return (long)k + 1;
        }
        j = (j + 1) & t->mask;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        uint64_t *a = realloc(t->ip, cap * sizeof *a);
        if (a) {
            t->ip = a;
        }
        uint64_t *b = a ? realloc(t->epoch, cap * sizeof *b) : NULL;
        if (b) {
            t->epoch = b;
        }
        uint8_t *g = b ? realloc(t->agent, cap) : NULL;
        if (!g) {
            return -1;
        }
        t->agent = g;
        t->cap = cap;
    }
    size_t k = t->n++;
    t->ip[k] = key;
    t->epoch[k] = UINT64_MAX;
    t->agent[k] = 0;
    t->hash[j] = (uint32_t)k;
    long ns = str_id(&w->str, f->function);
    long fs = str_id(&w->str, f->file);
    if (ns < 0 || fs < 0) {
        return -1;
    }
    uint64_t fid = fn_id(&w->fn, (uint64_t)ns << 32 | (uint64_t)fs);
    if (!fid) {
        return -1;
    }
    pb_uint(&w->sub, 1, k + 1);
    pb_uint(&w->sub2, 1, fid);
    pb_uint(&w->sub2, 2, f->line);
    pb_msg(&w->sub, 4, &w->sub2);
    pb_msg(&w->prof, 4, &w->sub);
    return (long)k + 1;
}

/* Locations of a stack with script frames: those of the frames a user reads (the site's,
 * scriptstack.h), one per native return address and one per script frame. */
static int
script_stack_locations(writer_t *w, uint32_t id, uint64_t epoch, uint64_t **locs, size_t *cap,
                       size_t *n)
{
    const lh_site_t *site;
    int rc = lh_collect_site(w->c, id, &site, w->err);
    if (rc < 0) {
        return rc;
    }
    if (site->n_frames > *cap) {
        uint64_t *v = realloc(*locs, site->n_frames * sizeof *v);
        if (!v) {
            return w_oom(w);
        }
        *locs = v;
        *cap = site->n_frames;
    }
    *n = 0;
    for (size_t i = 0; i < site->n_frames; i++) {
        const lh_frame_t *f = &site->frames[i];
        long l;
        if (f->lang != 0) {
            l = script_location(w, f);
        } else if (i > 0 && f->ip == site->frames[i - 1].ip && site->frames[i - 1].lang == 0) {
            continue; /* an inlined frame of the address just added */
        } else {
            l = location(w, f->ip, epoch);
        }
        if (l < 0) {
            return w_oom(w);
        }
        if (l > 0) {
            (*locs)[(*n)++] = (uint64_t)l;
        }
    }
    return 0;
}

static int
value_type(writer_t *w, unsigned field, const char *type, const char *unit)
{
    long a = str_id(&w->str, type), b = str_id(&w->str, unit);
    if (a < 0 || b < 0) {
        return -1;
    }
    pb_uint(&w->sub, 1, (uint64_t)a);
    pb_uint(&w->sub, 2, (uint64_t)b);
    pb_msg(&w->prof, field, &w->sub);
    return 0;
}

static int
mappings(writer_t *w)
{
    const lh_modules_t *mods = lh_trace_modules(lh_collect_trace(w->c));
    const char *exe = lh_trace_info(lh_collect_trace(w->c))->exe;
    for (size_t i = 0; i < mods->n; i++) {
        const lh_module_t *m = &mods->mods[i];
        uint64_t lo = UINT64_MAX, hi = 0;
        char build_id[2 * 64 + 1] = "";
        for (size_t s = 0; s < m->n_segs; s++) {
            if (m->segs[s].vaddr < lo) {
                lo = m->segs[s].vaddr;
            }
            if (m->segs[s].vaddr + m->segs[s].memsz > hi) {
                hi = m->segs[s].vaddr + m->segs[s].memsz;
            }
        }
        if (lo > hi) {
            lo = hi = 0;
        }
        for (size_t b = 0; b < m->build_id_len && b < 64; b++) {
            snprintf(build_id + 2 * b, 3, "%02x", m->build_id[b]);
        }
        long fs = str_id(&w->str, m->path[0] ? m->path : exe);
        long bs = str_id(&w->str, build_id);
        if (fs < 0 || bs < 0) {
            return -1;
        }
        pb_uint(&w->sub, 1, i + 1);
        pb_uint(&w->sub, 2, m->load_bias + lo);
        pb_uint(&w->sub, 3, m->load_bias + hi);
        pb_uint(&w->sub, 5, (uint64_t)fs);
        pb_uint(&w->sub, 6, (uint64_t)bs);
        for (unsigned f = 7; f <= 10; f++) {
            pb_uint(&w->sub, f, 1);
        }
        pb_msg(&w->prof, 3, &w->sub);
    }
    return 0;
}

static int
samples(writer_t *w, const lh_pprof_opts_t *o)
{
    lh_collect_t *c = w->c;
    const lh_stacks_t *stacks = lh_trace_stacks(lh_collect_trace(c));
    uint64_t *locs = NULL;
    size_t cap = 0;
    int rc = 0;
    for (uint32_t id = 0; id < lh_collect_n_stacks(c); id++) {
        const lh_cstack_t *s = lh_collect_stack(c, id);
        uint64_t inuse_b = o && o->inuse_bytes ? o->inuse_bytes[id] : s->live_bytes;
        uint64_t inuse_n = o && o->inuse_blocks ? o->inuse_blocks[id] : s->live_blocks;
        const lh_stack_t *st = lh_stacks_get(stacks, id);
        if (!s->n_allocs && !inuse_n) {
            continue;
        }
        if (o && o->supp && o->supp->n) {
            const lh_site_t *site;
            if ((rc = lh_collect_site(c, id, &site, w->err)) < 0) {
                break;
            }
            if (lh_supp_match(o->supp, site->frames, site->n_frames) >= 0) {
                continue;
            }
        }
        size_t n = 0, need = st ? st->n_ips : 0;
        if (st && st->n_script > 0) {
            if ((rc = script_stack_locations(w, id, st->epoch, &locs, &cap, &n)) < 0) {
                break;
            }
            need = 0;
        }
        if (need > cap) {
            uint64_t *v = realloc(locs, need * sizeof *v);
            if (!v) {
                rc = w_oom(w);
                break;
            }
            locs = v;
            cap = need;
        }
        for (size_t i = 0; i < need; i++) {
            long l = location(w, st->ips[i], st->epoch);
            if (l < 0) {
                rc = w_oom(w);
                goto done;
            }
            if (l > 0) {
                locs[n++] = (uint64_t)l;
            }
        }
        uint64_t vals[4] = {s->n_allocs, s->alloc_bytes, inuse_n, inuse_b};
        pb_packed(&w->sub, 1, locs, n, &w->tmp);
        pb_packed(&w->sub, 2, vals, 4, &w->tmp);
        pb_msg(&w->prof, 2, &w->sub);
    }
done:
    free(locs);
    return rc;
}

static int
write_gz(const char *path, const pb_t *p, lh_err_t *err)
{
    gzFile gz = gzopen(path, "wb9");
    if (!gz) {
        return lh_err_set(err, LH_EIO, "cannot write %s", path);
    }
    size_t off = 0;
    while (off < p->n) {
        unsigned chunk = p->n - off > (1u << 30) ? 1u << 30 : (unsigned)(p->n - off);
        if (gzwrite(gz, p->b + off, chunk) != (int)chunk) {
            gzclose(gz);
            return lh_err_set(err, LH_EIO, "error writing %s", path);
        }
        off += chunk;
    }
    if (gzclose(gz) != Z_OK) {
        return lh_err_set(err, LH_EIO, "error writing %s", path);
    }
    return 0;
}

int
lh_view_pprof(const char *path, lh_collect_t *c, const lh_pprof_opts_t *opts, lh_err_t *err)
{
    writer_t w;
    const lh_trace_info_t *in = lh_trace_info(lh_collect_trace(c));
    int rc = 0;
    memset(&w, 0, sizeof w);
    w.c = c;
    w.err = err;
    if (str_id(&w.str, "") != 0) {
        rc = w_oom(&w);
        goto done;
    }
    if (value_type(&w, 1, "alloc_objects", "count") < 0 ||
        value_type(&w, 1, "alloc_space", "bytes") < 0 ||
        value_type(&w, 1, "inuse_objects", "count") < 0 ||
        value_type(&w, 1, "inuse_space", "bytes") < 0 || mappings(&w) < 0) {
        rc = w_oom(&w);
        goto done;
    }
    if ((rc = samples(&w, opts)) < 0) {
        goto done;
    }
    /* functions */
    for (size_t i = 0; i < w.fn.n; i++) {
        pb_uint(&w.sub, 1, i + 1);
        pb_uint(&w.sub, 2, w.fn.key[i] >> 32);
        pb_uint(&w.sub, 3, w.fn.key[i] >> 32);
        pb_uint(&w.sub, 4, w.fn.key[i] & 0xffffffffu);
        pb_msg(&w.prof, 5, &w.sub);
    }
    {
        char comment[600];
        snprintf(comment, sizeof comment, "leakhound trace %s%s%s", lh_trace_path(lh_collect_trace(c)),
                 opts && opts->inuse_label ? "; in use at " : "; in use at exit",
                 opts && opts->inuse_label ? opts->inuse_label : "");
        long cs = str_id(&w.str, comment);
        long ds = str_id(&w.str, "inuse_space");
        if (cs < 0 || ds < 0 || value_type(&w, 11, "space", "bytes") < 0) {
            rc = w_oom(&w);
            goto done;
        }
        pb_uint(&w.prof, 9, in->realtime_start_ns);
        uint64_t dur = lh_collect_end_ns(c) - lh_collect_start_ns(c);
        pb_uint(&w.prof, 10, dur);
        pb_uint(&w.prof, 12, 1);
        pb_uint(&w.prof, 13, (uint64_t)cs);
        pb_uint(&w.prof, 14, (uint64_t)ds);
    }
    for (size_t i = 0; i < w.str.n; i++) {
        pb_bytes(&w.prof, 6, w.str.s[i], strlen(w.str.s[i]));
    }
    if (w.prof.oom || w.sub.oom || w.sub2.oom || w.tmp.oom) {
        rc = w_oom(&w);
        goto done;
    }
    rc = write_gz(path, &w.prof, err);
done:
    for (size_t i = 0; i < w.str.n; i++) {
        free(w.str.s[i]);
    }
    free(w.str.s);
    free(w.str.hash);
    free(w.fn.key);
    free(w.fn.hash);
    free(w.loc.ip);
    free(w.loc.epoch);
    free(w.loc.agent);
    free(w.loc.hash);
    free(w.prof.b);
    free(w.sub.b);
    free(w.sub2.b);
    free(w.tmp.b);
    return rc;
}
