/* leakhound - SPDX-License-Identifier: MIT
 *
 * history.c: the filtered event history.
 */
#include "history.h"

#include <stdlib.h>
#include <string.h>

#include "dupstr.h"
#include "grow.h"

void
lh_history_init(lh_history_t *h, const lh_hist_filter_t *f)
{
    memset(h, 0, sizeof *h);
    if (f) {
        h->f = *f;
    }
}

void
lh_history_fini(lh_history_t *h)
{
    LH_FREE_EACH(h->v, h->n, lh_hist_entry_t, label);
    h->v = NULL;
    h->n = h->cap = 0;
}

static int
is_heap_event(const lh_event_t *ev)
{
    return ev->type == LH_REC_ALLOC || ev->type == LH_REC_FREE || ev->type == LH_REC_REALLOC;
}

static int
matches(const lh_hist_filter_t *f, const lh_event_t *ev, const lh_live_block_t *fb, size_t nfb)
{
    if (f->has_tid && ev->tid != f->tid) {
        return 0;
    }
    if (!is_heap_event(ev)) {
        return (ev->type == LH_REC_MARK || ev->type == LH_REC_SNAPSHOT) && !f->has_addr &&
               !f->has_site;
    }
    if (f->has_addr) {
        int hit = (ev->type != LH_REC_REALLOC || ev->half != LH_HALF_FREE) && ev->addr == f->addr;
        hit |= ev->type == LH_REC_REALLOC && ev->half != LH_HALF_ALLOC && ev->old_addr == f->addr;
        if (!hit) {
            return 0;
        }
    }
    if (f->has_site) {
        int hit = ev->type != LH_REC_FREE && ev->half != LH_HALF_FREE && ev->addr &&
                  ev->stack_id == f->site;
        for (size_t i = 0; i < nfb && !hit; i++) {
            hit = fb[i].stack_id == f->site;
        }
        if (!hit) {
            return 0;
        }
    }
    return 1;
}

/* The history's consumer of the one pass: keeps ev, which r has just applied, when it
 * matches. */
static int
consume(void *ctx, const lh_trace_t *t, const lh_replay_t *r, const lh_event_t *ev,
        lh_err_t *err)
{
    lh_history_t *h = ctx;
    const lh_live_block_t *fb = NULL;
    (void)t;
    size_t nfb = is_heap_event(ev) ? lh_replay_freed(r, &fb) : 0;
    if (!matches(&h->f, ev, fb, nfb)) {
        return 0;
    }
    h->n_matched++;
    if (h->f.limit && h->n >= h->f.limit) {
        return 0;
    }
    lh_hist_entry_t *e = lh_push_zeroed(&h->v, &h->cap, h->n, sizeof *e, 64);
    if (!e) {
        return lh_err_set(err, LH_ENOMEM, "out of memory in the event history");
    }
    e->ts_ns = ev->ts_ns;
    e->tid = ev->tid;
    e->type = ev->type;
    e->half = ev->half;
    e->kind = ev->kind;
    e->addr = ev->addr;
    e->old_addr = ev->old_addr;
    e->size = ev->size;
    e->stack_id = ev->stack_id;
    if (nfb) {
        /* The block the event freed (for an ALLOC: one whose free was missed). */
        e->has_block = 1;
        e->block_size = fb[0].size;
        e->block_stack = fb[0].stack_id;
        e->block_age_ns = ev->ts_ns >= fb[0].ts_ns ? ev->ts_ns - fb[0].ts_ns : 0;
    }
    if (ev->type == LH_REC_MARK || ev->type == LH_REC_SNAPSHOT) {
        if (!(e->label = malloc(ev->label_len + 1))) {
            return lh_err_set(err, LH_ENOMEM, "out of memory in the event history");
        }
        if (ev->label_len) {
            memcpy(e->label, ev->label, ev->label_len);
        }
        e->label[ev->label_len] = '\0';
    }
    h->n++;
    return 0;
}

lh_consumer_t
lh_history_consumer(lh_history_t *h)
{
    return (lh_consumer_t){consume, h, 0};
}
