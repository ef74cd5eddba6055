/* leakhound - SPDX-License-Identifier: MIT
 *
 * record.c: turning one hook call into records in the calling thread's slot.
 *
 * The caller holds the reentrancy guard. lh_rec_begin unwinds *before* taking the slot lock
 * (unwinding may enter the loader), then locks the slot and takes the time stamp under that
 * lock (see ticker.c for why). lh_rec_end unlocks.
 *
 * This is the hot path: allocations and frees are encoded by hand here, rather than through
 * the generic record encoder, as events of an EVENTS record (format.h) that stays open
 * while nothing else is written to the slot: no type and length byte per event.
 */
#include <string.h>

#include "agent.h"
#include "record.h"
#include "maps.h"
#include "output.h"
#include "slots.h"
#include "enc.h"
#include "format.h"
#include "script.h"
#include "sys.h"
#include "unwind.h"
#include "unwind_table.h"

/* Room checked before each event record (the largest, REALLOC, is < 64 bytes). */
#define EVENT_MAX 64
/* The largest compact event (head, addr, size: 10 bytes each; stack id 5; kind 1), and the
 * payload an EVENTS record may reach with one more (so that its length stays one byte). */
#define EV_MAX 36
#define EVENTS_OPEN_MAX (127 - EV_MAX)
/* Room for a label record. */
#define LABEL_MAX 300

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Most values take 1-3 bytes (time deltas, sizes, stack ids, churn's address codes):
 * those are written without the loop's per-byte test and shift. */
static inline uint8_t *
put_varint(uint8_t *p, uint64_t v)
{
    if (v < 0x80) {
        p[0] = (uint8_t)v;
        return p + 1;
    }
    if (v < 0x4000) {
        p[0] = (uint8_t)(v | 0x80);
        p[1] = (uint8_t)(v >> 7);
        return p + 2;
    }
    if (v < 0x200000) {
        p[0] = (uint8_t)(v | 0x80);
        p[1] = (uint8_t)((v >> 7) | 0x80);
        p[2] = (uint8_t)(v >> 14);
        return p + 3;
    }
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline int
is_self(uint64_t ip)
{
    return ip >= lh_g.self_lo && ip < lh_g.self_hi;
}

/* -------------------------------------------------------------------------------------
 * Frames without frame pointers under the fp unwinder.
 *
 * A frame-pointer walk silently skips the caller of a function built without frame
 * pointers: malloc called from libstdc++'s operator new (or libc's strdup) shows
 * "operator new <- the caller's caller". The missing return addresses are still on the
 * stack, in the gap between the hook's frame record and the next record, at an offset that
 * depends only on the call site (the return address into operator new, say). So the first
 * time a call site is seen, libunwind (DWARF) is asked once which frames the walk missed,
 * their slots are found in the gap, and the offsets are cached per call site; later walks
 * from that site read those slots directly.
 * ----------------------------------------------------------------------------------- */
#define GAP_CACHE 4096
#define GAP_MAX_WORDS 255
#define GAP_MAX_FRAMES 4

/* Entry: tag (24 bits of the call site) | n (3 bits) | 4 x 8-bit word offsets; 0 = empty.
 * One 64-bit word, so racing threads never see a torn entry. */
static _Atomic uint64_t gap_cache[GAP_CACHE];

static uint64_t
gap_tag(uint64_t ip)
{
    uint64_t h = ip * 0x9E3779B97F4A7C15ull;
    return h >> 40 | 1; /* 24 bits, never 0 */
}

static int
gap_lookup(uint64_t ip, uint8_t *off)
{
    uint64_t e = atomic_load_explicit(&gap_cache[(ip >> 2) % GAP_CACHE], memory_order_relaxed);
    if (!e || (e >> 40) != gap_tag(ip)) {
        return -1;
    }
    int n = (int)((e >> 32) & 7);
    for (int i = 0; i < n; i++) {
        off[i] = (uint8_t)(e >> (8 * i));
    }
    return n;
}

static void
gap_store(uint64_t ip, const uint8_t *off, int n)
{
    uint64_t e = gap_tag(ip) << 40 | (uint64_t)n << 32;
    for (int i = 0; i < n; i++) {
        e |= (uint64_t)off[i] << (8 * i);
    }
    atomic_store_explicit(&gap_cache[(ip >> 2) % GAP_CACHE], e, memory_order_relaxed);
}

/* Learns which return addresses the fp walk missed right after ips[k] (whose frame record
 * is at fps[k]) by comparing with libunwind, and where they sit in the gap. */
static int
gap_learn(const uint64_t *ips, const uintptr_t *fps, int k, int n, uint8_t *off)
{
    uint64_t ub[LH_MAX_DEPTH + 16];
    int m = lh_unwind_libunwind(ub, LH_MAX_DEPTH + 16);
    int j = 0;
    while (j < m && ub[j] != ips[k]) {
        j++;
    }
    if (j == m) {
        return 0;
    }
    const uint64_t *lo = (const uint64_t *)(fps[k] + 16);
    const uint64_t *hi = k + 1 < n ? (const uint64_t *)fps[k + 1]
                                   : (const uint64_t *)(*(const uintptr_t *)fps[k]);
    if (hi <= lo || hi - lo > GAP_MAX_WORDS) {
        return 0;
    }
    int found = 0;
    for (j++; j < m && found < GAP_MAX_FRAMES; j++) {
        if (k + 1 < n && ub[j] == ips[k + 1]) {
            break; /* back in step with the walk */
        }
        const uint64_t *w = found ? lo + off[found - 1] + 1 : lo;
        while (w < hi && *w != ub[j]) {
            w++;
        }
        if (w == hi) {
            return 0; /* not where it should be: trust nothing */
        }
        off[found++] = (uint8_t)(w - lo);
    }
    return found;
}

/* -------------------------------------------------------------------------------------
 * Recently seen stacks, for the DWARF unwinder.
 *
 * Unwinding with DWARF rules costs a few hundred nanoseconds per frame; most allocations
 * come again and again from the same call chain at the same stack depth. A full unwind
 * also tells where on the stack each return address was found. The next time the first
 * return address and its stack slot are the same, reading the remembered slots and finding
 * the same return addresses in all of them proves the chain is the same, at the cost of
 * one load per frame: the stack id is known without unwinding or hashing.
 * ----------------------------------------------------------------------------------- */
#define UCACHE_WAYS LH_UCACHE_WAYS

/* One remembered stack: its first return address and that address's stack slot (the key),
 * then each frame's slot (as an offset from slot0) and the return address expected there,
 * side by side so that the check reads them in one pass. gen is the trace generation the
 * stack was known written in when stored: a hit needs no look-up in the shared table. */
typedef struct ucache_frame {
    int64_t off; /* slot of the frame minus slot0 */
    uint64_t ip;
} ucache_frame_t;

typedef struct ucache_entry {
    uint64_t ip0;
    uintptr_t slot0;
    uint32_t n;
    uint32_t id;
    uint32_t epoch;
    uint32_t gen;
    ucache_frame_t f[]; /* i < n */
} ucache_entry_t;

size_t
lh_ucache_bytes(int depth)
{
    return UCACHE_WAYS * (sizeof(ucache_entry_t) + (size_t)depth * sizeof(ucache_frame_t));
}

void
lh_ucache_clear(void *ucache, int depth)
{
    size_t esize = lh_ucache_bytes(depth) / UCACHE_WAYS;
    for (int i = 0; i < UCACHE_WAYS; i++) {
        ucache_entry_t *e = (ucache_entry_t *)((uint8_t *)ucache + (size_t)i * esize);
        e->ip0 = 0;
        e->slot0 = 0;
        e->id = 0;
    }
}

static inline ucache_entry_t *
ucache_at(lh_slot_t *s, uint64_t ip0, uintptr_t slot0)
{
    size_t i = (size_t)(((ip0 ^ (slot0 << 7)) * 0x9E3779B97F4A7C15ull) >> 58) % UCACHE_WAYS;
    return (ucache_entry_t *)((uint8_t *)s->ucache + i * s->uc_esize);
}

/* The return address into the program and its stack slot, found by walking the agent's
 * own frames (always built with frame pointers). Every frame walked is the agent's, so the
 * only checks are that the chain goes up the thread's stack. entry_fp, when the hook gave
 * it, is the frame the walk would end at (the hook's own, whose return address is the
 * program's): one load instead of the walk of the 3-4 frames between (about 60 of the 190
 * instructions the cache check cost per allocation on churn). */
static inline __attribute__((always_inline)) int
first_user_frame(const lh_slot_t *s, uint64_t *ip0, uintptr_t *slot0, uintptr_t entry_fp)
{
    uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
    uintptr_t hi = s->stack_hi;
    uintptr_t self_lo = lh_g.self_lo;
    uintptr_t self_len = lh_g.self_hi - self_lo;
    if (fp < s->stack_lo || fp >= hi || fp > hi - 16) {
        return -1; /* on a signal stack or a coroutine's: not the thread's own stack */
    }
    if (entry_fp > fp && entry_fp <= hi - 16 && !(entry_fp & 7)) {
        uintptr_t ret = ((const uintptr_t *)entry_fp)[1];
        if (ret - self_lo >= self_len) {
            *ip0 = ret;
            *slot0 = entry_fp + 8;
            return 0;
        }
    }
    for (int i = 0; i < 16; i++) {
        const uintptr_t *f = (const uintptr_t *)fp;
        uintptr_t ret = f[1];
        if (ret - self_lo >= self_len) { /* not the agent's code */
            *ip0 = ret;
            *slot0 = fp + 8;
            return 0;
        }
        uintptr_t next = f[0];
        if (next <= fp || next > hi - 16 || (next & 7)) {
            return -1;
        }
        fp = next;
    }
    return -1;
}

/* ucache_find's miss: whether to unwind with slot addresses (to remember this stack):
 * always with frame pointers, where they come free; with libunwind, whose step API is
 * several times slower than unw_backtrace, only for a call site and depth seen twice in a
 * row (a loop), so programs whose stacks rarely repeat do not pay for it. */
__attribute__((noinline)) static int
ucache_miss(lh_slot_t *s, ucache_entry_t *e, uint64_t ip0, uintptr_t slot0, uint32_t epoch)
{
    if (lh_g.cfg.unwind != LH_UNWIND_LIBUNWIND) {
        return 1; /* the fp walk and the table give slots for free */
    }
    if (e->ip0 == ip0 && e->slot0 == slot0 && e->epoch == epoch) {
        /* Second sight: worth remembering, unless remembering has not been paying off for
         * this thread (stacks that repeat their first frame but not the rest): each fill
         * is a slow unwind through libunwind's step API. */
        if (s->uc_fills < 64 || s->uc_fills * 4 < s->uc_hits) {
            s->uc_fills++;
            return 1;
        }
        return 0;
    }
    e->ip0 = ip0; /* first sight: note it, remember nothing yet */
    e->slot0 = slot0;
    e->epoch = epoch;
    e->id = 0;
    return 0;
}

/* A remembered stack of this epoch, written to this trace generation, whose slots still
 * hold its return addresses: its id, else 0 with *want_slots as ucache_miss says. Inline:
 * the hit is every allocation's common case (no call, no look-up in the shared table). */
static inline __attribute__((always_inline)) uint32_t
ucache_find(lh_slot_t *s, uint32_t epoch, uint32_t gen, int *want_slots, uintptr_t entry_fp)
{
    uint64_t ip0;
    uintptr_t slot0;
    *want_slots = 0;
    if (unlikely(!s->ucache) || unlikely(first_user_frame(s, &ip0, &slot0, entry_fp) != 0)) {
        return 0;
    }
    ucache_entry_t *e = ucache_at(s, ip0, slot0);
    if (unlikely(e->ip0 != ip0 || e->slot0 != slot0 || e->epoch != epoch || !e->id ||
                 e->gen != gen)) {
        *want_slots = ucache_miss(s, e, ip0, slot0, epoch);
        return 0;
    }
    /* Every slot slot0 + off was checked to lie in [slot0, stack_hi - 8] when it was
     * stored (ucache_store) for this very slot0: live stack, above this frame. */
    const ucache_frame_t *f = e->f;
    for (uint32_t i = 1; i < e->n; i++) {
        if (*(const uint64_t *)(slot0 + (uintptr_t)f[i].off) != f[i].ip) {
            return 0;
        }
    }
    if (unlikely(++s->uc_hits > (1u << 16))) {
        s->uc_hits >>= 1; /* decay: the recent past decides */
        s->uc_fills >>= 1;
    }
    return e->id;
}

static void
ucache_store(lh_slot_t *s, const uint64_t *ips, const uintptr_t *slots, int n, uint32_t id,
             uint32_t epoch, uint32_t gen)
{
    if (!s->ucache || !id || n <= 0 || !slots[0]) {
        return;
    }
    ucache_entry_t *e = ucache_at(s, ips[0], slots[0]);
    for (int i = 0; i < n; i++) {
        intptr_t d = (intptr_t)(slots[i] - slots[0]);
        if (!slots[i] || d < 0 || d > INT32_MAX || slots[i] > s->stack_hi - 8) {
            e->id = 0;
            return; /* a frame off the thread's stack: do not remember this one */
        }
        e->f[i].off = d;
        e->f[i].ip = ips[i];
    }
    e->ip0 = ips[0];
    e->slot0 = slots[0];
    e->n = (uint32_t)n;
    e->epoch = epoch;
    e->gen = gen;
    e->id = id;
}

/* LEAKHOUND_UNWIND_VERIFY: a recorded stack (ips[0..n), the agent's frames dropped, at
 * most depth) that the table walked or the stack cache recognised, against libunwind's
 * over the same frames. The first few differences are said on stderr. */
static void
verify_walk(const uint64_t *ips, int n)
{
    uint64_t ub[LH_MAX_DEPTH + 16];
    int m = lh_unwind_libunwind(ub, lh_g.cfg.depth + 16);
    int j = 0;
    while (j < m && is_self(ub[j])) {
        j++;
    }
    int a = n < lh_g.cfg.depth ? n : lh_g.cfg.depth;
    int b = m - j < lh_g.cfg.depth ? m - j : lh_g.cfg.depth;
    int at = 0;
    while (at < a && at < b && ips[at] == ub[j + at]) {
        at++;
    }
    int mismatch = at < a || at < b;
    lh_utab_note_check(mismatch);
    static _Atomic int told;
    if (mismatch && atomic_fetch_add_explicit(&told, 1, memory_order_relaxed) < 5) {
        char x[3][20];
        uint64_t v[3] = {(uint64_t)at, at < a ? ips[at] : 0, at < b ? ub[j + at] : 0};
        for (int i = 0; i < 3; i++) {
            static const char hex[] = "0123456789abcdef";
            x[i][0] = i ? 'x' : 'f';
            for (int d = 0; d < 16; d++) {
                x[i][1 + d] = hex[(v[i] >> (60 - 4 * d)) & 15];
            }
            x[i][17] = ' ';
            x[i][18] = '\0';
        }
        lh_sys_log("unwind table differs from libunwind: frame/table/libunwind ", x[0],
                   x[1][0] ? x[1] : "");
        lh_sys_log("  libunwind: ", x[2], "");
    }
}

/* Captures the caller's stack, without the agent's own frames, into ips; returns where it
 * starts in *start and the number of frames. */
static int
capture(lh_slot_t *s, uint64_t *ips, uintptr_t *slots, int *start, int *by_table)
{
    int max = lh_g.cfg.depth + 16; /* room for the agent's own frames */
    int n = 0;
    int k = 0;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (lh_g.cfg.unwind == LH_UNWIND_TABLE) {
        /* The table walk reads only between its own frame and the stack's top, mapped
         * when it runs on the thread's own stack (not a sigaltstack below it). */
        if (s->stack_hi && here >= s->stack_lo && here < s->stack_hi) {
            n = lh_utab_unwind(ips, slots, max, s->stack_hi);
        } else {
            n = -1;
        }
        if (n < 0) {
            n = 0; /* beyond the table: libunwind below */
        }
        while (k < n && is_self(ips[k])) {
            k++;
        }
        lh_utab_note(k < n);
        *by_table = k < n;
    }
    /* The fp walk reads only between this frame and the stack's top, which is all mapped
     * when this frame is on the thread's own stack (not on a sigaltstack below it). */
    if (lh_g.cfg.unwind == LH_UNWIND_FP && s->stack_hi && here >= s->stack_lo &&
        here < s->stack_hi) {
        uintptr_t fps[LH_MAX_DEPTH + 16];
        n = lh_unwind_fp(ips, fps, max - GAP_MAX_FRAMES, s->stack_hi);
        if (slots) {
            for (int i = 0; i < n; i++) {
                slots[i] = fps[i] + sizeof(uintptr_t); /* {saved fp, return address} */
            }
        }
        while (k < n && is_self(ips[k])) {
            k++;
        }
        if (k < n) {
            uint8_t off[GAP_MAX_FRAMES];
            int g = gap_lookup(ips[k], off);
            if (g < 0) {
                g = gap_learn(ips, fps, k, n, off);
                gap_store(ips[k], off, g);
            }
            if (g > 0) {
                const uint64_t *lo = (const uint64_t *)(fps[k] + 16);
                memmove(ips + k + 1 + g, ips + k + 1, (size_t)(n - k - 1) * sizeof *ips);
                if (slots) {
                    memmove(slots + k + 1 + g, slots + k + 1,
                            (size_t)(n - k - 1) * sizeof *slots);
                }
                for (int i = 0; i < g; i++) {
                    ips[k + 1 + i] = lo[off[i]];
                    if (slots) {
                        slots[k + 1 + i] = (uintptr_t)&lo[off[i]];
                    }
                }
                n += g;
            }
        }
    }
    if (k == n) {
        /* libunwind by choice, or the fp walk found nothing beyond our frames (a
         * sigaltstack or coroutine stack outside the thread's known bounds). */
        if (slots && s->ucache) {
            n = lh_unwind_libunwind_slots(ips, slots, max);
        } else {
            n = lh_unwind_libunwind(ips, max);
        }
        for (k = 0; k < n && is_self(ips[k]); k++) {
        }
    }
    *start = k;
    n -= k;
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

/* Stack id of ips[0..n): this thread's previous stack when it is the same (the common case
 * in loops), else the shared table. */
static uint32_t
intern(const uint64_t *ips, int n, uint32_t epoch, int *emit)
{
    uint32_t gen = atomic_load_explicit(&lh_g.gen, memory_order_relaxed);
    const lh_stacktab_entry_t *last = lh_stacktab_get(&lh_g.stacks, lh_tls.last_stack);
    if (last && last->n == (uint32_t)n && last->epoch == epoch &&
        atomic_load_explicit(&last->emitted_gen, memory_order_relaxed) == gen &&
        memcmp(last->ips, ips, (size_t)n * sizeof *ips) == 0) {
        *emit = 0;
        return lh_tls.last_stack;
    }
    uint32_t id = lh_stacktab_intern(&lh_g.stacks, ips, (uint32_t)n, epoch, gen, emit);
    lh_tls.last_stack = id;
    return id;
}

/* lh_rec_begin's way when the stack is not a remembered one already written to this file:
 * unwind (or copy the remembered stack for its first use in this file), intern, add the
 * script frames, then lock and write what is new. Out of line: the common case does not
 * pay for its frame (two arrays of LH_MAX_DEPTH). */
__attribute__((noinline)) static int
begin_slow(lh_rec_t *r, lh_slot_t *s, uint32_t id, uint32_t epoch, uint32_t gen, int want_slots)
{
    uint64_t ips[LH_MAX_DEPTH + 16];
    int n = 0;
    int start = 0;
    int emit = 0;
    lh_script_stack_t ss;
    ss.id = 0;
    const lh_stacktab_entry_t *st = id ? lh_stacktab_get(&lh_g.stacks, id) : NULL;
    if (st) {
        if (lh_claim_gen(&((lh_stacktab_entry_t *)st)->emitted_gen, gen)) {
            emit = 1; /* first use in this trace file (after a fork) */
            n = (int)st->n;
            memcpy(ips, st->ips, (size_t)n * sizeof *ips);
        }
        r->stack_id = id;
        if (unlikely(lh_g.cfg.unwind_verify)) {
            verify_walk(st->ips, (int)st->n);
        }
    } else {
        uintptr_t slots[LH_MAX_DEPTH + 16];
        int use_slots = want_slots;
        int by_table = 0;
        n = capture(s, ips, use_slots ? slots : NULL, &start, &by_table);
        r->stack_id = intern(ips + start, n, epoch, &emit);
        if (use_slots) {
            ucache_store(s, ips + start, slots + start, n, r->stack_id, epoch, gen);
        }
        if (unlikely(lh_g.cfg.unwind_verify) && by_table) {
            verify_walk(ips + start, n);
        }
    }
    if (unlikely(emit)) {
        /* A new stack may run through a library loaded behind our back (dlopen from
         * a constructor, NSS): make sure its module record exists. Cheap when nothing
         * changed, and rare: once per distinct stack. No agent lock is held here. */
        lh_maps_scan(0);
    }
    if (lh_script_on) {
        /* Perl or Python code running: its frames join the native ones. */
        lh_script_stack(&ss, r->stack_id, epoch);
    }
    lh_slot_lock(s);
    r->slot = s;
    if (unlikely(emit)) {
        emit_stack(s, r->stack_id, ips + start, n, epoch);
    }
    if (ss.id) {
        lh_script_emit(s, &ss);
        r->stack_id = ss.id;
    }
    r->ts = lh_sys_now_ns();
    return 0;
}

static inline __attribute__((always_inline)) int
rec_begin(lh_rec_t *r, int want_stack, uintptr_t entry_fp)
{
    r->slot = NULL;
    r->stack_id = 0;
    if (unlikely(!lh_recording())) {
        return -1;
    }
    lh_slot_t *s = lh_thread_slot();
    if (unlikely(!s)) {
        atomic_fetch_add_explicit(&lh_g.n_dropped, 1, memory_order_relaxed);
        return -1;
    }
    if (want_stack) {
        /* The common case: a stack this thread saw before at the same place, written to
         * this file already (the cache entry's generation), no script frames to add,
         * nothing to verify. */
        uint32_t epoch = atomic_load_explicit(&lh_g.epoch, memory_order_acquire);
        uint32_t gen = atomic_load_explicit(&lh_g.gen, memory_order_relaxed);
        int want_slots = 0;
        uint32_t id = ucache_find(s, epoch, gen, &want_slots, entry_fp);
        if (unlikely(!id || lh_script_on || lh_g.cfg.unwind_verify)) {
            return begin_slow(r, s, id, epoch, gen, want_slots);
        }
        r->stack_id = id;
    }
    lh_slot_lock(s);
    r->slot = s;
    r->ts = lh_sys_now_ns();
    return 0;
}

int
lh_rec_begin(lh_rec_t *r, int want_stack)
{
    return rec_begin(r, want_stack, 0);
}

/* Makes room for one record and returns where it starts. Slot lock held. */
static inline uint8_t *
room(lh_slot_t *s, size_t need)
{
    if (unlikely(s->len + need > s->cap)) {
        lh_flush_slot_locked(s);
    }
    return s->buf + s->len;
}

static inline uint8_t *
put_ts(lh_slot_t *s, uint8_t *q, uint64_t ts)
{
    if (unlikely(s->ts_base == 0)) {
        s->ts_base = s->ts_last = ts;
    }
    q = put_varint(q, ts - s->ts_last);
    s->ts_last = ts;
    return q;
}

static inline uint8_t *
put_addr(lh_slot_t *s, uint8_t *q, const void *p)
{
    uint64_t a = (uint64_t)(uintptr_t)p;
    q = put_varint(q, lh_addr_code((int64_t)(a - s->addr_last)));
    s->addr_last = a;
    return q;
}

/* Closes a short record started at b (type byte, one length byte, payload up to q). */
static inline void
close_short(lh_slot_t *s, uint8_t *b, uint8_t type, uint8_t *q)
{
    b[0] = type;
    b[1] = (uint8_t)(q - b - 2);
    s->len = (size_t)(q - s->buf);
    s->n_records++;
    s->n_events++;
}

/* Where the next event goes: the end of the slot's open EVENTS record when it is still the
 * last record (ev_end, set only while one more event fits in it and in the buffer), else
 * a new EVENTS record (after a flush when the buffer is full). Slot lock held. */
static inline uint8_t *
ev_begin(lh_slot_t *s)
{
    if (likely(s->len == s->ev_end)) {
        return s->buf + s->len;
    }
    uint8_t *b = room(s, EV_MAX + 2);
    b[0] = LH_REC_EVENTS;
    s->ev_at = s->len;
    if (likely(atomic_load_explicit(&lh_output_compact, memory_order_relaxed))) {
        s->ev_limit = s->len + 2 + EVENTS_OPEN_MAX;
        if (s->ev_limit > s->cap - EV_MAX) {
            s->ev_limit = s->cap - EV_MAX;
        }
    } else {
        /* One event per record, its stack id and kind written out: the form in which
         * zstd finds a request loop's repeats (output.c). */
        s->ev_limit = 0;
        s->ev_stack = UINT32_MAX;
    }
    s->n_records++;
    return b + 2;
}

/* Ends an event written from ev_begin up to q: the record's length byte covers it. */
static inline void
ev_end(lh_slot_t *s, uint8_t *q)
{
    size_t len = (size_t)(q - s->buf);
    s->len = len;
    s->buf[s->ev_at + 1] = (uint8_t)(len - s->ev_at - 2);
    s->ev_end = len <= s->ev_limit ? len : LH_EV_CLOSED;
    s->n_events++;
}

/* An event's head: its time delta and its code. */
static inline uint8_t *
put_head(lh_slot_t *s, uint8_t *q, uint64_t ts, unsigned code)
{
    if (unlikely(s->ts_base == 0)) {
        s->ts_base = s->ts_last = ts;
    }
    q = put_varint(q, (ts - s->ts_last) << 2 | code);
    s->ts_last = ts;
    return q;
}

static inline __attribute__((always_inline)) void
rec_alloc(lh_rec_t *r, const void *p, size_t size, int kind)
{
    lh_slot_t *s = r->slot;
    uint8_t *q = ev_begin(s);
    if (likely(kind == LH_AK_MALLOC && r->stack_id == s->ev_stack)) {
        q = put_head(s, q, r->ts, LH_EV_ALLOC);
        q = put_addr(s, q, p);
        q = put_varint(q, size);
    } else {
        q = put_head(s, q, r->ts, LH_EV_ALLOC_STACK);
        q = put_addr(s, q, p);
        q = put_varint(q, size);
        q = put_varint(q, r->stack_id);
        *q++ = (uint8_t)kind;
        s->ev_stack = r->stack_id;
    }
    ev_end(s, q);
}

static inline __attribute__((always_inline)) void
rec_free(lh_rec_t *r, const void *p)
{
    lh_slot_t *s = r->slot;
    uint8_t *q = ev_begin(s);
    q = put_head(s, q, r->ts, LH_EV_FREE);
    q = put_addr(s, q, p);
    ev_end(s, q);
}

void
lh_rec_alloc(lh_rec_t *r, const void *p, size_t size, int kind)
{
    rec_alloc(r, p, size, kind);
}

void
lh_rec_free(lh_rec_t *r, const void *p)
{
    rec_free(r, p);
}

/* The whole of an allocation's and a free's recording in one call each: the hooks' common
 * case, with lh_rec_begin, the encoder and lh_rec_end inlined into one frame. */
void
lh_rec_alloc_event(const void *p, size_t size, int kind, uintptr_t entry_fp)
{
    lh_rec_t r;
    if (rec_begin(&r, 1, entry_fp) == 0) {
        rec_alloc(&r, p, size, kind);
        lh_slot_unlock(r.slot);
    }
}

void
lh_rec_free_event(const void *p)
{
    lh_rec_t r;
    if (rec_begin(&r, 0, 0) == 0) {
        rec_free(&r, p);
        lh_slot_unlock(r.slot);
    }
}

void
lh_rec_realloc(lh_rec_t *r, const void *old, const void *p, size_t size)
{
    lh_slot_t *s = r->slot;
    uint8_t *b = room(s, EVENT_MAX);
    /* The old block was freed at r->ts (taken before the real call), the new one exists
     * from now on (after it returned): two times, so that neither another thread's reuse
     * of the old address nor its earlier free of the new one can be ordered wrongly. */
    uint64_t now = lh_sys_now_ns();
    uint8_t *q = put_ts(s, b + 2, r->ts);
    q = put_addr(s, q, old);
    q = put_addr(s, q, p);
    q = put_varint(q, size);
    q = put_varint(q, r->stack_id);
    q = put_varint(q, now - r->ts);
    s->ts_last = now;
    close_short(s, b, LH_REC_REALLOC, q);
}

static uint8_t *
put_label(uint8_t *q, const char *label)
{
    size_t n = label ? strnlen(label, 255) : 0;
    q = put_varint(q, n);
    memcpy(q, label ? label : "", n);
    return q + n;
}

/* Label records can pass 127 bytes: written through the generic encoder's length rule. */
static void
close_long(lh_slot_t *s, uint8_t *b, uint8_t type, uint8_t *q)
{
    lh_enc_t e = {b, s->buf + s->cap, 0};
    uint8_t *rec = lh_enc_rec_begin(&e, type);
    e.p = q;
    lh_enc_rec_end(&e, rec);
    if (lh_enc_ok(&e)) {
        s->len = (size_t)(e.p - s->buf);
        s->n_records++;
    }
}

void
lh_rec_label(lh_rec_t *r, uint8_t type, const char *label, int trigger)
{
    lh_slot_t *s = r->slot;
    uint8_t *b = room(s, LABEL_MAX);
    uint8_t *q = put_ts(s, b + 2, r->ts);
    q = put_label(q, label);
    if (type == LH_REC_SNAPSHOT) {
        q = put_varint(q, (uint64_t)trigger);
    }
    close_long(s, b, type, q);
}

void
lh_rec_snapshot(lh_rec_t *r, const char *label, int trigger, const char *file, int mode,
                unsigned number, uint64_t pause_ns)
{
    lh_slot_t *s = r->slot;
    uint8_t *b = room(s, LABEL_MAX + LH_PATH_MAX + 40);
    uint8_t *q = put_ts(s, b + 2, r->ts);
    q = put_label(q, label);
    q = put_varint(q, (uint64_t)trigger);
    size_t n = strnlen(file, LH_PATH_MAX);
    q = put_varint(q, n);
    memcpy(q, file, n);
    q += n;
    q = put_varint(q, (uint64_t)(n ? mode : LH_CONTENTS_NONE));
    q = put_varint(q, number);
    q = put_varint(q, pause_ns);
    close_long(s, b, LH_REC_SNAPSHOT, q);
}

void
lh_rec_tag(lh_rec_t *r, const void *p, const char *type)
{
    lh_slot_t *s = r->slot;
    uint8_t *b = room(s, LABEL_MAX);
    uint8_t *q = put_ts(s, b + 2, r->ts);
    q = put_addr(s, q, p);
    q = put_label(q, type);
    close_long(s, b, LH_REC_TAG, q);
}

void
lh_rec_end(lh_rec_t *r)
{
    if (r->slot) {
        lh_slot_unlock(r->slot);
        r->slot = NULL;
    }
}
