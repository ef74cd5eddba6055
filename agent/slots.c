/* leakhound - SPDX-License-Identifier: MIT
 *
 * slots.c: per-thread event buffers ("slots"), their lock, the hand-off of full buffers to
 * the ticker, the sweep that flushes every thread's buffer, and thread exit.
 *
 * Each thread appends records to its own slot under the slot's own lock (uncontended except
 * for the ticker's visit every flush interval). A full slot is handed to the ticker, or
 * compressed and written by its thread under the writer lock. Lock order: slot lock, then
 * writer lock, then queue lock; never the other way.
 */
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <string.h>
#include <time.h>
#include <linux/membarrier.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "slots.h"

#include "agent.h"
#include "enc.h"
#include "format.h"
#include "output.h"
#include "record.h"
#include "sys.h"
#include "threads.h"

extern void *__libc_stack_end;

/* -------------------------------------------------------------------------------------
 * Slots
 * ----------------------------------------------------------------------------------- */
/* The slot "lock" is asymmetric. Its owner thread takes it on every event, so that path
 * must be cheap: a plain store of busy=1 and a plain load of req, with no atomic
 * read-modify-write and no fence. The rare other side (the ticker's sweep every 100 ms, the
 * exit paths) sets req on every slot and then calls membarrier(), which runs a full memory
 * barrier on every thread of the process: after it, an owner either is visibly busy (the
 * sweep waits for it) or will see req and step aside until the sweep is done with its slot
 * (the asymmetric Dekker pattern of liburcu's sys_membarrier flavour). Without membarrier
 * (old kernels) the owner pays a full fence instead. */
int lh_slot_asym;
static pthread_mutex_t sweep_lock = PTHREAD_MUTEX_INITIALIZER;

static void
asym_register(void)
{
    lh_slot_asym = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

static void
barrier_all(void)
{
    if (!lh_slot_asym || syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
        atomic_thread_fence(memory_order_seq_cst);
        /* membarrier failed after registration (should not happen): owners still fence */
        if (lh_slot_asym) {
            lh_slot_asym = 0;
        }
    }
}

/* lh_slot_lock (slots.h) found a sweep's request: step aside until the sweep is done with
 * this slot, then take it again. */
void
lh_slot_lock_wait(lh_slot_t *s)
{
    for (;;) {
        atomic_store_explicit(&s->busy, 0, memory_order_release);
        int spins = 0;
        while (atomic_load_explicit(&s->req, memory_order_acquire)) {
            if (++spins > 64) {
                sched_yield();
            }
        }
        atomic_store_explicit(&s->busy, 1, memory_order_relaxed);
        if (lh_slot_asym) {
            atomic_signal_fence(memory_order_seq_cst);
        } else {
            atomic_thread_fence(memory_order_seq_cst);
        }
        if (!atomic_load_explicit(&s->req, memory_order_acquire)) {
            return;
        }
    }
}

/* -------------------------------------------------------------------------------------
 * Hand-off of full buffers to the ticker, which compresses and writes them off the hot path
 * (on another core when there is one). A thread whose buffer is full swaps it for a spare
 * and queues it; when no spare is free (the writer is behind), it writes the frame itself,
 * which bounds memory and slows the program rather than dropping events.
 * Lock order: slot lock, then writer lock, then queue lock.
 * ----------------------------------------------------------------------------------- */
#define QUEUE_MAX 64
#define SPARES_MAX 32

typedef struct pending {
    uint8_t *buf;
    size_t len;
    uint32_t tid;
    uint32_t n_records;
    uint64_t ts_base;
} pending_t;

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pending_t queue[QUEUE_MAX];
static unsigned q_head, q_len;
static uint8_t *spares[SPARES_MAX];
static unsigned n_spares, n_spares_made;
static sem_t wake;
static int wake_ok;

static void
slot_reset(lh_slot_t *s)
{
    s->len = 0;
    s->n_records = 0;
    s->addr_last = 0;
    s->ts_base = 0;
    s->ts_last = 0;
    s->ev_end = LH_EV_CLOSED;
    s->ev_stack = 0;
}

/* Queues the slot's buffer and gives the slot a spare. Returns 0, or -1 when no spare or
 * no queue room is available. Slot lock held. */
static int
hand_off(lh_slot_t *s)
{
    if (!lh_g.ticker_running) {
        return -1;
    }
    pthread_mutex_lock(&qlock);
    if (q_len == QUEUE_MAX) {
        pthread_mutex_unlock(&qlock);
        return -1;
    }
    uint8_t *spare = NULL;
    if (n_spares) {
        spare = spares[--n_spares];
    } else if (n_spares_made < SPARES_MAX) {
        spare = lh_sys_map(lh_g.cfg.buffer_bytes);
        n_spares_made += spare != NULL;
    }
    if (!spare) {
        pthread_mutex_unlock(&qlock);
        return -1;
    }
    pending_t *p = &queue[(q_head + q_len++) % QUEUE_MAX];
    p->buf = s->buf;
    p->len = s->len;
    p->tid = s->tid;
    p->n_records = s->n_records;
    p->ts_base = s->ts_base;
    pthread_mutex_unlock(&qlock);
    s->buf = spare;
    slot_reset(s);
    return 0;
}

/* Writes the buffers queued when it starts, in order (not those queued meanwhile: busy
 * producers must not keep the ticker from its periodic SYNC). Takes the writer lock first so
 * that concurrent drainers (ticker, exit path) cannot reorder frames. */
static void
drain_queue(void)
{
    pthread_mutex_lock(&lh_g.wlock);
    pthread_mutex_lock(&qlock);
    unsigned n = q_len;
    pthread_mutex_unlock(&qlock);
    while (n--) {
        pthread_mutex_lock(&qlock);
        if (q_len == 0) {
            pthread_mutex_unlock(&qlock);
            break;
        }
        pending_t p = queue[q_head];
        q_head = (q_head + 1) % QUEUE_MAX;
        q_len--;
        pthread_mutex_unlock(&qlock);
        lh_output_write_frame_locked(p.buf, p.len, p.tid, p.n_records, p.ts_base, 0);
        pthread_mutex_lock(&qlock);
        if (n_spares < SPARES_MAX) {
            spares[n_spares++] = p.buf;
        }
        pthread_mutex_unlock(&qlock);
    }
    pthread_mutex_unlock(&lh_g.wlock);
}

/* Writes the slot's records now, in this thread. Slot lock held. */
static void
write_slot_now(lh_slot_t *s)
{
    pthread_mutex_lock(&lh_g.wlock);
    lh_output_write_frame_locked(s->buf, s->len, s->tid, s->n_records, s->ts_base, 0);
    pthread_mutex_unlock(&lh_g.wlock);
    slot_reset(s);
}

void
lh_flush_slot_locked(lh_slot_t *s)
{
    if (s->len == 0) {
        return;
    }
    if (hand_off(s) == 0) {
        if (wake_ok) {
            sem_post(&wake); /* AS-safe */
        }
        return;
    }
    write_slot_now(s);
}

int
lh_slot_reserve(lh_slot_t *s, size_t need)
{
    if (s->len + need > s->cap) {
        lh_flush_slot_locked(s);
    }
    return s->len + need <= s->cap ? 0 : -1;
}

static void
thread_bounds(lh_slot_t *s)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    s->stack_lo = 0;
    s->stack_hi = 0;
    if ((pid_t)s->tid == lh_g.pid) {
        /* The main thread's stack grows down from here, at most RLIMIT_STACK. */
        struct rlimit rl;
        uintptr_t max = 64u << 20;
        if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
            rl.rlim_cur < (1ul << 32)) {
            max = (uintptr_t)rl.rlim_cur;
        }
        s->stack_hi = (uintptr_t)__libc_stack_end;
        s->stack_lo = s->stack_hi > max ? s->stack_hi - max : 0;
        return;
    }
    /* May allocate (the cpuset); the guard is held, so those pass through unrecorded. */
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
            s->stack_lo = (uintptr_t)addr;
            s->stack_hi = (uintptr_t)addr + size;
        }
        pthread_attr_destroy(&attr);
    }
}

/* One past the highest slot ever taken (slots are taken lowest first): the sweeps below
 * look at these, not at all LH_MAX_SLOTS (26k instructions per sweep of a one-thread
 * program, twice per tick). */
static atomic_int slots_hi;

static int
slots_seen(void)
{
    return atomic_load_explicit(&slots_hi, memory_order_acquire);
}

lh_slot_t *
lh_thread_slot_take(void)
{
    unsigned gen = atomic_load_explicit(&lh_g.gen, memory_order_relaxed);
    lh_slot_t *s = NULL;
    for (int i = 0; i < LH_MAX_SLOTS; i++) {
        int expect = 0;
        if (atomic_load_explicit(&lh_g.slots[i].in_use, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong(&lh_g.slots[i].in_use, &expect, 1)) {
            s = &lh_g.slots[i];
            int hi = atomic_load(&slots_hi);
            while (hi < i + 1 && !atomic_compare_exchange_weak(&slots_hi, &hi, i + 1)) {
            }
            break;
        }
    }
    if (!s) {
        return NULL;
    }
    if (!s->buf) {
        s->buf = lh_sys_map(lh_g.cfg.buffer_bytes);
        if (!s->buf) {
            atomic_store(&s->in_use, 0);
            return NULL;
        }
        s->cap = lh_g.cfg.buffer_bytes;
    }
    s->len = 0;
    s->n_records = 0;
    s->n_events = 0;
    s->ts_base = s->ts_last = 0;
    s->addr_last = 0;
    s->ev_end = LH_EV_CLOSED;
    s->ev_stack = 0;
    s->tid = (uint32_t)lh_sys_gettid();
    s->uc_hits = s->uc_fills = 0;
    thread_bounds(s);
    lh_threads_note(s);
    s->is_exited = lh_tls.exited;
#if defined(__x86_64__)
    if (s->stack_hi) {
        /* Remembered stacks (record.c); a reused slot forgets the previous thread's. */
        size_t len = lh_ucache_bytes(lh_g.cfg.depth);
        if (!s->ucache) {
            s->ucache = lh_sys_map(len);
        } else {
            lh_ucache_clear(s->ucache, lh_g.cfg.depth);
        }
        s->uc_esize = lh_ucache_bytes(lh_g.cfg.depth) / LH_UCACHE_WAYS;
    }
#endif
    lh_tls.slot = s;
    lh_tls.registered = 1;
    lh_tls.pid_gen = gen;
    if (lh_g.key_ok) {
        pthread_setspecific(lh_g.key, s);
    }

    char name[17] = {0};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    lh_slot_lock(s);
    if (lh_slot_reserve(s, 64) == 0) {
        lh_enc_t e;
        uint64_t now = lh_sys_now_ns();
        lh_enc_init(&e, s->buf + s->len, s->cap - s->len);
        if (s->ts_base == 0) {
            s->ts_base = s->ts_last = now;
        }
        uint8_t *r = lh_enc_rec_begin(&e, LH_REC_THREAD);
        lh_enc_varint(&e, now - s->ts_last);
        lh_enc_varint(&e, s->tid);
        lh_enc_str(&e, name);
        lh_enc_rec_end(&e, r);
        if (lh_enc_ok(&e)) {
            s->ts_last = now;
            s->len = (size_t)(e.p - s->buf);
            s->n_records++;
        }
    }
    lh_slot_unlock(s);
    return s;
}

/* pthread key destructor: the thread is exiting; flush and give its slot back. */
LH_REALIGN static void
thread_exit(void *arg)
{
    lh_slot_t *s = arg;
    int saved = lh_tls.guard;
    lh_tls.guard = 1;
    /* glibc may still free and allocate for this thread (later key destructors, its
     * tcache): those events register a slot again, whose stack is no root (issue 11). */
    lh_tls.exited = 1;
    if (s) {
        lh_threads_ended(s->self, s->tid); /* its DTV stays with glibc's cached stack */
    }
    if (s && s == lh_tls.slot && lh_tls.registered) {
        lh_slot_lock(s);
        if (lh_recording() && lh_slot_reserve(s, 32) == 0) {
            lh_enc_t e;
            uint64_t now = lh_sys_now_ns();
            if (s->ts_base == 0) {
                s->ts_base = s->ts_last = now;
            }
            lh_enc_init(&e, s->buf + s->len, s->cap - s->len);
            uint8_t *r = lh_enc_rec_begin(&e, LH_REC_THREAD_END);
            lh_enc_varint(&e, now - s->ts_last);
            lh_enc_varint(&e, s->tid);
            lh_enc_rec_end(&e, r);
            if (lh_enc_ok(&e)) {
                s->ts_last = now;
                s->len = (size_t)(e.p - s->buf);
                s->n_records++;
            }
        }
        if (lh_recording()) {
            lh_flush_slot_locked(s);
        }
        s->len = 0;
        s->ev_end = LH_EV_CLOSED;
        atomic_fetch_add(&lh_g.n_events, s->n_events);
        s->n_events = 0;
        atomic_store(&s->in_use, 0);
        lh_slot_unlock(s);
        lh_tls.registered = 0;
        lh_tls.slot = NULL;
    }
    if (saved) {
        lh_tls.guard = saved;
    } else {
        lh_guard_leave();
    }
}

/* Sets req on every slot in use (sweep_lock held), then the barrier after which each
 * owner is either visibly busy or will step aside: the asking side of the slot lock
 * (lh_slot_lock). Returns one past the last slot asked. */
static int
ask_all(void)
{
    int hi = 0;
    for (int i = 0, n = slots_seen(); i < n; i++) {
        if (atomic_load_explicit(&lh_g.slots[i].in_use, memory_order_acquire)) {
            atomic_store_explicit(&lh_g.slots[i].req, 1, memory_order_relaxed);
            hi = i + 1;
        }
    }
    barrier_all();
    return hi;
}

/* Moves every thread's pending records to the queue (or writes them), then drains the
 * queue: the sweep of the asymmetric slot lock (see lh_slot_lock). bounded: for the exit
 * paths, where a thread stuck inside a hook (or a sweep stuck on it) must not hang us. */
void
lh_flush_all(int bounded)
{
    if (!lh_g.slots) {
        return;
    }
    if (bounded) {
        int got = 0;
        for (int i = 0; i < 2000 && !got; i++) {
            got = pthread_mutex_trylock(&sweep_lock) == 0;
            if (!got) {
                sched_yield();
            }
        }
        if (!got) {
            drain_queue();
            return;
        }
    } else {
        pthread_mutex_lock(&sweep_lock);
    }
    int hi = ask_all();
    for (int pass = 0;; pass++) {
        int left = 0;
        for (int i = 0; i < hi; i++) {
            lh_slot_t *s = &lh_g.slots[i];
            if (!atomic_load_explicit(&s->req, memory_order_relaxed)) {
                continue;
            }
            if (atomic_load_explicit(&s->busy, memory_order_acquire)) {
                left++; /* its owner is inside a hook: come back to it */
                continue;
            }
            if (s->len && hand_off(s) != 0) {
                write_slot_now(s);
            }
            atomic_store_explicit(&s->req, 0, memory_order_release);
        }
        if (!left) {
            break;
        }
        if (bounded && pass > 2000) {
            for (int i = 0; i < hi; i++) {
                if (atomic_exchange(&lh_g.slots[i].req, 0)) {
                    atomic_fetch_add(&lh_g.n_dropped, 1);
                }
            }
            break;
        }
        sched_yield();
    }
    pthread_mutex_unlock(&sweep_lock);
    drain_queue();
}

static int hold_hi; /* under sweep_lock: the slots lh_slots_hold asked */

static void
hold_clear(void)
{
    for (int i = 0; i < hold_hi; i++) {
        atomic_store_explicit(&lh_g.slots[i].req, 0, memory_order_release);
    }
    hold_hi = 0;
    pthread_mutex_unlock(&sweep_lock);
}

int
lh_slots_hold(uint64_t max_ns)
{
    if (!lh_g.slots) {
        return 0;
    }
    uint64_t until = lh_sys_clock_ns() + max_ns;
    while (pthread_mutex_trylock(&sweep_lock) != 0) {
        if (lh_sys_clock_ns() > until) {
            return 0;
        }
        sched_yield();
    }
    hold_hi = ask_all();
    for (;;) {
        int busy = 0;
        for (int i = 0; i < hold_hi; i++) {
            busy += atomic_load_explicit(&lh_g.slots[i].req, memory_order_relaxed) &&
                    atomic_load_explicit(&lh_g.slots[i].busy, memory_order_acquire);
        }
        if (!busy) {
            return 1;
        }
        if (lh_sys_clock_ns() > until) {
            hold_clear();
            return 0;
        }
        sched_yield();
    }
}

void
lh_slots_release(void)
{
    hold_clear();
}

uint64_t
lh_events_total(void)
{
    uint64_t n = atomic_load(&lh_g.n_events);
    for (int i = 0, hi = slots_seen(); lh_g.slots && i < hi; i++) {
        if (atomic_load_explicit(&lh_g.slots[i].in_use, memory_order_acquire)) {
            n += lh_g.slots[i].n_events;
        }
    }
    return n;
}

void
lh_slots_drain(void)
{
    drain_queue();
}

void
lh_slots_wake(void)
{
    if (wake_ok) {
        sem_post(&wake);
    }
}

int
lh_slots_wait(uint64_t deadline_ns)
{
    struct timespec ts = {(time_t)(deadline_ns / 1000000000u),
                          (long)(deadline_ns % 1000000000u)};
    return sem_clockwait(&wake, CLOCK_MONOTONIC, &ts) == 0;
}

int
lh_slots_init(void)
{
    lh_g.slots = lh_sys_map(sizeof(lh_slot_t) * LH_MAX_SLOTS);
    if (!lh_g.slots) {
        return -1;
    }
    lh_g.key_ok = pthread_key_create(&lh_g.key, thread_exit) == 0;
    wake_ok = sem_init(&wake, 0, 0) == 0;
    asym_register();
    return 0;
}

void
lh_slots_after_fork(void)
{
    atomic_store(&lh_g.n_events, 0);
    atomic_store(&lh_g.n_frames, 0);
    atomic_store(&lh_g.n_dropped, 0);
    /* Other threads do not exist here: their buffers hold the parent's events, which the
     * parent writes itself. */
    for (int i = 0, hi = slots_seen(); i < hi; i++) {
        lh_slot_t *s = &lh_g.slots[i];
        atomic_store(&s->busy, 0);
        atomic_store(&s->req, 0);
        atomic_store(&s->in_use, 0);
        s->len = 0;
        s->ev_end = LH_EV_CLOSED;
        s->n_records = 0;
        s->n_events = 0;
    }
    atomic_store(&slots_hi, 0);
    /* The queue holds the parent's frames: recycle the buffers, drop the frames. */
    pthread_mutex_t fresh_q = PTHREAD_MUTEX_INITIALIZER;
    qlock = fresh_q;
    sweep_lock = fresh_q;
    asym_register(); /* registration belongs to the address space: the child has a new one */
    for (unsigned i = 0; i < q_len; i++) {
        if (n_spares < SPARES_MAX) {
            spares[n_spares++] = queue[(q_head + i) % QUEUE_MAX].buf;
        }
    }
    q_head = q_len = 0;
    wake_ok = sem_init(&wake, 0, 0) == 0;
    lh_tls.registered = 0;
    lh_tls.slot = NULL;
}
