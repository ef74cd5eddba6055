/* leakhound - SPDX-License-Identifier: MIT
 *
 * prefetch.h: the trace reader's frame prefetcher (internal to analysis/).
 *
 * Frames of a trace decode on their own (each is one zstd frame, delta state restarts), so
 * worker threads read them ahead from the file, check their CRCs and decompress them in
 * parallel, and the reader takes them back in file order: decompression no longer adds to
 * the reader's own time when a second core is free. Reading the file stays sequential (one
 * worker at a time, under a lock); only checking and decompressing run in parallel.
 *
 * Memory: a ring of LH_PREFETCH_SLOTS frames (compressed and raw payloads), so at most that
 * many frames are held ahead of the reader. Not thread-safe: one reader per prefetcher.
 */
#ifndef LH_PREFETCH_H
#define LH_PREFETCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "format.h"

#define LH_PREFETCH_SLOTS 8

/* What a worker found where it expected a frame. */
enum lh_pf_status {
    LH_PF_FRAME = 1,    /* a frame, checked and decompressed */
    LH_PF_EOF = 0,      /* the file ended cleanly between frames */
    LH_PF_TRUNC = -1,   /* the file ended inside a frame (or a read error: see err_no) */
    LH_PF_HEADER = -2,  /* a bad frame header (why) */
    LH_PF_CRC = -3,     /* payload checksum mismatch */
    LH_PF_ZSTD = -4,    /* payload would not decompress (why) */
    LH_PF_NOMEM = -5,
};

typedef struct lh_pf_frame {
    int status;             /* LH_PF_* */
    const char *why;        /* LH_PF_HEADER, LH_PF_ZSTD: a static string */
    int err_no;             /* LH_PF_TRUNC: errno of a read error, 0 at end of file */
    lh_frame_hdr_t h;
    uint64_t off;           /* file offset of the frame's header */
    uint64_t end_off;       /* file offset after what was read for it */
    const uint8_t *payload; /* h.raw_len bytes, valid until the next lh_prefetch_next */
} lh_pf_frame_t;

typedef struct lh_prefetch lh_prefetch_t;

/* Starts n_threads workers (>= 1) reading frames from f, whose position is at file offset
 * off. Returns 0, or a negative LH_E* code (then nothing was started). */
int lh_prefetch_start(lh_prefetch_t **out, FILE *f, uint64_t off, int n_threads);

/* The next frame in file order, waiting for it. After a status other than LH_PF_FRAME,
 * later calls return the same status. */
void lh_prefetch_next(lh_prefetch_t *p, lh_pf_frame_t *out);

/* Stops and joins the workers and frees everything. NULL is fine. */
void lh_prefetch_stop(lh_prefetch_t *p);

/* How many workers to start for reading one trace: the online CPUs less one (the reader),
 * at most 3; 0 when there is only one CPU or LEAKHOUND_READ_THREADS=0 says so (the reader
 * then decompresses itself). */
int lh_prefetch_threads(void);

#endif /* LH_PREFETCH_H */
