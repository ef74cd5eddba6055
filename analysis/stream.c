/* leakhound - SPDX-License-Identifier: MIT
 *
 * stream.c: the one reader loop over a trace.
 */
#include "stream.h"

#include <sys/stat.h>

#define PROGRESS_EVERY 0xffffu
/* How many events ahead the live set's slots are prefetched: enough for a cache miss to
 * complete behind the work of the events in between. */
#define PREFETCH_AHEAD 8
#define PREFETCH_CHECK_EVERY 0x3ffu

int
lh_stream_run(const char *path, const lh_stream_opts_t *o, lh_trace_t **tp, lh_replay_t **rp,
              lh_err_t *err)
{
    lh_trace_opts_t topts = {.salvage = o->salvage};
    lh_trace_t *t = NULL;
    lh_replay_t *r = NULL;
    lh_event_t ev;
    uint64_t n_ev = 0, file_size = 0;
    int prefetch = 0;
    struct stat sb;
    int rc;
    *tp = NULL;
    if (rp) {
        *rp = NULL;
    }
    if ((rc = lh_trace_open(path, &topts, &t, err)) < 0 ||
        (rp && (rc = lh_replay_new(&r, err)) < 0)) {
        goto fail;
    }
    if (stat(path, &sb) == 0) {
        file_size = (uint64_t)sb.st_size;
    }
    while ((rc = lh_trace_next(t, &ev, err)) > 0) {
        if (r) {
            if ((n_ev & PREFETCH_CHECK_EVERY) == 0) {
                prefetch = lh_replay_prefetch_pays(r);
            }
            const lh_event_t *next = prefetch ? lh_trace_ahead(t, PREFETCH_AHEAD) : NULL;
            if (next) {
                lh_replay_prefetch(r, next);
            }
            if ((rc = lh_replay_event(r, &ev, err)) < 0) {
                goto fail;
            }
        }
        int stop = 0;
        int heap = ev.type == LH_REC_ALLOC || ev.type == LH_REC_REALLOC || ev.type == LH_REC_FREE;
        for (size_t i = 0; i < o->n_consumers; i++) {
            const lh_consumer_t *c = &o->consumers[i];
            if (heap && c->skip_heap) {
                continue;
            }
            if ((rc = c->event(c->ctx, t, r, &ev, err)) < 0) {
                goto fail;
            }
            stop |= rc;
        }
        if (stop) {
            break;
        }
        n_ev++;
        if (o->on_progress && (n_ev & PROGRESS_EVERY) == 0) {
            o->on_progress(o->progress_ctx, lh_trace_parts(t)->stats.file_bytes, file_size);
        }
    }
    if (rc < 0) {
        goto fail;
    }
    if (o->on_progress) {
        o->on_progress(o->progress_ctx, lh_trace_parts(t)->stats.file_bytes, file_size);
    }
    *tp = t;
    if (rp) {
        *rp = r;
    }
    return 0;
fail:
    lh_replay_free(r);
    lh_trace_close(t);
    return rc;
}
