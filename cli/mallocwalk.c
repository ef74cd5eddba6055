/* leakhound - SPDX-License-Identifier: MIT
 *
 * mallocwalk.c: glibc malloc's live blocks in a copy of a process (see mallocwalk.h).
 */
#include "mallocwalk.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "grow.h"

#define PREV_INUSE 1u
#define IS_MMAPPED 2u
#define SIZE_BITS 7u
#define MAX_ARENAS 4096
#define MAX_LIST (1u << 24) /* free-list steps before a list counts as a loop */

typedef struct walk {
    const lh_glibc_layout_t *l;
    const lh_memcopy_t *m;
    lh_mwalk_t *w;
    lh_err_t *err;
    uint64_t *freed; /* chunk addresses in fastbins and tcaches, sorted before use */
    size_t n_freed, cap_freed;
    uint64_t *inuse; /* chunk addresses in use by the chunk walk */
    uint64_t *inuse_size;
    size_t n_inuse, cap_inuse;
} walk_t;

static int
push(uint64_t **a, size_t *n, size_t *cap, uint64_t v)
{
    if (lh_grow(a, cap, *n, sizeof **a, 1024) < 0) {
        return LH_ENOMEM;
    }
    (*a)[(*n)++] = v;
    return 0;
}

static int
push_inuse(walk_t *k, uint64_t chunk, uint64_t size)
{
    size_t n = k->n_inuse, cap = k->cap_inuse;
    if (push(&k->inuse, &n, &cap, chunk) < 0) {
        return LH_ENOMEM;
    }
    size_t n2 = k->n_inuse, cap2 = k->cap_inuse;
    if (push(&k->inuse_size, &n2, &cap2, size) < 0) {
        return LH_ENOMEM;
    }
    k->n_inuse = n;
    k->cap_inuse = cap;
    return 0;
}

static uint64_t
word(walk_t *k, uint64_t addr, int *ok)
{
    return lh_memcopy_word(k->m, addr, ok);
}

/* Safe-linking (glibc 2.32+): a free-list link stored at pos holds (pos >> 12) ^ ptr. */
static uint64_t
reveal(const lh_glibc_layout_t *l, uint64_t pos, uint64_t v)
{
    return l->safe_linking ? (pos >> 12) ^ v : v;
}

static int
bad(walk_t *k, const char *what, uint64_t addr)
{
    return lh_err_set(k->err, LH_EFORMAT, "snapshot -p: glibc's heap is inconsistent: %s at "
                      "0x%" PRIx64, what, addr);
}

/* Chunks from `first` until `end` (the top chunk), or, when end is 0, until the fencepost
 * that closes an old heap, within limit. */
static int
walk_chunks(walk_t *k, uint64_t first, uint64_t end, uint64_t limit)
{
    const lh_glibc_layout_t *l = k->l;
    uint64_t c = first;
    int ok = 1;
    for (;;) {
        if (end && c == end) {
            return 0;
        }
        if ((end && c > end) || c + 2 * l->size_sz > limit) {
            return bad(k, "a chunk runs past its heap", c);
        }
        uint64_t sz = word(k, c + l->ch_size, &ok) & ~(uint64_t)SIZE_BITS;
        if (!ok) {
            return bad(k, "a chunk header is not readable", c);
        }
        if (!end && sz < l->min_size) {
            return 0; /* the fencepost of an old heap */
        }
        if (sz < l->min_size || c + sz + 2 * l->size_sz > limit || (sz & (2 * l->size_sz - 1))) {
            return bad(k, "a chunk has an impossible size", c);
        }
        uint64_t next = c + sz;
        uint64_t nsize = word(k, next + l->ch_size, &ok);
        if (!ok) {
            return bad(k, "a chunk header is not readable", next);
        }
        if (!end && (nsize & ~(uint64_t)SIZE_BITS) == 0) {
            return 0; /* the last, unusable piece of an old heap before its fencepost */
        }
        if (nsize & PREV_INUSE) {
            if (push_inuse(k, c, sz) < 0) {
                return LH_ENOMEM;
            }
        }
        c = next;
    }
}

static int
in_copy(walk_t *k, uint64_t addr)
{
    const lh_mapping_t *mp = lh_memcopy_find(k->m, addr);
    return mp && mp->bytes;
}

static int
walk_fastbins(walk_t *k, uint64_t arena)
{
    const lh_glibc_layout_t *l = k->l;
    for (uint64_t i = 0; i < l->ms_n_fastbins; i++) {
        int ok = 1;
        uint64_t p = word(k, arena + l->ms_fastbins + 8 * i, &ok);
        for (uint32_t steps = 0; p; steps++) {
            if (!ok || steps > MAX_LIST || (p & (2 * l->size_sz - 1)) || !in_copy(k, p)) {
                return bad(k, "a fastbin link points outside the heap", p);
            }
            if (push(&k->freed, &k->n_freed, &k->cap_freed, p) < 0) {
                return LH_ENOMEM;
            }
            p = reveal(l, p + l->ch_fd, word(k, p + l->ch_fd, &ok));
        }
    }
    return 0;
}

static int
walk_tcache(walk_t *k, uint64_t tp)
{
    const lh_glibc_layout_t *l = k->l;
    int ok = 1;
    uint64_t tc = word(k, tp - l->libc_tls_offset + l->tcache_tls, &ok);
    if (!ok || !tc) {
        return 0; /* a thread that never allocated */
    }
    for (uint64_t i = 0; i < l->tc_n_bins; i++) {
        uint64_t count = 0;
        if (lh_memcopy_read(k->m, tc + l->tc_counts + i * l->tc_count_size, &count,
                            l->tc_count_size) < 0) {
            return bad(k, "a tcache is not readable", tc);
        }
        uint64_t e = word(k, tc + l->tc_entries + 8 * i, &ok);
        uint64_t n = 0;
        for (; e && ok; n++) {
            if (n >= count || (e & (2 * l->size_sz - 1)) || !in_copy(k, e)) {
                return bad(k, "a tcache list does not match its count", tc);
            }
            uint64_t chunk = e - 2 * l->size_sz;
            if (push(&k->freed, &k->n_freed, &k->cap_freed, chunk) < 0) {
                return LH_ENOMEM;
            }
            k->w->n_tcache++;
            k->w->tcache_bytes += word(k, chunk + l->ch_size, &ok) & ~(uint64_t)SIZE_BITS;
            e = reveal(l, e + l->te_next, word(k, e + l->te_next, &ok));
        }
        if (!ok || n != count) {
            return bad(k, "a tcache list does not match its count", tc);
        }
    }
    return 0;
}

/* The heap_info of a non-main arena's heap holding top: the start of top's mapping, else
 * an aligned address below it, accepted only if its ar_ptr is the arena. */
static uint64_t
find_heap(walk_t *k, uint64_t arena, uint64_t top)
{
    const lh_glibc_layout_t *l = k->l;
    const lh_mapping_t *mp = lh_memcopy_find(k->m, top);
    int ok = 1;
    if (mp && word(k, mp->lo + l->hi_ar_ptr, &ok) == arena && ok) {
        return mp->lo;
    }
    for (uint64_t align = 1u << 20; align <= (1ull << 32); align <<= 1) {
        uint64_t h = top & ~(align - 1);
        ok = 1;
        uint64_t size = word(k, h + l->hi_size, &ok);
        if (ok && word(k, h + l->hi_ar_ptr, &ok) == arena && ok && top < h + size) {
            return h;
        }
    }
    return 0;
}

static int
walk_arena(walk_t *k, uint64_t arena)
{
    const lh_glibc_layout_t *l = k->l;
    int ok = 1;
    uint64_t top = word(k, arena + l->ms_top, &ok);
    k->w->system_mem += word(k, arena + l->ms_system_mem, &ok);
    if (!ok) {
        return bad(k, "an arena is not readable", arena);
    }
    int rc = walk_fastbins(k, arena);
    if (rc < 0) {
        return rc;
    }
    uint64_t align = 2 * l->size_sz;
    if (arena == l->main_arena) {
        uint64_t base = word(k, l->mp + l->mp_sbrk_base, &ok);
        if (!base) {
            return 0; /* the main arena never grew its heap */
        }
        uint64_t first = (base + align - 1) & ~(align - 1);
        const lh_mapping_t *mp = lh_memcopy_find(k->m, first);
        if (!mp || top < first || top >= mp->hi) {
            return lh_err_set(k->err, LH_EFORMAT,
                              "snapshot -p: the main arena's heap (0x%" PRIx64 " to its top "
                              "0x%" PRIx64 ") is not contiguous (a foreign sbrk?): not "
                              "supported", first, top);
        }
        k->w->heaps++;
        return walk_chunks(k, first, top, mp->hi);
    }
    uint64_t h = find_heap(k, arena, top);
    if (!h) {
        return bad(k, "no heap_info found for the top chunk of the arena", arena);
    }
    for (unsigned n = 0; h; n++) {
        uint64_t size = word(k, h + l->hi_size, &ok);
        uint64_t prev = word(k, h + l->hi_prev, &ok);
        if (!ok || n > 65536 || word(k, h + l->hi_ar_ptr, &ok) != arena) {
            return bad(k, "a heap_info does not belong to its arena", h);
        }
        uint64_t first = h + l->hi_size_of;
        if (!prev) {
            /* The first heap: the arena itself follows the heap_info. */
            if (first != arena) {
                return bad(k, "the first heap of an arena does not hold it", h);
            }
            first = (arena + l->ms_size + align - 1) & ~(align - 1);
        }
        int has_top = top >= h && top < h + size;
        rc = walk_chunks(k, first, has_top ? top : 0, h + size);
        if (rc < 0) {
            return rc;
        }
        k->w->heaps++;
        h = prev;
    }
    return 0;
}

/* mmapped chunks: glibc links them nowhere; each starts a page of an anonymous mapping
 * with prev_size 0 and a size with IS_MMAPPED (and neither other bit), a page multiple
 * that fits in the mapping. */
static int
walk_mmapped(walk_t *k)
{
    const lh_glibc_layout_t *l = k->l;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < k->m->n; i++) {
        const lh_mapping_t *mp = &k->m->maps[i];
        if (!mp->bytes || mp->path[0]) {
            continue; /* file mappings, [heap], [stack]: never mmapped chunks */
        }
        for (uint64_t p = mp->lo; p + 2 * l->size_sz <= mp->hi;) {
            int ok = 1;
            uint64_t prev = word(k, p, &ok);
            uint64_t size = word(k, p + l->ch_size, &ok);
            uint64_t sz = size & ~(uint64_t)SIZE_BITS;
            if (ok && prev == 0 && (size & SIZE_BITS) == IS_MMAPPED && sz >= page &&
                sz % page == 0 && p + sz <= mp->hi) {
                if (push_inuse(k, p, sz | (1ull << 63)) < 0) {
                    return LH_ENOMEM;
                }
                k->w->n_mmapped++;
                k->w->mmapped_bytes += sz;
                p += sz;
            } else {
                p += page;
            }
        }
    }
    return 0;
}

static int
cmp_block(const void *a, const void *b)
{
    const lh_mblock_t *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int
lh_mwalk_in_malloc(const lh_glibc_layout_t *l, uint64_t pc)
{
    for (size_t i = 0; i < l->n_malloc_code; i++) {
        if (pc >= l->malloc_code[i][0] && pc < l->malloc_code[i][1]) {
            return 1;
        }
    }
    return 0;
}

uint64_t
lh_mwalk_locked_arena(const lh_glibc_layout_t *l, const lh_memcopy_t *m)
{
    uint64_t a = l->main_arena;
    for (int i = 0; a && i < MAX_ARENAS; i++) {
        int ok = 1;
        uint32_t mutex = 0;
        if (lh_memcopy_read(m, a + l->ms_mutex, &mutex, sizeof mutex) < 0) {
            return 0;
        }
        if (mutex) {
            return a;
        }
        a = lh_memcopy_word(m, a + l->ms_next, &ok);
        if (!ok || a == l->main_arena) {
            break;
        }
    }
    return 0;
}

int
lh_mwalk(const lh_glibc_layout_t *l, const lh_memcopy_t *m, const uint64_t *tps, size_t n_tps,
         lh_mwalk_t *w, lh_err_t *err)
{
    memset(w, 0, sizeof *w);
    walk_t k = {l, m, w, err, NULL, 0, 0, NULL, NULL, 0, 0};
    int rc = 0;
    uint64_t a = l->main_arena;
    for (;;) {
        if (w->arenas >= MAX_ARENAS) {
            rc = bad(&k, "the list of arenas does not come back to main_arena", a);
            goto out;
        }
        w->arenas++;
        if ((rc = walk_arena(&k, a)) < 0) {
            goto out;
        }
        int ok = 1;
        a = word(&k, a + l->ms_next, &ok);
        if (!ok || !a) {
            rc = bad(&k, "an arena's next link is broken", a);
            goto out;
        }
        if (a == l->main_arena) {
            break;
        }
    }
    for (size_t i = 0; l->has_tcache && i < n_tps; i++) {
        if ((rc = walk_tcache(&k, tps[i])) < 0) {
            goto out;
        }
    }
    if ((rc = walk_mmapped(&k)) < 0) {
        goto out;
    }
    int ok = 1;
    uint64_t n_mmaps = 0;
    if (lh_memcopy_read(m, l->mp + l->mp_n_mmaps, &n_mmaps, 4) < 0) {
        ok = 0;
    }
    uint64_t mm_mem = word(&k, l->mp + l->mp_mmapped_mem, &ok);
    if (ok && (n_mmaps != w->n_mmapped || mm_mem != w->mmapped_bytes)) {
        snprintf(w->warning, sizeof w->warning,
                 "mmapped chunks: found %" PRIu64 " (%" PRIu64 " bytes), glibc counts %" PRIu64
                 " (%" PRIu64 " bytes): the difference is not in the snapshot",
                 w->n_mmapped, w->mmapped_bytes, n_mmaps, mm_mem);
    }
    lh_qsort(k.freed, k.n_freed, sizeof *k.freed, lh_cli_cmp_u64);
    w->blocks = malloc((k.n_inuse ? k.n_inuse : 1) * sizeof *w->blocks);
    if (!w->blocks) {
        rc = lh_err_set(err, LH_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < k.n_inuse; i++) {
        uint64_t c = k.inuse[i];
        int mmapped = (k.inuse_size[i] >> 63) != 0;
        uint64_t sz = k.inuse_size[i] & ~(1ull << 63);
        if (!mmapped && k.n_freed &&
            bsearch(&c, k.freed, k.n_freed, sizeof *k.freed, lh_cli_cmp_u64)) {
            continue;
        }
        lh_mblock_t *b = &w->blocks[w->n++];
        b->addr = c + 2 * l->size_sz;
        /* usable size: an mmapped chunk has no next chunk to lend it its prev_size */
        b->size = sz - (mmapped ? 2 : 1) * l->size_sz;
        w->bytes += b->size;
        w->chunk_bytes += sz;
    }
    lh_qsort(w->blocks, w->n, sizeof *w->blocks, cmp_block);
    /* Blocks never overlap (a chunk header sits between two): a walk that says otherwise
     * read a heap caught half-way through a change. */
    for (size_t i = 1; i < w->n; i++) {
        if (w->blocks[i - 1].addr + w->blocks[i - 1].size > w->blocks[i].addr) {
            rc = bad(&k, "two blocks overlap", w->blocks[i].addr);
            goto out;
        }
    }
out:
    free(k.freed);
    free(k.inuse);
    free(k.inuse_size);
    if (rc < 0) {
        lh_mwalk_fini(w);
    }
    return rc;
}

void
lh_mwalk_fini(lh_mwalk_t *w)
{
    free(w->blocks);
    w->blocks = NULL;
    w->n = 0;
}
