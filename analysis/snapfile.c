/* leakhound - SPDX-License-Identifier: MIT
 *
 * snapfile.c: reading snapshot contents files (.lhs), frame by frame.
 */
#include "snapfile.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>
#include <zstd.h>

#include "bound.h"
#include "dec.h"
#include "dupstr.h"
#include "enc.h"
#include "format.h"
#include "fread_count.h"
#include "grow.h"

/* Limits against hostile files. */
#define MAX_REGIONS (1u << 20)

/* An earlier file this one refers to (BASE) and a piece stored there (SAME). */
typedef struct base {
    uint64_t number;
    char *name;
} base_t;

typedef struct ref {
    uint64_t number, addr, len;
} ref_t;

/* Limits against hostile files: a delta refers to fewer files than this. */
#define MAX_BASES 64

typedef struct reader {
    lh_snapfile_t *sf;
    const lh_snapfile_opts_t *opts;
    FILE *f;
    uint64_t off;          /* bytes consumed */
    uint64_t n_frames;
    uint8_t *comp, *raw;
    size_t comp_cap, raw_cap;
    size_t cap_words, cap_regions, cap_pages, cap_hdr;
    int sorted;            /* words arrived in increasing address order so far */
    int seen_end;
    int no_refs;           /* reading a base: what it stores, its own references left */
    base_t *bases;      /* BASE records */
    size_t n_bases, cap_bases;
    ref_t *refs;        /* SAME records' pieces */
    size_t n_refs, cap_refs;
    lh_err_t *err;
} reader_t;

/* lh_dupstr, with any NUL inside the name shown as '?' (a name is not cut short). */
static char *
dup_n(const char *s, size_t n)
{
    char *r = lh_dupstr(s, n);
    for (size_t i = 0; r && i < n; i++) {
        if (r[i] == '\0') {
            r[i] = '?';
        }
    }
    return r;
}

static int
push_word(reader_t *rd, uint64_t addr, uint64_t val)
{
    lh_snapfile_t *sf = rd->sf;
    if (lh_grow(&sf->words, &rd->cap_words, sf->n_words, sizeof *sf->words, 1024) < 0) {
        return LH_ENOMEM;
    }
    if (sf->n_words && addr <= sf->words[sf->n_words - 1].addr) {
        rd->sorted = 0;
    }
    sf->words[sf->n_words++] = (lh_word_t){addr, val};
    return 0;
}

/* Sorts the n words at *v by address when they arrive as ascending runs (pointer words:
 * each frame's PTRS, a base's pieces, then the pages' words in page order; header words:
 * runs of 6 on a Python exit snapshot): a bottom-up merge of the runs, stable (equal
 * addresses keep their arrival order, as glibc's qsort left them). Each pass merges
 * neighbouring runs into the other buffer, which may leave the words in a buffer of n (the
 * array's capacity is no longer needed: nothing is added after sorting). Returns -1 when
 * the second buffer cannot be had (the caller sorts in place). */
static int
merge_words(lh_word_t **v, size_t n)
{
    lh_word_t *src = *v, *dst = malloc(n * sizeof *dst);
    if (!dst) {
        return -1;
    }
    for (;;) {
        size_t i = 0, merged = 0;
        while (i < n) {
            size_t j = i + 1;
            while (j < n && src[j - 1].addr <= src[j].addr) {
                j++;
            }
            if (i == 0 && j == n) {
                break; /* one run: sorted */
            }
            size_t k = j < n ? j + 1 : n;
            while (k < n && src[k - 1].addr <= src[k].addr) {
                k++;
            }
            size_t a = i, b = j, o = i;
            while (a < j && b < k) {
                dst[o++] = src[b].addr < src[a].addr ? src[b++] : src[a++];
            }
            memcpy(dst + o, src + a, (j - a) * sizeof *dst);
            o += j - a;
            memcpy(dst + o, src + b, (k - b) * sizeof *dst);
            i = k;
            merged++;
        }
        if (!merged) {
            break;
        }
        lh_word_t *t = src;
        src = dst;
        dst = t;
    }
    free(dst);
    *v = src;
    return 0;
}

static int
default_keep(const lh_snapfile_t *sf, uint64_t v)
{
    const lh_region_t *r = v ? lh_snapfile_region(sf, v) : NULL;
    return r && (r->kind == LH_REGION_HEAP || r->kind == LH_REGION_MAPPED);
}

/* ---------------------------------------------------------------------------------------
 * Records
 * ------------------------------------------------------------------------------------- */

static int
rec_region(reader_t *rd, lh_dec_t *pl)
{
    lh_snapfile_t *sf = rd->sf;
    lh_region_t r = {0};
    size_t len;
    r.start = lh_dec_varint(pl);
    r.len = lh_dec_varint(pl);
    uint64_t kind = lh_dec_varint(pl);
    const char *name = lh_dec_str(pl, &len);
    if (!lh_dec_ok(pl) || kind > 255 || r.start + r.len < r.start) {
        return LH_EFORMAT;
    }
    if (sf->n_regions >= MAX_REGIONS) {
        return LH_EFORMAT;
    }
    r.kind = (uint8_t)kind;
    if (lh_grow(&sf->regions, &rd->cap_regions, sf->n_regions, sizeof r, 1024) < 0 ||
        !(r.name = dup_n(name, len))) {
        return LH_ENOMEM;
    }
    sf->regions[sf->n_regions++] = r;
    return 0;
}

/* PTRS: deltas run across the records of a frame (state in *prev_*), from 0 at each. */
static int
rec_ptrs(reader_t *rd, lh_dec_t *pl, uint64_t *prev_addr, uint64_t *prev_val)
{
    uint64_t count = lh_dec_varint(pl);
    if (!lh_dec_ok(pl) || count > lh_dec_left(pl) / 2) {
        return LH_EFORMAT; /* each pair takes at least two bytes */
    }
    for (uint64_t i = 0; i < count; i++) {
        uint64_t da = lh_dec_varint(pl);
        int64_t dv = lh_dec_svarint(pl);
        if (!lh_dec_ok(pl) || da > (UINT64_MAX >> 3)) {
            return LH_EFORMAT;
        }
        uint64_t a = *prev_addr + da * 8;
        if (a < *prev_addr) {
            return LH_EFORMAT;
        }
        *prev_addr = a;
        *prev_val += (uint64_t)dv;
        if (push_word(rd, a, *prev_val) < 0) {
            return LH_ENOMEM;
        }
    }
    return 0;
}

/* WORDS: header words for the heuristics, absolute, in no order. */
static int
rec_words(reader_t *rd, lh_dec_t *pl)
{
    lh_snapfile_t *sf = rd->sf;
    uint64_t count = lh_dec_varint(pl);
    if (!lh_dec_ok(pl) || count > lh_dec_left(pl) / 2) {
        return LH_EFORMAT;
    }
    for (uint64_t i = 0; i < count; i++) {
        uint64_t a8 = lh_dec_varint(pl);
        uint64_t v = lh_dec_varint(pl);
        if (!lh_dec_ok(pl) || a8 > (UINT64_MAX >> 3)) {
            return LH_EFORMAT;
        }
        if (lh_grow(&sf->hdr, &rd->cap_hdr, sf->n_hdr, sizeof *sf->hdr, 1024) < 0) {
            return LH_ENOMEM;
        }
        sf->hdr[sf->n_hdr++] = (lh_word_t){a8 * 8, v};
    }
    return 0;
}

static int
rec_bytes(reader_t *rd, lh_dec_t *pl)
{
    lh_snapfile_t *sf = rd->sf;
    uint64_t addr = lh_dec_varint(pl);
    size_t len = lh_dec_left(pl);
    const uint8_t *b = lh_dec_bytes(pl, len);
    if (!lh_dec_ok(pl) || addr + len < addr) {
        return LH_EFORMAT;
    }
    /* Kept until the end: its words may point into regions not seen yet. */
    lh_page_t pg = {addr, malloc(len ? len : 1), len};
    if (!pg.bytes ||
        lh_grow(&sf->pages, &rd->cap_pages, sf->n_pages, sizeof pg, 1024) < 0) {
        free(pg.bytes);
        return LH_ENOMEM;
    }
    memcpy(pg.bytes, b, len);
    sf->pages[sf->n_pages++] = pg;
    return 0;
}

/* BASE: varint number, string file name (a base name: never a path elsewhere). */
static int
rec_base(reader_t *rd, lh_dec_t *pl)
{
    size_t len;
    uint64_t number = lh_dec_varint(pl);
    const char *name = lh_dec_str(pl, &len);
    if (!lh_dec_ok(pl) || !len || memchr(name, '/', len) || rd->n_bases >= MAX_BASES ||
        number == rd->sf->number) {
        return LH_EFORMAT;
    }
    base_t b = {number, dup_n(name, len)};
    if (!b.name ||
        lh_grow(&rd->bases, &rd->cap_bases, rd->n_bases, sizeof b, 8) < 0) {
        free(b.name);
        return LH_ENOMEM;
    }
    rd->bases[rd->n_bases++] = b;
    return 0;
}

/* SAME: varint base number, varint count, count x (varint address delta / 8, varint
 * length / 8). */
static int
rec_same(reader_t *rd, lh_dec_t *pl)
{
    uint64_t number = lh_dec_varint(pl);
    uint64_t count = lh_dec_varint(pl);
    uint64_t addr = 0;
    if (!lh_dec_ok(pl) || count > lh_dec_left(pl) / 2) {
        return LH_EFORMAT;
    }
    for (uint64_t i = 0; i < count; i++) {
        uint64_t da = lh_dec_varint(pl);
        uint64_t l8 = lh_dec_varint(pl);
        if (!lh_dec_ok(pl) || da > (UINT64_MAX >> 3) || !l8 || l8 > (1u << 20) ||
            addr + da * 8 < addr || (i && !da)) {
            return LH_EFORMAT;
        }
        addr += da * 8;
        if (lh_grow(&rd->refs, &rd->cap_refs, rd->n_refs, sizeof *rd->refs, 1024) < 0) {
            return LH_ENOMEM;
        }
        rd->refs[rd->n_refs++] = (ref_t){number, addr, l8 * 8};
    }
    return 0;
}

static int
frame_records(reader_t *rd, const uint8_t *p, size_t len, uint32_t *bad_idx, uint8_t *bad_type)
{
    lh_snapfile_t *sf = rd->sf;
    lh_dec_t d, pl;
    uint8_t type;
    uint64_t prev_addr = 0, prev_val = 0;
    uint32_t idx = 0;
    int rc;
    lh_dec_init(&d, p, len);
    while ((rc = lh_dec_record(&d, &type, &pl)) > 0) {
        *bad_idx = idx;
        *bad_type = type;
        switch (type) {
        case LH_SREC_REGION:
            rc = rec_region(rd, &pl);
            break;
        case LH_SREC_PTRS:
            rc = rec_ptrs(rd, &pl, &prev_addr, &prev_val);
            break;
        case LH_SREC_BYTES:
            rc = rec_bytes(rd, &pl);
            break;
        case LH_SREC_WORDS:
            rc = rec_words(rd, &pl);
            break;
        case LH_SREC_BASE:
            rc = rd->no_refs ? 0 : rec_base(rd, &pl);
            break;
        case LH_SREC_SAME:
            rc = rd->no_refs ? 0 : rec_same(rd, &pl);
            break;
        case LH_SREC_THREAD:
            sf->capture_tid = lh_dec_varint(&pl);
            sf->capture_sp = lh_dec_varint(&pl);
            rc = lh_dec_ok(&pl) ? 0 : LH_EFORMAT;
            break;
        case LH_SREC_END:
            sf->end_regions = lh_dec_varint(&pl);
            sf->end_words = lh_dec_varint(&pl);
            sf->end_ptrs = lh_dec_varint(&pl);
            sf->end_bytes = lh_dec_varint(&pl);
            rc = lh_dec_ok(&pl) ? 0 : LH_EFORMAT;
            rd->seen_end = 1;
            break;
        default:
            rc = 0; /* a newer record type: skip it */
            break;
        }
        if (rc < 0) {
            return rc;
        }
        idx++;
    }
    *bad_idx = idx;
    *bad_type = 0;
    return rc < 0 ? LH_EFORMAT : 0;
}

/* ---------------------------------------------------------------------------------------
 * Container
 * ------------------------------------------------------------------------------------- */

static size_t
read_some(reader_t *rd, void *buf, size_t n)
{
    return lh_fread_count(rd->f, buf, n, &rd->off);
}

static int
truncated(reader_t *rd, const char *where)
{
    if (ferror(rd->f)) {
        return lh_err_set(rd->err, LH_EIO, "%s: read error at offset %" PRIu64 ": %s",
                          rd->sf->path, rd->off, strerror(errno));
    }
    return lh_err_set(rd->err, LH_ETRUNC,
                      "%s: snapshot file truncated at offset %" PRIu64 " (%s)", rd->sf->path,
                      rd->off, where);
}

static int
read_header(reader_t *rd)
{
    lh_snapfile_t *sf = rd->sf;
    uint8_t b[LH_FILE_HEADER_LEN];
    size_t got = read_some(rd, b, sizeof b);
    size_t cmp = got < 8 ? got : 8;
    if (got == 0) {
        return lh_err_set(rd->err, LH_EFORMAT, "%s: empty file (not a leakhound snapshot)",
                          sf->path);
    }
    if (memcmp(b, LH_SNAP_MAGIC, cmp) != 0) {
        return lh_err_set(rd->err, LH_EFORMAT, "%s: not a leakhound snapshot file (bad magic)",
                          sf->path);
    }
    if (got < sizeof b) {
        return truncated(rd, "in the file header");
    }
    lh_dec_t d;
    lh_dec_init(&d, b + 8, 8);
    sf->major = lh_dec_u16le(&d);
    sf->minor = lh_dec_u16le(&d);
    uint32_t info_len = lh_dec_u32le(&d);
    if (sf->major != LH_FORMAT_MAJOR) {
        return lh_err_set(rd->err, LH_EVERSION,
                          "%s: snapshot format %u.%u is not supported (this leakhound reads "
                          "%d.x)", sf->path, sf->major, sf->minor, LH_FORMAT_MAJOR);
    }
    if (info_len > (1u << 20)) {
        return lh_err_set(rd->err, LH_EFORMAT, "%s: corrupt header (info block of %u bytes)",
                          sf->path, info_len);
    }
    uint8_t *info = malloc(info_len ? info_len : 1);
    if (!info) {
        return lh_err_set(rd->err, LH_ENOMEM, "%s: out of memory", sf->path);
    }
    int rc = 0;
    if (read_some(rd, info, info_len) != info_len) {
        rc = truncated(rd, "in the info block");
        goto done;
    }
    lh_dec_t id, pl;
    uint8_t type;
    lh_dec_init(&id, info, info_len);
    while ((rc = lh_dec_record(&id, &type, &pl)) > 0) {
        if (type != LH_SREC_INFO) {
            continue;
        }
        size_t len;
        sf->pid = lh_dec_varint(&pl);
        sf->number = lh_dec_varint(&pl);
        sf->ts_ns = lh_dec_varint(&pl);
        const char *label = lh_dec_str(&pl, &len);
        sf->mode = lh_dec_varint(&pl);
        if (!lh_dec_ok(&pl)) {
            rc = -1;
            break;
        }
        free(sf->label);
        if (!(sf->label = dup_n(label, len))) {
            rc = lh_err_set(rd->err, LH_ENOMEM, "%s: out of memory", sf->path);
            goto done;
        }
    }
    if (rc < 0) {
        rc = lh_err_set(rd->err, LH_EFORMAT, "%s: malformed info block", sf->path);
    }
done:
    free(info);
    return rc;
}

/* Reads one frame. Returns 1, 0 at the end of the file, or a negative code. */
static int
read_frame(reader_t *rd)
{
    lh_snapfile_t *sf = rd->sf;
    uint8_t hb[LH_FRAME_HEADER_LEN];
    lh_frame_hdr_t h;
    const char *why = NULL;
    uint64_t off = rd->off;
    size_t got = read_some(rd, hb, sizeof hb);
    if (got == 0 && !ferror(rd->f)) {
        return 0;
    }
    if (got < sizeof hb) {
        return truncated(rd, "in a frame header");
    }
    if (lh_dec_frame_header(hb, &h, &why) < 0) {
        return lh_err_set(rd->err, LH_EFORMAT, "%s: frame %" PRIu64 " at offset %" PRIu64
                          ": %s", sf->path, rd->n_frames, off, why);
    }
    for (size_t extra = h.header_len - LH_FRAME_HEADER_LEN; extra > 0;) {
        size_t n = extra < sizeof hb ? extra : sizeof hb;
        if (read_some(rd, hb, n) != n) {
            return truncated(rd, "in a frame header");
        }
        extra -= n;
    }
    if (lh_grow_to(&rd->comp, &rd->comp_cap, h.comp_len ? h.comp_len : 1, 1, 65536) < 0) {
        return lh_err_set(rd->err, LH_ENOMEM, "%s: out of memory", sf->path);
    }
    if (read_some(rd, rd->comp, h.comp_len) != h.comp_len) {
        return truncated(rd, "in a frame's payload");
    }
    if (lh_crc32c(0, rd->comp, h.comp_len) != h.payload_crc) {
        return lh_err_set(rd->err, LH_EFORMAT, "%s: frame %" PRIu64 " at offset %" PRIu64
                          ": payload checksum mismatch", sf->path, rd->n_frames, off);
    }
    const uint8_t *payload = rd->comp;
    if (h.codec == LH_CODEC_ZSTD) {
        if (lh_grow_to(&rd->raw, &rd->raw_cap, h.raw_len ? h.raw_len : 1, 1, 65536) < 0) {
            return lh_err_set(rd->err, LH_ENOMEM, "%s: out of memory", sf->path);
        }
        size_t n = ZSTD_decompress(rd->raw, h.raw_len, rd->comp, h.comp_len);
        if (ZSTD_isError(n) || n != h.raw_len) {
            return lh_err_set(rd->err, LH_EFORMAT, "%s: frame %" PRIu64 " at offset %" PRIu64
                              ": cannot decompress (%s)", sf->path, rd->n_frames, off,
                              ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size mismatch");
        }
        payload = rd->raw;
    }
    uint32_t idx = 0;
    uint8_t type = 0;
    int rc = frame_records(rd, payload, h.raw_len, &idx, &type);
    if (rc == LH_ENOMEM) {
        return lh_err_set(rd->err, rc, "%s: out of memory", sf->path);
    }
    if (rc < 0) {
        return lh_err_set(rd->err, LH_EFORMAT, "%s: frame %" PRIu64 " at offset %" PRIu64
                          ": malformed record %u (type 0x%02x)", sf->path, rd->n_frames, off,
                          idx, type);
    }
    rd->n_frames++;
    return 1;
}

/* Mode full: the pointer words of the pages (aligned 8-byte values the filter keeps); the
 * pages are freed unless the caller wants them. */
static int
page_words(reader_t *rd)
{
    lh_snapfile_t *sf = rd->sf;
    uint64_t (*next_span)(void *, uint64_t, uint64_t *) = rd->opts ? rd->opts->next_span : NULL;
    for (size_t i = 0; i < sf->n_pages; i++) {
        const lh_page_t *pg = &sf->pages[i];
        uint64_t first = (pg->addr + 7) & ~(uint64_t)7, lim = pg->addr + pg->len;
        uint64_t lo = 0, hi = next_span ? 0 : UINT64_MAX; /* the stretch [lo, hi) */
        for (uint64_t a = first; a + 8 <= lim; a += 8) {
            if (a >= hi) {
                lo = next_span(rd->opts->keep_ctx, a, &hi);
            }
            if (a < lo) {
                if (lo >= lim) {
                    break;
                }
                a = ((lo + 7) & ~(uint64_t)7) - 8; /* the step lands on the stretch's first word */
                continue;
            }
            uint64_t v;
            memcpy(&v, pg->bytes + (a - pg->addr), 8);
            int keep = rd->opts && rd->opts->keep ? rd->opts->keep(rd->opts->keep_ctx, v)
                                                  : default_keep(sf, v);
            if (keep && push_word(rd, a, v) < 0) {
                return lh_err_set(rd->err, LH_ENOMEM, "%s: out of memory", sf->path);
            }
        }
    }
    if (!rd->opts || !rd->opts->keep_pages) {
        LH_FREE_EACH(sf->pages, sf->n_pages, lh_page_t, bytes);
        sf->pages = NULL;
        sf->n_pages = 0;
    }
    return 0;
}

int
lh_snapfile_keep_none(void *ctx, uint64_t value)
{
    (void)ctx;
    (void)value;
    return 0;
}

static int read_file(const char *path, const lh_snapfile_opts_t *opts, lh_snapfile_t *sf,
                     lh_err_t *err, int no_refs);

/* The pieces of one base file: its pages (mode full) or its pointer words in them. */
static int
take_pieces(reader_t *rd, const base_t *b, lh_snapfile_t *bf)
{
    lh_snapfile_t *sf = rd->sf;
    for (size_t i = 0; i < rd->n_refs; i++) {
        const ref_t *r = &rd->refs[i];
        if (r->number != b->number) {
            continue;
        }
        if (sf->mode == LH_CONTENTS_FULL) {
            size_t k = LH_LOWER(bf->pages, bf->n_pages, lh_page_t, addr, r->addr);
            if (k == bf->n_pages || bf->pages[k].addr != r->addr || bf->pages[k].len != r->len) {
                return lh_err_set(rd->err, LH_EFORMAT, "%s: refers to %s for the page at 0x%"
                                  PRIx64 ", which that file does not hold", sf->path, b->name,
                                  r->addr);
            }
            if (lh_grow(&sf->pages, &rd->cap_pages, sf->n_pages, sizeof *sf->pages, 1024) < 0) {
                return lh_err_set(rd->err, LH_ENOMEM, "%s: out of memory", sf->path);
            }
            sf->pages[sf->n_pages++] = bf->pages[k];
            bf->pages[k].bytes = NULL; /* moved */
            bf->pages[k].len = 0;
            continue;
        }
        for (size_t k = LH_LOWER(bf->words, bf->n_words, lh_word_t, addr, r->addr);
             k < bf->n_words && bf->words[k].addr < r->addr + r->len; k++) {
            if (push_word(rd, bf->words[k].addr, bf->words[k].val) < 0) {
                return lh_err_set(rd->err, LH_ENOMEM, "%s: out of memory", sf->path);
            }
        }
    }
    return 0;
}

/* A delta file: reads each earlier file it refers to (what that file stores itself, never
 * its own references: the agent refers to the file that holds a piece) and takes the
 * pieces from it. A base that is missing, unreadable, of another process or snapshot, or
 * without a piece it should hold is an error naming both files. */
static int
resolve_refs(reader_t *rd)
{
    lh_snapfile_t *sf = rd->sf;
    lh_snapfile_opts_t bo = {lh_snapfile_keep_none, NULL, sf->mode == LH_CONTENTS_FULL, NULL};
    ref_t *refs = rd->refs;
    if (rd->n_refs) {
        LH_SORT(refs, rd->n_refs, ref_t, addr);
    }
    for (size_t i = 0; i < rd->n_bases; i++) {
        const base_t *b = &rd->bases[i];
        char *path = lh_snapfile_contents_path(sf->path, b->name);
        lh_snapfile_t bf;
        lh_err_t berr;
        if (!path) {
            return lh_err_set(rd->err, LH_ENOMEM, "%s: out of memory", sf->path);
        }
        int rc = read_file(path, &bo, &bf, &berr, 1);
        free(path);
        if (rc < 0) {
            lh_snapfile_fini(&bf);
            return lh_err_set(rd->err, rc, "%s: its unchanged pages are in snapshot %" PRIu64
                              " (%s), which cannot be read: %s", sf->path, b->number, b->name,
                              berr.msg);
        }
        if (bf.number != b->number || bf.pid != sf->pid || bf.mode != sf->mode) {
            rc = lh_err_set(rd->err, LH_EFORMAT, "%s: refers to %s as snapshot %" PRIu64
                            " of process %" PRIu64 ", but that file is snapshot %" PRIu64
                            " of process %" PRIu64 " (mode %" PRIu64 ")", sf->path, b->name,
                            b->number, sf->pid, bf.number, bf.pid, bf.mode);
        } else {
            rc = take_pieces(rd, b, &bf);
        }
        lh_snapfile_fini(&bf);
        if (rc < 0) {
            return rc;
        }
    }
    for (size_t i = 0; i < rd->n_refs; i++) {
        int known = 0;
        for (size_t k = 0; k < rd->n_bases && !known; k++) {
            known = rd->bases[k].number == refs[i].number;
        }
        if (!known) {
            return lh_err_set(rd->err, LH_EFORMAT, "%s: refers to snapshot %" PRIu64
                              " for the page at 0x%" PRIx64 " but names no such file",
                              sf->path, refs[i].number, refs[i].addr);
        }
    }
    return 0;
}

int
lh_snapfile_read(const char *path, const lh_snapfile_opts_t *opts, lh_snapfile_t *sf,
                 lh_err_t *err)
{
    return read_file(path, opts, sf, err, 0);
}

/* The first half of read_file, which needs no opts: the header, every frame, the bases'
 * pieces; regions and pages sorted. rd->sf, rd->err and rd->no_refs are set. */
static int
read_frames(reader_t *rd, const char *path)
{
    lh_snapfile_t *sf = rd->sf;
    int rc;
    memset(sf, 0, sizeof *sf);
    rd->sorted = 1;
    if (!(sf->path = strdup(path))) {
        return lh_err_set(rd->err, LH_ENOMEM, "%s: out of memory", path);
    }
    rd->f = fopen(path, "rb");
    if (!rd->f) {
        int e = errno;
        return lh_err_set(rd->err, e == ENOENT ? LH_ENOENT : LH_EIO, "%s: %s", path,
                          strerror(e));
    }
    if ((rc = read_header(rd)) < 0) {
        return rc;
    }
    while ((rc = read_frame(rd)) > 0) {
    }
    if (rc < 0) {
        return rc;
    }
    if (!rd->seen_end) {
        return lh_err_set(rd->err, LH_ETRUNC, "%s: snapshot file incomplete (no END record "
                          "after %" PRIu64 " frames: the capture was interrupted)", path,
                          rd->n_frames);
    }
    if ((rd->n_bases || rd->n_refs) && (rc = resolve_refs(rd)) < 0) {
        return rc;
    }
    /* qsort's array must not be NULL, even for 0 elements (UBSan, found by fuzzing). */
    if (sf->n_regions) {
        LH_SORT(sf->regions, sf->n_regions, lh_region_t, start);
    }
    if (sf->n_pages) {
        LH_SORT(sf->pages, sf->n_pages, lh_page_t, addr);
    }
    return 0;
}

/* The second half: the pages' words by rd->opts, the words sorted, one per address. */
static int
read_words(reader_t *rd)
{
    lh_snapfile_t *sf = rd->sf;
    int rc;
    if ((rc = page_words(rd)) < 0) {
        return rc;
    }
    if (!rd->sorted && merge_words(&sf->words, sf->n_words) < 0) {
        LH_SORT(sf->words, sf->n_words, lh_word_t, addr);
    }
    /* One value per address: keep the last. */
    size_t k = 0;
    for (size_t i = 0; i < sf->n_words; i++) {
        if (k && sf->words[k - 1].addr == sf->words[i].addr) {
            sf->words[k - 1] = sf->words[i];
        } else {
            sf->words[k++] = sf->words[i];
        }
    }
    sf->n_words = k;
    if (sf->n_hdr) {
        if (merge_words(&sf->hdr, sf->n_hdr) < 0) {
            LH_SORT(sf->hdr, sf->n_hdr, lh_word_t, addr);
        }
        k = 0;
        for (size_t i = 0; i < sf->n_hdr; i++) {
            if (!k || sf->hdr[k - 1].addr != sf->hdr[i].addr) {
                sf->hdr[k++] = sf->hdr[i];
            }
        }
        sf->n_hdr = k;
    }
    return 0;
}

static void
reader_fini(reader_t *rd)
{
    if (rd->f) {
        fclose(rd->f);
        rd->f = NULL;
    }
    LH_FREE_EACH(rd->bases, rd->n_bases, base_t, name);
    LH_FREE_ALL(rd->comp, rd->raw, rd->refs);
}

static int
read_file(const char *path, const lh_snapfile_opts_t *opts, lh_snapfile_t *sf, lh_err_t *err,
          int no_refs)
{
    reader_t rd = {0};
    rd.sf = sf;
    rd.opts = opts;
    rd.err = err;
    rd.no_refs = no_refs;
    int rc = read_frames(&rd, path);
    if (rc >= 0) {
        rc = read_words(&rd);
    }
    reader_fini(&rd);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * Reading ahead
 * ------------------------------------------------------------------------------------- */

struct lh_snapfile_ahead {
    pthread_t th;
    char *path;
    reader_t rd;     /* read_frames' state, its sf and err below */
    lh_snapfile_t sf;
    lh_err_t err;
    int rc;
    int taken;       /* joined, its result handed over */
};

static void *
ahead_main(void *arg)
{
    lh_snapfile_ahead_t *ah = arg;
    ah->rc = read_frames(&ah->rd, ah->path);
    return NULL;
}

lh_snapfile_ahead_t *
lh_snapfile_ahead_start(const char *path)
{
    lh_snapfile_ahead_t *ah = calloc(1, sizeof *ah);
    if (!ah || !(ah->path = strdup(path))) {
        free(ah);
        return NULL;
    }
    ah->rd.sf = &ah->sf;
    ah->rd.err = &ah->err;
    if (pthread_create(&ah->th, NULL, ahead_main, ah) != 0) {
        free(ah->path);
        free(ah);
        return NULL;
    }
    return ah;
}

int
lh_snapfile_read_ahead(lh_snapfile_ahead_t *ah, const char *path,
                       const lh_snapfile_opts_t *opts, lh_snapfile_t *sf, lh_err_t *err)
{
    if (!ah || ah->taken || strcmp(ah->path, path) != 0) {
        return read_file(path, opts, sf, err, 0);
    }
    pthread_join(ah->th, NULL);
    ah->taken = 1;
    /* what read_file would have had after read_frames, moved here */
    *sf = ah->sf;
    memset(&ah->sf, 0, sizeof ah->sf);
    reader_t rd = ah->rd;
    memset(&ah->rd, 0, sizeof ah->rd);
    rd.sf = sf;
    rd.opts = opts;
    rd.err = err;
    int rc = ah->rc;
    if (rc < 0) {
        *err = ah->err;
    } else {
        rc = read_words(&rd);
    }
    reader_fini(&rd);
    return rc;
}

void
lh_snapfile_ahead_free(lh_snapfile_ahead_t *ah)
{
    if (!ah) {
        return;
    }
    if (!ah->taken) {
        pthread_join(ah->th, NULL);
        reader_fini(&ah->rd);
        lh_snapfile_fini(&ah->sf);
    }
    free(ah->path);
    free(ah);
}

void
lh_snapfile_fini(lh_snapfile_t *sf)
{
    if (!sf) {
        return;
    }
    LH_FREE_EACH(sf->regions, sf->n_regions, lh_region_t, name);
    LH_FREE_EACH(sf->pages, sf->n_pages, lh_page_t, bytes);
    LH_FREE_ALL(sf->words, sf->hdr, sf->label, sf->path);
    memset(sf, 0, sizeof *sf);
}

const lh_region_t *
lh_snapfile_region(const lh_snapfile_t *sf, uint64_t addr)
{
    /* the last region starting at or before addr (they are sorted and do not overlap).
     * Most words a heap holds that are no pointer (counts, sizes, hashes) lie below the
     * first or at or past the last: answered without the search. */
    if (sf->n_regions == 0 || addr < sf->regions[0].start) {
        return NULL;
    }
    const lh_region_t *top = &sf->regions[sf->n_regions - 1];
    if (addr >= top->start) {
        return addr - top->start < top->len ? top : NULL;
    }
    size_t i = LH_UPPER(sf->regions, sf->n_regions, lh_region_t, start, addr);
    const lh_region_t *r = i ? &sf->regions[i - 1] : NULL;
    return r && addr - r->start < r->len ? r : NULL;
}

int
lh_snapfile_is_suffix(const char *p)
{
    if (strncmp(p, ".snap", 5) != 0) {
        return 0;
    }
    const char *q = p + 5;
    while (*q >= '0' && *q <= '9') {
        q++;
    }
    return q > p + 5 && strncmp(q, ".lhs", 4) == 0 && (q[4] == '\0' || q[4] == '.');
}

/* The last contents-file suffix in NAME, or NULL. */
static const char *
last_suffix(const char *name)
{
    const char *found = NULL;
    for (const char *p = name; (p = strstr(p, ".snap")) != NULL; p++) {
        if (lh_snapfile_is_suffix(p)) {
            found = p;
        }
    }
    return found;
}

size_t
lh_snapfile_stem_len(const char *name)
{
    const char *suf = last_suffix(name);
    size_t n = strlen(name);
    if (suf) {
        return (size_t)(suf - name);
    }
    return n > 4 && strcmp(name + n - 4, ".lht") == 0 ? n - 4 : n;
}

char *
lh_snapfile_contents_path(const char *owner, const char *file)
{
    const char *slash = strrchr(owner, '/');
    const char *base = slash ? slash + 1 : owner;
    size_t dl = (size_t)(base - owner);
    size_t stem = lh_snapfile_stem_len(base);
    const char *suf = last_suffix(file);
    size_t cap = dl + strlen(file) + stem + (suf ? strlen(suf) : 0) + 1;
    char *path = malloc(cap);
    if (!path) {
        return NULL;
    }
    snprintf(path, cap, "%.*s%s", (int)dl, owner, file);
    if (suf && access(path, F_OK) != 0 && errno == ENOENT) {
        /* Renamed with its trace: the same suffix after the owner's current stem. */
        snprintf(path, cap, "%.*s%s", (int)(dl + stem), owner, suf);
        if (access(path, F_OK) != 0) {
            snprintf(path, cap, "%.*s%s", (int)dl, owner, file); /* errors name the stored */
        }
    }
    return path;
}
