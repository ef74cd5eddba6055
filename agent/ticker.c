/* leakhound - SPDX-License-Identifier: MIT
 *
 * ticker.c: the agent's one thread. Every LEAKHOUND_FLUSH_MS (100 ms) it records newly
 * loaded modules, serves snapshot requests (signal, period, heap growth), samples RSS,
 * flushes every non-empty slot and then writes a SYNC frame stamped with the time it
 * started: since a record's time stamp is taken under its slot's lock, every record stamped
 * before that time is in an earlier frame, which is what lets the reader restore global
 * order with a window of one interval. Between ticks it writes the buffers threads hand
 * off (slots.c), off the hot path.
 */
#include <malloc.h>
#include <pthread.h>
#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h> /* glibc 2.32 */
#define LH_HAVE_SINGLE_THREADED 1
#endif
#endif
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "ticker.h"

#include "agent.h"
#include "enc.h"
#include "format.h"
#include "maps.h"
#include "script.h"
#include "output.h"
#include "recorder.h"
#include "slots.h"
#include "snapshot.h"
#include "stopsig.h"
#include "sys.h"

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

static uint64_t last_sync_frames;
static atomic_int ticker_alive; /* between lh_ticker_start and ticker_main's return */
/* Snapshot signals received and not yet served: one snapshot per handler run (the kernel
 * already merges a signal sent again while it is still pending). */
static atomic_uint snapshot_requested;
static atomic_uint snapshot_signal_count;

void
lh_request_snapshot(void)
{
    atomic_fetch_add(&snapshot_requested, 1);
    /* Wake the ticker now rather than at its next tick: sem_post is AS-safe. */
    lh_slots_wake();
}

/* Threads inside lh_serve_snapshot_requests: one that took a request (the ticker, woken by
 * the signal) may not have started its capture when the program calls exit. */
static atomic_int serving;

void
lh_serve_snapshot_requests(void)
{
    char label[64];
    char num[21];
    atomic_fetch_add(&serving, 1);
    for (unsigned n = atomic_exchange(&snapshot_requested, 0); n > 0; n--) {
        num[lh_sys_fmt_u64(num, atomic_fetch_add(&snapshot_signal_count, 1) + 1)] = '\0';
        lh_sys_strlcpy(label, "signal-", sizeof label);
        lh_sys_strlcpy(label + 7, num, sizeof label - 7);
        lh_snapshot_take(label, LH_SNAP_SIGNAL, 0);
    }
    atomic_fetch_sub(&serving, 1);
}

void
lh_settle_snapshot_requests(void)
{
    lh_serve_snapshot_requests();
    for (int i = 0; i < 2000 && atomic_load(&serving) > 0; i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
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
    /* The program's memory, not the agent's: its buffers and stack table are resident in
     * the same process and grow with the run (54 MiB in e2e's rss_agent, whose own peak is
     * 1 MiB), which the report would call memory outside malloc. */
    uint64_t agent = lh_sys_agent_resident();
    if (lh_g.cfg.test_reg_hold_ms) {
        struct timespec hold = {0, (long)lh_g.cfg.test_reg_hold_ms * 1000000L};
        lh_sys_reg_hold();
        nanosleep(&hold, NULL);
        lh_sys_reg_release();
    }
    uint64_t rss = pages * (uint64_t)sysconf(_SC_PAGESIZE);
    uint8_t buf[64];
    lh_enc_t e;
    lh_enc_init(&e, buf, sizeof buf);
    uint8_t *r = lh_enc_rec_begin(&e, LH_REC_RSS);
    lh_enc_varint(&e, 0);
    lh_enc_varint(&e, rss > agent ? rss - agent : 0);
    if (full) {
        /* smaps_rollup walks every mapping: sampled 10x less often than statm. */
        n = lh_sys_read_file("/proc/self/smaps_rollup", text, sizeof text - 1);
        if (n > 0) {
            uint64_t pss = kb_field(text, (size_t)n, "Pss:");
            uint64_t anon = kb_field(text, (size_t)n, "Anonymous:");
            lh_enc_varint(&e, pss > agent ? pss - agent : 0);
            lh_enc_varint(&e, anon > agent ? anon - agent : 0);
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
    lh_serve_snapshot_requests();
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

/* The work of one period after the wait: modules loaded meanwhile, then tick(). */
static void
periodic(uint64_t *loads_seen)
{
    lh_maps_scan(0);
    if (lh_maps_loads() != *loads_seen) {
        /* A library came in by dlopen: perl or python embedded in a plugin? */
        *loads_seen = lh_maps_loads();
        lh_script_rescan();
    }
    lh_stopsig_recheck();
    tick();
}

static int
period_ms(void)
{
    int ms = lh_g.cfg.flush_ms;
    if (lh_g.cfg.rss_ms && lh_g.cfg.rss_ms < ms) {
        ms = lh_g.cfg.rss_ms;
    }
    return ms;
}

/* A stop asked for (lh_g.ticker_stop 1) is taken by the ticker (2) or called off by the
 * asker (0, lh_ticker_follow_begin's time-out): whichever comes first, so the asker knows
 * whether the thread is going. */
static int
stop_claimed(void)
{
    int one = 1;
    return atomic_compare_exchange_strong(&lh_g.ticker_stop, &one, 2) ||
           atomic_load(&lh_g.ticker_stop) == 2;
}

static void *
ticker_main(void *arg)
{
    (void)arg;
    lh_tls.guard = 1; /* nothing this thread does is the program's */
    prctl(PR_SET_NAME, "leakhound", 0, 0, 0);
    uint64_t period_ns = (uint64_t)period_ms() * 1000000u;
    /* The deadlines are on CLOCK_MONOTONIC, which sem_clockwait waits on, not on the time
     * stamps' counter scale (sys.h): when the two drift apart (NTP slewing the clock over
     * hours, or valgrind's counter), a deadline on the counter scale could lie in the
     * clock's past for good, and every wait would return at once: a busy ticker (18k ticks
     * in a sampled leaky_server under callgrind, 713M instructions of slot sweeps). */
    uint64_t next = lh_sys_clock_ns() + period_ns;
    uint64_t loads_seen = lh_maps_loads();
    for (;;) {
        /* Woken early by a queued buffer: write it; on time-out: the periodic work. */
        int woken = lh_slots_wait(next);
        if (stop_claimed() || !lh_recording()) {
            break;
        }
        if (woken) {
            lh_slots_drain();
            if (atomic_load(&snapshot_requested)) {
                lh_serve_snapshot_requests(); /* the signal woke us: serve it now */
            }
            if (lh_sys_clock_ns() < next) {
                continue;
            }
        }
        periodic(&loads_seen);
        next = lh_sys_clock_ns() + period_ns;
    }
    atomic_store(&ticker_alive, 0);
    return NULL;
}

/* The ticker this process started, not yet joined (a fork child's copy of the parent's
 * pthread_t names no thread of its own). */
static int joinable;

/* After ticker_alive went to 0: waits for the thread's end (its last steps run on the
 * stack the next ticker gets). */
static void
join_gone(void)
{
    if (joinable) {
        pthread_join(lh_g.ticker, NULL);
        joinable = 0;
    }
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
    /* Joinable: a new ticker reuses the stack below, which glibc's thread descriptor sits
     * at the top of, only once the kernel says the last one is gone (join_gone). */
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
    atomic_store(&ticker_alive, 1);
    int saved_guard = lh_tls.guard;
    lh_tls.guard = 1; /* our pthread_create: the agent's thread is not the program's */
    lh_g.ticker_running = pthread_create(&lh_g.ticker, &attr, ticker_main, NULL) == 0;
    lh_tls.guard = saved_guard;
    joinable = lh_g.ticker_running;
    if (!lh_g.ticker_running) {
        atomic_store(&ticker_alive, 0);
    }
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* -------------------------------------------------------------------------------------
 * Sampling mode without a thread
 *
 * Once a process has a second thread, glibc's malloc and free take the arena lock on
 * every call, even when that thread never allocates (SINGLE_THREAD_P): a thread that only
 * sleeps made bare churn_nofp 1.020x in instructions and 1.15x in CPU (bench/RESULTS.md),
 * more than sampling's whole budget. So a sampled run of a single-threaded program starts
 * no ticker: its thread does the ticker's work itself, in lh_ticker_poll, after a sampled
 * allocation or free (rare by design) once a period has passed, and serves a snapshot
 * signal at the first sampled event after it. The first poll that finds a second thread
 * starts the ticker (the lock is taken anyway by then).
 * ----------------------------------------------------------------------------------- */
atomic_int lh_ticker_deferred;
static atomic_flag poll_busy = ATOMIC_FLAG_INIT;
static uint64_t poll_next_ns, poll_loads_seen;

static int
single_threaded(void)
{
#if LH_HAVE_SINGLE_THREADED
    return __libc_single_threaded != 0;
#else
    return 0; /* cannot tell: a thread as always */
#endif
}

void
lh_ticker_begin(void)
{
    if (lh_recorder_sampling && single_threaded() && !lh_g.cfg.snapshot_every_ms &&
        !lh_g.cfg.snapshot_growth) {
        poll_next_ns = lh_sys_clock_ns() + (uint64_t)period_ms() * 1000000u;
        poll_loads_seen = lh_maps_loads();
        atomic_store(&lh_ticker_deferred, 1);
        return;
    }
    lh_ticker_start();
}

void
lh_ticker_poll(void)
{
    if (atomic_flag_test_and_set_explicit(&poll_busy, memory_order_acquire)) {
        return; /* another thread polls (it has just been started, then) */
    }
    if (atomic_load(&lh_ticker_deferred) && lh_recording()) {
        if (!single_threaded()) {
            /* Inside poll_busy: no poll's tick runs beside the new thread's. */
            atomic_store(&lh_ticker_deferred, 0);
            lh_ticker_start();
        } else {
            if (atomic_load(&snapshot_requested)) {
                lh_serve_snapshot_requests();
            }
            if (lh_sys_clock_ns() >= poll_next_ns) {
                periodic(&poll_loads_seen);
                poll_next_ns = lh_sys_clock_ns() + (uint64_t)period_ms() * 1000000u;
            }
        }
    }
    atomic_flag_clear_explicit(&poll_busy, memory_order_release);
}

void
lh_ticker_after_fork(void)
{
    atomic_store(&lh_ticker_deferred, 0);
    atomic_flag_clear(&poll_busy);
    last_sync_frames = 0;
    lh_g.ticker_running = 0;
    joinable = 0;
    atomic_store(&serving, 0); /* a parent thread's, not this process's */
}

/* Waits, tries times at most, step_ns apart, for the ticker asked to stop to be gone:
 * whether it is. */
static int
gone_within(int tries, long step_ns)
{
    for (int i = 0; i < tries && atomic_load(&ticker_alive); i++) {
        struct timespec ts = {0, step_ns};
        nanosleep(&ts, NULL);
    }
    return !atomic_load(&ticker_alive);
}

int
lh_ticker_stop(void)
{
    atomic_store(&lh_g.ticker_stop, 1);
    lh_slots_wake();
    /* Bounded: a ticker stuck in a write to a full disk must not hang the detach. */
    if (!gone_within(2000, 1000000)) {
        return -1;
    }
    join_gone();
    lh_g.ticker_running = 0;
    return 0;
}

/* -------------------------------------------------------------------------------------
 * Credentials: the ticker follows the program's
 *
 * glibc's setuid family (setuid, setgid, setgroups and the others) changes every thread's
 * credentials: it signals each thread to make the same system call, and aborts the process
 * when one of them fails. Capabilities, securebits (PR_SET_KEEPCAPS) and the bounding set
 * are per thread: a program that kept its capabilities across setresuid, or raised one with
 * capset, before setresgid or setgroups (setpriv --reuid --regid --init-groups, libcap-ng's
 * capng_change_id) made that change on its own thread only, and the agent's ticker, which
 * had lost CAP_SETGID at the setresuid, failed the next call: SIGABRT. So the ticker takes
 * no part: it is stopped before the call and started again after it by the calling thread,
 * whose credentials, capabilities, securebits and bounding set a new thread inherits. The
 * agent's thread then holds exactly the privileges the program kept, never more.
 * ----------------------------------------------------------------------------------- */
int
lh_ticker_follow_begin(void)
{
    if (lh_tls.guard || !lh_recorder_own_process()) {
        return 0; /* the agent's own call, or a vfork child: the ticker is not its own */
    }
    /* poll_busy also keeps a sampled program's poll from starting the ticker meanwhile, and
     * two threads changing credentials at once from stopping and starting it together. */
    for (int i = 0; atomic_flag_test_and_set_explicit(&poll_busy, memory_order_acquire); i++) {
        if (i == 10000) {
            return 0;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    if (!lh_g.ticker_running || !atomic_load(&ticker_alive)) {
        return 1;
    }
    int saved = lh_tls.guard;
    lh_tls.guard = 1;
    atomic_store(&lh_g.ticker_stop, 1);
    lh_slots_wake();
    /* It stops at its next wake-up: at once, unless it is taking a snapshot. */
    int one = 1;
    if (!gone_within(10000, 1000000) &&
        atomic_compare_exchange_strong(&lh_g.ticker_stop, &one, 0)) {
        lh_tls.guard = saved;
        return 1; /* still busy: it runs on, and takes part in the call as before */
    }
    if (!gone_within(10000, 100000)) { /* it took the stop: a few steps from its end */
        lh_tls.guard = saved;
        return 1; /* cannot happen: it had nothing left but to return */
    }
    join_gone();
    lh_g.ticker_running = 0;
    lh_tls.guard = saved;
    return 2;
}

void
lh_ticker_follow_end(int held)
{
    if (held == 2 && lh_recording()) {
        lh_ticker_start(); /* here, on the thread whose credentials it is to have */
    }
    if (held) {
        atomic_flag_clear_explicit(&poll_busy, memory_order_release);
    }
}
