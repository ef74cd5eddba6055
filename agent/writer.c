/* leakhound - SPDX-License-Identifier: MIT
 *
 * writer.c: per-thread event buffers, frames, the output file, the ticker thread, and the
 * life-cycle edges (thread exit, fork, exec, exit).
 *
 * Each thread appends records to its own slot under the slot's own lock (uncontended except
 * for the ticker's visit every flush interval). A full slot is compressed and written by
 * its thread under the writer lock. The ticker, every LEAKHOUND_FLUSH_MS (100 ms), flushes
 * every non-empty slot and then writes a SYNC frame stamped with the time it started: since
 * a record's time stamp is taken under its slot's lock, every record stamped before that
 * time is in an earlier frame, which is what lets the reader restore global order with a
 * window of one interval. Lock order: slot lock, then writer lock; never the other way.
 */
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createCCtx_advanced: zstd on our own mmap memory */
#include <zstd.h>

#include "agent.h"
#include "enc.h"
#include "format.h"
#include "snapshot.h"
#include "unwind_table.h"
#include "sys.h"

lh_agent_t lh_g = {
    .wlock = PTHREAD_MUTEX_INITIALIZER,
    .fd = -1,
};
__thread lh_tls_t lh_tls __attribute__((tls_model("initial-exec")));

extern void *__libc_stack_end;

#define SCRATCH_MAX (256u * 1024u) /* largest agent frame (module records) */

void
lh_disable(const char *why, const char *detail)
{
    int prev = atomic_exchange(&lh_g.state, LH_ST_STOPPED);
    if (prev == LH_ST_RECORDING) {
        lh_sys_log(why, detail, "; recording stopped (the program continues)");
    }
}

/* Sticky: the trace could not be created or written. Set once per process (reset in a fork
 * child, which writes its own file); no frame is written after it, so a short write (disk
 * full) is never followed by a later frame that would make the file corrupt rather than
 * truncated. */
static atomic_int io_failed;

/* Says why, once per process, whatever the state: the first write (or the open) often
 * happens in the final flush, when the state is already LH_ST_STOPPED and lh_disable
 * would stay silent, leaving a bare "(errno N)" line or nothing at all. */
static void
io_failure(const char *why, const char *path, int err)
{
    if (atomic_exchange(&io_failed, 1)) {
        return;
    }
    atomic_store(&lh_g.state, LH_ST_STOPPED);
    static const char stopped[] = "); recording stopped (the program continues)";
    char tail[32 + sizeof stopped] = " (errno ";
    size_t n = strlen(tail);
    n += lh_sys_fmt_u64(tail + n, (uint64_t)(err < 0 ? -err : err));
    memcpy(tail + n, stopped, sizeof stopped);
    lh_sys_log(why, path, tail);
}

/* -------------------------------------------------------------------------------------
 * The output file
 * ----------------------------------------------------------------------------------- */
static size_t
build_info(uint8_t *buf, size_t cap)
{
    lh_enc_t e;
    uint8_t *r;
    lh_enc_init(&e, buf, cap);

    r = lh_enc_rec_begin(&e, LH_REC_INFO_PID);
    lh_enc_varint(&e, (uint64_t)lh_g.pid);
    lh_enc_varint(&e, (uint64_t)lh_g.ppid);
    lh_enc_rec_end(&e, r);

    r = lh_enc_rec_begin(&e, LH_REC_INFO_EXE);
    lh_enc_str(&e, lh_g.exe);
    lh_enc_rec_end(&e, r);

    r = lh_enc_rec_begin(&e, LH_REC_INFO_CMDLINE);
    size_t argc = 0;
    for (size_t i = 0; i < lh_g.cmdline_len; i++) {
        argc += lh_g.cmdline[i] == '\0';
    }
    lh_enc_varint(&e, argc);
    for (size_t i = 0; i < lh_g.cmdline_len;) {
        size_t n = strnlen(lh_g.cmdline + i, lh_g.cmdline_len - i);
        lh_enc_varint(&e, n);
        lh_enc_bytes(&e, lh_g.cmdline + i, n);
        i += n + 1;
    }
    lh_enc_rec_end(&e, r);

    r = lh_enc_rec_begin(&e, LH_REC_INFO_CLOCK);
    lh_enc_varint(&e, 1);
    lh_enc_varint(&e, lh_g.mono_start_ns);
    lh_enc_varint(&e, lh_g.real_start_ns);
    lh_enc_rec_end(&e, r);

    r = lh_enc_rec_begin(&e, LH_REC_INFO_AGENT);
    lh_enc_str(&e, LH_AGENT_VERSION);
    lh_enc_varint(&e, (uint64_t)lh_g.cfg.unwind);
    lh_enc_varint(&e, (uint64_t)lh_g.cfg.depth);
    lh_enc_varint(&e, sizeof(void *));
#if defined(__x86_64__)
    lh_enc_str(&e, "x86_64");
#elif defined(__aarch64__)
    lh_enc_str(&e, "aarch64");
#else
    lh_enc_str(&e, "unknown");
#endif
    lh_enc_varint(&e, lh_g.cfg.sample_rate);
    lh_enc_rec_end(&e, r);

    if (lh_g.parent_pid) {
        r = lh_enc_rec_begin(&e, LH_REC_INFO_PARENT);
        lh_enc_varint(&e, (uint64_t)lh_g.parent_pid);
        lh_enc_rec_end(&e, r);
    }
    return lh_enc_ok(&e) ? (size_t)(e.p - buf) : 0;
}

static int
has_pid_pattern(const char *s)
{
    for (; *s; s++) {
        if (s[0] == '%' && s[1] == 'p') {
            return 1;
        }
        if (s[0] == '%' && s[1]) {
            s++;
        }
    }
    return 0;
}

static void
append_suffix(char *name, size_t cap, uint64_t v)
{
    size_t n = strlen(name);
    char num[21];
    size_t k = lh_sys_fmt_u64(num, v);
    if (n + 1 + k + 1 > cap) {
        return;
    }
    name[n] = '.';
    memcpy(name + n + 1, num, k);
    name[n + 1 + k] = '\0';
}

/* Opens the trace on first use (wlock held). A fork child opens its own file only when it
 * has something to write, so fork+exec children leave no empty traces. */
static int
open_output_locked(void)
{
    if (lh_g.fd >= 0) {
        return 0;
    }
    if (lh_g.open_failed) {
        return -1;
    }
    char name[LH_PATH_MAX];
    lh_config_expand(&lh_g.cfg, lh_g.pid, lh_g.progname, name, sizeof name);
    if (lh_g.parent_pid && !has_pid_pattern(lh_g.cfg.output)) {
        append_suffix(name, sizeof name, (uint64_t)lh_g.pid);
    }
    /* O_EXCL|O_NOFOLLOW: never clobber an existing file nor follow a planted symlink. A
     * followed exec of the same program may find its own earlier trace: add .1, .2, ... */
    char try[LH_PATH_MAX];
    lh_sys_strlcpy(try, name, sizeof try);
    int fd = -1;
    for (int k = 0; k < 100; k++) {
        fd = open(try, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST) {
            break;
        }
        lh_sys_strlcpy(try, name, sizeof try);
        append_suffix(try, sizeof try, (uint64_t)k + 1);
    }
    if (fd < 0) {
        lh_g.open_failed = 1;
        io_failure("cannot create trace file ", try, errno);
        return -1;
    }
    lh_g.fd = fd;
    lh_sys_strlcpy(lh_g.path, try, sizeof lh_g.path);

    uint8_t hdr[LH_FILE_HEADER_LEN + 40000];
    size_t info_len = build_info(hdr + LH_FILE_HEADER_LEN, sizeof hdr - LH_FILE_HEADER_LEN);
    lh_enc_t e;
    lh_enc_init(&e, hdr, LH_FILE_HEADER_LEN);
    lh_enc_file_header(&e, (uint32_t)info_len);
    int wrc = lh_sys_write_all(fd, hdr, LH_FILE_HEADER_LEN + info_len);
    if (wrc != 0) {
        io_failure("cannot write trace file ", lh_g.path, wrc);
        return -1;
    }
    lh_maps_emit_all_locked();
    return 0;
}

/* Compresses and writes one frame; wlock held. */
static void
write_frame_locked(const uint8_t *raw, size_t len, uint32_t tid, uint32_t n_records,
                   uint64_t ts_base, uint8_t flags)
{
    if (len == 0 || atomic_load_explicit(&io_failed, memory_order_relaxed) ||
        open_output_locked() != 0 || lh_g.fd < 0) {
        return;
    }
    uint8_t *payload = lh_g.out + LH_FRAME_HEADER_LEN;
    size_t cap = lh_g.out_cap - LH_FRAME_HEADER_LEN;
    size_t clen = 0;
    uint8_t codec = LH_CODEC_RAW;
    if (lh_g.cctx) {
        clen = ZSTD_compressCCtx(lh_g.cctx, payload, cap, raw, len, 1);
        if (!ZSTD_isError(clen) && clen < len) {
            codec = LH_CODEC_ZSTD;
        }
    }
    if (codec == LH_CODEC_RAW) {
        if (len > cap) {
            return;
        }
        memcpy(payload, raw, len);
        clen = len;
    }
    lh_frame_hdr_t h = {
        .codec = codec,
        .flags = flags,
        .tid = tid,
        .raw_len = (uint32_t)len,
        .comp_len = (uint32_t)clen,
        .ts_base_ns = ts_base,
        .seq = lh_g.seq++,
        .n_records = n_records,
    };
    lh_enc_t e;
    lh_enc_init(&e, lh_g.out, LH_FRAME_HEADER_LEN);
    lh_enc_frame_header(&e, &h, payload);
    int rc = lh_sys_write_all(lh_g.fd, lh_g.out, LH_FRAME_HEADER_LEN + clen);
    if (rc != 0) {
        io_failure("cannot write trace file ", lh_g.path, rc);
        return;
    }
    atomic_fetch_add_explicit(&lh_g.n_frames, 1, memory_order_relaxed);
}

void
lh_write_agent_frame_locked(const uint8_t *recs, size_t len, uint32_t n_records,
                            uint64_t ts_base)
{
    write_frame_locked(recs, len, 0, n_records, ts_base, 0);
}

void
lh_write_agent_frame(const uint8_t *recs, size_t len, uint32_t n_records, uint64_t ts_base,
                     uint8_t flags)
{
    pthread_mutex_lock(&lh_g.wlock);
    write_frame_locked(recs, len, 0, n_records, ts_base, flags);
    pthread_mutex_unlock(&lh_g.wlock);
}

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
static int asym_ok;
static pthread_mutex_t sweep_lock = PTHREAD_MUTEX_INITIALIZER;

static void
asym_register(void)
{
    asym_ok = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

static void
barrier_all(void)
{
    if (!asym_ok || syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
        atomic_thread_fence(memory_order_seq_cst);
        /* membarrier failed after registration (should not happen): owners still fence */
        if (asym_ok) {
            asym_ok = 0;
        }
    }
}

void
lh_slot_lock(lh_slot_t *s)
{
    for (;;) {
        atomic_store_explicit(&s->busy, 1, memory_order_relaxed);
        if (asym_ok) {
            atomic_signal_fence(memory_order_seq_cst);
        } else {
            atomic_thread_fence(memory_order_seq_cst);
        }
        if (__builtin_expect(!atomic_load_explicit(&s->req, memory_order_acquire), 1)) {
            return;
        }
        atomic_store_explicit(&s->busy, 0, memory_order_release);
        int spins = 0;
        while (atomic_load_explicit(&s->req, memory_order_acquire)) {
            if (++spins > 64) {
                sched_yield();
            }
        }
    }
}

void
lh_slot_unlock(lh_slot_t *s)
{
    atomic_store_explicit(&s->busy, 0, memory_order_release);
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
        write_frame_locked(p.buf, p.len, p.tid, p.n_records, p.ts_base, 0);
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
    write_frame_locked(s->buf, s->len, s->tid, s->n_records, s->ts_base, 0);
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

lh_slot_t *
lh_thread_slot(void)
{
    unsigned gen = atomic_load_explicit(&lh_g.gen, memory_order_relaxed);
    if (lh_tls.registered && lh_tls.pid_gen == gen) {
        return lh_tls.slot;
    }
    lh_slot_t *s = NULL;
    for (int i = 0; i < LH_MAX_SLOTS; i++) {
        int expect = 0;
        if (atomic_load_explicit(&lh_g.slots[i].in_use, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong(&lh_g.slots[i].in_use, &expect, 1)) {
            s = &lh_g.slots[i];
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
    s->tid = (uint32_t)lh_sys_gettid();
    s->uc_hits = s->uc_fills = 0;
    thread_bounds(s);
#if defined(__x86_64__)
    if (s->stack_hi) {
        /* 64 remembered stacks; a reused slot forgets the previous thread's. */
        size_t len = 64 * ((32 + (size_t)lh_g.cfg.depth * 4 + 15) & ~(size_t)15);
        if (!s->ucache) {
            s->ucache = lh_sys_map(len);
        } else {
            memset(s->ucache, 0, len);
        }
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
static void
thread_exit(void *arg)
{
    lh_slot_t *s = arg;
    int saved = lh_tls.guard;
    lh_tls.guard = 1;
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
        atomic_fetch_add(&lh_g.n_events, s->n_events);
        s->n_events = 0;
        atomic_store(&s->in_use, 0);
        lh_slot_unlock(s);
        lh_tls.registered = 0;
        lh_tls.slot = NULL;
    }
    lh_tls.guard = saved;
}

/* -------------------------------------------------------------------------------------
 * Flushing: ticker, exit, exec
 * ----------------------------------------------------------------------------------- */
static void
write_sync(uint64_t t)
{
    uint8_t buf[32];
    lh_enc_t e;
    lh_enc_init(&e, buf, sizeof buf);
    uint8_t *r = lh_enc_rec_begin(&e, LH_REC_SYNC);
    lh_enc_varint(&e, 0);
    lh_enc_rec_end(&e, r);
    lh_write_agent_frame(buf, (size_t)(e.p - buf), 1, t, LH_FRAME_F_SYNC);
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
    int hi = 0;
    for (int i = 0; i < LH_MAX_SLOTS; i++) {
        if (atomic_load_explicit(&lh_g.slots[i].in_use, memory_order_acquire)) {
            atomic_store_explicit(&lh_g.slots[i].req, 1, memory_order_relaxed);
            hi = i + 1;
        }
    }
    barrier_all();
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

static uint64_t last_sync_frames;
static atomic_int snapshot_requested;
static unsigned snapshot_signal_count;

void
lh_request_snapshot(void)
{
    atomic_store(&snapshot_requested, 1);
}

/* Parses "Key:   1234 kB" lines of smaps_rollup. */
static uint64_t
kb_field(const char *text, size_t len, const char *key)
{
    size_t klen = strlen(key);
    for (size_t i = 0; i + klen < len; i++) {
        if ((i == 0 || text[i - 1] == '\n') && memcmp(text + i, key, klen) == 0) {
            uint64_t v = 0;
            for (i += klen; i < len && (text[i] == ' ' || text[i] == '\t'); i++) {
            }
            for (; i < len && text[i] >= '0' && text[i] <= '9'; i++) {
                v = v * 10 + (uint64_t)(text[i] - '0');
            }
            return v * 1024;
        }
    }
    return 0;
}

void
lh_write_rss(int full)
{
    char text[4096];
    ssize_t n = lh_sys_read_file("/proc/self/statm", text, sizeof text - 1);
    if (n <= 0) {
        return;
    }
    uint64_t pages = 0;
    size_t i = 0;
    while (i < (size_t)n && text[i] != ' ') {
        i++; /* size */
    }
    for (i++; i < (size_t)n && text[i] >= '0' && text[i] <= '9'; i++) {
        pages = pages * 10 + (uint64_t)(text[i] - '0');
    }
    uint8_t buf[64];
    lh_enc_t e;
    lh_enc_init(&e, buf, sizeof buf);
    uint8_t *r = lh_enc_rec_begin(&e, LH_REC_RSS);
    lh_enc_varint(&e, 0);
    lh_enc_varint(&e, pages * (uint64_t)sysconf(_SC_PAGESIZE));
    if (full) {
        /* smaps_rollup walks every mapping: sampled 10x less often than statm. */
        n = lh_sys_read_file("/proc/self/smaps_rollup", text, sizeof text - 1);
        if (n > 0) {
            lh_enc_varint(&e, kb_field(text, (size_t)n, "Pss:"));
            lh_enc_varint(&e, kb_field(text, (size_t)n, "Anonymous:"));
        }
    }
    lh_enc_rec_end(&e, r);
    if (lh_enc_ok(&e)) {
        lh_write_agent_frame(buf, (size_t)(e.p - buf), 1, lh_sys_now_ns(), 0);
    }
}

static uint64_t
heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2(); /* glibc; 0 under other allocators */
    return mi.uordblks + mi.hblkhd;
}

/* Snapshot triggers served by the ticker: signal, period, heap growth. */
static void
serve_snapshots(uint64_t now)
{
    static uint64_t last_period_ns, growth_base;
    static int growth_init;
    char label[64];
    char num[21];
    if (atomic_exchange(&snapshot_requested, 0)) {
        num[lh_sys_fmt_u64(num, ++snapshot_signal_count)] = '\0';
        lh_sys_strlcpy(label, "signal-", sizeof label);
        lh_sys_strlcpy(label + 7, num, sizeof label - 7);
        lh_snapshot_take(label, LH_SNAP_SIGNAL, 0);
    }
    if (lh_g.cfg.snapshot_every_ms) {
        if (!last_period_ns) {
            last_period_ns = now;
        } else if (now - last_period_ns >= (uint64_t)lh_g.cfg.snapshot_every_ms * 1000000u) {
            last_period_ns = now;
            num[lh_sys_fmt_u64(num, (now - lh_g.mono_start_ns) / 1000000u)] = '\0';
            lh_sys_strlcpy(label, "period-", sizeof label);
            size_t k = lh_sys_strlcpy(label + 7, num, sizeof label - 7);
            lh_sys_strlcpy(label + 7 + k, "ms", sizeof label - 7 - k);
            lh_snapshot_take(label, LH_SNAP_PERIOD, 0);
        }
    }
    if (lh_g.cfg.snapshot_growth) {
        uint64_t heap = heap_in_use();
        if (!growth_init) {
            growth_base = heap;
            growth_init = 1;
        } else if (heap >= growth_base + lh_g.cfg.snapshot_growth) {
            growth_base = heap;
            num[lh_sys_fmt_u64(num, heap)] = '\0';
            lh_sys_strlcpy(label, "growth-", sizeof label);
            lh_sys_strlcpy(label + 7, num, sizeof label - 7);
            lh_snapshot_take(label, LH_SNAP_GROWTH, 0);
        }
    }
}

static void
tick(void)
{
    static uint64_t last_rss_ns;
    static unsigned rss_count;
    uint64_t t = lh_sys_now_ns();
    lh_snapshot_reap(0);
    serve_snapshots(t);
    if (lh_g.cfg.rss_ms && t - last_rss_ns >= (uint64_t)lh_g.cfg.rss_ms * 1000000u) {
        last_rss_ns = t;
        lh_write_rss(rss_count++ % 10 == 0);
    }
    lh_flush_all(0);
    uint64_t frames = atomic_load(&lh_g.n_frames);
    /* An idle process writes nothing: no frame since the last SYNC, no SYNC either. */
    if (frames != last_sync_frames && lh_recording()) {
        write_sync(t);
        last_sync_frames = atomic_load(&lh_g.n_frames);
    }
}

static void *
ticker_main(void *arg)
{
    (void)arg;
    lh_tls.guard = 1; /* nothing this thread does is the program's */
    prctl(PR_SET_NAME, "leakhound", 0, 0, 0);
    int period_ms = lh_g.cfg.flush_ms;
    if (lh_g.cfg.rss_ms && lh_g.cfg.rss_ms < period_ms) {
        period_ms = lh_g.cfg.rss_ms;
    }
    uint64_t next = lh_sys_now_ns() + (uint64_t)period_ms * 1000000u;
    while (!atomic_load(&lh_g.ticker_stop)) {
        /* Woken early by a queued buffer: write it; on time-out: the periodic work. */
        struct timespec ts = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
        int woken = sem_clockwait(&wake, CLOCK_MONOTONIC, &ts) == 0;
        if (atomic_load(&lh_g.ticker_stop) || !lh_recording()) {
            break;
        }
        if (woken) {
            drain_queue();
            if (lh_sys_now_ns() < next) {
                continue;
            }
        }
        lh_maps_scan(0);
        tick();
        next = lh_sys_now_ns() + (uint64_t)period_ms * 1000000u;
    }
    return NULL;
}

void
lh_ticker_start(void)
{
    sigset_t all, old;
    pthread_attr_t attr;
    sigfillset(&all);
    /* The ticker inherits a fully blocked mask: no program signal handler ever runs on it. */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    /* Its stack comes from lh_sys_map, so snapshots know it is the agent's, not a root. */
    static void *stack;
    if (!stack) {
        stack = lh_sys_map(256 * 1024);
    }
    if (stack) {
        pthread_attr_setstack(&attr, stack, 256 * 1024);
    } else {
        pthread_attr_setstacksize(&attr, 256 * 1024);
    }
    atomic_store(&lh_g.ticker_stop, 0);
    lh_g.ticker_running = pthread_create(&lh_g.ticker, &attr, ticker_main, NULL) == 0;
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

uint64_t
lh_events_total(void)
{
    uint64_t n = atomic_load(&lh_g.n_events);
    for (int i = 0; lh_g.slots && i < LH_MAX_SLOTS; i++) {
        if (atomic_load_explicit(&lh_g.slots[i].in_use, memory_order_acquire)) {
            n += lh_g.slots[i].n_events;
        }
    }
    return n;
}

void
lh_write_end(int exit_kind, int status)
{
    /* A fork child that recorded nothing leaves no file at all. */
    if (lh_g.fd < 0 && lh_g.parent_pid && lh_events_total() == 0) {
        return;
    }
    uint8_t buf[128];
    lh_enc_t e;
    uint64_t now = lh_sys_now_ns();
    lh_enc_init(&e, buf, sizeof buf);
    uint8_t *r = lh_enc_rec_begin(&e, LH_REC_END);
    lh_enc_varint(&e, 0);
    lh_enc_varint(&e, (uint64_t)exit_kind);
    lh_enc_varint(&e, (uint64_t)(uint32_t)status);
    lh_enc_varint(&e, lh_events_total());
    lh_enc_varint(&e, atomic_load(&lh_g.n_frames) + 1);
    lh_enc_varint(&e, atomic_load(&lh_g.n_dropped));
    lh_enc_varint(&e, atomic_load(&lh_g.n_pre_init));
    lh_utab_stats_t us;
    lh_utab_stats(&us);
    lh_enc_varint(&e, us.n_walks);
    lh_enc_varint(&e, us.n_fallbacks);
    lh_enc_varint(&e, us.n_checked);
    lh_enc_varint(&e, us.n_mismatches);
    lh_enc_rec_end(&e, r);
    lh_write_agent_frame(buf, (size_t)(e.p - buf), 1, now, 0);
}

/* -------------------------------------------------------------------------------------
 * Init and fork
 * ----------------------------------------------------------------------------------- */
int
lh_writer_init(void)
{
    size_t max_raw = lh_g.cfg.buffer_bytes > SCRATCH_MAX ? lh_g.cfg.buffer_bytes : SCRATCH_MAX;
    lh_g.out_cap = LH_FRAME_HEADER_LEN + ZSTD_compressBound(max_raw) + 64;
    lh_g.out = lh_sys_map(lh_g.out_cap);
    lh_g.slots = lh_sys_map(sizeof(lh_slot_t) * LH_MAX_SLOTS);
    if (!lh_g.out || !lh_g.slots) {
        return -1;
    }
    ZSTD_customMem mem = {lh_sys_zalloc, lh_sys_zfree, NULL};
    lh_g.cctx = ZSTD_createCCtx_advanced(mem);
    lh_g.key_ok = pthread_key_create(&lh_g.key, thread_exit) == 0;
    wake_ok = sem_init(&wake, 0, 0) == 0;
    asym_register();
    atomic_store(&lh_g.gen, 1);
    pthread_mutex_lock(&lh_g.wlock);
    int rc = open_output_locked();
    pthread_mutex_unlock(&lh_g.wlock);
    return rc;
}

void
lh_writer_fork_prepare(void)
{
    pthread_mutex_lock(&lh_g.wlock);
}

void
lh_writer_fork_parent(void)
{
    pthread_mutex_unlock(&lh_g.wlock);
}

void
lh_writer_fork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    lh_g.wlock = fresh;
    lh_g.parent_pid = lh_g.pid;
    lh_g.pid = getpid();
    lh_g.ppid = getppid();
    if (lh_g.fd >= 0) {
        close(lh_g.fd);
    }
    lh_g.fd = -1;
    lh_g.open_failed = 0;
    atomic_store(&io_failed, 0);
    lh_g.seq = 0;
    last_sync_frames = 0;
    atomic_store(&lh_g.n_events, 0);
    atomic_store(&lh_g.n_frames, 0);
    atomic_store(&lh_g.n_dropped, 0);
    /* Other threads do not exist here: their buffers hold the parent's events, which the
     * parent writes itself. */
    for (int i = 0; i < LH_MAX_SLOTS; i++) {
        lh_slot_t *s = &lh_g.slots[i];
        atomic_store(&s->busy, 0);
        atomic_store(&s->req, 0);
        atomic_store(&s->in_use, 0);
        s->len = 0;
        s->n_records = 0;
        s->n_events = 0;
    }
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
    atomic_fetch_add(&lh_g.gen, 1); /* stacks and modules are written again */
    lh_stacks_after_fork(&lh_g.stacks);
    lh_maps_after_fork();
    lh_g.ticker_running = 0;
    if (lh_recording()) {
        lh_ticker_start();
    }
}
