/* leakhound - SPDX-License-Identifier: MIT
 *
 * record.c: turning one hook call into records in the calling thread's slot.
 *
 * The caller holds the reentrancy guard. lh_rec_begin unwinds *before* taking the slot lock
 * (unwinding may enter the loader), then locks the slot; the time stamp of every record is
 * taken under that lock (see writer.c for why). lh_rec_end unlocks.
 */
#include <string.h>

#include "agent.h"
#include "enc.h"
#include "format.h"
#include "sys.h"
#include "unwind.h"

/* Worst case for one event record, including a label. */
#define REC_MAX 512

static int
capture(lh_slot_t *s, uint64_t *ips)
{
    int max = lh_g.cfg.depth + 16; /* room for the agent's own frames */
    int n;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (lh_g.cfg.unwind == LH_UNWIND_FP && s->stack_hi > here) {
        n = lh_unwind_fp(ips, max, s->stack_hi);
    } else {
        n = lh_unwind_libunwind(ips, max);
    }
    int k = 0;
    while (k < n && ips[k] >= lh_g.self_lo && ips[k] < lh_g.self_hi) {
        k++;
    }
    if (lh_g.cfg.unwind == LH_UNWIND_FP && k == n) {
        /* Out of the thread's known stack (sigaltstack, coroutine): ask libunwind. */
        n = lh_unwind_libunwind(ips, max);
        for (k = 0; k < n && ips[k] >= lh_g.self_lo && ips[k] < lh_g.self_hi; k++) {
        }
    }
    n -= k;
    if (k) {
        memmove(ips, ips + k, (size_t)n * sizeof *ips);
    }
    return n > lh_g.cfg.depth ? lh_g.cfg.depth : n;
}

static void
emit_stack(lh_slot_t *s, uint32_t id, const uint64_t *ips, int n, uint32_t epoch)
{
    if (lh_slot_reserve(s, 32 + (size_t)n * 10) != 0) {
        return;
    }
    lh_enc_t e;
    lh_enc_init(&e, s->buf + s->len, s->cap - s->len);
    uint8_t *r = lh_enc_rec_begin(&e, LH_REC_STACK);
    lh_enc_varint(&e, id);
    lh_enc_varint(&e, epoch);
    lh_enc_varint(&e, (uint64_t)n);
    uint64_t prev = 0;
    for (int i = 0; i < n; i++) {
        lh_enc_svarint(&e, (int64_t)(ips[i] - prev));
        prev = ips[i];
    }
    lh_enc_rec_end(&e, r);
    if (lh_enc_ok(&e)) {
        s->len = (size_t)(e.p - s->buf);
        s->n_records++;
    }
}

int
lh_rec_begin(lh_rec_t *r, int want_stack)
{
    uint64_t ips[LH_MAX_DEPTH + 16];
    int n = 0;
    int emit = 0;
    uint32_t epoch = 0;
    r->slot = NULL;
    r->stack_id = 0;
    if (!lh_recording()) {
        return -1;
    }
    lh_slot_t *s = lh_thread_slot();
    if (!s) {
        atomic_fetch_add_explicit(&lh_g.n_dropped, 1, memory_order_relaxed);
        return -1;
    }
    if (want_stack) {
        n = capture(s, ips);
        epoch = atomic_load_explicit(&lh_g.epoch, memory_order_acquire);
        r->stack_id = lh_stacks_intern(&lh_g.stacks, ips, (uint32_t)n, epoch,
                                       atomic_load_explicit(&lh_g.gen, memory_order_relaxed),
                                       &emit);
    }
    if (emit) {
        /* A new stack may run through a library loaded behind our back (dlopen from a
         * constructor, NSS): make sure its module record exists. Cheap when nothing
         * changed, and rare: once per distinct stack. No agent lock is held here. */
        lh_maps_scan(0);
    }
    lh_slot_lock(s);
    r->slot = s;
    if (emit) {
        emit_stack(s, r->stack_id, ips, n, epoch);
    }
    r->ts = lh_sys_now_ns();
    return 0;
}

/* Starts a timestamped record in the slot; returns the record start or NULL. */
static uint8_t *
begin_ts(lh_slot_t *s, lh_enc_t *e, uint8_t type, uint64_t now)
{
    if (lh_slot_reserve(s, REC_MAX) != 0) {
        return NULL;
    }
    if (s->len == 0 || s->ts_base == 0) {
        s->ts_base = s->ts_last = now;
    }
    lh_enc_init(e, s->buf + s->len, s->cap - s->len);
    uint8_t *r = lh_enc_rec_begin(e, type);
    lh_enc_varint(e, now - s->ts_last);
    s->ts_last = now;
    return r;
}

static void
enc_addr(lh_slot_t *s, lh_enc_t *e, const void *p)
{
    uint64_t a = (uint64_t)(uintptr_t)p;
    lh_enc_svarint(e, (int64_t)(a - s->addr_last));
    s->addr_last = a;
}

static void
finish(lh_slot_t *s, lh_enc_t *e, uint8_t *r)
{
    lh_enc_rec_end(e, r);
    if (lh_enc_ok(e)) {
        s->len = (size_t)(e->p - s->buf);
        s->n_records++;
        s->n_events++;
    }
}

void
lh_rec_alloc(lh_rec_t *r, const void *p, size_t size, int kind)
{
    lh_enc_t e;
    uint8_t *rec = begin_ts(r->slot, &e, LH_REC_ALLOC, r->ts);
    if (!rec) {
        return;
    }
    enc_addr(r->slot, &e, p);
    lh_enc_varint(&e, size);
    lh_enc_varint(&e, r->stack_id);
    lh_enc_u8(&e, (uint8_t)kind);
    finish(r->slot, &e, rec);
}

void
lh_rec_free(lh_rec_t *r, const void *p)
{
    lh_enc_t e;
    uint8_t *rec = begin_ts(r->slot, &e, LH_REC_FREE, r->ts);
    if (!rec) {
        return;
    }
    enc_addr(r->slot, &e, p);
    finish(r->slot, &e, rec);
}

void
lh_rec_realloc(lh_rec_t *r, const void *old, const void *p, size_t size)
{
    lh_enc_t e;
    uint8_t *rec = begin_ts(r->slot, &e, LH_REC_REALLOC, r->ts);
    if (!rec) {
        return;
    }
    /* The old block was freed at r->ts (taken before the real call), the new one exists
     * from now on (after it returned): two times, so that neither another thread's reuse
     * of the old address nor its earlier free of the new one can be ordered wrongly. */
    uint64_t now = lh_sys_now_ns();
    enc_addr(r->slot, &e, old);
    enc_addr(r->slot, &e, p);
    lh_enc_varint(&e, size);
    lh_enc_varint(&e, r->stack_id);
    lh_enc_varint(&e, now - r->ts);
    r->slot->ts_last = now;
    finish(r->slot, &e, rec);
}

static void
enc_label(lh_enc_t *e, const char *label)
{
    size_t n = label ? strnlen(label, 255) : 0;
    lh_enc_varint(e, n);
    lh_enc_bytes(e, label, n);
}

void
lh_rec_label(lh_rec_t *r, uint8_t type, const char *label, int trigger)
{
    lh_enc_t e;
    uint8_t *rec = begin_ts(r->slot, &e, type, r->ts);
    if (!rec) {
        return;
    }
    enc_label(&e, label);
    if (type == LH_REC_SNAPSHOT) {
        lh_enc_varint(&e, (uint64_t)trigger);
    }
    finish(r->slot, &e, rec);
}

void
lh_rec_tag(lh_rec_t *r, const void *p, const char *type)
{
    lh_enc_t e;
    uint8_t *rec = begin_ts(r->slot, &e, LH_REC_TAG, r->ts);
    if (!rec) {
        return;
    }
    enc_addr(r->slot, &e, p);
    enc_label(&e, type);
    finish(r->slot, &e, rec);
}

void
lh_rec_end(lh_rec_t *r)
{
    if (r->slot) {
        lh_slot_unlock(r->slot);
        r->slot = NULL;
    }
}
