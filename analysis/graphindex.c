/* leakhound - SPDX-License-Identifier: MIT
 *
 * graphindex.c: the snapshot index files of graphindex.h: writing (temporary file, then
 * rename), loading (one pass of read(2) straight into the arrays, checksumming and
 * bounds-checking), and
 * attaching the trace to a loaded heapgraph.
 */
#include "graphindex.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dupstr.h"
#include "format.h"
#include "privfile.h"
#include "stream.h"
#include "symbolize.h"
#include "symcache.h"
#include "trace.h"

#define MAGIC "LHGIDX\r\n"
#define HEADER_BYTES 256u
#define KIND_CATALOG 1u
#define KIND_SNAPSHOT 2u
#define BYTE_ORDER_MARK 0x0102030405060708ull
#define HEAD_HASH_BYTES 4096

/* The identity of a file an index was built from. */
typedef struct fkey {
    uint64_t size, mtime_ns, ino, head_hash;
} fkey_t;

/* The fixed-size header (HEADER_BYTES, zero-padded). */
typedef struct header {
    char magic[8];
    uint64_t byte_order;
    uint32_t version, kind;
    uint64_t payload_bytes, payload_hash;
    fkey_t trace, contents;  /* contents: zero for the catalog and for no contents file */
    uint64_t snapshot;       /* 1-based; 0 for the catalog */
    uint32_t heuristics, flags; /* flags: 1 salvage, 2 native */
    char lh_version[32];
    uint64_t bases_hash;     /* the keys of snapshots 1..N-1's contents files: a delta
                                snapshot's unchanged pages are in an earlier one's file */
    fkey_t tool;             /* the leakhound binary that wrote it: the version string alone
                                kept a rebuilt analyzer's old answers (a decoder fix) */
} header_t;

/* ---------------------------------------------------------------------------------------
 * Keys and paths
 * ------------------------------------------------------------------------------------- */

static uint64_t
mix(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 31);
}

/* Hash of len bytes, as 8-byte words, the last one zero-padded. */
static uint64_t
hash_bytes(uint64_t h, const void *p, size_t len)
{
    const unsigned char *c = p;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, c + i, 8);
        h = mix(h, w);
    }
    if (i < len) {
        uint64_t w = 0;
        memcpy(&w, c + i, len - i);
        h = mix(h, w);
    }
    return h;
}

static int
file_key(const char *path, fkey_t *k)
{
    struct stat sb;
    unsigned char head[HEAD_HASH_BYTES];
    memset(k, 0, sizeof *k);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    ssize_t n = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? read(fd, head, sizeof head) : -1;
    close(fd);
    if (n < 0) {
        return -1;
    }
    k->size = (uint64_t)sb.st_size;
    k->mtime_ns = (uint64_t)sb.st_mtim.tv_sec * 1000000000u + (uint64_t)sb.st_mtim.tv_nsec;
    k->ino = (uint64_t)sb.st_ino;
    k->head_hash = hash_bytes(1, head, (size_t)n);
    return 0;
}

/* Where T's index files go: beside T (the path T itself), or, when T's directory is not
 * writable by us (a trace copied off a server into a read-only place, a colleague's
 * directory), in the user's cache directory as index/<hash of T's real path>, so that
 * later shells still load in under a second instead of rebuilding every time. The files'
 * key (the trace's size, mtime, inode, head) decides validity either way. NULL when
 * neither is possible or memory is short. */
static char *
index_base(const char *trace_path)
{
    const char *slash = strrchr(trace_path, '/');
    char dir[PATH_MAX];
    if (!slash) {
        snprintf(dir, sizeof dir, ".");
    } else if ((size_t)(slash - trace_path) < sizeof dir) {
        memcpy(dir, trace_path, (size_t)(slash - trace_path));
        dir[slash - trace_path] = '\0';
        if (!dir[0]) {
            snprintf(dir, sizeof dir, "/");
        }
    } else {
        return NULL;
    }
    if (access(dir, W_OK | X_OK) == 0) {
        return strdup(trace_path);
    }
    const char *cache = lh_symcache_dir();
    char real[PATH_MAX], sub[PATH_MAX];
    struct stat st;
    if (!cache || !realpath(trace_path, real) ||
        snprintf(sub, sizeof sub, "%s/index", cache) >= (int)sizeof sub) {
        return NULL;
    }
    (void)mkdir(sub, 0700);
    if (lstat(sub, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 077) != 0) {
        return NULL;
    }
    size_t len = strlen(sub) + 32;
    char *p = malloc(len);
    if (p) {
        snprintf(p, len, "%s/%016llx", sub,
                 (unsigned long long)hash_bytes(1, real, strlen(real)));
    }
    return p;
}

/* T.lhx (idx < 0) or T.<idx+1>.lhx, where index_base() puts them */
static char *
index_path(const char *trace_path, long idx)
{
    char *base = index_base(trace_path);
    if (!base) {
        return NULL;
    }
    size_t len = strlen(base) + 32;
    char *p = malloc(len);
    if (p) {
        if (idx < 0) {
            snprintf(p, len, "%s.lhx", base);
        } else {
            snprintf(p, len, "%s.%ld.lhx", base, idx + 1);
        }
    }
    free(base);
    return p;
}

/* The header an index for these inputs must carry (payload fields zero). */
static int
expected_header(const char *trace_path, const lh_gindex_opts_t *o, unsigned kind,
                const lh_snapinfo_t *snaps, long idx, header_t *h)
{
    const lh_snapinfo_t *s = snaps ? &snaps[idx] : NULL;
    memset(h, 0, sizeof *h);
    memcpy(h->magic, MAGIC, 8);
    h->byte_order = BYTE_ORDER_MARK;
    h->version = LH_GINDEX_VERSION;
    h->kind = kind;
    h->heuristics = o->heuristics;
    h->flags = (o->salvage ? 1u : 0) | (o->native ? 2u : 0);
    snprintf(h->lh_version, sizeof h->lh_version, "%s", LH_VERSION);
    (void)file_key("/proc/self/exe", &h->tool); /* not readable: zero, as when written */
    if (file_key(trace_path, &h->trace) < 0) {
        return -1;
    }
    if (kind == KIND_SNAPSHOT) {
        h->snapshot = (uint64_t)idx + 1;
        if (s->mode != LH_CONTENTS_NONE && s->file) {
            char *cp = lh_snapfile_contents_path(trace_path, s->file);
            if (!cp) {
                return -1;
            }
            file_key(cp, &h->contents); /* missing: zero, as when it was built */
            free(cp);
        }
        h->bases_hash = 1;
        for (long i = 0; i < idx; i++) {
            fkey_t k = {0};
            if (snaps[i].mode != LH_CONTENTS_NONE && snaps[i].file) {
                char *cp = lh_snapfile_contents_path(trace_path, snaps[i].file);
                if (!cp) {
                    return -1;
                }
                file_key(cp, &k);
                free(cp);
            }
            h->bases_hash = hash_bytes(h->bases_hash, &k, sizeof k);
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Writing
 * ------------------------------------------------------------------------------------- */

typedef struct wr {
    FILE *f;
    uint64_t h, bytes;
    int bad;
} wr_t;

static void
w_raw(wr_t *w, const void *p, size_t n)
{
    static const unsigned char zero[8];
    size_t pad = (8 - n % 8) % 8;
    if (n && fwrite(p, 1, n, w->f) != n) {
        w->bad = 1;
    }
    if (pad && fwrite(zero, 1, pad, w->f) != pad) {
        w->bad = 1;
    }
    w->h = hash_bytes(w->h, p, n);
    w->bytes += n + pad;
}

static void
w_u64(wr_t *w, uint64_t v)
{
    w_raw(w, &v, 8);
}

/* An array: present flag, byte count, bytes. */
static void
w_arr(wr_t *w, const void *p, uint64_t count, size_t elsize)
{
    w_u64(w, p != NULL);
    w_u64(w, p ? count * elsize : 0);
    if (p) {
        w_raw(w, p, (size_t)(count * elsize));
    }
}

/* A string: length + 1 (0: NULL), bytes. */
static void
w_str(wr_t *w, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    w_u64(w, s ? n + 1 : 0);
    if (s) {
        w_raw(w, s, n);
    }
}

static void
w_graph(wr_t *w, const lh_refgraph_t *g)
{
    uint64_t nn = g->n_nodes;
    w_u64(w, g->n_blocks);
    w_u64(w, g->n_roots);
    w_u64(w, g->n_nodes);
    w_u64(w, g->super);
    w_u64(w, g->n_edges);
    w_u64(w, g->n_strong);
    w_u64(w, g->n_interior);
    w_arr(w, g->off, g->off ? nn + 1 : 0, 8);
    w_arr(w, g->dst, g->n_edges, 4);
    w_arr(w, g->roff, g->roff ? nn + 1 : 0, 8);
    w_arr(w, g->rsrc, g->n_edges, 4);
    w_arr(w, g->cls, g->n_blocks, 1);
    w_arr(w, g->idom, nn, 4);
    w_arr(w, g->retained, nn, 8);
}

static void
w_snaps(wr_t *w, const lh_snapinfo_t *snaps, size_t n)
{
    w_u64(w, n);
    for (size_t i = 0; i < n; i++) {
        const lh_snapinfo_t *s = &snaps[i];
        uint64_t v[8] = {s->number, s->trigger, s->mode, s->ts_ns, s->pause_ns,
                         s->live_blocks, s->live_bytes, 0};
        w_raw(w, v, sizeof v);
        w_str(w, s->label);
        w_str(w, s->file);
    }
}

static void
w_site(wr_t *w, const lh_site_t *s)
{
    w_u64(w, s->stack_id);
    w_u64(w, (uint64_t)s->has_stack);
    w_u64(w, (uint64_t)s->location);
    w_u64(w, s->n_frames);
    for (size_t i = 0; i < s->n_frames; i++) {
        const lh_frame_t *f = &s->frames[i];
        uint64_t v[5] = {f->line, f->ip, f->offset, (uint64_t)f->inlined, (uint64_t)f->lang};
        w_raw(w, v, sizeof v);
        w_str(w, f->function);
        w_str(w, f->file);
        w_str(w, f->module);
    }
}

static void
w_heapgraph(wr_t *w, lh_heapgraph_t *hg, const lh_objheap_t *oh)
{
    lh_gindex_info_t in;
    lh_gindex_info_of(hg, &in);
    w_snaps(w, hg->snaps, hg->n_snaps);
    w_u64(w, hg->cur);
    w_u64(w, hg->epoch);
    w_u64(w, in.attach_how);
    w_u64(w, (uint64_t)in.has_clock);
    w_u64(w, in.mono_start_ns);
    w_u64(w, hg->n_blocks);
    w_u64(w, hg->live_bytes);
    w_arr(w, hg->blocks, hg->n_blocks, sizeof *hg->blocks);
    w_u64(w, hg->n_types);
    for (uint32_t i = 1; i < hg->n_types; i++) {
        w_str(w, hg->types[i]);
    }
    w_u64(w, (uint64_t)hg->has_graph);
    w_u64(w, (uint64_t)hg->no_graph_code);
    w_str(w, hg->no_graph_why);
    w_u64(w, hg->sf.n_words);
    w_arr(w, hg->sf.words, hg->sf.n_words, sizeof *hg->sf.words);
    w_u64(w, hg->sf.n_hdr);
    w_arr(w, hg->sf.hdr, hg->sf.n_hdr, sizeof *hg->sf.hdr);
    w_u64(w, hg->n_roots);
    for (uint32_t i = 0; i < hg->n_roots; i++) {
        const lh_hroot_t *r = &hg->roots[i];
        w_u64(w, r->kind);
        w_u64(w, r->start);
        w_str(w, r->name);
        w_str(w, r->file);
        w_str(w, r->module);
    }
    uint64_t n_rw = hg->root_woff ? hg->root_woff[hg->n_roots] : 0;
    w_arr(w, hg->root_woff, (uint64_t)hg->n_roots + 1, 8);
    w_u64(w, n_rw);
    w_arr(w, hg->root_words, n_rw, 4);
    w_graph(w, &hg->g);
    w_raw(w, hg->class_blocks, sizeof hg->class_blocks);
    w_raw(w, hg->class_bytes, sizeof hg->class_bytes);
    w_u64(w, hg->n_words_ignored);
    w_u64(w, hg->heuristics);
    w_arr(w, hg->via_heur, hg->n_blocks, 1);
    w_arr(w, hg->start_ref, hg->n_blocks, 1);
    w_raw(w, hg->heur_blocks, sizeof hg->heur_blocks);
    w_raw(w, hg->heur_bytes, sizeof hg->heur_bytes);
    /* The sites of the blocks and objects, symbolized now. */
    for (uint32_t b = 0; b < hg->n_blocks; b++) {
        lh_heapgraph_site(hg, hg->blocks[b].stack_id);
    }
    for (uint32_t v = 0; oh && v < oh->n_objs; v++) {
        lh_heapgraph_site(hg, oh->objs[v].stack_id);
    }
    uint64_t n_sites = 0;
    for (size_t i = 0; i < hg->n_sites; i++) {
        n_sites += hg->sites[i] != NULL;
    }
    w_u64(w, n_sites);
    for (size_t i = 0; i < hg->n_sites; i++) {
        if (hg->sites[i]) {
            w_site(w, hg->sites[i]);
        }
    }
}

static void
w_objheap(wr_t *w, const lh_objheap_t *oh)
{
    uint64_t nn = (uint64_t)oh->n_objs + oh->n_ext, n_rd = 0;
    for (uint32_t i = 0; i < oh->n_roots; i++) {
        if (oh->roots[i].first + oh->roots[i].n > n_rd) {
            n_rd = oh->roots[i].first + oh->roots[i].n;
        }
    }
    w_u64(w, oh->lang);
    w_raw(w, oh->version, sizeof oh->version);
    w_str(w, oh->note);
    w_u64(w, (uint64_t)oh->needs_full);
    w_u64(w, oh->collector_off);
    w_u64(w, oh->n_objs);
    w_arr(w, oh->objs, oh->n_objs, sizeof *oh->objs);
    w_u64(w, oh->n_ext);
    w_arr(w, oh->ext, oh->n_ext, 4);
    w_arr(w, oh->node_size, nn, 8);
    w_arr(w, oh->eoff, oh->eoff ? nn + 1 : 0, 8);
    w_u64(w, oh->n_edges);
    w_arr(w, oh->edges, oh->n_edges, sizeof *oh->edges);
    w_u64(w, oh->n_roots);
    w_arr(w, oh->roots, oh->n_roots, sizeof *oh->roots);
    w_u64(w, n_rd);
    w_arr(w, oh->root_dst, n_rd, 4);
    w_u64(w, oh->n_names);
    w_arr(w, oh->names, oh->n_names, sizeof *oh->names);
    w_arr(w, oh->own_off, oh->own_off ? (uint64_t)oh->n_objs + 1 : 0, 8);
    uint64_t n_own = oh->own_off ? oh->own_off[oh->n_objs] : 0;
    w_u64(w, n_own);
    w_arr(w, oh->own_blk, n_own, 4);
    w_arr(w, oh->blk_owner, oh->hg->n_blocks, 4);
    w_u64(w, oh->n_strs);
    for (uint32_t i = 0; i < oh->n_strs; i++) {
        w_str(w, oh->strs[i]);
    }
    w_graph(w, &oh->g);
    w_u64(w, oh->n_unreachable);
    w_u64(w, oh->unreachable_bytes);
}

/* Writes header + payload (body(w, ctx)) to path, whole or not at all (privfile.h). */
static int
write_file(const char *path, header_t *h, void (*body)(wr_t *, void *), void *ctx, lh_err_t *err)
{
    unsigned char hdr[HEADER_BYTES] = {0};
    lh_privfile_t pf;
    if (lh_privfile_open(&pf, path) < 0) {
        return lh_err_set(err, errno == ENOMEM ? LH_ENOMEM : LH_EIO, "%s: %s", path,
                          strerror(errno));
    }
    FILE *f = pf.f;
    wr_t w = {f, 0x6c68676964780001ull, 0, 0};
    if (fwrite(hdr, 1, sizeof hdr, f) != sizeof hdr) {
        w.bad = 1;
    }
    body(&w, ctx);
    h->payload_bytes = w.bytes;
    h->payload_hash = w.h;
    memcpy(hdr, h, sizeof *h);
    if (fflush(f) != 0 || fseek(f, 0, SEEK_SET) != 0 || fwrite(hdr, 1, sizeof hdr, f) != sizeof hdr) {
        w.bad = 1;
    }
    if (lh_privfile_commit(&pf, !w.bad) < 0) {
        return lh_err_set(err, LH_EIO, "%s: %s", path, strerror(errno));
    }
    return 0;
}

typedef struct wctx {
    lh_heapgraph_t *hg;
    const lh_objheap_t *oh;
    const char *note;
} wctx_t;

static void
body_catalog(wr_t *w, void *ctx)
{
    const wctx_t *c = ctx;
    w_snaps(w, c->hg->snaps, c->hg->n_snaps);
}

static void
body_snapshot(wr_t *w, void *ctx)
{
    const wctx_t *c = ctx;
    w_heapgraph(w, c->hg, c->oh);
    w_str(w, c->note ? c->note : "");
    w_u64(w, c->oh != NULL);
    if (c->oh) {
        w_objheap(w, c->oh);
    }
}

int
lh_gindex_write(lh_heapgraph_t *hg, const lh_objheap_t *oh, const char *note,
                const lh_gindex_opts_t *o, lh_err_t *err)
{
    header_t h;
    wctx_t c = {hg, oh, note};
    char *cat = index_path(hg->trace_path, -1), *snap = index_path(hg->trace_path, (long)hg->cur);
    int rc = 0;
    if (!cat || !snap) {
        rc = lh_err_set(err, LH_EIO, "%s: no place for its index (its directory is not "
                        "writable and there is no usable cache directory)", hg->trace_path);
    } else if (expected_header(hg->trace_path, o, KIND_SNAPSHOT, hg->snaps, (long)hg->cur,
                               &h) < 0) {
        rc = lh_err_set(err, LH_EIO, "%s: cannot read it back", hg->trace_path);
    } else if ((rc = write_file(snap, &h, body_snapshot, &c, err)) == 0) {
        expected_header(hg->trace_path, o, KIND_CATALOG, NULL, -1, &h);
        rc = write_file(cat, &h, body_catalog, &c, err);
    }
    free(cat);
    free(snap);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * Reading: every count against the bytes left, every index against its range
 * ------------------------------------------------------------------------------------- */

typedef struct rd {
    int fd;
    unsigned char *buf;       /* RD_BUF bytes: buf[pos .. len) not yet consumed */
    size_t pos, len;
    uint64_t n, off;          /* the file's size; bytes consumed, header included */
    uint64_t h, want_hash;
    int bad;
} rd_t;

#define RD_BUF 65536

/* Copies the next n bytes of the file to dst: through the buffer, large ones read
 * straight into dst (no second copy of the big arrays). */
static int
r_copy(rd_t *r, unsigned char *dst, size_t n)
{
    while (n > 0) {
        if (r->pos < r->len) {
            size_t k = r->len - r->pos < n ? r->len - r->pos : n;
            memcpy(dst, r->buf + r->pos, k);
            r->pos += k;
            dst += k;
            n -= k;
            continue;
        }
        int direct = n >= RD_BUF;
        ssize_t k = read(r->fd, direct ? dst : r->buf, direct ? n : RD_BUF);
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k <= 0) {
            return -1;
        }
        if (direct) {
            dst += k;
            n -= (size_t)k;
        } else {
            r->pos = 0;
            r->len = (size_t)k;
        }
    }
    return 0;
}

/* The next n bytes (then the padding to 8) into dst, checksummed. Returns 0, or -1 (and
 * r->bad) when the file has fewer. */
static int
r_get(rd_t *r, void *dst, uint64_t n)
{
    unsigned char pad[8];
    uint64_t np = (8 - n % 8) % 8;
    if (r->bad || n > r->n - r->off || n + np > r->n - r->off ||
        r_copy(r, dst, (size_t)n) < 0 || r_copy(r, pad, (size_t)np) < 0) {
        r->bad = 1;
        return -1;
    }
    r->h = hash_bytes(r->h, dst, (size_t)n);
    r->off += n + np;
    return 0;
}

static uint64_t
r_u64(rd_t *r)
{
    uint64_t v = 0;
    return r_get(r, &v, 8) == 0 ? v : 0;
}

/* A u64 that must be <= max. */
static uint64_t
r_count(rd_t *r, uint64_t max)
{
    uint64_t v = r_u64(r);
    if (v > max) {
        r->bad = 1;
        return 0;
    }
    return v;
}

/* An array of exactly count elements (or absent, when may_be_absent). */
static void *
r_arr(rd_t *r, uint64_t count, size_t elsize, int may_be_absent)
{
    uint64_t present = r_u64(r), bytes = r_u64(r);
    if (r->bad) {
        return NULL;
    }
    if (!present) {
        if (bytes || !may_be_absent) {
            r->bad = 1;
        }
        return NULL;
    }
    if (count > (r->n - r->off) / elsize || bytes != count * elsize) {
        r->bad = 1;
        return NULL;
    }
    void *v = malloc(bytes ? (size_t)bytes : 1);
    if (!v || r_get(r, v, bytes) < 0) {
        free(v);
        r->bad = 1;
        return NULL;
    }
    return v;
}

/* A string (NULL allowed when may_be_null). */
static char *
r_str(rd_t *r, int may_be_null)
{
    uint64_t n1 = r_u64(r);
    if (r->bad || (n1 == 0 && !may_be_null)) {
        r->bad = 1;
        return NULL;
    }
    if (n1 == 0) {
        return NULL;
    }
    char *s = n1 - 1 <= r->n - r->off ? malloc((size_t)n1) : NULL;
    if (!s || r_get(r, s, n1 - 1) < 0) {
        free(s);
        r->bad = 1;
        return NULL;
    }
    s[n1 - 1] = '\0';
    return s;
}

static int
offsets_ok(const uint64_t *off, uint64_t n, uint64_t total)
{
    if (!off || off[0] != 0 || off[n] != total) {
        return 0;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (off[i] > off[i + 1]) {
            return 0;
        }
    }
    return 1;
}

static int
nodes_ok(const uint32_t *v, uint64_t n, uint32_t limit, uint32_t mask)
{
    for (uint64_t i = 0; i < n; i++) {
        if ((v[i] & ~mask) >= limit) {
            return 0;
        }
    }
    return 1;
}

/* Every idom chain ends at the super-root (or a node without one): no cycle. */
static int
idom_ok(const uint32_t *idom, uint32_t n, uint32_t super)
{
    uint8_t *st = calloc(n ? n : 1, 1); /* 0 new, 1 on the current chain, 2 ends well */
    int ok = st != NULL;
    for (uint32_t v = 0; ok && v < n; v++) {
        uint32_t u = v;
        while (u < n && u != super && st[u] == 0) {
            st[u] = 1;
            u = idom[u];
        }
        if (u < n && u != super && st[u] == 1) {
            ok = 0;
        }
        for (u = v; u < n && st[u] == 1; u = idom[u]) {
            st[u] = 2;
        }
    }
    free(st);
    return ok;
}

static void
r_graph(rd_t *r, lh_refgraph_t *g, uint32_t n_blocks, uint32_t n_roots)
{
    memset(g, 0, sizeof *g);
    g->n_blocks = (uint32_t)r_count(r, UINT32_MAX);
    g->n_roots = (uint32_t)r_count(r, UINT32_MAX);
    g->n_nodes = (uint32_t)r_count(r, LH_REFGRAPH_MAX_NODES);
    g->super = (uint32_t)r_count(r, UINT32_MAX);
    g->n_edges = r_count(r, r->n);
    g->n_strong = r_u64(r);
    g->n_interior = r_u64(r);
    int built = g->n_nodes != 0;
    uint64_t nn = g->n_nodes;
    if (r->bad || (built && (g->n_blocks != n_blocks || g->n_roots != n_roots ||
                             nn != (uint64_t)n_blocks + n_roots + 1 || g->super != nn - 1)) ||
        (!built && (g->n_edges || g->n_blocks || g->n_roots))) {
        r->bad = 1;
        return;
    }
    g->off = r_arr(r, built ? nn + 1 : 0, 8, !built);
    g->dst = r_arr(r, g->n_edges, 4, !built);
    g->roff = r_arr(r, built ? nn + 1 : 0, 8, !built);
    g->rsrc = r_arr(r, g->n_edges, 4, !built);
    g->cls = r_arr(r, g->n_blocks, 1, 1);
    g->idom = r_arr(r, nn, 4, 1);
    g->retained = r_arr(r, nn, 8, 1);
    if (r->bad || !built) {
        return;
    }
    if (!offsets_ok(g->off, nn, g->n_edges) || !offsets_ok(g->roff, nn, g->n_edges) ||
        !nodes_ok(g->dst, g->n_edges, g->super, LH_EDGE_INTERIOR) ||
        !nodes_ok(g->rsrc, g->n_edges, g->super, LH_EDGE_INTERIOR) ||
        (g->idom && !idom_ok(g->idom, g->n_nodes, g->super))) {
        r->bad = 1;
        return;
    }
    for (uint32_t v = 0; g->cls && v < g->n_blocks; v++) {
        if (g->cls[v] >= LH_CLASS_COUNT) {
            r->bad = 1;
        }
    }
    for (uint32_t v = 0; g->idom && v < g->n_nodes; v++) {
        if (g->idom[v] >= g->n_nodes && g->idom[v] != LH_NODE_NONE) {
            r->bad = 1;
        }
    }
}

static lh_snapinfo_t *
r_snaps(rd_t *r, size_t *n_out)
{
    uint64_t n = r_count(r, (r->n - r->off) / 64);
    lh_snapinfo_t *v = calloc(n ? (size_t)n : 1, sizeof *v);
    *n_out = 0;
    if (!v) {
        r->bad = 1;
        return NULL;
    }
    for (uint64_t i = 0; i < n && !r->bad; i++) {
        lh_snapinfo_t *s = &v[i];
        uint64_t f[8] = {0};
        r_get(r, f, sizeof f);
        s->number = f[0];
        s->trigger = (uint8_t)f[1];
        s->mode = (uint8_t)f[2];
        s->ts_ns = f[3];
        s->pause_ns = f[4];
        s->live_blocks = f[5];
        s->live_bytes = f[6];
        s->label = r_str(r, 0);
        s->file = r_str(r, 1);
        *n_out = (size_t)i + 1;
    }
    if (n == 0) {
        r->bad = 1;
    }
    return v;
}

void
lh_gindex_snaps_free(lh_snapinfo_t *snaps, size_t n)
{
    for (size_t i = 0; snaps && i < n; i++) {
        free(snaps[i].label);
        free(snaps[i].file);
    }
    free(snaps);
}

/* A site; its frames and their strings in one allocation (lh_site_fini frees it). */
static lh_site_t *
r_site(rd_t *r)
{
    uint64_t sid = r_count(r, UINT32_MAX), has = r_u64(r), loc = r_u64(r);
    uint64_t nf = r_count(r, (r->n - r->off) / 64);
    lh_site_t *s = r->bad ? NULL : calloc(1, sizeof *s);
    if (!s) {
        r->bad = 1;
        return NULL;
    }
    s->stack_id = (uint32_t)sid;
    s->has_stack = has != 0;
    s->location = (long)loc;
    s->user_frame = -1;
    if (s->location < -1 || (s->location >= 0 && (uint64_t)s->location >= nf)) {
        r->bad = 1;
    }
    /* First pass: sizes, by reading the frames into a temporary copy. */
    lh_frame_t *fr = calloc(nf ? (size_t)nf : 1, sizeof *fr);
    char **strs = calloc(nf ? (size_t)nf * 3 : 1, sizeof *strs);
    size_t total = 0;
    for (uint64_t i = 0; fr && strs && i < nf && !r->bad; i++) {
        uint64_t v[5] = {0};
        r_get(r, v, sizeof v);
        fr[i].line = (uint32_t)v[0];
        fr[i].ip = v[1];
        fr[i].offset = v[2];
        fr[i].inlined = (int)v[3];
        fr[i].lang = (int)v[4];
        for (int k = 0; k < 3; k++) {
            strs[i * 3 + k] = r_str(r, 1);
            total += strs[i * 3 + k] ? strlen(strs[i * 3 + k]) + 1 : 0;
        }
    }
    char *blob = !r->bad && fr && strs ? malloc((size_t)nf * sizeof *fr + total + 1) : NULL;
    if (blob) {
        char *sp = blob + nf * sizeof *fr;
        for (uint64_t i = 0; i < nf; i++) {
            const char **dst[3] = {&fr[i].function, &fr[i].file, &fr[i].module};
            for (int k = 0; k < 3; k++) {
                const char *src = strs[i * 3 + k];
                *dst[k] = NULL;
                if (src) {
                    size_t l = strlen(src) + 1;
                    memcpy(sp, src, l);
                    *dst[k] = sp;
                    sp += l;
                }
            }
        }
        memcpy(blob, fr, (size_t)nf * sizeof *fr);
        s->frames = (lh_frame_t *)(void *)blob;
        s->n_frames = (size_t)nf;
        s->user_frame = lh_site_user_frame(s->frames, s->n_frames); /* derived: not stored */
    } else {
        r->bad = 1;
    }
    lh_strv_free(strs, (size_t)nf * 3);
    free(fr);
    return s;
}

static void
free_site(lh_site_t *s)
{
    if (s) {
        lh_site_fini(s);
        free(s);
    }
}

static int
r_heapgraph(rd_t *r, lh_heapgraph_t *hg, lh_gindex_info_t *info)
{
    hg->snaps = r_snaps(r, &hg->n_snaps);
    hg->cur = (size_t)r_count(r, hg->n_snaps ? hg->n_snaps - 1 : 0);
    hg->epoch = r_u64(r);
    info->attach_how = r_u64(r);
    hg->attach_how = info->attach_how;
    info->has_clock = (int)r_count(r, 1);
    info->mono_start_ns = r_u64(r);
    hg->n_blocks = (uint32_t)r_count(r, LH_REFGRAPH_MAX_NODES);
    hg->live_bytes = r_u64(r);
    hg->blocks = r_arr(r, hg->n_blocks, sizeof *hg->blocks, 0);
    uint64_t nt = r_count(r, r->n - r->off);
    hg->types = calloc(nt ? (size_t)nt : 1, sizeof *hg->types); /* 0: no tags */
    if (!hg->types) {
        r->bad = 1;
        return -1;
    }
    for (uint64_t i = 1; i < nt && !r->bad; i++) {
        hg->types[i] = r_str(r, 0);
        hg->n_types = (uint32_t)i + 1;
    }
    hg->has_graph = (int)r_count(r, 1);
    hg->no_graph_code = (lh_graph_why_t)r_count(r, LH_GRAPH_NOT_ASKED);
    char *why = r_str(r, 0);
    if (why) {
        snprintf(hg->no_graph_why, sizeof hg->no_graph_why, "%s", why);
        free(why);
    }
    hg->sf.n_words = (size_t)r_count(r, r->n);
    hg->sf.words = r_arr(r, hg->sf.n_words, sizeof *hg->sf.words, 1);
    hg->sf.n_hdr = (size_t)r_count(r, r->n);
    hg->sf.hdr = r_arr(r, hg->sf.n_hdr, sizeof *hg->sf.hdr, 1);
    uint64_t nr = r_count(r, (r->n - r->off) / 16);
    hg->roots = calloc(nr ? (size_t)nr : 1, sizeof *hg->roots);
    if (!hg->roots || nr + hg->n_blocks >= LH_REFGRAPH_MAX_NODES) {
        r->bad = 1;
        return -1;
    }
    for (uint64_t i = 0; i < nr && !r->bad; i++) {
        lh_hroot_t *rt = &hg->roots[i];
        hg->n_roots = (uint32_t)i + 1;
        rt->kind = (uint8_t)r_count(r, LH_ROOT_MAPPED);
        rt->start = r_u64(r);
        rt->name = r_str(r, 0);
        rt->file = r_str(r, 1);
        rt->module = r_str(r, 1);
    }
    hg->root_woff = r_arr(r, nr + 1, 8, 1);
    uint64_t n_rw = r_count(r, r->n);
    hg->root_words = r_arr(r, n_rw, 4, 1);
    r_graph(r, &hg->g, hg->n_blocks, hg->n_roots);
    r_get(r, hg->class_blocks, sizeof hg->class_blocks);
    r_get(r, hg->class_bytes, sizeof hg->class_bytes);
    hg->n_words_ignored = r_u64(r);
    hg->heuristics = (unsigned)r_count(r, LH_HEUR_ALL);
    hg->via_heur = r_arr(r, hg->n_blocks, 1, 1);
    hg->start_ref = r_arr(r, hg->n_blocks, 1, 1);
    r_get(r, hg->heur_blocks, sizeof hg->heur_blocks);
    r_get(r, hg->heur_bytes, sizeof hg->heur_bytes);
    if (r->bad) {
        return -1;
    }
    /* Cross-checks: what the commands index with these values. */
    for (uint32_t b = 0; b < hg->n_blocks; b++) {
        if (hg->blocks[b].type && hg->blocks[b].type >= hg->n_types) {
            return r->bad = 1, -1;
        }
    }
    if (hg->root_words && (!hg->root_woff || !offsets_ok(hg->root_woff, nr, n_rw) ||
                           !nodes_ok(hg->root_words, n_rw, (uint32_t)hg->sf.n_words, 0))) {
        return r->bad = 1, -1;
    }
    if (hg->has_graph && (!hg->g.n_nodes || !hg->g.cls || !hg->g.idom || !hg->g.retained ||
                          !hg->root_woff || !hg->root_words || !hg->via_heur ||
                          !hg->start_ref)) {
        return r->bad = 1, -1;
    }
    if (hg->n_blocks) {
        hg->g.size = &hg->blocks[0].size;
        hg->g.size_stride = sizeof(lh_hblock_t) / sizeof(uint64_t);
    }
    /* Sites: every block's stack must have one (a loaded graph cannot symbolize). */
    uint64_t ns = r_count(r, (r->n - r->off) / 32);
    for (uint64_t i = 0; i < ns && !r->bad; i++) {
        lh_site_t *s = r_site(r);
        if (!s || r->bad || (s->stack_id < hg->n_sites && hg->sites[s->stack_id])) {
            free_site(s);
            return r->bad = 1, -1;
        }
        if (s->stack_id >= hg->n_sites) {
            size_t n = (size_t)s->stack_id + 64;
            lh_site_t **v = realloc(hg->sites, n * sizeof *v);
            if (!v) {
                free_site(s);
                return r->bad = 1, -1;
            }
            memset(v + hg->n_sites, 0, (n - hg->n_sites) * sizeof *v);
            hg->sites = v;
            hg->n_sites = n;
        }
        hg->sites[s->stack_id] = s;
    }
    for (uint32_t b = 0; b < hg->n_blocks && !r->bad; b++) {
        uint32_t sid = hg->blocks[b].stack_id;
        if (sid >= hg->n_sites || !hg->sites[sid]) {
            r->bad = 1;
        }
    }
    return r->bad ? -1 : 0;
}

static int
r_objheap(rd_t *r, lh_objheap_t *oh)
{
    lh_heapgraph_t *hg = oh->hg;
    oh->lang = (uint8_t)r_count(r, LH_OBJLANG_PYTHON);
    r_get(r, oh->version, sizeof oh->version);
    oh->version[sizeof oh->version - 1] = '\0';
    char *note = r_str(r, 0);
    if (note) {
        snprintf(oh->note, sizeof oh->note, "%s", note);
        free(note);
    }
    oh->needs_full = (int)r_count(r, 1);
    oh->collector_off = (uint8_t)r_count(r, 2);
    oh->n_objs = (uint32_t)r_count(r, LH_REFGRAPH_MAX_NODES);
    oh->objs = r_arr(r, oh->n_objs, sizeof *oh->objs, 1);
    oh->n_ext = (uint32_t)r_count(r, LH_REFGRAPH_MAX_NODES - oh->n_objs);
    oh->ext = r_arr(r, oh->n_ext, 4, 1);
    uint64_t nn = (uint64_t)oh->n_objs + oh->n_ext;
    oh->node_size = r_arr(r, nn, 8, 1);
    oh->eoff = r_arr(r, nn + 1, 8, 1);
    oh->n_edges = r_count(r, r->n);
    oh->edges = r_arr(r, oh->n_edges, sizeof *oh->edges, 1);
    oh->n_roots = (uint32_t)r_count(r, LH_REFGRAPH_MAX_NODES - nn - 1);
    oh->roots = r_arr(r, oh->n_roots, sizeof *oh->roots, 1);
    uint64_t n_rd = r_count(r, r->n);
    oh->root_dst = r_arr(r, n_rd, 4, 1);
    oh->n_names = (size_t)r_count(r, r->n);
    oh->names = r_arr(r, oh->n_names, sizeof *oh->names, 1);
    oh->own_off = r_arr(r, (uint64_t)oh->n_objs + 1, 8, 1);
    uint64_t n_own = r_count(r, r->n);
    oh->own_blk = r_arr(r, n_own, 4, 1);
    oh->blk_owner = r_arr(r, hg->n_blocks, 4, 1);
    uint64_t n_strs = r_count(r, r->n - r->off);
    if (r->bad || n_strs == 0 || !(oh->strs = calloc((size_t)n_strs, sizeof *oh->strs))) {
        return r->bad = 1, -1;
    }
    for (uint64_t i = 0; i < n_strs && !r->bad; i++) {
        oh->strs[i] = r_str(r, 0);
        oh->n_strs = (uint32_t)i + 1;
    }
    r_graph(r, &oh->g, (uint32_t)nn, oh->n_roots);
    oh->n_unreachable = r_u64(r);
    oh->unreachable_bytes = r_u64(r);
    if (r->bad) {
        return -1;
    }
    /* Cross-checks. */
    uint32_t ns = oh->n_strs;
    int ok = (!oh->n_objs || (oh->objs && oh->node_size && oh->eoff && oh->own_off &&
                              oh->blk_owner && oh->g.n_nodes && oh->g.cls && oh->g.idom &&
                              oh->g.retained)) &&
             (!oh->n_ext || oh->ext) && (!oh->n_edges || oh->edges) &&
             (!oh->n_roots || oh->roots) && (!n_rd || oh->root_dst) &&
             (!oh->n_names || oh->names) && (!n_own || oh->own_blk);
    ok = ok && (!oh->eoff || offsets_ok(oh->eoff, nn, oh->n_edges)) &&
         (!oh->own_off || offsets_ok(oh->own_off, oh->n_objs, n_own)) &&
         (!oh->ext || nodes_ok(oh->ext, oh->n_ext, hg->n_blocks, 0)) &&
         (!oh->own_blk || nodes_ok(oh->own_blk, n_own, hg->n_blocks, 0)) &&
         (!oh->root_dst || nodes_ok(oh->root_dst, n_rd, (uint32_t)nn, 0));
    for (uint32_t v = 0; ok && v < oh->n_objs; v++) {
        const lh_obj_t *o = &oh->objs[v];
        uint32_t sid = o->stack_id;
        ok = o->kind < ns && o->cls < ns && o->name < ns && o->detail < ns &&
             sid < hg->n_sites && hg->sites[sid];
    }
    for (uint64_t i = 0; ok && i < oh->n_edges; i++) {
        const lh_objedge_t *e = &oh->edges[i];
        ok = e->dst < nn && e->kind >= LH_OBJEDGE_ELEM && e->kind <= LH_OBJEDGE_XS &&
             (e->kind == LH_OBJEDGE_ELEM || e->label < ns);
    }
    for (uint32_t i = 0; ok && i < oh->n_roots; i++) {
        const lh_objroot_t *rt = &oh->roots[i];
        ok = rt->name < ns && rt->first <= n_rd && rt->n <= n_rd - rt->first;
    }
    for (size_t i = 0; ok && i < oh->n_names; i++) {
        ok = oh->names[i].node < oh->n_objs && oh->names[i].name < ns;
    }
    for (uint32_t b = 0; ok && oh->blk_owner && b < hg->n_blocks; b++) {
        uint32_t o = oh->blk_owner[b];
        ok = o < oh->n_objs || o == LH_OBJOWN_ARENA || o == LH_OBJOWN_NONE;
    }
    if (!ok) {
        return r->bad = 1, -1;
    }
    if (oh->node_size) {
        oh->g.size = oh->node_size;
        oh->g.size_stride = 1;
    }
    return 0;
}

/* Opens path for reading into r when its header is the one wanted (payload fields
 * aside). Returns 0, or -1 (nothing open). */
static int
open_index(const char *path, const header_t *want, rd_t *r)
{
    struct stat sb;
    header_t h;
    unsigned char hdr[HEADER_BYTES];
    memset(r, 0, sizeof *r);
    r->fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (r->fd < 0) {
        return -1;
    }
    if (fstat(r->fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() ||
        (uint64_t)sb.st_size < HEADER_BYTES || !(r->buf = malloc(RD_BUF)) ||
        r_copy(r, hdr, sizeof hdr) < 0) {
        goto fail;
    }
    memcpy(&h, hdr, sizeof h);
    r->n = (uint64_t)sb.st_size;
    r->off = HEADER_BYTES;
    r->h = 0x6c68676964780001ull;
    r->want_hash = h.payload_hash;
    uint64_t payload = h.payload_bytes;
    h.payload_bytes = h.payload_hash = 0;
    if (memcmp(&h, want, sizeof h) != 0 || payload != r->n - HEADER_BYTES) {
        goto fail;
    }
    return 0;
fail:
    close(r->fd);
    free(r->buf);
    r->buf = NULL;
    return -1;
}

static void
close_index(rd_t *r)
{
    if (r->buf) {
        close(r->fd);
        free(r->buf);
        r->buf = NULL;
    }
}

/* Everything read, nothing left, the checksum right. */
static int
payload_ok(const rd_t *r)
{
    return !r->bad && r->off == r->n && r->h == r->want_hash;
}

int
lh_gindex_read_catalog(const char *trace_path, const lh_gindex_opts_t *o,
                       lh_snapinfo_t **snaps, size_t *n)
{
    header_t want;
    rd_t r;
    char *path = index_path(trace_path, -1);
    int opened = 0;
    *snaps = NULL;
    *n = 0;
    if (path && expected_header(trace_path, o, KIND_CATALOG, NULL, -1, &want) == 0) {
        opened = open_index(path, &want, &r) == 0;
    }
    free(path);
    if (!opened) {
        return 0;
    }
    lh_snapinfo_t *v = r_snaps(&r, n);
    int ok = payload_ok(&r);
    close_index(&r);
    if (!ok) {
        lh_gindex_snaps_free(v, *n);
        *n = 0;
        return 0;
    }
    *snaps = v;
    return 1;
}

long
lh_gindex_default_snapshot(const lh_snapinfo_t *snaps, size_t n)
{
    for (size_t i = n; i-- > 0;) {
        if (snaps[i].trigger == LH_SNAP_EXIT) {
            return (long)i;
        }
    }
    return (long)n - 1;
}

int
lh_gindex_load(const char *trace_path, const lh_gindex_opts_t *o, long idx,
               lh_heapgraph_t **hgp, lh_objheap_t **ohp, char **note, lh_gindex_info_t *info)
{
    lh_snapinfo_t *snaps = NULL;
    size_t n_snaps = 0;
    header_t want;
    rd_t r = {0};
    char *path = NULL;
    lh_heapgraph_t *hg = NULL;
    lh_objheap_t *oh = NULL;
    *hgp = NULL;
    *ohp = NULL;
    *note = NULL;
    /* The contents file's key needs the snapshot's record: from the catalog. */
    if (!lh_gindex_read_catalog(trace_path, o, &snaps, &n_snaps) || idx < 0 ||
        (size_t)idx >= n_snaps || !(path = index_path(trace_path, idx)) ||
        expected_header(trace_path, o, KIND_SNAPSHOT, snaps, idx, &want) < 0 ||
        open_index(path, &want, &r) < 0) {
        goto fail;
    }
    if (!(hg = calloc(1, sizeof *hg)) || !(hg->trace_path = strdup(trace_path))) {
        goto fail;
    }
    r_heapgraph(&r, hg, info);
    *note = r_str(&r, 0);
    if (r_count(&r, 1) && !r.bad) {
        if (!(oh = calloc(1, sizeof *oh))) {
            goto fail;
        }
        oh->hg = hg;
        r_objheap(&r, oh);
    }
    if (!payload_ok(&r) || hg->cur != (size_t)idx) {
        goto fail;
    }
    close_index(&r);
    lh_gindex_snaps_free(snaps, n_snaps);
    free(path);
    *hgp = hg;
    *ohp = oh;
    return 1;
fail:
    close_index(&r);
    lh_gindex_snaps_free(snaps, n_snaps);
    free(path);
    free(*note);
    *note = NULL;
    lh_objheap_free(oh);
    lh_heapgraph_free(hg);
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Attaching the trace
 * ------------------------------------------------------------------------------------- */

int
lh_gindex_attach(lh_heapgraph_t *hg, int salvage, lh_err_t *err)
{
    lh_stream_opts_t sto = {salvage, NULL, 0, NULL, NULL};
    lh_sym_opts_t so = {0};
    int rc;
    if (hg->trace) {
        return 0;
    }
    if ((rc = lh_stream_run(hg->trace_path, &sto, &hg->trace, NULL, err)) < 0) {
        return rc;
    }
    so.exe_path = lh_trace_parts(hg->trace)->info.exe;
    if ((rc = lh_sym_new(&lh_trace_parts(hg->trace)->modules, &so, &hg->sym, err)) < 0 ||
        (rc = lh_datasym_new(&lh_trace_parts(hg->trace)->modules, so.exe_path, &hg->ds, err)) < 0) {
        lh_datasym_free(hg->ds);
        lh_sym_free(hg->sym);
        lh_trace_close(hg->trace);
        hg->ds = NULL;
        hg->sym = NULL;
        hg->trace = NULL;
        return rc;
    }
    return 0;
}

void
lh_gindex_info_of(const lh_heapgraph_t *hg, lh_gindex_info_t *info)
{
    const lh_trace_info_t *in = &lh_trace_parts(hg->trace)->info;
    info->attach_how = in->attach_how;
    info->has_clock = in->has_clock;
    info->mono_start_ns = in->mono_start_ns;
}
