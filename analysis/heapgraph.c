/* leakhound - SPDX-License-Identifier: MIT
 *
 * heapgraph.c: a snapshot's live set (from the trace) and reference graph (from its .lhs
 * file): holders, targets, roots, types, then refgraph's classification and dominators.
 */
#include "heapgraph.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "replay.h"
#include "boundary.h"
#include "addrmap.h"
#include "bound.h"
#include "dupstr.h"
#include "grow.h"
#include "hash.h"
#include "prefetch.h"
#include "stream.h"

typedef struct tag {
    uint64_t addr, ts_ns;
    uint32_t type;
} tag_t;

/* What the pass captures besides an index (LH_HG_EXIT_CONTENTS is the third). */
#define WANT_EXIT (-1)    /* the exit snapshot (the last one) */
#define WANT_NONE (-3)    /* nothing: the list only */

/* State of the pass over the trace. */
struct lh_hgpass {
    long want;            /* snapshot index to capture, or WANT_* */
    long captured;        /* index captured, -1: none */
    tag_t *tags;
    size_t n_tags, cap_tags, tags_at_capture;
    size_t cap_snaps;
    uint64_t epoch;       /* of the newest module event */
    lh_heapgraph_t *hg;
};
typedef struct lh_hgpass pass_t;

/* ---------------------------------------------------------------------------------------
 * Small helpers
 * ------------------------------------------------------------------------------------- */

static const char *
base_name(const char *path)
{
    const char *b = path ? strrchr(path, '/') : NULL;
    return b ? b + 1 : path ? path : "";
}

/* Interns a type name; returns its index (>= 1), or 0 when out of memory. */
static uint32_t
intern_type(lh_heapgraph_t *hg, const char *s, size_t n)
{
    for (uint32_t i = 1; i < hg->n_types; i++) {
        if (strlen(hg->types[i]) == n && memcmp(hg->types[i], s, n) == 0) {
            return i;
        }
    }
    if (hg->n_types == 0) {
        hg->n_types = 1; /* index 0: none */
    }
    char *c = NULL;
    if (lh_grow(&hg->types, &hg->cap_types, hg->n_types, sizeof *hg->types, 16) < 0 ||
        !(c = lh_dupstr(s, n))) {
        return 0;
    }
    hg->types[0] = NULL;
    hg->types[hg->n_types] = c;
    return hg->n_types++;
}

static long
resolve(const lh_snapinfo_t *snaps, size_t n, const char *spec, int for_to)
{
    return lh_bound_find_in(snaps, n, sizeof *snaps, offsetof(lh_snapinfo_t, label), spec,
                            for_to);
}

long
lh_heapgraph_find_snapshot(const lh_snapinfo_t *snaps, size_t n, const char *sel, int for_to)
{
    char nth[32];
    if (!sel || !*sel) {
        return -1;
    }
    long found = resolve(snaps, n, sel, for_to);
    if (found < 0 && strspn(sel, "0123456789") == strlen(sel) && strlen(sel) < 20) {
        snprintf(nth, sizeof nth, "#%s", sel); /* the shell's shorthand: N is #N */
        found = resolve(snaps, n, nth, for_to);
    }
    return found;
}

/* ---------------------------------------------------------------------------------------
 * The pass over the trace: snapshot list, live set at the chosen one, tags
 * ------------------------------------------------------------------------------------- */

static int
add_snapshot(lh_heapgraph_t *hg, pass_t *ps, const lh_event_t *ev, const lh_replay_t *r)
{
    lh_snapinfo_t *s = lh_push_zeroed(&hg->snaps, &ps->cap_snaps, hg->n_snaps, sizeof *s, 16);
    if (!s) {
        return LH_ENOMEM;
    }
    s->number = ev->addr;
    s->trigger = ev->kind;
    s->ts_ns = ev->ts_ns;
    s->pause_ns = ev->size;
    s->mode = ev->file && ev->epoch <= LH_CONTENTS_FULL ? (uint8_t)ev->epoch : LH_CONTENTS_NONE;
    s->live_blocks = lh_replay_totals(r)->heap_blocks;
    s->live_bytes = lh_replay_totals(r)->heap_bytes;
    if (!(s->label = lh_dupstr(ev->label, ev->label_len)) ||
        (ev->file && !(s->file = strdup(ev->file)))) {
        free(s->label);
        return LH_ENOMEM;
    }
    hg->n_snaps++;
    return 0;
}

static int
capture(lh_heapgraph_t *hg, pass_t *ps, const lh_replay_t *r, uint64_t epoch)
{
    size_t n = (size_t)lh_replay_totals(r)->heap_blocks;
    size_t cursor = 0, k = 0;
    lh_live_block_t b;
    if (n >= LH_REFGRAPH_MAX_NODES - (1u << 20)) {
        return LH_EINVAL;
    }
    free(hg->blocks);
    hg->blocks = malloc((n ? n : 1) * sizeof *hg->blocks);
    if (!hg->blocks) {
        return LH_ENOMEM;
    }
    hg->live_bytes = 0;
    while (k < n && lh_replay_live_next(r, &cursor, &b)) {
        hg->blocks[k++] = (lh_hblock_t){b.addr, b.size, b.ts_ns, b.stack_id, 0};
        hg->live_bytes += b.size;
    }
    hg->n_blocks = (uint32_t)k;
    hg->epoch = epoch;
    ps->tags_at_capture = ps->n_tags;
    ps->captured = (long)hg->n_snaps - 1;
    return 0;
}

static int
add_tag(lh_heapgraph_t *hg, pass_t *ps, const lh_event_t *ev)
{
    uint32_t type = intern_type(hg, ev->label, ev->label_len);
    if (!type) {
        return LH_ENOMEM;
    }
    if (lh_grow(&ps->tags, &ps->cap_tags, ps->n_tags, sizeof *ps->tags, 64) < 0) {
        return LH_ENOMEM;
    }
    ps->tags[ps->n_tags++] = (tag_t){ev->addr, ev->ts_ns, type};
    return 0;
}

/* The graph's consumer of the one pass (stream.h). */
static int
on_event(void *ctx, const lh_trace_t *t, const lh_replay_t *r, const lh_event_t *ev,
         lh_err_t *err)
{
    pass_t *ps = ctx;
    lh_heapgraph_t *hg = ps->hg;
    int rc = 0;
    (void)t;
    if ((ev->type == LH_REC_MODULE || ev->type == LH_REC_MODULE_UNLOAD) && ev->epoch > ps->epoch) {
        ps->epoch = ev->epoch;
    } else if (ev->type == LH_REC_TAG && ev->addr) {
        rc = add_tag(hg, ps, ev);
    } else if (ev->type == LH_REC_SNAPSHOT) {
        rc = add_snapshot(hg, ps, ev, r);
        long idx = (long)hg->n_snaps - 1;
        int at_exit = ev->kind == LH_SNAP_EXIT;
        if (rc == 0 && (ps->want == idx || (ps->want == WANT_EXIT && at_exit) ||
                        (ps->want == LH_HG_EXIT_CONTENTS && at_exit &&
                         hg->snaps[idx].mode != LH_CONTENTS_NONE))) {
            rc = capture(hg, ps, r, ps->epoch);
        }
    }
    if (rc == LH_EINVAL) {
        return lh_err_set(err, rc, "%s: too many live blocks for the graph", hg->trace_path);
    }
    if (rc < 0) {
        return lh_err_set(err, rc, "%s: out of memory reading the snapshots", hg->trace_path);
    }
    return 0;
}

/* The graph's own read of the trace (lh_heapgraph_open), which then owns it. */
static int
read_trace(lh_heapgraph_t *hg, int salvage, lh_err_t *err)
{
    pass_t *ps = hg->pass;
    lh_consumer_t me = {on_event, ps, 1};
    lh_stream_opts_t so = {salvage, &me, 1, NULL, NULL};
    lh_replay_t *r = NULL;
    lh_trace_close(hg->trace);
    hg->trace = NULL;
    LH_FREE_EACH2(hg->snaps, hg->n_snaps, lh_snapinfo_t, label, file);
    hg->snaps = NULL;
    hg->n_snaps = ps->cap_snaps = 0;
    ps->n_tags = 0;
    ps->captured = -1;
    ps->epoch = 0;
    int rc = lh_stream_run(hg->trace_path, &so, &hg->trace, &r, err);
    lh_replay_free(r);
    return rc;
}

/* Sorts the blocks by address: LSD radix sort, 16 bits a pass over the bits that vary
 * (3 passes for user-space addresses), with one temporary copy: far faster than qsort on
 * 10 million blocks in hash order. Falls back to qsort when the copy cannot be made. */
static void
sort_blocks(lh_hblock_t *v, size_t n)
{
    lh_hblock_t *tmp = n > 4096 ? malloc(n * sizeof *tmp) : NULL;
    size_t *count = tmp ? malloc(65536 * sizeof *count) : NULL;
    if (!count) {
        free(tmp);
        LH_SORT(v, n, lh_hblock_t, addr);
        return;
    }
    uint64_t all = 0;
    for (size_t i = 0; i < n; i++) {
        all |= v[i].addr;
    }
    lh_hblock_t *src = v, *dst = tmp;
    for (int shift = 0; shift < 64 && (all >> shift); shift += 16) {
        memset(count, 0, 65536 * sizeof *count);
        for (size_t i = 0; i < n; i++) {
            count[(src[i].addr >> shift) & 0xffff]++;
        }
        size_t sum = 0;
        for (size_t d = 0; d < 65536; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            dst[count[(src[i].addr >> shift) & 0xffff]++] = src[i];
        }
        lh_hblock_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != v) {
        memcpy(v, src, n * sizeof *v);
    }
    LH_FREE_ALL(count, tmp);
}

/* Tags of live blocks: the last one given after the block's allocation wins. */
static void
apply_tags(lh_heapgraph_t *hg, pass_t *ps)
{
    if (ps->tags_at_capture) { /* qsort's array must not be NULL, even when empty (UBSan) */
        LH_SORT2(ps->tags, ps->tags_at_capture, tag_t, addr, ts_ns);
    }
    for (size_t i = 0; i < ps->tags_at_capture; i++) {
        uint32_t b = lh_heapgraph_block_at(hg, ps->tags[i].addr);
        if (b != LH_NODE_NONE && hg->blocks[b].addr == ps->tags[i].addr &&
            ps->tags[i].ts_ns >= hg->blocks[b].ts_ns) {
            hg->blocks[b].type = ps->tags[i].type;
        }
    }
}

uint32_t
lh_heapgraph_block_at(const lh_heapgraph_t *hg, uint64_t addr)
{
    /* the first block starting after addr */
    size_t lo = LH_UPPER(hg->blocks, hg->n_blocks, lh_hblock_t, addr, addr);
    if (lo == 0) {
        return LH_NODE_NONE;
    }
    const lh_hblock_t *b = &hg->blocks[lo - 1];
    if (addr == b->addr || addr - b->addr < b->size) {
        return (uint32_t)(lo - 1);
    }
    return LH_NODE_NONE;
}

/* ---------------------------------------------------------------------------------------
 * Roots
 * ------------------------------------------------------------------------------------- */

#define ROOT_IGNORED (LH_NODE_NONE - 1) /* a data symbol that is not a root */

typedef struct root_map {
    lh_addrmap_t keys; /* key + 1 -> root (keys may be 0) */
    /* The last data symbol looked up, so the words of one array cost one lookup. */
    uint64_t sym_lo, sym_hi;
    uint32_t sym_root;
} root_map_t;

/* The key of a module's unnamed data region: its start, tagged apart from symbols' starts
 * (user-space addresses are below 2^57) and from thread roots' (bit 63). */
#define REGION_KEY (1ull << 62)

static int
map_put(root_map_t *m, uint64_t key, uint32_t val)
{
    return lh_addrmap_put(&m->keys, key + 1, val) < 0 ? LH_ENOMEM : 0;
}

static uint32_t
map_get(const root_map_t *m, uint64_t key)
{
    return lh_addrmap_get(&m->keys, key + 1, LH_NODE_NONE);
}

static uint32_t
new_root(lh_heapgraph_t *hg, root_map_t *m, uint64_t key, uint8_t kind, const char *name,
         const char *file, const char *module)
{
    lh_hroot_t *r = lh_push_zeroed(&hg->roots, &hg->cap_roots, hg->n_roots, sizeof *r, 16);
    if (!r) {
        return LH_NODE_NONE;
    }
    r->kind = kind;
    r->start = key;
    r->name = strdup(name);
    r->file = file ? strdup(file) : NULL;
    r->module = module ? strdup(module) : NULL;
    if (!r->name || map_put(m, key, hg->n_roots) < 0) {
        LH_FREE_ALL(r->name, r->file, r->module);
        return LH_NODE_NONE;
    }
    return hg->n_roots++;
}

/* A thread's root, named after its region: "[stack:TID]", "[stack:capture]", "[stack]",
 * "[tls:TID]", "[specific:TID]". One root per name: the agent cuts a thread's stack around
 * its TLS, so one name may come in several regions. */
static uint32_t
thread_root(lh_heapgraph_t *hg, root_map_t *m, const lh_region_t *rg)
{
    uint64_t key = lh_hash_str(rg->name) | 1ull << 63; /* tagged apart from addresses */
    uint32_t id = map_get(m, key);
    if (id != LH_NODE_NONE) {
        return id;
    }
    char name[300];
    uint64_t tid = 0;
    const char *what = "", *kind = "stack";
    uint8_t root_kind = LH_ROOT_STACK;
    if (strcmp(rg->name, "[stack:capture]") == 0) {
        tid = hg->sf.capture_tid;
        what = " (took the snapshot)";
    } else if (strcmp(rg->name, "[stack]") == 0) {
        tid = lh_trace_parts(hg->trace)->info.pid;
        what = " (main)";
    } else if (strncmp(rg->name, "[stack:", 7) == 0) {
        tid = strtoull(rg->name + 7, NULL, 10);
    } else if (strncmp(rg->name, "[tls:", 5) == 0) {
        tid = strtoull(rg->name + 5, NULL, 10);
        kind = "tls";
        root_kind = LH_ROOT_TLS;
    } else if (strncmp(rg->name, "[specific:", 10) == 0) {
        tid = strtoull(rg->name + 10, NULL, 10);
        kind = "specific data";
        root_kind = LH_ROOT_TLS;
    }
    if (tid) {
        const char *tn = lh_trace_thread_name(hg->trace, tid);
        snprintf(name, sizeof name, "[%s of thread %" PRIu64 "%s%s%s%s]", kind, tid,
                 tn ? " '" : "", tn ? tn : "", tn ? "'" : "", what);
    } else {
        snprintf(name, sizeof name, "[%s of a thread at 0x%" PRIx64 "]", kind, rg->start);
    }
    id = new_root(hg, m, key, root_kind, name, NULL, NULL);
    if (id != LH_NODE_NONE) {
        hg->roots[id].start = rg->start; /* its first region */
    }
    return id;
}

/* A mapping the program made itself (mmap): one root per mapping, "[mmap 0xSTART]". */
static uint32_t
mapped_root(lh_heapgraph_t *hg, root_map_t *m, const lh_region_t *rg)
{
    uint32_t id = map_get(m, rg->start);
    if (id == LH_NODE_NONE) {
        char name[40];
        snprintf(name, sizeof name, "[mmap 0x%" PRIx64 "]", rg->start);
        id = new_root(hg, m, rg->start, LH_ROOT_MAPPED, name, NULL, NULL);
    }
    return id;
}

/* glibc's malloc state: its "top" pointer points into the last block carved from the top
 * chunk (its header overlaps the block's last word), which would make that block look
 * referenced. Allocator metadata, never a program's reference: not a root. */
static int
is_allocator_state(const lh_dsym_t *ds)
{
    const char *m = base_name(ds->module);
    return strncmp(m, "libc.so", 7) == 0 &&
           (strcmp(ds->name, "main_arena") == 0 || strcmp(ds->name, "mp_") == 0);
}

static uint32_t
data_root(lh_heapgraph_t *hg, root_map_t *m, const lh_region_t *rg, uint64_t addr)
{
    if (m->sym_hi && addr >= m->sym_lo && addr < m->sym_hi) {
        return m->sym_root;
    }
    lh_dsym_t ds;
    /* Only a symbol with a size is a variable. One without is a label the linker put at a
     * section's edge (__data_start, data_start, _edata, __bss_start, _end): libdw calls
     * every later unnamed word of its section by it, the static variables of a stripped
     * program (lighttpd's) among them; they are the module's data. The region's key is
     * tagged apart from symbols' starts: a region that starts where a symbol does (.data
     * at a page's start, after RELRO) would otherwise share that symbol's root. */
    int found = lh_datasym_lookup(hg->ds, addr, hg->epoch, &ds) > 0 && ds.size > 0;
    uint64_t key = found ? ds.start : rg->start | REGION_KEY;
    uint32_t id = map_get(m, key);
    if (id == LH_NODE_NONE && found && is_allocator_state(&ds)) {
        id = ROOT_IGNORED;
        if (map_put(m, key, id) < 0) {
            return LH_NODE_NONE;
        }
    } else if (id == LH_NODE_NONE) {
        char name[400];
        if (found) {
            snprintf(name, sizeof name, "%s", ds.name);
        } else {
            snprintf(name, sizeof name, "[data of %s]",
                     base_name(ds.module ? ds.module : rg->name));
        }
        id = new_root(hg, m, key, LH_ROOT_DATA, name, found ? ds.file : NULL,
                      ds.module ? ds.module : rg->name);
        if (id != LH_NODE_NONE) {
            hg->roots[id].start = found ? ds.start : rg->start;
        }
    }
    if (found && id != LH_NODE_NONE) {
        /* Cache the symbol's extent: the words of one array cost one lookup. */
        m->sym_lo = ds.start;
        m->sym_hi = ds.start + ds.size;
        m->sym_root = id;
    }
    return id;
}

/* ---------------------------------------------------------------------------------------
 * The graph
 * ------------------------------------------------------------------------------------- */

/* What keep_word needs: the last heap region and the last other region a word was in (a
 * heap's pointers point into the heap, mostly one region after another, and into a
 * module's data: an object's type, in Python), and the span of every module (a word
 * outside it is in none). The snapshot's regions are sorted, do not overlap, and are final
 * before its pages are scanned. */
typedef struct keep_ctx {
    const lh_heapgraph_t *hg;
    const lh_region_t *last[2]; /* [1]: a heap region, [0]: another */
    uint64_t mod_lo, mod_hi;
    int overlap; /* word_span: 0 not checked yet, 1 the blocks overlap, -1 they do not */
} keep_ctx_t;

static int
keep_word(void *ctx, uint64_t v)
{
    keep_ctx_t *k = ctx;
    if (!v) {
        return 0;
    }
    for (int i = 1; i >= 0; i--) {
        const lh_region_t *r = k->last[i];
        if (r && v - r->start < r->len) {
            return i;
        }
    }
    const lh_region_t *r = lh_snapfile_region(&k->hg->sf, v);
    if (r) {
        /* blocks may lie in the program's own mappings too (an allocator that maps its
         * arenas through the PLT, such as jemalloc) */
        int heap = r->kind == LH_REGION_HEAP || r->kind == LH_REGION_MAPPED;
        k->last[heap] = r;
        return heap;
    }
    if (v < k->mod_lo || v >= k->mod_hi) {
        return 0;
    }
    return lh_modules_find(&lh_trace_parts(k->hg->trace)->modules, v, k->hg->epoch) >= 0;
}

/* next_span of the pages (snapfile.h): map_words keeps a word held by a live block or lying
 * in a root's region (data, a stack, TLS, the program's own mappings: pymalloc's arenas,
 * whose objects hold their buffers); the words elsewhere (freed heap memory, other
 * anonymous memory) are not looked at. The blocks are sorted by address (sort_blocks);
 * where two overlap, every word is (checked at the first call: a snapshot without pages
 * makes none). */
#define SPAN_GAP 64 /* bytes between two live blocks looked at rather than skipped */

static uint64_t
word_span(void *ctx, uint64_t a, uint64_t *end)
{
    keep_ctx_t *k = ctx;
    const lh_heapgraph_t *hg = k->hg;
    const lh_snapfile_t *sf = &hg->sf;
    for (size_t b = 1; !k->overlap && b < hg->n_blocks; b++) {
        if (hg->blocks[b].addr - hg->blocks[b - 1].addr < hg->blocks[b - 1].size) {
            k->overlap = 1;
        }
    }
    if (k->overlap > 0) {
        *end = UINT64_MAX; /* overlapping blocks: every word, as map_words walks them */
        return a;
    }
    k->overlap = -1;
    for (;;) {
        size_t i = LH_UPPER(sf->regions, sf->n_regions, lh_region_t, start, a);
        const lh_region_t *r = i ? &sf->regions[i - 1] : NULL;
        uint64_t next_r = i < sf->n_regions ? sf->regions[i].start : UINT64_MAX;
        if (r && a - r->start < r->len) {
            next_r = r->start + r->len;
            if (r->kind == LH_REGION_DATA || r->kind == LH_REGION_STACK ||
                r->kind == LH_REGION_TLS || r->kind == LH_REGION_MAPPED) {
                *end = next_r;
                return a;
            }
        }
        size_t j = LH_UPPER(hg->blocks, hg->n_blocks, lh_hblock_t, addr, a);
        if (j && a - hg->blocks[j - 1].addr < hg->blocks[j - 1].size) {
            /* The blocks that follow within a few words (an allocator's chunk header
             * apart) join the stretch: a search per block cost more than the words. */
            uint64_t e = hg->blocks[j - 1].addr + hg->blocks[j - 1].size;
            while (j < hg->n_blocks && hg->blocks[j].addr - e < SPAN_GAP) {
                e = hg->blocks[j].addr + hg->blocks[j].size;
                j++;
            }
            *end = e;
            return a;
        }
        uint64_t next_b = j < hg->n_blocks ? hg->blocks[j].addr : UINT64_MAX;
        a = next_b < next_r ? next_b : next_r;
        if (a == UINT64_MAX) {
            *end = UINT64_MAX;
            return a;
        }
    }
}

static int
read_contents(lh_heapgraph_t *hg, lh_err_t *err)
{
    const lh_snapinfo_t *s = &hg->snaps[hg->cur];
    const lh_modules_t *mods = &lh_trace_parts(hg->trace)->modules;
    keep_ctx_t kc = {hg, {NULL, NULL}, UINT64_MAX, 0, 0};
    for (size_t i = 0; i < mods->n; i++) {
        kc.mod_lo = mods->mods[i].lo < kc.mod_lo ? mods->mods[i].lo : kc.mod_lo;
        kc.mod_hi = mods->mods[i].hi > kc.mod_hi ? mods->mods[i].hi : kc.mod_hi;
    }
    /* The pages of mode full stay: the language heap decoders read them (objheap.h). */
    lh_snapfile_opts_t so = {keep_word, &kc, 1, word_span};
    if (s->mode == LH_CONTENTS_NONE || !s->file) {
        snprintf(hg->no_graph_why, sizeof hg->no_graph_why,
                 "snapshot %zu '%s' has no contents", hg->cur + 1, s->label);
        hg->no_graph_code = LH_GRAPH_NO_CONTENTS;
        return 1;
    }
    char *path = lh_snapfile_contents_path(hg->trace_path, s->file);
    if (!path) {
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    int rc = lh_snapfile_read_ahead(hg->ahead, path, &so, &hg->sf, err);
    free(path);
    lh_snapfile_ahead_free(hg->ahead);
    hg->ahead = NULL;
    if (rc < 0) {
        snprintf(hg->no_graph_why, sizeof hg->no_graph_why, "%s", err->msg);
        hg->no_graph_code = LH_GRAPH_UNREADABLE;
        lh_snapfile_fini(&hg->sf);
        return rc == LH_ENOMEM ? rc : 1;
    }
    return 0;
}

int
lh_heapgraph_load_pages(lh_heapgraph_t *hg, lh_err_t *err)
{
    const lh_snapinfo_t *s = &hg->snaps[hg->cur];
    if (hg->sf.n_pages || s->mode != LH_CONTENTS_FULL || !s->file) {
        return 0;
    }
    char *path = lh_snapfile_contents_path(hg->trace_path, s->file);
    if (!path) {
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    lh_snapfile_opts_t so = {lh_snapfile_keep_none, NULL, 1, NULL};
    lh_snapfile_t tmp;
    int rc = lh_snapfile_read(path, &so, &tmp, err);
    free(path);
    if (rc == 0) {
        free(hg->sf.pages);
        hg->sf.pages = tmp.pages; /* moved: freed with hg->sf */
        hg->sf.n_pages = tmp.n_pages;
        tmp.pages = NULL;
        tmp.n_pages = 0;
    }
    lh_snapfile_fini(&tmp);
    return rc;
}

/* Holders and targets of the words. Keeps the words held by a block or a root (compacting
 * sf.words), with their holder node and target (LH_NODE_NONE: not a block) in whold/wtgt. */
static int
map_words(lh_heapgraph_t *hg, uint32_t **whold_out, uint32_t **wtgt_out)
{
    lh_snapfile_t *sf = &hg->sf;
    root_map_t rm = {0};
    size_t n = sf->n_words ? sf->n_words : 1;
    uint32_t *whold = malloc(n * sizeof *whold);
    uint32_t *wtgt = malloc(n * sizeof *wtgt);
    size_t bi = 0, k = 0;
    int rc = LH_ENOMEM;
    if (!whold || !wtgt) {
        goto done;
    }
    for (size_t i = 0; i < sf->n_words; i++) {
        lh_word_t w = sf->words[i];
        uint32_t holder = LH_NODE_NONE;
        while (bi < hg->n_blocks && w.addr >= hg->blocks[bi].addr &&
               w.addr - hg->blocks[bi].addr >= hg->blocks[bi].size) {
            bi++;
        }
        if (bi < hg->n_blocks && w.addr >= hg->blocks[bi].addr &&
            hg->blocks[bi].size - (w.addr - hg->blocks[bi].addr) < sizeof w.val) {
            /* A word that runs past the size asked for (a 17-byte string's last word)
             * holds the chunk's slack: bytes the program never wrote, often a stale pointer
             * of the chunk's previous use. Valgrind scans only the whole words within the
             * size (git diff: a lost 2 KiB buffer was "possibly lost" through one). */
            hg->n_words_ignored++;
            continue;
        }
        uint32_t t = lh_heapgraph_block_at(hg, w.val);
        if (t != LH_NODE_NONE && w.val != hg->blocks[t].addr) {
            t |= LH_EDGE_INTERIOR;
        }
        if (bi < hg->n_blocks && w.addr >= hg->blocks[bi].addr) {
            holder = (uint32_t)bi;
        } else {
            /* Outside the live blocks, only references to blocks matter (no root is made
             * for a GOT entry or a pointer to freed memory). */
            const lh_region_t *rg = t != LH_NODE_NONE ? lh_snapfile_region(sf, w.addr) : NULL;
            uint32_t root = LH_NODE_NONE;
            if (rg && rg->kind == LH_REGION_DATA) {
                root = data_root(hg, &rm, rg, w.addr);
            } else if (rg && (rg->kind == LH_REGION_STACK || rg->kind == LH_REGION_TLS)) {
                root = thread_root(hg, &rm, rg);
            } else if (rg && rg->kind == LH_REGION_MAPPED) {
                root = mapped_root(hg, &rm, rg);
            }
            if (root == LH_NODE_NONE || root == ROOT_IGNORED) {
                hg->n_words_ignored++; /* freed heap memory, allocator metadata, ... */
                continue;
            }
            holder = hg->n_blocks + root;
        }
        if (t == LH_NODE_NONE && holder < hg->n_blocks && w.addr == hg->blocks[holder].addr &&
            !hg->blocks[holder].type) {
            /* A first word pointing into a module: a vtable? */
            const char *cls = lh_datasym_vtable_class(hg->ds, w.val, hg->epoch);
            if (cls && !(hg->blocks[holder].type = intern_type(hg, cls, strlen(cls)))) {
                goto done;
            }
        }
        sf->words[k] = w;
        whold[k] = holder;
        wtgt[k] = t;
        k++;
    }
    sf->n_words = k;
    rc = 0;
done:
    lh_addrmap_fini(&rm.keys);
    if (rc < 0) {
        LH_FREE_ALL(whold, wtgt);
        return rc;
    }
    *whold_out = whold;
    *wtgt_out = wtgt;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Interior-pointer heuristics (see heapgraph.h)
 * ------------------------------------------------------------------------------------- */

static const char *const heur_names[] = {"stdstring", "length64", "newarray",
                                         "multipleinheritance"};

const char *
lh_heuristic_name(unsigned bit)
{
    for (unsigned i = 0; i < 4; i++) {
        if (bit == 1u << i) {
            return heur_names[i];
        }
    }
    return "?";
}

int
lh_heuristics_parse(const char *s, unsigned *out, lh_err_t *err)
{
    if (strcmp(s, "all") == 0) {
        *out = LH_HEUR_ALL;
        return 0;
    }
    if (strcmp(s, "none") == 0) {
        *out = LH_HEUR_NONE;
        return 0;
    }
    unsigned bits = 0;
    const char *p = s;
    for (;;) {
        size_t n = strcspn(p, ",");
        unsigned i = 0;
        while (i < 4 && !(strlen(heur_names[i]) == n && strncmp(p, heur_names[i], n) == 0)) {
            i++;
        }
        if (i == 4) {
            return lh_err_set(err, LH_EINVAL, "unknown heuristic '%.*s' (none, "
                              "all, or a list of stdstring, length64, newarray, "
                              "multipleinheritance)", (int)n, p);
        }
        bits |= 1u << i;
        if (!p[n]) {
            break;
        }
        p += n + 1;
    }
    *out = bits;
    return 0;
}

/* The word at addr: a pointer word, or a header word (WORDS records). */
static int
word_at(const lh_heapgraph_t *hg, uint64_t addr, uint64_t *val)
{
    const lh_word_t *v[2] = {hg->sf.words, hg->sf.hdr};
    size_t n[2] = {hg->sf.n_words, hg->sf.n_hdr};
    for (int k = 0; k < 2; k++) {
        size_t lo = LH_LOWER(v[k], n[k], lh_word_t, addr, addr);
        if (lo < n[k] && v[k][lo].addr == addr) {
            *val = v[k][lo].val;
            return 1;
        }
    }
    return 0;
}

static int
is_vtable(const lh_heapgraph_t *hg, uint64_t v)
{
    return v && lh_datasym_vtable_class(hg->ds, v, hg->epoch) != NULL;
}

unsigned
lh_heapgraph_heuristic(const lh_heapgraph_t *hg, uint32_t block, uint64_t value)
{
    const lh_hblock_t *b = &hg->blocks[block];
    unsigned en = hg->heuristics;
    uint64_t off = value - b->addr, size = b->size, w0 = 0, w1 = 0;
    if (!en || value <= b->addr || off >= size) {
        return 0;
    }
    if ((en & LH_HEUR_STDSTRING) && off == 24 && word_at(hg, b->addr, &w0) &&
        word_at(hg, b->addr + 8, &w1) && w0 <= w1 && w1 <= size && w1 + 25 <= size) {
        return LH_HEUR_STDSTRING;
    }
    if (off == 8 && size > 8 && word_at(hg, b->addr, &w0)) {
        if ((en & LH_HEUR_LENGTH64) && w0 == size - 8) {
            return LH_HEUR_LENGTH64;
        }
        if ((en & LH_HEUR_NEWARRAY) && w0 > 0 && w0 <= size - 8 && (size - 8) % w0 == 0) {
            return LH_HEUR_NEWARRAY;
        }
    }
    if ((en & LH_HEUR_MULTIPLEINHERITANCE) && off % 8 == 0 && word_at(hg, value, &w1) &&
        is_vtable(hg, w1) && word_at(hg, b->addr, &w0) && is_vtable(hg, w0)) {
        return LH_HEUR_MULTIPLEINHERITANCE;
    }
    return 0;
}

/* Interior pointers a heuristic accepts become start pointers; remembers per block which
 * heuristics and whether a real start pointer refer to it. */
static int
apply_heuristics(lh_heapgraph_t *hg, uint32_t *wtgt)
{
    size_t nb = hg->n_blocks ? hg->n_blocks : 1;
    hg->via_heur = calloc(nb, 1);
    hg->start_ref = calloc(nb, 1);
    if (!hg->via_heur || !hg->start_ref) {
        return LH_ENOMEM;
    }
    for (size_t i = 0; i < hg->sf.n_words; i++) {
        if (wtgt[i] == LH_NODE_NONE) {
            continue;
        }
        uint32_t t = LH_EDGE_NODE(wtgt[i]);
        if (!(wtgt[i] & LH_EDGE_INTERIOR)) {
            hg->start_ref[t] = 1;
            continue;
        }
        unsigned h = lh_heapgraph_heuristic(hg, t, hg->sf.words[i].val);
        if (h) {
            wtgt[i] = t;
            hg->via_heur[t] |= (uint8_t)h;
        }
    }
    return 0;
}

/* Root word lists (CSR by root), then the edge list in place of whold/wtgt. */
static int
root_words(lh_heapgraph_t *hg, const uint32_t *whold)
{
    size_t nw = hg->sf.n_words;
    uint64_t *off = calloc((size_t)hg->n_roots + 1, sizeof *off);
    if (!off) {
        return LH_ENOMEM;
    }
    for (size_t i = 0; i < nw; i++) {
        if (whold[i] >= hg->n_blocks) {
            off[whold[i] - hg->n_blocks + 1]++;
        }
    }
    for (uint32_t r = 0; r < hg->n_roots; r++) {
        off[r + 1] += off[r];
    }
    uint32_t *v = malloc((off[hg->n_roots] ? off[hg->n_roots] : 1) * sizeof *v);
    if (!v) {
        free(off);
        return LH_ENOMEM;
    }
    for (size_t i = 0; i < nw; i++) {
        if (whold[i] >= hg->n_blocks) {
            v[off[whold[i] - hg->n_blocks]++] = (uint32_t)i;
        }
    }
    for (uint32_t r = hg->n_roots; r > 0; r--) {
        off[r] = off[r - 1];
    }
    off[0] = 0;
    hg->root_woff = off;
    hg->root_words = v;
    return 0;
}

static int
build_graph(lh_heapgraph_t *hg, lh_err_t *err)
{
    uint32_t *whold = NULL, *wtgt = NULL;
    int rc = read_contents(hg, err);
    if (rc != 0) {
        return rc < 0 ? rc : 0;
    }
    if ((rc = map_words(hg, &whold, &wtgt)) < 0 || (rc = root_words(hg, whold)) < 0 ||
        (rc = apply_heuristics(hg, wtgt)) < 0) {
        rc = lh_err_set(err, LH_ENOMEM, "out of memory mapping the snapshot's pointers");
        goto done;
    }
    /* The edge list: the kept words that point to a block. */
    uint64_t ne = 0;
    for (size_t i = 0; i < hg->sf.n_words; i++) {
        if (wtgt[i] != LH_NODE_NONE) {
            whold[ne] = whold[i];
            wtgt[ne] = wtgt[i];
            ne++;
        }
    }
    if ((rc = lh_refgraph_build(&hg->g, hg->n_blocks, hg->n_roots, &hg->blocks[0].size,
                                sizeof(lh_hblock_t) / sizeof(uint64_t), whold, wtgt, ne,
                                err)) < 0) {
        goto done;
    }
    LH_FREE_ALL(whold, wtgt);
    whold = wtgt = NULL;
    if ((rc = lh_refgraph_classify(&hg->g, err)) < 0 ||
        (rc = lh_refgraph_dominators(&hg->g, err)) < 0) {
        goto done;
    }
    for (uint32_t b = 0; b < hg->n_blocks; b++) {
        hg->class_blocks[hg->g.cls[b]]++;
        hg->class_bytes[hg->g.cls[b]] += hg->blocks[b].size;
        if (hg->g.cls[b] == LH_CLASS_REACHABLE && hg->via_heur[b] && !hg->start_ref[b]) {
            unsigned k = (unsigned)__builtin_ctz(hg->via_heur[b]);
            hg->heur_blocks[k]++;
            hg->heur_bytes[k] += hg->blocks[b].size;
        }
    }
    hg->has_graph = 1;
done:
    LH_FREE_ALL(whold, wtgt);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * Public API
 * ------------------------------------------------------------------------------------- */

/* The newest contents file beside the trace, <stem>.snap<N>.lhs with the largest N, as
 * lh_snapfile_contents_path would name it: the exit snapshot's when the trace has one (it
 * is taken last). NULL when there is none. */
static char *
exit_contents_guess(const char *trace_path)
{
    const char *slash = strrchr(trace_path, '/');
    const char *base = slash ? slash + 1 : trace_path;
    int dl = (int)(base - trace_path);
    size_t stem = lh_snapfile_stem_len(base);
    char *dir = dl ? lh_dupstr(trace_path, (size_t)dl) : NULL;
    DIR *d = opendir(dl ? dir : ".");
    free(dir);
    if (!d) {
        return NULL;
    }
    char *best = NULL;
    unsigned long long best_n = 0;
    for (const struct dirent *e; (e = readdir(d)) != NULL;) {
        const char *n = e->d_name, *num = n + stem + 5;
        char *end;
        if (strncmp(n, base, stem) != 0 || strncmp(n + stem, ".snap", 5) != 0 ||
            !isdigit((unsigned char)*num)) {
            continue;
        }
        unsigned long long v = strtoull(num, &end, 10);
        if (strcmp(end, ".lhs") != 0 || (best && v <= best_n)) {
            continue;
        }
        size_t cap = (size_t)dl + strlen(n) + 1;
        char *p = malloc(cap);
        if (p) {
            snprintf(p, cap, "%.*s%s", dl, trace_path, n);
            free(best);
            best = p;
            best_n = v;
        }
    }
    closedir(d);
    return best;
}

int
lh_heapgraph_begin(const char *path, const lh_heapgraph_opts_t *opts, lh_heapgraph_t **out,
                   lh_err_t *err)
{
    static const lh_heapgraph_opts_t defaults = {NULL, -1, 0, 0, 0};
    lh_heapgraph_t *hg = calloc(1, sizeof *hg);
    *out = NULL;
    if (!opts) {
        opts = &defaults;
    }
    if (!hg || !(hg->trace_path = strdup(path)) || !(hg->pass = calloc(1, sizeof *hg->pass))) {
        if (hg) {
            free(hg->trace_path);
        }
        free(hg);
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    hg->heuristics = opts->heuristics == 0                ? LH_HEUR_ALL
                   : (opts->heuristics & LH_HEUR_NONE) ? 0
                                                         : opts->heuristics & LH_HEUR_ALL;
    hg->no_graph = opts->no_graph;
    /* Default: capture exit snapshots on the way. A selector needs the list first: a
     * pass that captures nothing (WANT_NONE). A known index: captured at once. */
    hg->pass->want = opts->index >= 0 || opts->index == LH_HG_EXIT_CONTENTS ? opts->index
                   : opts->snapshot                                       ? WANT_NONE
                                                                          : WANT_EXIT;
    hg->pass->captured = -1;
    hg->pass->hg = hg;
    if (opts->index == LH_HG_EXIT_CONTENTS && !opts->no_graph && lh_prefetch_threads() > 0) {
        /* its frames read while the trace streams; taken only if the path is the one the
         * exit snapshot names (lh_snapfile_read_ahead) */
        char *guess = exit_contents_guess(path);
        if (guess) {
            hg->ahead = lh_snapfile_ahead_start(guess);
            free(guess);
        }
    }
    *out = hg;
    return 0;
}

lh_consumer_t
lh_heapgraph_consumer(lh_heapgraph_t *hg)
{
    return (lh_consumer_t){on_event, hg->pass, 1}; /* modules, tags and snapshots only */
}

int
lh_heapgraph_captured(const lh_heapgraph_t *hg)
{
    return hg->pass ? hg->pass->captured >= 0 : 1;
}

int
lh_heapgraph_finish(lh_heapgraph_t *hg, lh_trace_t *t, lh_err_t *err)
{
    pass_t *ps = hg->pass;
    lh_sym_opts_t so = {0};
    int rc;
    if (hg->trace != t) {
        hg->trace = t;
        hg->trace_borrowed = 1;
    }
    if (ps->captured < 0) {
        return lh_err_set(err, LH_EFORMAT, "%s: the trace changed while it was read",
                          hg->trace_path);
    }
    hg->cur = (size_t)ps->captured;
    sort_blocks(hg->blocks, hg->n_blocks);
    apply_tags(hg, ps);
    LH_FREE_ALL(ps->tags, ps);
    hg->pass = NULL;
    so.exe_path = lh_trace_parts(t)->info.exe;
    if ((rc = lh_sym_new(&lh_trace_parts(t)->modules, &so, &hg->sym, err)) < 0 ||
        (rc = lh_datasym_new(&lh_trace_parts(t)->modules, so.exe_path, &hg->ds, err)) < 0) {
        return rc;
    }
    if (hg->no_graph) {
        snprintf(hg->no_graph_why, sizeof hg->no_graph_why, "the graph was not built "
                 "(the live set only was asked for)");
        hg->no_graph_code = LH_GRAPH_NOT_ASKED;
        return 0;
    }
    return build_graph(hg, err);
}

int
lh_heapgraph_open(const char *path, const lh_heapgraph_opts_t *opts, lh_heapgraph_t **out,
                  lh_err_t *err)
{
    lh_heapgraph_t *hg;
    int salvage = opts ? opts->salvage : 0;
    int rc;
    *out = NULL;
    if ((rc = lh_heapgraph_begin(path, opts, &hg, err)) < 0) {
        return rc;
    }
    if ((rc = read_trace(hg, salvage, err)) < 0) {
        goto fail;
    }
    if (hg->n_snaps == 0) {
        rc = lh_err_set(err, LH_EINVAL, "%s: the trace has no snapshots (one is taken at "
                        "exit by default, others with lh_snapshot() or SIGUSR2)",
                        path);
        goto fail;
    }
    const char *sel = opts ? opts->snapshot : NULL;
    long want = opts && opts->index >= 0 ? opts->index
              : sel ? lh_heapgraph_find_snapshot(hg->snaps, hg->n_snaps, sel, 1)
                    : (long)hg->n_snaps - 1;
    if (want < 0 || (size_t)want >= hg->n_snaps) {
        rc = lh_err_set(err, LH_EINVAL, "%s: no snapshot '%s' (%zu snapshots: see the "
                        "`snapshots` command)", path, sel ? sel : "?", hg->n_snaps);
        goto fail;
    }
    if (hg->pass->captured < 0) {
        hg->pass->want = want;
        if ((rc = read_trace(hg, salvage, err)) < 0) {
            goto fail;
        }
    }
    if ((rc = lh_heapgraph_finish(hg, hg->trace, err)) < 0) {
        goto fail;
    }
    *out = hg;
    return 0;
fail:
    lh_heapgraph_free(hg);
    return rc;
}

void
lh_heapgraph_free(lh_heapgraph_t *hg)
{
    if (!hg) {
        return;
    }
    lh_snapfile_ahead_free(hg->ahead);
    LH_FREE_EACH2(hg->snaps, hg->n_snaps, lh_snapinfo_t, label, file);
    LH_FREE_EACH3(hg->roots, hg->n_roots, lh_hroot_t, name, file, module);
    lh_strv_free(hg->types, hg->n_types); /* types[0] is NULL */
    LH_FREE_ALL(hg->blocks, hg->root_woff, hg->root_words, hg->via_heur, hg->start_ref);
    lh_refgraph_fini(&hg->g);
    lh_snapfile_fini(&hg->sf);
    for (size_t i = 0; i < hg->n_sites; i++) {
        if (hg->sites[i]) {
            lh_site_fini(hg->sites[i]);
            free(hg->sites[i]);
        }
    }
    free(hg->sites);
    lh_strv_free(hg->fn_labels, hg->n_fn_labels);
    lh_datasym_free(hg->ds);
    lh_sym_free(hg->sym);
    if (!hg->trace_borrowed) {
        lh_trace_close(hg->trace);
    }
    if (hg->pass) {
        free(hg->pass->tags);
    }
    LH_FREE_ALL(hg->pass, hg->trace_path, hg);
}

/* ---------------------------------------------------------------------------------------
 * Names
 * ------------------------------------------------------------------------------------- */

const lh_site_t *
lh_heapgraph_site(lh_heapgraph_t *hg, uint32_t stack_id)
{
    static lh_site_t none = {.location = -1, .user_frame = -1};
    if (lh_grow_zeroed(&hg->sites, &hg->n_sites, (size_t)stack_id + 1, sizeof *hg->sites, 64) < 0) {
        return &none;
    }
    if (!hg->sites[stack_id] && !hg->trace) {
        return &none; /* loaded from an index (graphindex.h) without this site */
    }
    if (!hg->sites[stack_id]) {
        lh_site_t *s = calloc(1, sizeof *s);
        lh_err_t err;
        if (!s) {
            return &none;
        }
        s->stack_id = stack_id;
        if (lh_site_symbolize(s, hg->trace, hg->sym, &err) < 0) {
            s->n_frames = 0;
            s->location = -1;
        }
        hg->sites[stack_id] = s;
    }
    return hg->sites[stack_id];
}

/* The name of a block's site when its stack has no location (heapgraph.h). */
static const char *
no_location(const lh_heapgraph_t *hg, uint32_t stack_id)
{
    uint64_t how = hg->trace ? lh_trace_parts(hg->trace)->info.attach_how : hg->attach_how;
    if (stack_id) {
        return "(stack not recorded)";
    }
    return how == 2 ? "(no stack)" : how == 1 ? "(before leakhound attached)"
                                              : "(before the agent started)";
}

const char *
lh_heapgraph_site_str(lh_heapgraph_t *hg, uint32_t stack_id, char *buf, size_t len)
{
    const lh_site_t *s = lh_heapgraph_site(hg, stack_id);
    if (s->location < 0) {
        snprintf(buf, len, "%s", no_location(hg, stack_id));
        return buf;
    }
    const lh_frame_t *f = &s->frames[s->location];
    const lh_frame_t *u = s->user_frame >= 0 && (size_t)s->user_frame < s->n_frames
                              ? &s->frames[s->user_frame] : NULL;
    if (f->file && f->line && u && u->file && lh_frame_is_perl_eval(f)) {
        /* string-eval'd code (a Moo constructor): the line that called it has a file */
        snprintf(buf, len, "%s (%s:%u, called from %s:%u)", f->function ? f->function : "??",
                 f->file, f->line, base_name(u->file), u->line);
    } else if (f->file && f->line) {
        snprintf(buf, len, "%s (%s:%u)", f->function ? f->function : "??", base_name(f->file),
                 f->line);
    } else if (f->file) { /* no line: an interpreter phase (scriptstack.h), a Perl main */
        snprintf(buf, len, "%s (%s)", f->function ? f->function : "??", base_name(f->file));
    } else if (f->function && f->module) {
        snprintf(buf, len, "%s (%s)", f->function, lh_sym_module_label(f->module));
    } else if (f->function) { /* a phase frame with no file (perl's SV arena) */
        snprintf(buf, len, "%s", f->function);
    } else if (f->module) {
        snprintf(buf, len, "%s+0x%" PRIx64, lh_sym_module_label(f->module), f->offset);
    } else {
        snprintf(buf, len, "0x%" PRIx64, f->ip);
    }
    return buf;
}

const char *
lh_heapgraph_site_function(lh_heapgraph_t *hg, uint32_t stack_id)
{
    const lh_site_t *s = lh_heapgraph_site(hg, stack_id);
    if (s->location < 0) {
        return no_location(hg, stack_id);
    }
    const lh_frame_t *f = &s->frames[s->location];
    if (f->function) {
        return f->function;
    }
    if (lh_grow_zeroed(&hg->fn_labels, &hg->n_fn_labels, (size_t)stack_id + 1,
                       sizeof *hg->fn_labels, 64) < 0) {
        return "?";
    }
    if (!hg->fn_labels[stack_id]) {
        char buf[512];
        const char *l = lh_heapgraph_site_str(hg, stack_id, buf, sizeof buf);
        hg->fn_labels[stack_id] = lh_dupstr(l, strlen(l));
    }
    return hg->fn_labels[stack_id] ? hg->fn_labels[stack_id] : "?";
}

const char *
lh_heapgraph_type(lh_heapgraph_t *hg, uint32_t block)
{
    uint32_t t = hg->blocks[block].type;
    return t ? hg->types[t] : lh_heapgraph_site_function(hg, hg->blocks[block].stack_id);
}

const char *
lh_heapgraph_node_name(lh_heapgraph_t *hg, uint32_t node, char *buf, size_t len)
{
    if (node < hg->n_blocks) {
        snprintf(buf, len, "0x%" PRIx64, hg->blocks[node].addr);
    } else if (node - hg->n_blocks < hg->n_roots) {
        const lh_hroot_t *r = &hg->roots[node - hg->n_blocks];
        if (r->file) {
            snprintf(buf, len, "%s (%s)", r->name, base_name(r->file));
        } else {
            snprintf(buf, len, "%s", r->name);
        }
    } else {
        snprintf(buf, len, "[all roots]");
    }
    return buf;
}

size_t
lh_heapgraph_block_words(const lh_heapgraph_t *hg, uint32_t block, size_t *first)
{
    const lh_word_t *w = hg->sf.words;
    uint64_t a = hg->blocks[block].addr, end = a + hg->blocks[block].size;
    size_t lo = LH_LOWER(w, hg->sf.n_words, lh_word_t, addr, a);
    size_t k = lo;
    while (k < hg->sf.n_words && w[k].addr < end) {
        k++;
    }
    *first = lo;
    return k - lo;
}
