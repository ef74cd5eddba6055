/* leakhound - SPDX-License-Identifier: MIT
 *
 * script.c: script frames on the agent's stacks (see script.h): which reader runs, frame
 * interning, combined stack ids, SFRAME/STACK/INTERP records.
 *
 * Frames are interned by (lang, key, key2) in an open-addressing table like the stack
 * table's (stacktab.c): lookups are lock-free, inserts take a spinlock and copy the frame's
 * strings into an agent-owned arena. A stack with script frames is interned in the agent's
 * stack table under the key [native_id | 1 << 63, sframe ids...]: a user-space return
 * address never has bit 63 set, so such keys never collide with native stacks, and the
 * combined id shares the one id space of STACK records.
 */
#include "script.h"

#include <stdatomic.h>
#include <string.h>

#include "enc.h"
#include "output.h"
#include "recorder.h"
#include "slots.h"
#include "stacktab.h"
#include "sys.h"

#define SF_MAX_ENTRIES (1u << 20)
#define SF_ARENA_BYTES (64u << 20)
#define SF_FUNC_MAX 255u
#define SF_FILE_MAX 1023u
#define COMBINED_TAG (1ull << 63)

typedef struct sf_entry {
    uint64_t hash;
    uintptr_t key, key2;
    uint32_t lang;
    uint32_t line;
    uint32_t func_off, func_len;
    uint32_t file_off, file_len;
    _Atomic uint32_t emitted_gen;
} sf_entry_t;

typedef struct sf_table {
    _Atomic uint32_t *slots; /* entry index + 1, 0 = empty */
    uint32_t slot_mask;
    sf_entry_t *entries;
    _Atomic uint32_t n_entries;
    char *arena;
    uint32_t arena_used;
    atomic_flag lock;
} sf_table_t;

typedef int (*capture_fn)(lh_sframe_t *out, int max);
typedef void (*describe_fn)(lh_sframe_t *f, char *buf, size_t cap);
typedef int (*ended_fn)(int *status);

int lh_script_on;
static sf_table_t sft;
static capture_fn reader_capture;
static describe_fn reader_describe;
static ended_fn reader_ended;
static atomic_int end_taken;
static int reader_lang;
static lh_interp_info_t interps[2];
static int n_interps;
static int tried_perl, tried_python;

/* -------------------------------------------------------------------------------------
 * Detection
 * ----------------------------------------------------------------------------------- */

static int reserve_table(void);

static void
found(const lh_interp_info_t *info, capture_fn cap, describe_fn desc, ended_fn ended)
{
    if (n_interps >= (int)(sizeof interps / sizeof interps[0])) {
        return;
    }
    interps[n_interps++] = *info;
    if (info->status == LH_INTERP_RECORDED && !reader_capture &&
        (sft.slots || reserve_table() == 0)) {
        reader_capture = cap;
        reader_describe = desc;
        reader_ended = ended;
        reader_lang = info->lang;
        __atomic_store_n(&lh_script_on, 1, __ATOMIC_RELEASE);
    } else if (info->status != LH_INTERP_RECORDED && info->detail[0]) {
        lh_sys_log(info->detail, "", "");
    }
}

static void
detect_all(void)
{
    lh_interp_info_t info;
    if (!tried_perl) {
        memset(&info, 0, sizeof info);
        if (lh_perl_detect(&info) > 0) {
            tried_perl = 1;
            found(&info, lh_perl_capture, lh_perl_describe, lh_perl_ended);
        }
    }
    if (!tried_python && lh_python_detect && lh_python_capture) {
        memset(&info, 0, sizeof info);
        if (lh_python_detect(&info) > 0) {
            tried_python = 1;
            found(&info, lh_python_capture, lh_python_describe, lh_python_ended);
        }
    }
}

/* The frame table, reserved (address space only, touched as it fills) when a readable
 * interpreter is found: programs without one pay nothing. */
static int
reserve_table(void)
{
    size_t n_slots = (size_t)SF_MAX_ENTRIES * 2;
    _Atomic uint32_t *slots = lh_sys_map(n_slots * sizeof(uint32_t));
    sft.entries = lh_sys_map((size_t)SF_MAX_ENTRIES * sizeof(sf_entry_t));
    sft.arena = lh_sys_map(SF_ARENA_BYTES);
    if (!slots || !sft.entries || !sft.arena) {
        lh_sys_log("cannot reserve memory for script frames; recording native frames only",
                   "", "");
        return -1;
    }
    sft.slot_mask = (uint32_t)n_slots - 1;
    atomic_flag_clear(&sft.lock);
    sft.slots = slots;
    return 0;
}

void
lh_script_init(void)
{
    detect_all();
}

void
lh_script_rescan(void)
{
    if (tried_perl && (tried_python || !lh_python_detect)) {
        return;
    }
    int before = n_interps;
    detect_all();
    /* An interpreter found after the trace was opened: its INTERP record now. */
    for (int i = before; i < n_interps; i++) {
        uint8_t buf[400];
        lh_enc_t e;
        lh_enc_init(&e, buf, sizeof buf);
        lh_enc_rec_interp(&e, 0, (unsigned)interps[i].lang, interps[i].version,
                          (unsigned)interps[i].status, interps[i].detail);
        if (lh_enc_ok(&e)) {
            lh_write_agent_frame(buf, (size_t)(e.p - buf), 1, lh_sys_now_ns(), 0);
        }
    }
}

void
lh_script_emit_interp_locked(void)
{
    uint8_t buf[800];
    lh_enc_t e;
    lh_enc_init(&e, buf, sizeof buf);
    for (int i = 0; i < n_interps; i++) {
        lh_enc_rec_interp(&e, 0, (unsigned)interps[i].lang, interps[i].version,
                          (unsigned)interps[i].status, interps[i].detail);
    }
    if (n_interps && lh_enc_ok(&e)) {
        lh_write_agent_frame_locked(buf, (size_t)(e.p - buf), (uint32_t)n_interps,
                                    lh_sys_now_ns());
    }
}

void
lh_script_check_end(void)
{
    int status = 0;
    if (!reader_ended || atomic_load_explicit(&end_taken, memory_order_relaxed) ||
        !reader_ended(&status)) {
        return;
    }
    if (atomic_exchange(&end_taken, 1)) {
        return;
    }
    /* provisional: the process's exit (lh_recorder_exit_status) or _exit rewrites it */
    lh_recorder_finish(LH_EXIT_SCRIPT, status);
}

void
lh_script_freed(const void *p)
{
    if (reader_lang == LH_LANG_PERL) {
        lh_perl_freed(p);
    }
}

void
lh_script_after_fork(void)
{
    atomic_flag_clear(&sft.lock);
}

/* -------------------------------------------------------------------------------------
 * Frame interning
 * ----------------------------------------------------------------------------------- */

static uint64_t
hash_frame(uint32_t lang, uintptr_t key, uintptr_t key2)
{
    uint64_t h = ((uint64_t)key * 0x9E3779B97F4A7C15ull) ^ lang;
    h = (h ^ (uint64_t)key2) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
    return h | 1;
}

static uint32_t
sf_probe(uint64_t h, uint32_t lang, uintptr_t key, uintptr_t key2, uint32_t *free_slot)
{
    uint32_t i = (uint32_t)h & sft.slot_mask;
    for (uint32_t step = 0; step <= sft.slot_mask; step++) {
        uint32_t v = atomic_load_explicit(&sft.slots[i], memory_order_acquire);
        if (v == 0) {
            *free_slot = i;
            return 0;
        }
        const sf_entry_t *e = &sft.entries[v - 1];
        if (e->hash == h && e->key == key && e->key2 == key2 && e->lang == lang) {
            return v;
        }
        i = (i + 1) & sft.slot_mask;
    }
    *free_slot = UINT32_MAX;
    return 0;
}

static uint32_t
put_str(const char *s, uint32_t len, uint32_t max, uint32_t *out_len)
{
    if (!s) {
        len = 0;
    }
    if (len > max) {
        len = max;
    }
    if (sft.arena_used + len > SF_ARENA_BYTES) {
        len = 0;
    }
    uint32_t off = sft.arena_used;
    if (len) {
        memcpy(sft.arena + off, s, len);
    }
    sft.arena_used += len;
    *out_len = len;
    return off;
}

/* The id of frame f (>= 1), reading its strings through describe() when it is new; 0 when
 * the table is full. */
static uint32_t
sf_intern(lh_sframe_t *f)
{
    uint64_t h = hash_frame((uint32_t)reader_lang, f->key, f->key2);
    uint32_t free_slot;
    uint32_t v = sf_probe(h, (uint32_t)reader_lang, f->key, f->key2, &free_slot);
    if (v) {
        return v;
    }
    /* New: read the strings before taking the lock (memory reads of the interpreter). */
    char buf[SF_FUNC_MAX + 1];
    if (!f->func && reader_describe) {
        reader_describe(f, buf, sizeof buf);
    }
    while (atomic_flag_test_and_set_explicit(&sft.lock, memory_order_acquire)) {
        /* Inserts are rare (one per distinct frame); spin. */
    }
    v = sf_probe(h, (uint32_t)reader_lang, f->key, f->key2, &free_slot);
    if (!v) {
        uint32_t idx = atomic_load_explicit(&sft.n_entries, memory_order_relaxed);
        if (free_slot != UINT32_MAX && idx < SF_MAX_ENTRIES) {
            sf_entry_t *e = &sft.entries[idx];
            e->hash = h;
            e->key = f->key;
            e->key2 = f->key2;
            e->lang = (uint32_t)reader_lang;
            e->line = f->line;
            e->func_off = put_str(f->func, f->func_len, SF_FUNC_MAX, &e->func_len);
            e->file_off = put_str(f->file, f->file_len, SF_FILE_MAX, &e->file_len);
            atomic_store_explicit(&e->emitted_gen, 0, memory_order_relaxed);
            atomic_store_explicit(&sft.n_entries, idx + 1, memory_order_release);
            v = idx + 1;
            atomic_store_explicit(&sft.slots[free_slot], v, memory_order_release);
        }
    }
    atomic_flag_clear_explicit(&sft.lock, memory_order_release);
    return v;
}

/* The calling thread's last script stack. In a loop the same statement allocates again and
 * again: comparing the captured keys with the last ones is cheaper than interning every
 * frame and the pair again. And when only the inner frames changed (the next statement,
 * another sub called from the same place), the outer frames that match the last stack's
 * keep their ids without a lookup. Stacks up to LAST_MAX frames are kept (initial-exec TLS
 * is scarce: 32 frames are 800 bytes per thread). */
#define LAST_MAX 32
typedef struct last_stack {
    uint32_t native_id, epoch, gen, id; /* id 0: nothing kept */
    uint32_t n;
    uintptr_t keys[2 * LAST_MAX];
    uint32_t ids[LAST_MAX];
} last_stack_t;
static __thread last_stack_t last_tls __attribute__((tls_model("initial-exec")));

static int
same_frame(const last_stack_t *l, int i, const lh_sframe_t *f)
{
    return l->keys[2 * i] == f->key && l->keys[2 * i + 1] == f->key2;
}

void
lh_script_stack(lh_script_stack_t *ss, uint32_t native_id, uint32_t epoch)
{
    lh_sframe_t fr[LH_SCRIPT_MAX];
    ss->id = 0;
    ss->emit = 0;
    ss->n = 0;
    if (!native_id || !reader_capture) {
        return;
    }
    int n = reader_capture(fr, LH_SCRIPT_MAX);
    if (n <= 0) {
        return;
    }
    uint32_t gen = atomic_load_explicit(&lh_g.gen, memory_order_relaxed);
    last_stack_t *last = &last_tls;
    /* Frames shared with the last stack, counted from the outermost. */
    int shared = 0;
    if (last->id && last->gen == gen) {
        int ln = (int)last->n;
        while (shared < n && shared < ln && same_frame(last, ln - 1 - shared, &fr[n - 1 - shared])) {
            shared++;
        }
        if (shared == n && ln == n && last->native_id == native_id && last->epoch == epoch) {
            ss->id = last->id; /* written to this file already, by its first use */
            ss->native_id = native_id;
            ss->epoch = epoch;
            return;
        }
    }
    uint64_t key[LH_SCRIPT_MAX + 1];
    key[0] = (uint64_t)native_id | COMBINED_TAG;
    for (int i = 0; i < n; i++) {
        uint32_t id;
        if (i >= n - shared) {
            id = last->ids[last->n - (uint32_t)(n - i)]; /* same frame as last time */
        } else if (!(id = sf_intern(&fr[i]))) {
            return; /* table full: native frames only */
        }
        ss->ids[i] = id;
        key[i + 1] = id;
    }
    int emit = 0;
    uint32_t id = lh_stacktab_intern(&lh_g.stacks, key, (uint32_t)n + 1, epoch, gen, &emit);
    if (!id) {
        return;
    }
    ss->id = id;
    ss->native_id = native_id;
    ss->epoch = epoch;
    ss->emit = emit;
    ss->n = (uint32_t)n;
    if (n <= LAST_MAX) {
        last->id = id;
        last->native_id = native_id;
        last->epoch = epoch;
        last->gen = gen;
        last->n = (uint32_t)n;
        for (int i = 0; i < n; i++) {
            last->keys[2 * i] = fr[i].key;
            last->keys[2 * i + 1] = fr[i].key2;
            last->ids[i] = ss->ids[i];
        }
    } else {
        last->id = 0;
    }
}

static void
commit(lh_slot_t *s, const lh_enc_t *e)
{
    if (lh_enc_ok(e)) {
        s->len = (size_t)(e->p - s->buf);
        s->n_records++;
    }
}

void
lh_script_emit(lh_slot_t *s, const lh_script_stack_t *ss)
{
    if (!ss->id || !ss->emit) {
        return;
    }
    uint32_t gen = atomic_load_explicit(&lh_g.gen, memory_order_relaxed);
    for (uint32_t i = 0; i < ss->n; i++) {
        sf_entry_t *x = &sft.entries[ss->ids[i] - 1];
        if (!lh_claim_gen(&x->emitted_gen, gen)) {
            continue;
        }
        if (lh_slot_reserve(s, 32 + (size_t)x->func_len + x->file_len) != 0) {
            return;
        }
        lh_enc_t e;
        lh_enc_init(&e, s->buf + s->len, s->cap - s->len);
        lh_enc_rec_sframe(&e, ss->ids[i], x->lang, sft.arena + x->func_off, x->func_len,
                          sft.arena + x->file_off, x->file_len, x->line);
        commit(s, &e);
    }
    const lh_stacktab_entry_t *nat = lh_stacktab_get(&lh_g.stacks, ss->native_id);
    if (!nat) {
        return;
    }
    if (lh_slot_reserve(s, 40 + (size_t)nat->n * 10 + (size_t)ss->n * 5) != 0) {
        return;
    }
    lh_enc_t e;
    lh_enc_init(&e, s->buf + s->len, s->cap - s->len);
    lh_enc_rec_stack(&e, ss->id, ss->epoch, nat->ips, nat->n, ss->ids, ss->n);
    commit(s, &e);
}
