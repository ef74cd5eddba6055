/* leakhound - SPDX-License-Identifier: MIT
 *
 * snapfile.h: the reader of snapshot contents files (.lhs, docs/FORMAT.md "Snapshot
 * contents files"): the regions the agent scanned (heap, module data/bss and stacks, the
 * roots), the pointer words it found (address, value) and, in mode `full`, the raw pages.
 *
 * The file is read whole, in one call: same container as a trace (16-byte header with the
 * magic "LHSNAPS\0", info block, 48-byte frames with CRC-32C and zstd). Every byte is
 * hostile: a bad magic, a newer major version, a bad checksum, a malformed record, a
 * truncated frame or a missing END record (the capturing child was killed) is an error
 * whose message names the file and the offset. Pointer words come out sorted by address;
 * in mode `full` they are derived from the pages (the words a caller's keep() accepts).
 * A delta file (BASE and SAME records: pieces unchanged since an earlier snapshot are
 * stored in that snapshot's file, in the same directory) is resolved here: the earlier
 * files are read too and the result is what the whole file would hold; a missing or bad
 * base is an error naming both files.
 *
 * Not thread-safe; the result is immutable once read.
 */
#ifndef LH_SNAPFILE_H
#define LH_SNAPFILE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

typedef struct lh_region {
    uint64_t start, len;
    uint8_t kind;   /* LH_REGION_* */
    char *name;     /* NUL-terminated copy: module path, "[heap]", "[stack:capture]", ... */
} lh_region_t;

/* One pointer word: the word at addr holds val. */
typedef struct lh_word {
    uint64_t addr, val;
} lh_word_t;

/* One page of mode `full`. */
typedef struct lh_page {
    uint64_t addr;
    uint8_t *bytes;
    size_t len;
} lh_page_t;

typedef struct lh_snapfile {
    char *path;
    uint16_t major, minor;
    /* Info block. */
    uint64_t pid, number, ts_ns, mode; /* mode: LH_CONTENTS_* */
    char *label;
    /* THREAD record: the capturing thread (0 when absent). */
    uint64_t capture_tid, capture_sp;
    /* END record. */
    uint64_t end_regions, end_words, end_ptrs, end_bytes;
    /* Regions, sorted by start. */
    lh_region_t *regions;
    size_t n_regions;
    /* Pointer words, sorted by address (one value per address). */
    lh_word_t *words;
    size_t n_words;
    /* Header words (WORDS records: lengths and counts below some pointer targets, for the
     * interior-pointer heuristics), sorted by address, one per address. */
    lh_word_t *hdr;
    size_t n_hdr;
    /* Pages (mode full), sorted by address. */
    lh_page_t *pages;
    size_t n_pages;
} lh_snapfile_t;

typedef struct lh_snapfile_opts {
    /* Mode full: which words of the pages become pointer words (NULL: every non-zero word
     * that points into a heap region of the file). */
    int (*keep)(void *ctx, uint64_t value);
    void *keep_ctx;
    int keep_pages; /* also keep the raw pages in sf->pages (mode full) */
    /* Mode full, optional: where in the pages a word may be kept. next_span(keep_ctx, a,
     * &end) answers the first address at or after a of a stretch whose words are looked
     * at (UINT64_MAX: none), and sets end past that stretch; the words outside every
     * stretch are not (NULL: every word is). */
    uint64_t (*next_span)(void *ctx, uint64_t addr, uint64_t *end);
} lh_snapfile_opts_t;

/* A keep that keeps no word: with keep_pages, the pages alone. */
int lh_snapfile_keep_none(void *ctx, uint64_t value);

/* Reads the whole file into *sf (zeroed first; release with lh_snapfile_fini, also after
 * an error). opts may be NULL. Returns 0, or LH_ENOENT, LH_EIO, LH_EFORMAT, LH_EVERSION,
 * LH_ETRUNC, LH_ENOMEM with a one-line message naming path in err. */
int lh_snapfile_read(const char *path, const lh_snapfile_opts_t *opts, lh_snapfile_t *sf,
                     lh_err_t *err);
void lh_snapfile_fini(lh_snapfile_t *sf);

/* A file read ahead in a thread of its own (a report reads its exit snapshot while the
 * trace streams): the header, frames and bases, which need no opts. NULL when no thread
 * could be started (then lh_snapfile_read_ahead reads as lh_snapfile_read). */
typedef struct lh_snapfile_ahead lh_snapfile_ahead_t;
lh_snapfile_ahead_t *lh_snapfile_ahead_start(const char *path);
/* lh_snapfile_read, taking what ah read when path is the path it was started with (once):
 * the same *sf, return code and message as reading the file now. */
int lh_snapfile_read_ahead(lh_snapfile_ahead_t *ah, const char *path,
                           const lh_snapfile_opts_t *opts, lh_snapfile_t *sf, lh_err_t *err);
/* Waits for ah's thread and frees what it read and was not taken. NULL is fine. */
void lh_snapfile_ahead_free(lh_snapfile_ahead_t *ah);

/* Whether P starts a contents file's suffix: ".snap<N>.lhs", alone or followed by '.' and
 * anything (the agent's ".K" when the name was taken; agent/snapshot.c contents_name). */
int lh_snapfile_is_suffix(const char *p);

/* Length of the stem of file name NAME: the part before its last contents-file suffix
 * (an .lhs file), else NAME without ".lht" (a trace), else all of NAME. */
size_t lh_snapfile_stem_len(const char *name);

/* The path of contents file FILE, as a SNAPSHOT record (or a delta file's BASE record)
 * names it, for the file at OWNER that names it (a trace or a contents file): FILE in
 * OWNER's directory; when that does not exist and FILE ends in a contents-file suffix,
 * OWNER's stem with that suffix (the trace and its files were renamed together, by
 * `leakhound run` or by hand). Malloc'd; NULL when memory is short. */
char *lh_snapfile_contents_path(const char *owner, const char *file);

/* The region containing addr, or NULL. */
const lh_region_t *lh_snapfile_region(const lh_snapfile_t *sf, uint64_t addr);

#endif /* LH_SNAPFILE_H */
