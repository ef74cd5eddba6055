/* leakhound - SPDX-License-Identifier: MIT
 *
 * prefetch.c: frames read ahead, checked and decompressed on worker threads (prefetch.h).
 *
 * Slots form a ring indexed by frame number. A worker claims the next frame number when its
 * slot is free, reads the frame (header, payload) from the file under the lock, then checks
 * and decompresses it without the lock. The reader waits for the slot of the frame it
 * wants; the slot it was last given is freed on its next call. After the end of the file
 * or a problem, no worker claims further frames, so the reader meets that status in order.
 */
#include "prefetch.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "dec.h"
#include "enc.h"
#include "err.h"
#include "fread_count.h"
#include "grow.h"

enum { SLOT_FREE = 0, SLOT_BUSY = 1, SLOT_READY = 2 };

typedef struct slot {
    int state;
    lh_pf_frame_t fr;
    uint8_t *comp, *raw;
    size_t comp_cap, raw_cap;
} slot_t;

struct lh_prefetch {
    pthread_mutex_t lock;
    pthread_cond_t cond_free;  /* a slot became free, or stop */
    pthread_cond_t cond_ready; /* a slot became ready */
    FILE *f;
    uint64_t off;          /* file offset of the next read */
    uint64_t next_read;    /* next frame number a worker claims */
    uint64_t next_take;    /* next frame number the reader takes */
    int done_reading;      /* end of file or a problem: nothing more to claim */
    int stop;
    int handed;            /* the reader holds slot (next_take - 1) */
    int final_status;      /* sticky status once the reader met it (0 = none yet) */
    int have_final;
    slot_t slots[LH_PREFETCH_SLOTS];
    pthread_t *threads;
    int n_threads;
};

static size_t
rd(lh_prefetch_t *p, void *buf, size_t n)
{
    return lh_fread_count(p->f, buf, n, &p->off);
}

/* Reads one frame into s (lock held). Returns its status: LH_PF_FRAME when the payload is
 * in s->comp and still to be checked. */
static int
read_frame_locked(lh_prefetch_t *p, slot_t *s)
{
    uint8_t hb[LH_FRAME_HEADER_LEN];
    lh_pf_frame_t *fr = &s->fr;
    fr->off = p->off;
    fr->why = NULL;
    fr->err_no = 0;
    size_t got = rd(p, hb, sizeof hb);
    if (got == 0 && !ferror(p->f)) {
        return LH_PF_EOF;
    }
    if (got < sizeof hb) {
        fr->err_no = ferror(p->f) ? errno : 0;
        return LH_PF_TRUNC;
    }
    if (lh_dec_frame_header(hb, &fr->h, &fr->why) < 0) {
        return LH_PF_HEADER;
    }
    for (size_t extra = fr->h.header_len - LH_FRAME_HEADER_LEN; extra > 0;) {
        size_t n = extra < sizeof hb ? extra : sizeof hb;
        if (rd(p, hb, n) != n) {
            fr->err_no = ferror(p->f) ? errno : 0;
            return LH_PF_TRUNC;
        }
        extra -= n;
    }
    if (lh_grow_to(&s->comp, &s->comp_cap, fr->h.comp_len ? fr->h.comp_len : 1, 1, 65536) < 0) {
        return LH_PF_NOMEM;
    }
    if (rd(p, s->comp, fr->h.comp_len) != fr->h.comp_len) {
        fr->err_no = ferror(p->f) ? errno : 0;
        return LH_PF_TRUNC;
    }
    return LH_PF_FRAME;
}

/* Checks and decompresses the frame in s (no lock held). */
static int
finish_frame(slot_t *s, ZSTD_DCtx *dctx)
{
    lh_pf_frame_t *fr = &s->fr;
    if (lh_crc32c(0, s->comp, fr->h.comp_len) != fr->h.payload_crc) {
        return LH_PF_CRC;
    }
    fr->payload = s->comp;
    if (fr->h.codec == LH_CODEC_ZSTD) {
        if (lh_grow_to(&s->raw, &s->raw_cap, fr->h.raw_len ? fr->h.raw_len : 1, 1, 65536) < 0) {
            return LH_PF_NOMEM;
        }
        size_t n = dctx ? ZSTD_decompressDCtx(dctx, s->raw, fr->h.raw_len, s->comp,
                                              fr->h.comp_len)
                        : ZSTD_decompress(s->raw, fr->h.raw_len, s->comp, fr->h.comp_len);
        if (ZSTD_isError(n) || n != fr->h.raw_len) {
            fr->why = ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size mismatch";
            return LH_PF_ZSTD;
        }
        fr->payload = s->raw;
    }
    return LH_PF_FRAME;
}

static void *
worker(void *arg)
{
    lh_prefetch_t *p = arg;
    ZSTD_DCtx *dctx = ZSTD_createDCtx(); /* NULL: ZSTD_decompress makes its own */
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->stop && !p->done_reading &&
               p->slots[p->next_read % LH_PREFETCH_SLOTS].state != SLOT_FREE) {
            pthread_cond_wait(&p->cond_free, &p->lock);
        }
        if (p->stop || p->done_reading) {
            break;
        }
        slot_t *s = &p->slots[p->next_read % LH_PREFETCH_SLOTS];
        p->next_read++;
        s->state = SLOT_BUSY;
        int st = read_frame_locked(p, s);
        s->fr.end_off = p->off;
        if (st != LH_PF_FRAME) {
            p->done_reading = 1; /* the reader meets this status in order */
            s->fr.status = st;
            s->state = SLOT_READY;
            pthread_cond_broadcast(&p->cond_ready);
            pthread_cond_broadcast(&p->cond_free); /* idle workers: nothing more to do */
            continue;
        }
        pthread_mutex_unlock(&p->lock);
        st = finish_frame(s, dctx);
        pthread_mutex_lock(&p->lock);
        s->fr.status = st;
        if (st != LH_PF_FRAME) {
            /* Frames after a bad one are never wanted: the reader stops there. Frames
             * already claimed after it are simply never taken. */
            p->done_reading = 1;
            pthread_cond_broadcast(&p->cond_free);
        }
        s->state = SLOT_READY;
        pthread_cond_broadcast(&p->cond_ready);
    }
    pthread_mutex_unlock(&p->lock);
    ZSTD_freeDCtx(dctx);
    return NULL;
}

int
lh_prefetch_threads(void)
{
    const char *e = getenv("LEAKHOUND_READ_THREADS");
    if (e && *e) {
        long n = strtol(e, NULL, 10);
        return n < 0 ? 0 : n > 8 ? 8 : (int)n;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus <= 1) {
        return 0;
    }
    return cpus - 1 > 3 ? 3 : (int)(cpus - 1);
}

int
lh_prefetch_start(lh_prefetch_t **out, FILE *f, uint64_t off, int n_threads)
{
    *out = NULL;
    if (n_threads < 1) {
        return LH_EINVAL;
    }
    lh_prefetch_t *p = calloc(1, sizeof *p);
    if (!p) {
        return LH_ENOMEM;
    }
    p->threads = calloc((size_t)n_threads, sizeof *p->threads);
    if (!p->threads) {
        free(p);
        return LH_ENOMEM;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond_free, NULL);
    pthread_cond_init(&p->cond_ready, NULL);
    p->f = f;
    p->off = off;
    for (int i = 0; i < n_threads; i++) {
        if (pthread_create(&p->threads[i], NULL, worker, p) != 0) {
            break;
        }
        p->n_threads++;
    }
    if (p->n_threads == 0) {
        lh_prefetch_stop(p);
        return LH_ENOMEM;
    }
    *out = p;
    return 0;
}

void
lh_prefetch_next(lh_prefetch_t *p, lh_pf_frame_t *out)
{
    pthread_mutex_lock(&p->lock);
    if (p->handed) { /* the frame given last time is done with */
        p->slots[(p->next_take - 1) % LH_PREFETCH_SLOTS].state = SLOT_FREE;
        p->handed = 0;
        pthread_cond_broadcast(&p->cond_free);
    }
    if (p->have_final) {
        memset(out, 0, sizeof *out);
        out->status = p->final_status;
        pthread_mutex_unlock(&p->lock);
        return;
    }
    slot_t *s = &p->slots[p->next_take % LH_PREFETCH_SLOTS];
    while (s->state != SLOT_READY) {
        pthread_cond_wait(&p->cond_ready, &p->lock);
    }
    *out = s->fr;
    p->next_take++;
    p->handed = 1;
    if (out->status != LH_PF_FRAME) {
        p->have_final = 1;
        p->final_status = out->status;
    }
    pthread_mutex_unlock(&p->lock);
}

void
lh_prefetch_stop(lh_prefetch_t *p)
{
    if (!p) {
        return;
    }
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->cond_free);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->n_threads; i++) {
        pthread_join(p->threads[i], NULL);
    }
    for (int i = 0; i < LH_PREFETCH_SLOTS; i++) {
        free(p->slots[i].comp);
        free(p->slots[i].raw);
    }
    pthread_cond_destroy(&p->cond_free);
    pthread_cond_destroy(&p->cond_ready);
    pthread_mutex_destroy(&p->lock);
    free(p->threads);
    free(p);
}
