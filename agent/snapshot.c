/* leakhound - SPDX-License-Identifier: MIT
 *
 * snapshot.c: snapshot records and the copy-on-write contents child (see snapshot.h).
 *
 * The child runs with one thread in a copy of an address space where other threads may
 * have been holding any lock: it must not call malloc, stdio, the loader or anything that
 * locks. It uses raw system calls, our own encoder, and a zstd context reserved for it
 * (never used by the parent, so never caught mid-compression).
 */
#define ZSTD_STATIC_LINKING_ONLY
#include "snapshot.h"
#include "slots.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "ownfd.h"
#include "agent.h"
#include "output.h"
#include "record.h"
#include "enc.h"
#include "format.h"
#include "snapdelta.h"
#include "snapwp.h"
#include "sys.h"
#include "loadermem.h"
#include "mmaps.h"
#include "threads.h"
#include "threadsp.h"

#define MAX_REGIONS 65536
#define MAPS_BUF (16u << 20)
#define OUT_RAW (1u << 20) /* records per frame before compression */
#define MAX_CHILDREN 16
#define MAX_TROOTS 16384 /* root ranges of threads: about 6 per thread */
#define MAX_CUTS 512     /* boundaries inside one mapping */
#define MAX_HDR (1u << 20) /* header words kept for the heuristics (WORDS records) */
#define HDR_SEEN 4096      /* recent pointer values whose header words are kept */

typedef struct region {
    uintptr_t lo, hi;
    uint8_t kind;      /* LH_REGION_*, 0 = not scanned */
    uint8_t is_target; /* pointers into it are recorded */
    uint8_t file;      /* file-backed */
    uint8_t readable;
    uint8_t anon_private; /* MAP_PRIVATE | MAP_ANONYMOUS (heap, stacks, bss): see scan_region */
    uint32_t name_off; /* into the maps text, NUL-terminated in place */
} region_t;

static int contents_mode;
static pthread_mutex_t take_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned n_snapshots; /* of this process (numbered_pid), under take_lock */
static pid_t numbered_pid;
/* Snapshot children still running or not yet waited for. A slot is filled under take_lock
 * and emptied by whoever waits for its child (the ticker, a capture, the exit path), only
 * if it still holds that child (compare-and-swap). */
static atomic_int children[MAX_CHILDREN];
static unsigned child_number[MAX_CHILDREN]; /* the snapshot each child writes */
static void reap_children(int wait);
static void *snap_cctx;
static uint8_t *raw_buf;  /* OUT_RAW + slack */
static uint8_t *comp_buf; /* frame header + compressBound(OUT_RAW) */
static size_t comp_cap;
static char *maps_buf;
static region_t *regions;
static int n_regions;
static lh_troot_t *troots; /* the child's: root ranges of the live threads */
static int n_troots;
typedef struct hdr_word {
    uintptr_t addr, val;
} hdr_word_t;
static hdr_word_t *hdrw;     /* the child's: header words below interior pointer targets */
static size_t n_hdrw;
static uintptr_t *hdr_seen; /* direct-mapped: values whose words are in hdrw already */
static lh_wp_range_t *tsig; /* the child's: the target ranges, for lh_snapdelta_targets */
/* The child's, with LEAKHOUND_TEST_SNAPWP_VERIFY: pages skipped unread, and those of them
 * whose contents, read anyway, were not the previous table's. */
static uint64_t wp_skipped, wp_wrong;

/* Set in a snapshot child: its memory must stay as its maps listed it at its start. */
static int in_child;

/* zstd's free for the snapshot's compressor. The workspace made by the warm-up below is
 * sized for its 4 bytes: every child's first frame freed it (a munmap) and made a larger
 * one. A region the child had listed then had a hole, and a header word read there
 * (note_header, its page remembered by page_mapped from before the first frame) killed the
 * child with SIGSEGV: a python 3.12 and a 3.13 snapshot child died so in CI, leaving files
 * with 1 frame and no END. In the child nothing is unmapped (it exits soon). */
static void
snap_zfree(void *opaque, void *p)
{
    if (!in_child) {
        lh_sys_zfree(opaque, p);
    }
}

/* Tests (LEAKHOUND_TEST_SNAPSHOT_CHILD_MAPS): how many readable regions listed at the
 * child's start are no longer wholly mapped (mincore fails with ENOMEM on a hole). */
static int
regions_gone(void)
{
    static unsigned char vec[4096];
    int gone = 0;
    for (int k = 0; k < n_regions; k++) {
        const region_t *r = &regions[k];
        if (!r->readable) {
            continue;
        }
        for (uintptr_t a = r->lo; a < r->hi; a += 4096 * sizeof vec) {
            size_t len = r->hi - a < 4096 * sizeof vec ? r->hi - a : 4096 * sizeof vec;
            if (mincore((void *)a, len, vec) != 0 && errno == ENOMEM) {
                gone++;
                break;
            }
        }
    }
    return gone;
}

int
lh_snapshot_init(int mode)
{
    contents_mode = mode;
    if (mode == LH_CONTENTS_NONE) {
        return 0;
    }
    ZSTD_customMem mem = {lh_sys_zalloc, snap_zfree, NULL};
    snap_cctx = ZSTD_createCCtx_advanced(mem);
    comp_cap = LH_FRAME_HEADER_LEN + ZSTD_compressBound(OUT_RAW + 65536);
    raw_buf = lh_sys_map(OUT_RAW + 65536);
    comp_buf = lh_sys_map(comp_cap);
    maps_buf = lh_sys_map(MAPS_BUF);
    regions = lh_sys_map(sizeof(region_t) * MAX_REGIONS);
    troots = lh_sys_map(sizeof(lh_troot_t) * MAX_TROOTS);
    hdrw = lh_sys_map(sizeof(hdr_word_t) * MAX_HDR); /* reserved; touched only as used */
    hdr_seen = lh_sys_map(sizeof(uintptr_t) * HDR_SEEN);
    tsig = lh_sys_map(sizeof(lh_wp_range_t) * MAX_REGIONS);
    lh_threads_init();
    lh_loadermem_init();
    if (!snap_cctx || !raw_buf || !comp_buf || !maps_buf || !regions || !troots || !hdrw ||
        !hdr_seen || !tsig) {
        contents_mode = LH_CONTENTS_NONE;
        return -1;
    }
    /* Compress once now, so zstd's workspace exists before any child needs it. */
    ZSTD_compressCCtx(snap_cctx, comp_buf, comp_cap, "warm", 4, 1);
    return 0;
}

/* -------------------------------------------------------------------------------------
 * The child
 * ----------------------------------------------------------------------------------- */
typedef struct out {
    int fd;
    lh_enc_t e;
    uint32_t n_records;
    uint64_t seq;
    int failed;
    uint64_t prev_addr, prev_val; /* PTRS delta state, reset per frame */
    uint8_t *ptrs_rec;            /* open PTRS record, or NULL */
    uint8_t *ptrs_count_at;
    uint32_t ptrs_count;
} out_t;

static void
out_frame(out_t *o)
{
    size_t len = (size_t)(o->e.p - raw_buf);
    if (!len || o->failed) {
        lh_enc_init(&o->e, raw_buf, OUT_RAW + 65536);
        o->n_records = 0;
        return;
    }
    uint8_t *payload = comp_buf + LH_FRAME_HEADER_LEN;
    size_t cap = comp_cap - LH_FRAME_HEADER_LEN;
    size_t clen = ZSTD_compressCCtx(snap_cctx, payload, cap, raw_buf, len, 1);
    uint8_t codec = LH_CODEC_ZSTD;
    if (ZSTD_isError(clen) || clen >= len) {
        memcpy(payload, raw_buf, len);
        clen = len;
        codec = LH_CODEC_RAW;
    }
    lh_frame_hdr_t h = {.codec = codec, .raw_len = (uint32_t)len, .comp_len = (uint32_t)clen,
                        .seq = o->seq++, .n_records = o->n_records};
    lh_enc_t he;
    lh_enc_init(&he, comp_buf, LH_FRAME_HEADER_LEN);
    lh_enc_frame_header(&he, &h, payload);
    if (lh_sys_write_all(o->fd, comp_buf, LH_FRAME_HEADER_LEN + clen) != 0) {
        o->failed = 1;
    }
    lh_enc_init(&o->e, raw_buf, OUT_RAW + 65536);
    o->n_records = 0;
    o->prev_addr = o->prev_val = 0;
}

/* A count reserved as a 5-byte varint (padded), so it can be patched in place. */
static void
patch_count(uint8_t *at, uint32_t c)
{
    for (int i = 0; i < 5; i++) {
        at[i] = (uint8_t)((c & 0x7f) | (i < 4 ? 0x80 : 0));
        c >>= 7;
    }
}

static void
ptrs_close(out_t *o)
{
    if (!o->ptrs_rec) {
        return;
    }
    patch_count(o->ptrs_count_at, o->ptrs_count);
    lh_enc_rec_end(&o->e, o->ptrs_rec);
    o->ptrs_rec = NULL;
    o->n_records++;
}

/* Room for a record of need bytes, starting a new frame when this one is full. */
static void
out_room(out_t *o, size_t need)
{
    if ((size_t)(o->e.p - raw_buf) + need > OUT_RAW) {
        ptrs_close(o);
        out_frame(o);
    }
}

static void
out_ptr(out_t *o, uintptr_t addr, uintptr_t val)
{
    if (!o->ptrs_rec || o->ptrs_count >= 4096 || (size_t)(o->e.p - raw_buf) + 24 > OUT_RAW) {
        ptrs_close(o);
        out_room(o, 4096 * 20 + 64);
        o->ptrs_rec = lh_enc_rec_begin(&o->e, LH_SREC_PTRS);
        o->ptrs_count_at = o->e.p;
        lh_enc_bytes(&o->e, "\0\0\0\0\0", 5);
        o->ptrs_count = 0;
    }
    lh_enc_varint(&o->e, (addr - o->prev_addr) / 8);
    lh_enc_svarint(&o->e, (int64_t)(val - o->prev_val));
    o->prev_addr = addr;
    o->prev_val = val;
    o->ptrs_count++;
}

/* Where a module's writable segments end in memory (its bss included), from the ELF and
 * program headers mapped at base (the module's mapping at file offset 0, readable up to
 * base_hi): memory reads only, no loader lock. 0 when they cannot be read. The kernel may
 * place an anonymous mapping (an mmap'd malloc chunk, an arena) right after a module's
 * data, where it looks like that module's bss: only the part below this end is. */
static uintptr_t
module_data_end(uintptr_t base, uintptr_t base_hi)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
    if (base_hi - base < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_phentsize != sizeof(ElfW(Phdr)) ||
        eh->e_phoff + (uintptr_t)eh->e_phnum * sizeof(ElfW(Phdr)) > base_hi - base) {
        return 0;
    }
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(base + eh->e_phoff);
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), min_vaddr = UINTPTR_MAX, end = 0;
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr < min_vaddr) {
            min_vaddr = ph[i].p_vaddr;
        }
    }
    if (min_vaddr == UINTPTR_MAX) {
        return 0;
    }
    uintptr_t bias = base - (min_vaddr & ~(page - 1));
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_W)) {
            uintptr_t e = bias + ph[i].p_vaddr + ph[i].p_memsz;
            end = e > end ? e : end;
        }
    }
    return end ? (end + page - 1) & ~(page - 1) : 0;
}

/* Parses /proc/self/maps into regions[]; names are NUL-terminated in maps_buf. Anonymous
 * writable memory is heap (blocks may live there: arenas, mmap'd chunks) whatever its
 * shape: thread stacks and TLS are cut out of it by the threads' own records (threads.h),
 * never guessed from a guard page below (a second malloc arena follows the first one's
 * reserved tail just like a stack follows its guard). */
static int
read_maps(void)
{
    ssize_t n = lh_sys_read_file("/proc/self/maps", maps_buf, MAPS_BUF - 1);
    if (n <= 0) {
        return 0;
    }
    maps_buf[n] = '\0';
    int nr = 0;
    char *p = maps_buf;
    uintptr_t base = 0, base_hi = 0; /* the last module's mapping at file offset 0 */
    uint32_t base_name = 0;
    while (*p && nr < MAX_REGIONS) {
        char *eol = strchr(p, '\n');
        if (eol) {
            *eol = '\0';
        }
        region_t *r = &regions[nr];
        memset(r, 0, sizeof *r);
        size_t k = lh_sys_parse_hex(p, &r->lo);
        k += 1 + lh_sys_parse_hex(p + k + 1, &r->hi);
        const char *perm = p + k + 1;
        uintptr_t offset = 0;
        (void)lh_sys_parse_hex(perm + 5, &offset); /* the third field */
        int readable = perm[0] == 'r';
        int writable = perm[1] == 'w';
        r->readable = (uint8_t)readable;
        /* the path is the sixth field */
        char *f = p;
        for (int field = 0; field < 5 && f; field++) {
            f = strchr(f, ' ');
            while (f && *f == ' ') {
                f++;
            }
        }
        const char *name = f && *f ? f : "";
        r->name_off = (uint32_t)(name - maps_buf);
        /* The agent's shared table (snapdelta.c) is listed as "/dev/zero (deleted)": not a
         * module (the anonymous memory after it is no module's bss), never scanned. */
        int agent_shared = perm[3] == 's' && lh_sys_is_agent_memory(r->lo, r->hi);
        /* A shared anonymous mapping (MAP_SHARED | MAP_ANONYMOUS) is listed the same way:
         * anonymous memory, no module (mmaps.h decides whether it is the program's). */
        int shared_anon = strcmp(name, "/dev/zero (deleted)") == 0;
        r->file = name[0] == '/' && !agent_shared && !shared_anon;
        r->anon_private = perm[3] == 'p' && name[0] != '/';
        int split = 0;
        if (r->file && offset == 0 && readable) {
            base = r->lo;
            base_hi = r->hi;
            base_name = r->name_off;
        }
        if (!readable || agent_shared) {
            r->kind = 0;
        } else if (r->file) {
            r->kind = writable ? LH_REGION_DATA : 0;
            r->is_target = 1; /* vtables and functions: lets the analyzer type blocks */
        } else if (strcmp(name, "[heap]") == 0) {
            r->kind = LH_REGION_HEAP;
            r->is_target = 1;
        } else if (strncmp(name, "[stack", 6) == 0) {
            r->kind = writable ? LH_REGION_STACK : 0;
        } else if (name[0] == '[') {
            r->kind = 0; /* [vvar], [vdso], [vsyscall] */
        } else if (writable) {
            r->kind = LH_REGION_HEAP;
            r->is_target = 1;
            if (nr > 0 && regions[nr - 1].hi == r->lo && regions[nr - 1].file) {
                /* bss: anonymous memory right after a module's file-backed data, as far as
                 * its program headers say; what lies beyond is heap (module_data_end) */
                region_t *prev = &regions[nr - 1];
                uint32_t anon_name = r->name_off;
                int same = base && strcmp(maps_buf + base_name, maps_buf + prev->name_off) == 0;
                uintptr_t end = same ? module_data_end(base, base_hi) : 0;
                if (!end || end > r->lo) {
                    r->kind = prev->kind == LH_REGION_DATA ? LH_REGION_DATA : LH_REGION_HEAP;
                    r->name_off = prev->name_off;
                    r->is_target = r->kind == LH_REGION_HEAP;
                }
                if (end > r->lo && end < r->hi && nr + 1 < MAX_REGIONS) {
                    region_t *tail = &regions[nr + 1]; /* heap beyond the bss */
                    *tail = (region_t){.lo = end, .hi = r->hi, .kind = LH_REGION_HEAP,
                                       .is_target = 1, .readable = 1,
                                       .anon_private = r->anon_private, .name_off = anon_name};
                    r->hi = end;
                    split = 1;
                }
            }
        }
        /* The agent's own buffers and tables are cut out in the child (collect_troots):
         * the kernel merges adjacent anonymous mappings, so one line of the maps may hold
         * both the agent's memory and the program's (jemalloc's extents, mmap'd chunks). */
        if (r->file && strcmp(name, lh_g.self_path) == 0) {
            r->kind = 0; /* the agent's own data and bss */
            r->is_target = 0;
            if (nr + 1 < MAX_REGIONS) {
                regions[nr + 1].name_off = r->name_off;
            }
        }
        if (nr > 0 && !regions[nr - 1].kind && regions[nr - 1].file && !r->file &&
            regions[nr - 1].hi == r->lo &&
            strcmp(maps_buf + regions[nr - 1].name_off, lh_g.self_path) == 0) {
            r->kind = 0; /* the agent's bss */
            r->is_target = 0;
            split = 0; /* all of it: the agent's memory is cut out in the child anyway */
        }
        nr += 1 + split;
        if (!eol) {
            break;
        }
        p = eol + 1;
    }
    return nr;
}

static void
emit_region(out_t *o, const region_t *r, const char *name)
{
    out_room(o, 64 + strlen(name));
    ptrs_close(o);
    uint8_t *rec = lh_enc_rec_begin(&o->e, LH_SREC_REGION);
    lh_enc_varint(&o->e, r->lo);
    lh_enc_varint(&o->e, r->hi - r->lo);
    lh_enc_varint(&o->e, r->kind);
    lh_enc_str(&o->e, name);
    lh_enc_rec_end(&o->e, rec);
    o->n_records++;
}

/* The region of the sorted rs[0..n) that holds v, or NULL. */
static const region_t *
find_region(const region_t *rs, int n, uintptr_t v)
{
    int lo = 0;
    int hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (v < rs[mid].lo) {
            hi = mid - 1;
        } else if (v >= rs[mid].hi) {
            lo = mid + 1;
        } else {
            return &rs[mid];
        }
    }
    return NULL;
}

/* find_region, when that region is a target. */
static const region_t *
target_region(const region_t *rs, int n, uintptr_t v)
{
    const region_t *r = find_region(rs, n, v);
    return r && r->is_target ? r : NULL;
}

/* A pointer into the heap that is 8 mod 16 may point 8 or 24 bytes into a block (blocks
 * are 16-byte aligned): past a length (sqlite), an element count (new[]) or a string
 * header (old std::string). The analyzer's heuristics (analysis/heapgraph.h) read those
 * words, which are not pointers: keep the 3 words below each such value once. */
/* Whether the page holding a is mapped in this (the child's) address space. A region's
 * line in /proc/self/maps can be wider than what is mapped when the child reads it (one
 * header read crashed a python 3.12 snapshot child on a page that was not there): ask
 * mincore, which fails with ENOMEM on an unmapped page, and remember the pages it allowed. */
static int
page_mapped(uintptr_t a)
{
    static uintptr_t ok[256];
    uintptr_t pg = a & ~(uintptr_t)4095;
    uintptr_t *slot = &ok[(pg >> 12) & 255];
    unsigned char c;
    if (*slot == pg) {
        return 1;
    }
    if (mincore((void *)pg, 4096, &c) != 0) {
        return 0;
    }
    *slot = pg;
    return 1;
}

static void
note_header(const region_t *rs, int n, uintptr_t v)
{
    if ((v & 15) != 8 || n_hdrw + 3 > MAX_HDR) {
        return;
    }
    uintptr_t *seen = &hdr_seen[(v >> 3) & (HDR_SEEN - 1)];
    if (*seen == v) {
        return;
    }
    const region_t *r = target_region(rs, n, v);
    if (!r || r->kind != LH_REGION_HEAP || !r->readable) {
        return;
    }
    uintptr_t first = v - 24 >= r->lo ? v - 24 : r->lo;
    if (!page_mapped(first) || !page_mapped(v - 8)) {
        return;
    }
    *seen = v;
    for (uintptr_t a = v - 24; a < v; a += 8) {
        if (a >= r->lo) {
            hdrw[n_hdrw++] = (hdr_word_t){a, *(const uintptr_t *)a};
        }
    }
}

/* The header words as WORDS records (absolute: they come in no particular order). */
static void
emit_headers(out_t *o)
{
    for (size_t i = 0; i < n_hdrw;) {
        size_t k = n_hdrw - i < 4096 ? n_hdrw - i : 4096;
        ptrs_close(o);
        out_room(o, k * 20 + 32);
        uint8_t *rec = lh_enc_rec_begin(&o->e, LH_SREC_WORDS);
        lh_enc_varint(&o->e, k);
        for (size_t j = i; j < i + k; j++) {
            lh_enc_varint(&o->e, hdrw[j].addr / 8);
            lh_enc_varint(&o->e, hdrw[j].val);
        }
        lh_enc_rec_end(&o->e, rec);
        o->n_records++;
        i += k;
    }
}

/* A word outside the targets that would be an address if a mapping appeared there. */
static inline int
is_stray(uintptr_t v)
{
    return (uint64_t)v - LH_SNAPDELTA_STRAY_LO < (1ull << 57) - LH_SNAPDELTA_STRAY_LO;
}

/* Writes one page of mode full (or the part of it in the region) unless the snapshot
 * refers to an earlier file for it; notes its header words either way. verify: a page
 * skipped unread (tests): only checks that it is what the previous table says. */
static void
scan_page_full(out_t *o, uintptr_t a, uintptr_t b, const region_t *rs, int n, uintptr_t min_t,
               uintptr_t max_t, uint64_t *bytes, int verify)
{
    const uint64_t *w0 = (const uint64_t *)a;
    size_t nw = (b - a) / 8;
    lh_snapdelta_seen_t seen = {0, 0, 0, ~(uint64_t)0, 0};
    int hdr = 0, stray = 0; /* in registers (scan_page_ptrs) */
    for (size_t i = 0; i < nw; i++) {
        uintptr_t v = w0[i];
        if ((v & 15) != 8) {
            continue;
        }
        if (v >= min_t && v < max_t) {
            hdr = 1;
            if (!verify) {
                note_header(rs, n, v);
            }
        } else {
            stray |= is_stray(v);
        }
    }
    seen.hdr = hdr;
    seen.stray = stray;
    uint64_t sum = lh_snapdelta_sum(w0, nw, b - a);
    if (verify) {
        wp_wrong += !lh_snapdelta_verify(sum, &seen);
        return;
    }
    if (lh_snapdelta_piece(a, (uint32_t)(b - a), sum, &seen)) {
        return; /* unchanged: an earlier file has these bytes */
    }
    out_room(o, (b - a) + 32);
    ptrs_close(o);
    uint8_t *rec = lh_enc_rec_begin(&o->e, LH_SREC_BYTES);
    lh_enc_varint(&o->e, a);
    lh_enc_bytes(&o->e, (const void *)a, b - a);
    lh_enc_rec_end(&o->e, rec);
    o->n_records++;
    *bytes += b - a;
}

/* The pointer words of one page (mode pointers): gathered first, so that a page whose
 * pointers did not change is referred to, not written. Returns how many it wrote. */
static uint64_t
scan_page_ptrs(out_t *o, uintptr_t a, uintptr_t b, const region_t *rs, int n, uintptr_t min_t,
               uintptr_t max_t, int verify)
{
    static uint64_t found[2 * 512]; /* (address, value) pairs of one page */
    size_t k = 0;
    lh_snapdelta_seen_t seen = {0, 0, 0, ~(uint64_t)0, 0};
    /* In a register, not in seen: seen's address escapes, and the compiler kept it in
     * memory, a load and a store on every word of the loop (perf annotate: the most of
     * the child's time in mode pointers) */
    int stray = 0;
    for (const uintptr_t *w = (const uintptr_t *)a; (uintptr_t)w < b; w++) {
        uintptr_t v = *w;
        if (v < min_t || v >= max_t || !target_region(rs, n, v)) {
            stray |= is_stray(v);
            continue;
        }
        found[k++] = (uint64_t)(uintptr_t)w;
        found[k++] = v;
        seen.tmin = v < seen.tmin ? v : seen.tmin;
        seen.tmax = v > seen.tmax ? v : seen.tmax;
        seen.hdr |= (v & 15) == 8;
        if (!verify) {
            note_header(rs, n, v);
        }
    }
    seen.stray = stray;
    seen.empty = k == 0;
    uint64_t sum = lh_snapdelta_sum(found, k, b - a);
    if (verify) {
        wp_wrong += !lh_snapdelta_verify(sum, &seen);
        return 0;
    }
    if (lh_snapdelta_piece(a, (uint32_t)(b - a), sum, &seen)) {
        return 0; /* unchanged: an earlier file has these words */
    }
    for (size_t i = 0; i < k; i += 2) {
        out_ptr(o, found[i], found[i + 1]);
    }
    return k / 2;
}

typedef struct scan_ctx {
    out_t *o;
    const region_t *rs;
    int n;
    uintptr_t min_t, max_t;
    uintptr_t lo, hi; /* the region's bounds (a thread's stack may start inside a page) */
    uint64_t *words, *ptrs, *bytes;
} scan_ctx_t;

/* Scans [lo, hi) within the region, pages the program may have written. */
static void
scan_pages(void *ctx, uint64_t lo, uint64_t hi)
{
    const scan_ctx_t *c = ctx;
    const size_t page = 4096;
    lo = lo > c->lo ? lo : c->lo;
    hi = hi < c->hi ? hi : c->hi;
    for (uintptr_t a = (uintptr_t)lo; a < hi; a += page) {
        uintptr_t b = a + page < hi ? a + page : (uintptr_t)hi;
        *c->words += (b - a) / 8;
        /* Known unwritten since the previous table (snapwp.h): referred to unread. */
        int verify = lh_snapdelta_skip(a, (uint32_t)(b - a));
        if (verify) {
            wp_skipped++;
            if (!lh_g.cfg.test_snapwp_verify) {
                continue;
            }
        }
        if (contents_mode == LH_CONTENTS_FULL) {
            scan_page_full(c->o, a, b, c->rs, c->n, c->min_t, c->max_t, c->bytes, verify);
        } else {
            *c->ptrs += scan_page_ptrs(c->o, a, b, c->rs, c->n, c->min_t, c->max_t, verify);
        }
    }
}

/* This child's /proc/self/pagemap: -2 not opened yet, -1 none (or no PAGEMAP_SCAN). */
static int child_pagemap = -2;

/* Scans the resident pages of one region. An anonymous private mapping's are listed by
 * PAGEMAP_SCAN (Linux 6.7+): the page-table walk skips what was never touched at the cost of
 * its page-table levels, where mincore fills a byte per page (a 4 TiB MAP_NORESERVE
 * reservation took 10.5 s at exit). Only there: a file or shared page the program maps but
 * never touched is not in its page tables, yet mincore finds it in the page cache, with
 * what another process or the file put there. */
static void
scan_region(out_t *o, const region_t *r, const region_t *rs, int n, uint64_t *words,
            uint64_t *ptrs, uint64_t *bytes)
{
    static unsigned char vec[4096];
    const size_t page = 4096;
    scan_ctx_t c = {.o = o, .rs = rs, .n = n, .min_t = ~(uintptr_t)0, .max_t = 0,
                    .lo = r->lo, .hi = r->hi, .words = words, .ptrs = ptrs, .bytes = bytes};
    for (int i = 0; i < n; i++) {
        if (rs[i].is_target) {
            c.min_t = rs[i].lo < c.min_t ? rs[i].lo : c.min_t;
            c.max_t = rs[i].hi > c.max_t ? rs[i].hi : c.max_t;
        }
    }
    if (r->anon_private && child_pagemap == -2) {
        child_pagemap = lh_sys_open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    }
    if (r->anon_private && child_pagemap >= 0) {
        uintptr_t lo = r->lo & ~(uintptr_t)(page - 1);
        uintptr_t hi = (r->hi + page - 1) & ~(uintptr_t)(page - 1);
        if (lh_sys_pm_each(child_pagemap, lo, hi, LH_PAGE_IS_PRESENT, scan_pages, &c) == 0 ||
            (errno != ENOTTY && errno != EINVAL)) {
            return; /* done; or failed after listing some, and nothing unmaps in the child */
        }
        close(child_pagemap); /* not this kernel (its first call failed): mincore from now on */
        child_pagemap = -1;
    }
    for (uintptr_t chunk = r->lo; chunk < r->hi; chunk += page * sizeof vec) {
        uintptr_t end = chunk + page * sizeof vec < r->hi ? chunk + page * sizeof vec : r->hi;
        size_t npages = (end - chunk + page - 1) / page;
        if (mincore((void *)chunk, end - chunk, vec) != 0) {
            memset(vec, 1, npages); /* cannot tell: scan it */
        }
        for (size_t pg = 0; pg < npages; pg++) {
            if (vec[pg] & 1) { /* else never touched or swapped out: nothing written */
                uintptr_t a = chunk + pg * page;
                scan_pages(&c, a, a + page < end ? a + page : end);
            }
        }
    }
}

typedef struct job {
    int fd; /* created by the parent (O_EXCL, 0600), written by the child */
    char path[LH_PATH_MAX];
    char label[256];
    unsigned number;
    uint64_t ts;
    pid_t pid;
    pid_t tid;
    uintptr_t sp;
    int reserved; /* the delta table is this child's (lh_snapdelta_reserve) */
    int marked;   /* lh_snapwp_mark ran just before the clone */
    int sp_rfd;   /* the other threads' stack pointers come through this pipe (-1: none) */
    int sp_wfd;   /* its write end: the parent's, closed in the child */
} job_t;

/* -------------------------------------------------------------------------------------
 * Roots of the threads, cut out of the mappings
 * ----------------------------------------------------------------------------------- */
static const region_t *
region_of(uintptr_t a)
{
    return find_region(regions, n_regions, a);
}

/* [lo, hi) lies in readable mappings (the DTV and descriptors are read through). */
static int
child_readable(uintptr_t lo, uintptr_t hi)
{
    while (lo < hi) {
        const region_t *r = region_of(lo);
        if (!r || !r->readable) {
            return 0;
        }
        lo = r->hi;
    }
    return 1;
}

/* Whether a slot (live or ended) stands for thread tid: the agent knows that thread. */
static int
has_slot(uint32_t tid)
{
    for (int i = 0; lh_g.slots && i < LH_MAX_SLOTS; i++) {
        if (atomic_load(&lh_g.slots[i].in_use) && lh_g.slots[i].tid == tid) {
            return 1;
        }
    }
    return 0;
}

/* Where the live stack of thread s (not the capturing one) begins: its stack pointer at the
 * clone less the red zone, when it was asleep then (threadsp.h); 0: its whole stack. */
static uintptr_t
asleep_sp(const lh_slot_t *s)
{
    uintptr_t sp = lh_threadsp_of(s->tid);
    if (!sp || sp < s->stack_lo || sp >= s->stack_hi) {
        return 0; /* running, unknown, or on another stack (sigaltstack, a coroutine's) */
    }
    return sp - s->stack_lo > LH_THREADSP_RED_ZONE ? sp - LH_THREADSP_RED_ZONE : s->stack_lo;
}

/* The threads glibc lists that the agent never saw start (threads.h, lh_threads_listed):
 * their TLS and descriptor are roots, and, when glibc allocated the stack, that stack: from
 * the bottom of the mapping holding the descriptor, which a guard page (an unreadable
 * mapping) bounds, up to the descriptor. Without a guard page below, where the stack
 * begins is not known: no stack (never a guess that would make heap a root). */
static void
add_listed_threads(void)
{
    static lh_listed_thread_t listed[1024];
    int n = lh_threads_listed(listed, 1024, child_readable);
    for (int i = 0; i < n && n_troots < MAX_TROOTS; i++) {
        const lh_listed_thread_t *t = &listed[i];
        if (has_slot(t->tid) || lh_sys_is_agent_memory(t->self, t->self + 1)) {
            continue; /* known already, or the agent's own thread */
        }
        lh_slot_t s;
        memset(&s, 0, sizeof s);
        s.tid = t->tid;
        s.self = t->self;
        const region_t *r = t->own_stack ? region_of(t->self) : NULL;
        if (r && r > regions && r[-1].hi == r->lo && !r[-1].readable && r->hi >= t->desc_hi) {
            s.stack_lo = r->lo;
            s.stack_hi = t->desc_hi;
        }
        n_troots += lh_threads_roots(&s, asleep_sp(&s), 0, troots + n_troots,
                                     MAX_TROOTS - n_troots, child_readable);
    }
}

/* The DTV pointers of ended threads whose descriptor glibc keeps (threads.h), but not
 * where a live thread's range covers the word: glibc gave that stack to a new thread. */
static void
add_ended_threads(void)
{
    static lh_troot_t ended[512];
    int n = lh_threads_ended_roots(ended, 512, child_readable);
    int n_live = n_troots;
    for (int i = 0; i < n && n_troots < MAX_TROOTS; i++) {
        int covered = 0;
        for (int j = 0; j < n_live && !covered; j++) {
            covered = troots[j].lo < ended[i].hi && troots[j].hi > ended[i].lo;
        }
        if (!covered) {
            troots[n_troots++] = ended[i];
        }
    }
}

/* The root ranges of every live thread the agent knows (threads.h). The capturing thread
 * (job->tid) is live from job->sp up; when it has no slot, the mapping holding sp stands
 * for its stack. Its bounds come back in cap_lo/cap_hi (0: not a program thread). */
static void
collect_troots(const job_t *job, uintptr_t *cap_lo, uintptr_t *cap_hi)
{
    n_troots = 0;
    int have_capture = 0;
    for (int i = 0; lh_g.slots && i < LH_MAX_SLOTS; i++) {
        lh_slot_t s = lh_g.slots[i];
        if (!atomic_load(&lh_g.slots[i].in_use) || s.is_exited || !s.stack_hi ||
            lh_sys_is_agent_memory(s.stack_lo, s.stack_hi)) {
            continue; /* exited (its stack is glibc's cache), or the agent's own thread */
        }
        /* A thread's stack is one mapping (its guard page is another): the main thread's
         * bound from RLIMIT_STACK may reach below it. */
        const region_t *r = region_of(s.stack_hi - 1);
        if (r && s.stack_lo < r->lo) {
            s.stack_lo = r->lo;
        }
        uintptr_t sp = 0;
        int is_capture = 0;
        if ((pid_t)s.tid == job->tid && job->sp >= s.stack_lo && job->sp < s.stack_hi) {
            sp = job->sp;
            is_capture = have_capture = 1;
            *cap_lo = s.stack_lo;
            *cap_hi = s.stack_hi;
        } else if ((pid_t)s.tid != job->tid) {
            sp = asleep_sp(&s);
        }
        n_troots += lh_threads_roots(&s, sp, is_capture, troots + n_troots,
                                     MAX_TROOTS - n_troots, child_readable);
    }
    add_listed_threads();
    add_ended_threads();
    uintptr_t alo, ahi;
    for (int i = 0; lh_loadermem_range(i, &alo, &ahi) && n_troots < MAX_TROOTS; i++) {
        troots[n_troots++] = (lh_troot_t){alo, ahi, LH_TROOT_LOADER, 0, 0};
    }
    for (int i = 0; lh_sys_agent_range(i, &alo, &ahi) && n_troots < MAX_TROOTS; i++) {
        /* mmap maps whole pages: the rest of the last page is the agent's too */
        troots[n_troots++] = (lh_troot_t){alo & ~(uintptr_t)4095, (ahi + 4095) & ~(uintptr_t)4095,
                                          LH_TROOT_AGENT, 0, 0};
    }
    for (int i = 0; lh_mmaps_range(i, &alo, &ahi) && n_troots < MAX_TROOTS; i++) {
        troots[n_troots++] = (lh_troot_t){alo, ahi, LH_TROOT_MAPPED, 0, 0};
    }
    const region_t *r = region_of(job->sp);
    if (!have_capture && r && r->kind && !lh_sys_is_agent_memory(job->sp, job->sp + 1) &&
        n_troots + 2 <= MAX_TROOTS) {
        troots[n_troots++] = (lh_troot_t){r->lo, job->sp, LH_TROOT_DEAD, 1, (uint32_t)job->tid};
        troots[n_troots++] = (lh_troot_t){job->sp, r->hi, LH_TROOT_STACK, 1, (uint32_t)job->tid};
        *cap_lo = r->lo;
        *cap_hi = r->hi;
    }
}

typedef struct counts {
    uint64_t words, ptrs, bytes, nreg;
} counts_t;

static void
name_tid(char *out, size_t len, const char *prefix, uint64_t tid)
{
    char num[21];
    num[lh_sys_fmt_u64(num, tid)] = '\0';
    size_t k = lh_sys_strlcpy(out, prefix, len);
    k += lh_sys_strlcpy(out + k, num, len > k ? len - k : 0);
    lh_sys_strlcpy(out + k, "]", len > k ? len - k : 0);
}

/* Emits and scans one piece of a mapping: as the mapping (t NULL) or as a thread's root. */
static void
emit_piece(out_t *o, const region_t *base, uintptr_t lo, uintptr_t hi, const lh_troot_t *t,
           const job_t *job, counts_t *c)
{
    region_t rr = *base;
    char sname[64];
    const char *name = maps_buf + base->name_off;
    rr.lo = (lo + 7) & ~(uintptr_t)7; /* whole words only: never read past the piece */
    rr.hi = hi & ~(uintptr_t)7;
    if (rr.lo >= rr.hi) {
        return;
    }
    if (t && (t->kind == LH_TROOT_DEAD || t->kind == LH_TROOT_AGENT)) {
        return; /* stack the program's returned functions left, or the agent's memory */
    }
    if (t && t->kind == LH_TROOT_LOADER && base->kind == LH_REGION_HEAP) {
        /* ld.so's own memory: its data, a root; still a target, so that a block the
         * kernel placed next to it stays a block (words inside blocks are the blocks') */
        rr.kind = LH_REGION_DATA;
        name = lh_loadermem_name();
        t = NULL;
    } else if (t && t->kind == LH_TROOT_LOADER) {
        t = NULL; /* a module's bss already */
    } else if (t && t->kind == LH_TROOT_MAPPED) {
        if (base->kind == LH_REGION_HEAP) {
            /* the program's own mapping: a root where no block lies, still a target */
            rr.kind = LH_REGION_MAPPED;
            name = "[mmap]";
        }
        t = NULL;
    }
    if (t && t->kind == LH_TROOT_STACK) {
        rr.kind = LH_REGION_STACK;
        rr.is_target = 0;
        if (t->is_capture) {
            lh_sys_strlcpy(sname, "[stack:capture]", sizeof sname);
        } else {
            name_tid(sname, sizeof sname, "[stack:", t->tid);
        }
        name = sname;
    } else if (t) {
        rr.kind = LH_REGION_TLS;
        name_tid(sname, sizeof sname, t->kind == LH_TROOT_SPECIFIC ? "[specific:" : "[tls:",
                 t->tid);
        name = sname;
    } else if (rr.kind == LH_REGION_STACK) {
        /* the kernel's "[stack]" of a main thread the agent has no record of */
        name_tid(sname, sizeof sname, "[stack:", (uint64_t)job->pid);
        name = sname;
    }
    emit_region(o, &rr, name);
    scan_region(o, &rr, regions, n_regions, &c->words, &c->ptrs, &c->bytes);
    c->nreg++;
}

static int
troot_rank(const lh_troot_t *t)
{
    return t->kind == LH_TROOT_MAPPED ? 0 : t->kind;
}

/* The root range that owns [a, b): the highest kind among those covering it. */
static const lh_troot_t *
owner(uintptr_t a, uintptr_t b)
{
    const lh_troot_t *best = NULL;
    for (int i = 0; i < n_troots; i++) {
        const lh_troot_t *t = &troots[i];
        if (t->lo <= a && t->hi >= b && (!best || troot_rank(t) > troot_rank(best))) {
            best = t;
        }
    }
    return best;
}

static int
same_owner(const lh_troot_t *x, const lh_troot_t *y)
{
    return x == y || (x && y && x->kind == y->kind && x->tid == y->tid &&
                      x->is_capture == y->is_capture);
}

/* Cuts a mapping at the bounds of the thread roots inside it and emits the pieces. */
static void
emit_cut(out_t *o, const region_t *r, const job_t *job, counts_t *c)
{
    uintptr_t cuts[MAX_CUTS];
    int nc = 0;
    cuts[nc++] = r->lo;
    cuts[nc++] = r->hi;
    for (int i = 0; i < n_troots && nc + 2 <= MAX_CUTS; i++) {
        const lh_troot_t *t = &troots[i];
        if (t->hi <= r->lo || t->lo >= r->hi) {
            continue;
        }
        cuts[nc++] = t->lo > r->lo ? t->lo : r->lo;
        cuts[nc++] = t->hi < r->hi ? t->hi : r->hi;
    }
    for (int i = 1; i < nc; i++) { /* insertion sort: a handful of cuts */
        uintptr_t v = cuts[i];
        int j = i - 1;
        while (j >= 0 && cuts[j] > v) {
            cuts[j + 1] = cuts[j];
            j--;
        }
        cuts[j + 1] = v;
    }
    uintptr_t piece_lo = r->lo;
    const lh_troot_t *piece_t = NULL;
    int started = 0;
    for (int i = 0; i + 1 < nc; i++) {
        uintptr_t a = cuts[i], b = cuts[i + 1];
        if (a == b) {
            continue;
        }
        const lh_troot_t *t = owner(a, b);
        if (!started) {
            piece_lo = a;
            piece_t = t;
            started = 1;
        } else if (!same_owner(t, piece_t)) {
            emit_piece(o, r, piece_lo, a, piece_t, job, c);
            piece_lo = a;
            piece_t = t;
        }
    }
    if (started) {
        emit_piece(o, r, piece_lo, r->hi, piece_t, job, c);
    }
}

/* BASE and SAME records: the earlier files this one refers to, and for each the pieces
 * whose contents are stored there (docs/FORMAT.md). */
static void
emit_refs(out_t *o)
{
    unsigned number;
    const char *name;
    for (int i = 0; lh_snapdelta_base(i, &number, &name); i++) {
        ptrs_close(o);
        out_room(o, 64 + strlen(name));
        uint8_t *rec = lh_enc_rec_begin(&o->e, LH_SREC_BASE);
        lh_enc_varint(&o->e, number);
        lh_enc_str(&o->e, name);
        lh_enc_rec_end(&o->e, rec);
        o->n_records++;
        size_t pos = 0;
        uintptr_t addr;
        uint32_t len;
        int more = lh_snapdelta_next_ref(number, &pos, &addr, &len);
        while (more) {
            out_room(o, 4096 * 12 + 64);
            rec = lh_enc_rec_begin(&o->e, LH_SREC_SAME);
            lh_enc_varint(&o->e, number);
            uint8_t *count_at = o->e.p;
            lh_enc_bytes(&o->e, "\0\0\0\0\0", 5);
            uint32_t count = 0;
            uintptr_t last = 0;
            for (; more && count < 4096; count++) {
                lh_enc_varint(&o->e, (addr - last) / 8);
                lh_enc_varint(&o->e, len / 8);
                last = addr;
                more = lh_snapdelta_next_ref(number, &pos, &addr, &len);
            }
            patch_count(count_at, count);
            lh_enc_rec_end(&o->e, rec);
            o->n_records++;
        }
    }
}

/* What lets the child skip pages: the target ranges (lh_snapdelta_targets) and the pages
 * written since the previous table, for each anonymous mapping (snapwp.h). */
static void
begin_skipping(const job_t *job)
{
    size_t nt = 0;
    for (int k = 0; k < n_regions; k++) {
        const region_t *r = &regions[k];
        if (!r->is_target) {
            continue;
        }
        uint64_t heap = r->kind == LH_REGION_HEAP && r->readable; /* note_header's test */
        if (nt && (tsig[nt - 1].hi & ~(uint64_t)1) == r->lo && (tsig[nt - 1].hi & 1) == heap) {
            tsig[nt - 1].hi = r->hi | heap;
        } else {
            tsig[nt++] = (lh_wp_range_t){r->lo, r->hi | heap};
        }
    }
    lh_snapdelta_targets(tsig, nt);
    if (!lh_snapwp_begin(job->marked, job->pid)) {
        return;
    }
    for (int k = 0; k < n_regions; k++) {
        if (regions[k].kind && !regions[k].file) {
            lh_snapwp_region(regions[k].lo, regions[k].hi);
        }
    }
    lh_snapwp_check();
}

__attribute__((noreturn)) static void
child_main(const job_t *job)
{
    in_child = 1;
    out_t o;
    memset(&o, 0, sizeof o);
    o.fd = job->fd;
    /* header + info */
    uint8_t info[600];
    lh_enc_t ie;
    lh_enc_init(&ie, info, sizeof info);
    uint8_t *r = lh_enc_rec_begin(&ie, LH_SREC_INFO);
    lh_enc_varint(&ie, (uint64_t)job->pid);
    lh_enc_varint(&ie, job->number);
    lh_enc_varint(&ie, job->ts);
    lh_enc_str(&ie, job->label);
    lh_enc_varint(&ie, (uint64_t)contents_mode);
    lh_enc_rec_end(&ie, r);
    uint8_t file_hdr[LH_FILE_HEADER_LEN];
    lh_enc_t he;
    lh_enc_init(&he, file_hdr, sizeof file_hdr);
    lh_enc_bytes(&he, LH_SNAP_MAGIC, 8);
    lh_enc_u16le(&he, LH_FORMAT_MAJOR);
    lh_enc_u16le(&he, LH_FORMAT_MINOR);
    lh_enc_u32le(&he, (uint32_t)(ie.p - info));
    if (lh_sys_write_all(o.fd, file_hdr, sizeof file_hdr) != 0 ||
        lh_sys_write_all(o.fd, info, (size_t)(ie.p - info)) != 0) {
        syscall(SYS_exit_group, 1);
    }
    lh_enc_init(&o.e, raw_buf, OUT_RAW + 65536);

    if (job->sp_wfd >= 0) {
        close(job->sp_wfd); /* the parent's end: a read sees its end if the parent dies */
    }
    (void)lh_threadsp_receive(job->sp_rfd);
    n_regions = read_maps();
    if (job->reserved && lh_snapdelta_begin(job->pid, contents_mode, job->number)) {
        begin_skipping(job);
    }
    uintptr_t cap_lo = 0, cap_hi = 0;
    collect_troots(job, &cap_lo, &cap_hi);
    uint8_t *tr = lh_enc_rec_begin(&o.e, LH_SREC_THREAD);
    lh_enc_varint(&o.e, (uint64_t)job->tid);
    lh_enc_varint(&o.e, job->sp);
    lh_enc_varint(&o.e, cap_lo);
    lh_enc_varint(&o.e, cap_hi);
    lh_enc_rec_end(&o.e, tr);
    o.n_records++;

    counts_t c = {0, 0, 0, 0};
    for (int k = 0; k < n_regions; k++) {
        if (regions[k].kind) {
            emit_cut(&o, &regions[k], job, &c);
        }
    }
    uint64_t words = c.words, ptrs = c.ptrs, bytes = c.bytes, nreg = c.nreg;
    unsigned delay = (unsigned)lh_g.cfg.test_child_delay_ms;
    if (delay) {
        /* Tests: a capture this slow leaves a contents file the program's exit did not wait
         * for still without its END when the trace is read (e2e.growth.snap_race). */
        ptrs_close(&o); /* a frame ends between records, as out_room's do */
        out_frame(&o);  /* what is written so far is on disk */
        struct timespec ts = {delay / 1000, (long)(delay % 1000) * 1000000};
        nanosleep(&ts, NULL);
    }
    emit_headers(&o);
    emit_refs(&o);
    ptrs_close(&o);
    out_room(&o, 64);
    uint8_t *er = lh_enc_rec_begin(&o.e, LH_SREC_END);
    lh_enc_varint(&o.e, nreg);
    lh_enc_varint(&o.e, words);
    lh_enc_varint(&o.e, ptrs);
    lh_enc_varint(&o.e, bytes);
    lh_enc_rec_end(&o.e, er);
    o.n_records++;
    out_frame(&o);
    close(o.fd);
    if (lh_g.cfg.test_child_maps) {
        char num[2][21];
        num[0][lh_sys_fmt_u64(num[0], job->number)] = '\0';
        num[1][lh_sys_fmt_u64(num[1], (uint64_t)regions_gone())] = '\0';
        char line[64];
        size_t k = lh_sys_strlcpy(line, num[0], sizeof line);
        k += lh_sys_strlcpy(line + k, ": mappings gone in the child: ", sizeof line - k);
        lh_sys_strlcpy(line + k, num[1], sizeof line - k);
        lh_sys_log("snapshot ", line, "");
    }
    const char *base = strrchr(job->path, '/');
    lh_snapdelta_end(!o.failed, base ? base + 1 : job->path);
    if (lh_g.cfg.test_snapwp_verify) {
        char num[2][21];
        num[0][lh_sys_fmt_u64(num[0], wp_skipped)] = '\0';
        num[1][lh_sys_fmt_u64(num[1], wp_wrong)] = '\0';
        char line[64];
        size_t k = lh_sys_strlcpy(line, num[0], sizeof line);
        k += lh_sys_strlcpy(line + k, " pages skipped unread, wrong: ", sizeof line - k);
        lh_sys_strlcpy(line + k, num[1], sizeof line - k);
        lh_sys_log("snapwp: ", line, "");
    }
    syscall(SYS_exit_group, o.failed ? 1 : 0);
    __builtin_unreachable();
}

/* Saves the callee-saved registers on this frame (__builtin_unwind_init), so pointers that
 * live only in registers of the capturing thread are on the stack the child scans. */
__attribute__((noinline)) static pid_t
clone_child(job_t *job)
{
    __builtin_unwind_init();
    volatile uintptr_t marker = 0;
    if (!job->sp) {
        job->sp = (uintptr_t)&marker; /* the program's stack pointer is not known */
    }
    /* Raw clone: a copy-on-write child without atfork handlers and without SIGCHLD, so the
     * program's wait() never sees it. */
    int mmaps_taken = lh_mmaps_hold(); /* the table whole in the child (mmaps.h) */
    lh_sys_reg_hold(); /* inherited whole and unlocked (sys.h) */
    long pid = syscall(SYS_clone, 0, 0, 0, 0, 0);
    lh_sys_reg_release();
    if (pid != 0) {
        lh_mmaps_release(mmaps_taken); /* the child never takes it: it reads */
    }
    if (pid == 0) {
        child_main(job);
    }
    return (pid_t)pid;
}

/* Creates the contents file in the parent, so a name already taken (a stale file from an
 * earlier run) is noticed before the SNAPSHOT record names it: .1, .2, ... are tried. */
static int
create_contents(char *path, size_t len)
{
    char base[LH_PATH_MAX];
    lh_sys_strlcpy(base, path, sizeof base);
    for (int k = 0; k < 100; k++) {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST) {
            return fd;
        }
        char num[21];
        num[lh_sys_fmt_u64(num, (uint64_t)k + 1)] = '\0';
        size_t n = lh_sys_strlcpy(path, base, len);
        if (n + 2 + strlen(num) < len) {
            path[n] = '.';
            lh_sys_strlcpy(path + n + 1, num, len - n - 1);
        }
    }
    return -1;
}

/* Contents files made while the process could still create them: a server's worker that
 * drops root (nginx's run as nobody, memcached -u) can no longer create files in the
 * directory its trace was opened in (lh_snapshot_before_setuid). Two: the first is its next
 * snapshot's, whatever the trigger; the second is kept for the exit snapshot only, so that
 * a snapshot asked for while the server runs (SIGUSR2) does not leave the exit snapshot,
 * and the report's leak summary, without contents. The numbers in their names are those the
 * snapshots get when at most one is taken before the exit. Under take_lock; a fork child
 * closes its copies (lh_snapshot_after_fork). */
static int reserved_fd = -1;
static char reserved_path[LH_PATH_MAX];
static int exit_reserved_fd = -1;
static char exit_reserved_path[LH_PATH_MAX];

static void contents_name(unsigned number, char *out, size_t len);

void
lh_snapshot_before_setuid(void)
{
    if (contents_mode == LH_CONTENTS_NONE || !lh_g.cfg.snapshot_at_exit || !lh_recording()) {
        return; /* no snapshot would use it: leave no empty file behind */
    }
    if (lh_g.fd < 0) {
        (void)lh_output_open(); /* the trace too: later it could not be created either */
    }
    pthread_mutex_lock(&take_lock);
    if (lh_g.fd >= 0 && reserved_fd < 0 && exit_reserved_fd < 0) {
        unsigned next = numbered_pid == lh_g.pid ? n_snapshots + 1 : 1;
        contents_name(next, reserved_path, sizeof reserved_path);
        reserved_fd = create_contents(reserved_path, sizeof reserved_path);
        contents_name(next + 1, exit_reserved_path, sizeof exit_reserved_path);
        exit_reserved_fd = create_contents(exit_reserved_path, sizeof exit_reserved_path);
        reserved_fd = reserved_fd >= 0 ? lh_ownfd_keep(reserved_fd) : -1;
        exit_reserved_fd = exit_reserved_fd >= 0 ? lh_ownfd_keep(exit_reserved_fd) : -1;
    }
    pthread_mutex_unlock(&take_lock);
}

/* The exit snapshot has its file: a reservation left unused is closed and, where the
 * process may still do so, removed (one dropped root for good leaves it empty). Under
 * take_lock. */
static void
drop_reservations(void)
{
    if (reserved_fd >= 0) {
        lh_ownfd_close(reserved_fd);
        reserved_fd = -1;
        (void)unlink(reserved_path);
    }
    if (exit_reserved_fd >= 0) {
        lh_ownfd_close(exit_reserved_fd);
        exit_reserved_fd = -1;
        (void)unlink(exit_reserved_path);
    }
}

void
lh_snapshot_before_exec(void)
{
    if (reserved_fd < 0 && exit_reserved_fd < 0) {
        return;
    }
    pthread_mutex_lock(&take_lock);
    drop_reservations();
    pthread_mutex_unlock(&take_lock);
}

static void
contents_name(unsigned number, char *out, size_t len)
{
    size_t n = lh_sys_strlcpy(out, lh_g.path, len);
    if (n > 4 && strcmp(out + n - 4, ".lht") == 0) {
        n -= 4;
        out[n] = '\0';
    }
    char num[21];
    num[lh_sys_fmt_u64(num, number)] = '\0';
    size_t k = lh_sys_strlcpy(out + n, ".snap", len - n);
    k += lh_sys_strlcpy(out + n + k, num, len - n - k);
    lh_sys_strlcpy(out + n + k, ".lhs", len - n - k);
}

/* How long a capture waits for a thread inside a hook before it goes without the hold
 * (lh_slots_hold; lh_snapshot_take_at says why it holds). */
#define HOLD_MAX_NS (50u * 1000000u)

/* The record's time stamp is what the live set at the snapshot is read against (the trace's
 * blocks allocated and not freed before it): `at` when given, else now. */
static void
write_record(const char *label, int trigger, const char *file, unsigned number,
             uint64_t pause_ns, int in_slot, uint64_t at)
{
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    if (in_slot) {
        lh_rec_t r;
        if (lh_rec_begin(&r, 0) == 0) {
            lh_rec_snapshot(&r, label, trigger, base, contents_mode, number, pause_ns);
            lh_rec_end(&r);
        }
        return;
    }
    uint8_t buf[LH_PATH_MAX + 400];
    lh_enc_t e;
    lh_enc_init(&e, buf, sizeof buf);
    uint8_t *rec = lh_enc_rec_begin(&e, LH_REC_SNAPSHOT);
    lh_enc_varint(&e, 0);
    size_t n = strnlen(label, 255);
    lh_enc_varint(&e, n);
    lh_enc_bytes(&e, label, n);
    lh_enc_varint(&e, (uint64_t)trigger);
    lh_enc_str(&e, base);
    lh_enc_varint(&e, (uint64_t)(file[0] ? contents_mode : LH_CONTENTS_NONE));
    lh_enc_varint(&e, number);
    lh_enc_varint(&e, pause_ns);
    lh_enc_rec_end(&e, rec);
    if (lh_enc_ok(&e)) {
        lh_write_agent_frame(buf, (size_t)(e.p - buf), 1, at ? at : lh_sys_now_ns(), 0);
    }
}

/* Whether a file whose base name starts with prefix is mapped (maps text, in place). */
static int
maps_has_module(const char *maps, const char *prefix)
{
    size_t n = strlen(prefix);
    for (const char *p = maps; (p = strstr(p, prefix)) != NULL; p += n) {
        if (p > maps && p[-1] == '/') {
            const char *eol = strchr(p, '\n');
            const char *slash = strchr(p, '/');
            if (!slash || (eol && slash > eol)) {
                return 1; /* the base name, not a directory */
            }
        }
    }
    return 0;
}

/* The default contents of a perl or python process is `full`: the language heap decoders
 * (analysis/objheap.h) read the interpreter's objects from the bytes (Python's small
 * objects live in pymalloc arenas, Perl's in SV arenas: no pointer-only view shows them).
 * Decided once, at the first snapshot (the interpreter is mapped by then), under take_lock;
 * an explicit LEAKHOUND_SNAPSHOT_CONTENTS wins. */
static void
default_contents(void)
{
    static int decided;
    if (decided || lh_g.cfg.snapshot_contents_set || contents_mode != LH_CONTENTS_POINTERS) {
        return;
    }
    decided = 1;
    ssize_t n = lh_sys_read_file("/proc/self/maps", maps_buf, MAPS_BUF - 1);
    if (n <= 0) {
        return;
    }
    maps_buf[n] = '\0';
    if (maps_has_module(maps_buf, "python") || maps_has_module(maps_buf, "libpython") ||
        maps_has_module(maps_buf, "perl") || maps_has_module(maps_buf, "libperl")) {
        contents_mode = LH_CONTENTS_FULL;
    }
}

/* A program thread never waits for another capture to start (it gets the record alone),
 * but a signal or exit snapshot does, bounded: at exit, the ticker may be starting the
 * capture of a signal the program raised just before it exited, and both are wanted whole. */
static int
lock_take(int trigger)
{
    if (trigger != LH_SNAP_SIGNAL && trigger != LH_SNAP_EXIT) {
        return pthread_mutex_trylock(&take_lock);
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2;
    return pthread_mutex_timedlock(&take_lock, &until);
}

void
lh_snapshot_take(const char *label, int trigger, int in_slot)
{
    lh_snapshot_take_at(label, trigger, in_slot, 0);
}

void
lh_snapshot_take_at(const char *label, int trigger, int in_slot, uintptr_t program_sp)
{
    static job_t job; /* under take_lock */
    if (!lh_recording() && trigger != LH_SNAP_EXIT) {
        return;
    }
    /* A fork child opens its own trace only when it first writes (output.c), and until
     * then lh_g.path is its parent's: open it now, so that the contents file is named after
     * the child's trace and numbered in it (its first snapshots had no contents before). */
    if (contents_mode != LH_CONTENTS_NONE && lh_g.fd < 0) {
        (void)lh_output_open();
    }
    if (contents_mode == LH_CONTENTS_NONE || lh_g.fd < 0 ||
        lock_take(trigger) != 0) {
        /* No contents (or another capture is starting right now): the record alone. */
        write_record(label, trigger, "", 0, 0, in_slot, 0);
        return;
    }
    if (!lh_recording() && trigger != LH_SNAP_EXIT) {
        /* Recording stopped while this capture waited (the program is exiting): the exit
         * path may have waited for its children already, so no child may start now. */
        pthread_mutex_unlock(&take_lock);
        return;
    }
    default_contents();
    reap_children(0);
    if (lh_g.cfg.snapshot_delta) {
        lh_snapdelta_prepare(); /* once; without it, files are whole */
        if (lh_g.cfg.snapshot_wp) {
            lh_snapwp_prepare(); /* once; without it, every page is read */
        }
    }
    int free_slot = -1;
    for (int pass = 0; pass < 2 && free_slot < 0; pass++) {
        if (pass == 1) {
            if (trigger != LH_SNAP_EXIT) {
                break;
            }
            /* Every slot busy at exit (periodic captures still writing): the exit path
             * waits for them right after this snapshot anyway, so wait now, and the exit
             * snapshot, the one the leak summary reads, keeps its contents. */
            reap_children(1);
        }
        for (int i = 0; i < MAX_CHILDREN; i++) {
            if (!atomic_load(&children[i])) {
                free_slot = i;
                break;
            }
        }
    }
    if (free_slot < 0) {
        pthread_mutex_unlock(&take_lock);
        write_record(label, trigger, "", 0, 0, in_slot, 0); /* too many captures running */
        return;
    }
    if (numbered_pid != lh_g.pid) { /* a fork child numbers its trace's snapshots from 1 */
        numbered_pid = lh_g.pid;
        n_snapshots = 0;
    }
    job.number = ++n_snapshots;
    if (reserved_fd >= 0) { /* made before the uid changed */
        job.fd = reserved_fd;
        lh_ownfd_forget(reserved_fd);
        reserved_fd = -1;
        lh_sys_strlcpy(job.path, reserved_path, sizeof job.path);
    } else if (trigger == LH_SNAP_EXIT && exit_reserved_fd >= 0) {
        job.fd = exit_reserved_fd;
        lh_ownfd_forget(exit_reserved_fd);
        exit_reserved_fd = -1;
        lh_sys_strlcpy(job.path, exit_reserved_path, sizeof job.path);
    } else {
        contents_name(job.number, job.path, sizeof job.path);
        job.fd = create_contents(job.path, sizeof job.path);
    }
    if (trigger == LH_SNAP_EXIT) {
        int saved = errno;
        drop_reservations();
        errno = saved;
    }
    if (job.fd < 0) {
        /* Say why: a server that dropped privileges (nginx's workers run as nobody) can no
         * longer create files in the directory its trace was opened in. */
        char why[96] = " (errno ";
        size_t k = strlen(why);
        k += lh_sys_fmt_u64(why + k, (uint64_t)errno);
        k += lh_sys_strlcpy(why + k, ", euid ", sizeof why - k);
        k += lh_sys_fmt_u64(why + k, (uint64_t)geteuid());
        lh_sys_strlcpy(why + k, "); snapshot without contents", sizeof why - k);
        pthread_mutex_unlock(&take_lock);
        lh_sys_log("cannot create snapshot file ", job.path, why);
        write_record(label, trigger, "", job.number, 0, in_slot, 0);
        return;
    }
    lh_sys_strlcpy(job.label, label, sizeof job.label);
    job.pid = lh_g.pid;
    job.tid = lh_sys_gettid();
    job.ts = lh_sys_now_ns();
    job.sp = program_sp;
    /* The other threads' stack pointers: read before the clone, checked after it. */
    int sp_pipe[2] = {-1, -1};
    if (lh_threadsp_before((uint32_t)job.tid) > 0 && pipe2(sp_pipe, O_CLOEXEC) != 0) {
        sp_pipe[0] = sp_pipe[1] = -1;
    }
    job.sp_rfd = sp_pipe[0];
    job.sp_wfd = sp_pipe[1];
    /* The table is the child's from before the mark: no other child may change the list of
     * written pages between the mark and the clone. */
    job.reserved = lh_g.cfg.snapshot_delta && lh_snapdelta_reserve(job.number);
    job.marked = job.reserved && lh_g.cfg.snapshot_wp && lh_snapwp_mark();
    /* The copy and the record must see the same heap. The record used to be stamped after
     * the clone, and no thread stopped: the program's threads went on allocating and freeing
     * during the clone (the kernel copies page tables while they run) and until the record,
     * so the live set did not hold what the copy held (a perl hash split meanwhile: its
     * array, in the copy, was a block the live set said was freed, and the hash decoded
     * without its keys; a C program replacing blocks in a loop had "definitely lost" blocks
     * in 16 of 60 signal snapshots). Now no thread records from just before the clone until
     * the record, stamped then, is written: the copy holds the heap the trace has at that
     * stamp, but for a block whose address the program has not yet stored, or a free its
     * thread has recorded and not yet made. A thread inside a hook for long (stopped by a
     * debugger) makes the hold give up after HOLD_MAX_NS: the snapshot is taken as before. */
    int held = lh_slots_hold(HOLD_MAX_NS);
    uint64_t t0 = lh_sys_now_ns();
    pid_t pid = clone_child(&job);
    uint64_t t1 = lh_sys_now_ns();
    uint64_t pause = t1 - t0;
    if (held) {
        write_record(label, trigger, pid > 0 ? job.path : "", job.number, pause, 0, t1);
        lh_slots_release();
    }
    if (job.reserved) {
        lh_snapdelta_assign(job.number, pid);
    }
    if (sp_pipe[0] >= 0) {
        close(sp_pipe[0]);
        if (pid > 0) {
            lh_threadsp_after(sp_pipe[1]);
        }
        close(sp_pipe[1]);
    }
    close(job.fd); /* the child has its own copy */
    if (pid <= 0) {
        unlink(job.path);
    }
    if (pid > 0) {
        child_number[free_slot] = job.number;
        atomic_store(&children[free_slot], pid);
    }
    /* The record before the lock goes: a capture waiting for the lock (exit, while the
     * ticker takes a signal's) must not write its record first, or the trace would list
     * the snapshots out of the order they were taken in (seen under load). */
    if (!held) {
        write_record(label, trigger, pid > 0 ? job.path : "", job.number, pause, in_slot, 0);
    }
    pthread_mutex_unlock(&take_lock);
}

/* The ticker's reap used to empty a slot after waitpid said its child was gone (another
 * thread had waited for it) even when a capture had filled the slot with a new child in
 * the meantime: that child was never waited for at exit, and its contents file was read
 * without its END (seen under load, e2e.pyheap.cycles). The slot is emptied only if it
 * still holds the child this thread waited for. */
static void
reap_children(int wait)
{
    for (int i = 0; i < MAX_CHILDREN; i++) {
        int child = atomic_load(&children[i]);
        if (!child) {
            continue;
        }
        unsigned number = child_number[i];
        int st;
        for (int tries = 0;; tries++) {
            pid_t r = waitpid(child, &st, __WCLONE | WNOHANG);
            if (r == child || (r < 0 && errno != EINTR)) {
                if (r == child) {
                    lh_snapdelta_reaped(r); /* not a parent's child seen after a fork */
                    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                        char num[21];
                        num[lh_sys_fmt_u64(num, number)] = '\0';
                        lh_sys_log("snapshot ", num, ": its contents file was not completed");
                    }
                }
                atomic_compare_exchange_strong(&children[i], &child, 0);
                break;
            }
            if (!wait || tries > 60000) { /* at most ~60 s at exit */
                break;
            }
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
}

/* wait = 1 (exit, detach): under take_lock, so a capture in flight on another thread (the
 * ticker's, or a program thread's) has put its child in children[] first; recording has
 * stopped by then, so no capture starts after this one (lh_snapshot_take_at). */
void
lh_snapshot_reap(int wait)
{
    if (!wait) {
        reap_children(0);
        return;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    int locked = pthread_mutex_timedlock(&take_lock, &until) == 0;
    reap_children(1);
    if (locked) {
        pthread_mutex_unlock(&take_lock);
    }
}

void
lh_snapshot_after_fork(void)
{
    pthread_mutex_init(&take_lock, NULL);
    if (reserved_fd >= 0) { /* the parent's, named after its trace: it keeps its copy */
        lh_ownfd_close(reserved_fd);
        reserved_fd = -1;
    }
    if (exit_reserved_fd >= 0) {
        lh_ownfd_close(exit_reserved_fd);
        exit_reserved_fd = -1;
    }
    for (int i = 0; i < MAX_CHILDREN; i++) {
        atomic_store(&children[i], 0);
    }
}
