/* leakhound - SPDX-License-Identifier: MIT
 *
 * recorder.c: the recorder core behind recorder.h: the agent's state, start-up in order,
 * what a hook records for each call of the malloc family, and the ends of a recording
 * (exec, exit). Front-ends (shims.c for LD_PRELOAD) call only recorder.h.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "ownfd.h"
#include "recorder.h"

#include "agent.h"
#include "boundary.h"
#include "enc.h"
#include "format.h"
#include "fork.h"
#include "lsansupp.h"
#include "maps.h"
#include "output.h"
#include "preinit.h"
#include "record.h"
#include "sample.h"
#include "script.h"
#include "slots.h"
#include "snapshot.h"
#include "stopsig.h"
#include "sys.h"
#include "ticker.h"
#include "unwind.h"
#include "unwind_table.h"

lh_agent_t lh_g = {
    .wlock = PTHREAD_MUTEX_INITIALIZER,
    .fd = -1,
};
__thread lh_tls_t lh_tls __attribute__((tls_model("initial-exec")));

void
lh_disable(const char *why, const char *detail)
{
    int prev = atomic_exchange(&lh_g.state, LH_ST_STOPPED);
    if (prev == LH_ST_RECORDING) {
        lh_sys_log(why, detail, "; recording stopped (the program continues)");
    }
}

int lh_recorder_sampling;

/* -------------------------------------------------------------------------------------
 * What a hook records
 * ----------------------------------------------------------------------------------- */
/* An allocation the hooks saw before recording started: noted for the replay (preinit.h),
 * or only counted when the table is closed (a later attach's start-up). Returns 1 when
 * done, 0 when recording started meanwhile. */
static int
before_recording_alloc(void *p, size_t size, int kind)
{
    if (!atomic_load_explicit(&lh_preinit_closed, memory_order_acquire)) {
        return lh_preinit_alloc(p, size, kind);
    }
    if (atomic_load_explicit(&lh_g.state, memory_order_acquire) == LH_ST_RECORDING) {
        return 0;
    }
    atomic_fetch_add_explicit(&lh_g.n_pre_init, 1, memory_order_relaxed);
    return 1;
}

/* Sampling mode in a single-threaded program: the ticker's work is this thread's, done
 * after a recorded event (ticker.h). No agent lock is held here. */
static inline void
poll_ticker(void)
{
    if (__builtin_expect(atomic_load_explicit(&lh_ticker_deferred, memory_order_relaxed), 0)) {
        lh_ticker_poll();
    }
}

void
lh_recorder_alloc_from(void *p, size_t size, int kind, uintptr_t entry_fp)
{
    int *errp = lh_errno_ptr();
    int saved = *errp;
    if (__builtin_expect(!lh_recording(), 0) && before_recording_alloc(p, size, kind)) {
        *errp = saved;
        return;
    }
    if (lh_recorder_sampling) {
        lh_sample_mark(p);
    }
    lh_tls.guard = 1;
    lh_rec_alloc_event(p, size, kind, entry_fp);
    poll_ticker();
    lh_guard_leave();
    if (lh_script_on) {
        lh_script_check_end(); /* perl's global destruction is not the program's */
    }
    *errp = saved;
}

void
lh_recorder_alloc(void *p, size_t size, int kind)
{
    lh_recorder_alloc_from(p, size, kind, 0);
}

void
lh_recorder_free(void *p)
{
    int *errp = lh_errno_ptr();
    int saved = *errp;
    if (__builtin_expect(!atomic_load_explicit(&lh_preinit_closed, memory_order_acquire), 0) &&
        lh_preinit_free(p)) {
        *errp = saved;
        return;
    }
    if (lh_script_on) {
        lh_script_freed(p);
        lh_script_check_end(); /* before: a free in global destruction is not recorded */
    }
    lh_tls.guard = 1;
    lh_rec_free_event(p);
    poll_ticker();
    lh_guard_leave();
    *errp = saved;
}

/* Sampling mode: realloc is the free of the old block (recorded when it was sampled) and
 * an allocation of the new one (recorded when sampled). */
static void *
realloc_sampled(void *(*real_realloc)(void *, size_t), void *p, size_t n, int kind)
{
    int old_sampled = p && lh_sample_unmark(p);
    lh_rec_t r;
    int ok = 0;
    lh_tls.guard = 1;
    if (old_sampled) {
        ok = lh_rec_begin(&r, 0) == 0; /* stamped before the call, as a free must be */
    }
    void *q = real_realloc(p, n);
    int saved = errno;
    if (old_sampled && !q && n) {
        lh_sample_mark(p); /* failed: the old block lives on */
        old_sampled = 0;
    }
    if (ok) {
        if (old_sampled) {
            lh_rec_free(&r, p);
        }
        lh_rec_end(&r);
    }
    lh_guard_leave();
    if (q && lh_sample_take(n)) {
        lh_recorder_alloc(q, n, kind);
    }
    errno = saved;
    return q;
}

void *
lh_recorder_realloc(void *(*real_realloc)(void *, size_t), void *p, size_t n, int kind)
{
    if (!lh_recorder_should_record()) {
        return real_realloc(p, n);
    }
    void *q0;
    if (__builtin_expect(!atomic_load_explicit(&lh_preinit_closed, memory_order_acquire), 0) &&
        lh_preinit_realloc(real_realloc, p, n, kind, &q0)) {
        return q0;
    }
    if (lh_recorder_sampling) {
        return realloc_sampled(real_realloc, p, n, kind);
    }
    lh_rec_t r;
    lh_tls.guard = 1;
    /* The slot stays locked across the real call: the free half's time stamp is taken
     * before it, and the ticker must not write a SYNC between that stamp and the record. */
    int ok = lh_rec_begin(&r, 1) == 0;
    void *q = real_realloc(p, n);
    int saved = errno;
    if (ok) {
        if (q && p) {
            lh_rec_realloc(&r, p, q, n);
        } else if (q) {
            lh_rec_alloc(&r, q, n, kind);
        } else if (p && n == 0) {
            lh_rec_free(&r, p); /* glibc: realloc(p, 0) frees p and returns NULL */
        }
        lh_rec_end(&r);
    }
    lh_guard_leave();
    errno = saved;
    return q;
}

void
lh_recorder_modules_changed(void)
{
    if (!lh_recording() || lh_tls.guard) {
        return;
    }
    int saved = errno;
    lh_tls.guard = 1;
    lh_maps_scan(0);
    lh_guard_leave();
    errno = saved;
}

/* -------------------------------------------------------------------------------------
 * The ends of a recording: exec, exit
 * ----------------------------------------------------------------------------------- */
/* A vfork child shares our memory: it must not touch the parent's buffers or file. */
int
lh_recorder_own_process(void)
{
    return getpid() == lh_g.pid;
}

/* The trailer: END with the counters (locked: the writer lock is held by the caller). */
static void
write_end_as(int exit_kind, int status, int locked)
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
    if (locked) {
        lh_write_agent_frame_locked(buf, (size_t)(e.p - buf), 1, now);
    } else {
        lh_write_agent_frame(buf, (size_t)(e.p - buf), 1, now, 0);
    }
}

static void
write_end(int exit_kind, int status)
{
    write_end_as(exit_kind, status, 0);
}

/* One agent record of a time stamp (now: delta 0 from the frame's base) and a string, in
 * buf (cap bytes): EXEC, SUPPRESSIONS. Not written when it does not fit. */
static void
write_str_record(uint8_t type, const char *s, uint8_t *buf, size_t cap)
{
    lh_enc_t e;
    lh_enc_init(&e, buf, cap);
    uint8_t *r = lh_enc_rec_begin(&e, type);
    lh_enc_varint(&e, 0);
    lh_enc_str(&e, s);
    lh_enc_rec_end(&e, r);
    if (lh_enc_ok(&e)) {
        lh_write_agent_frame(buf, (size_t)(e.p - buf), 1, lh_sys_now_ns(), 0);
    }
}

void
lh_recorder_lsan_supp(void)
{
    lh_lsansupp_read();
    const char *s = lh_lsansupp_text();
    if (s && lh_recording()) {
        static uint8_t buf[LH_LSANSUPP_MAX + 32]; /* under the guard, once, at start */
        write_str_record(LH_REC_SUPPRESSIONS, s, buf, sizeof buf);
    }
}

void
lh_recorder_exec(const char *path)
{
    if (!lh_recording() || lh_tls.guard || !lh_recorder_own_process()) {
        return;
    }
    int saved = errno;
    lh_tls.guard = 1;
    lh_serve_snapshot_requests(); /* a snapshot signal just before the exec: not lost */
    lh_snapshot_before_exec();
    lh_flush_all(1);
    if (lh_g.fd >= 0 || lh_events_total() > 0) {
        uint8_t buf[LH_PATH_MAX + 32];
        write_str_record(LH_REC_EXEC, path, buf, sizeof buf);
        /* The trace ends here if the exec succeeds. If it fails, recording goes on and the
         * END written at exit supersedes this one (readers keep the last END). */
        write_end(LH_EXIT_EXEC, 0);
    }
    if (lh_g.cfg.follow_exec == LH_FOLLOW_NONE && !lh_g.parent_pid) {
        /* A wrapper (env, a script, a pyenv shim) becoming the real program, with following
         * turned off: say why its trace holds only the wrapper. Children's execs (a shell's
         * commands) stay quiet. */
        lh_sys_log(lh_g.progname, " is replacing itself with ", path);
        lh_sys_log("that program is not traced: leakhound run --follow-exec traces it too", "",
                   "");
    }
    lh_guard_leave();
    errno = saved;
}

static int end_kind = -1, end_status; /* of the END written by lh_recorder_finish */
static atomic_int finish_tid;         /* the thread ending the trace, once past its start */
static atomic_int ended;              /* lh_recorder_finish wrote its END */

int
lh_recorder_end_state(void)
{
    if (atomic_load(&ended)) {
        return 2;
    }
    return atomic_load(&finish_tid) ? 1 : 0;
}

int
lh_recorder_finishing_here(void)
{
    return atomic_load(&finish_tid) == (int)lh_sys_gettid();
}

void
lh_recorder_finish(int kind, int status)
{
    lh_recorder_finish_at(kind, status, 0);
}

void
lh_recorder_finish_at(int kind, int status, uintptr_t program_sp)
{
    int expect = LH_ST_RECORDING;
    if (lh_tls.guard) {
        /* exit() from a signal handler that interrupted one of our hooks: our locks may be
         * held by this very thread. Stop without flushing rather than deadlock. */
        atomic_store(&lh_g.state, LH_ST_STOPPED);
        return;
    }
    if (lh_recorder_own_process() && atomic_load(&lh_g.state) == LH_ST_RECORDING) {
        /* A snapshot signal the ticker had no time to serve (the program raised it and
         * exited at once) is taken now, while recording, before the exit snapshot. */
        lh_tls.guard = 1;
        lh_settle_snapshot_requests();
        lh_guard_leave(); /* a stop signal meanwhile: the trace ends as killed by it */
    }
    if (!lh_recorder_own_process() ||
        !atomic_compare_exchange_strong(&lh_g.state, &expect, LH_ST_STOPPED)) {
        return;
    }
    lh_tls.guard = 1;
    atomic_store(&finish_tid, (int)lh_sys_gettid());
    atomic_store(&lh_g.ticker_stop, 1);
    lh_flush_all(1);
    if (lh_g.fd >= 0 || lh_events_total() > 0) {
        if (lh_g.cfg.rss_ms) {
            lh_write_rss(1);
        }
        if (lh_g.cfg.snapshot_at_exit) {
            lh_snapshot_take_at("exit", LH_SNAP_EXIT, 0,
                                program_sp ? program_sp : lh_boundary_exit_sp());
        }
        lh_snapshot_reap(1); /* the contents must be complete when the program is gone */
    }
    write_end(kind, status);
    end_kind = kind;
    end_status = status;
    atomic_store(&ended, 1);
    if (lh_tls.stop_sig) {
        lh_stopsig_after_finish(); /* a stop signal arrived meanwhile: it ends the process */
    }
    /* The guard stays set: what this thread frees from now on is not recorded. */
}

void
lh_recorder_killed(int sig)
{
    if (lh_output_hold(1000) != 0) {
        return; /* this thread holds it (inside the agent), or another will not let go */
    }
    if (atomic_load(&ended) && end_kind != LH_EXIT_SCRIPT && lh_recorder_own_process()) {
        end_kind = LH_EXIT_SIGNAL;
        end_status = sig;
        write_end_as(LH_EXIT_SIGNAL, sig, 1); /* readers keep the last END */
    }
}

void
lh_recorder_exit_status(int kind, int status)
{
    /* The END written when a script ended (lh_script_check_end: before its interpreter's
     * teardown) says the process's exit was not seen, and may carry a status the
     * interpreter did not keep in memory (python): the exit rewrites it. */
    if ((end_kind == LH_EXIT_SCRIPT || (end_kind == kind && end_status != status)) &&
        lh_recorder_own_process()) {
        end_kind = kind;
        end_status = status;
        write_end(kind, status); /* readers keep the last END */
    }
}

/* -------------------------------------------------------------------------------------
 * Start-up
 * ----------------------------------------------------------------------------------- */
static void
read_identity(void)
{
    lh_g.pid = getpid();
    lh_g.ppid = getppid();
    ssize_t n = readlink("/proc/self/exe", lh_g.exe, sizeof lh_g.exe - 1);
    lh_g.exe[n > 0 ? n : 0] = '\0';
    n = lh_sys_read_file("/proc/self/cmdline", lh_g.cmdline, sizeof lh_g.cmdline);
    lh_g.cmdline_len = n > 0 ? (size_t)n : 0;
    if (lh_g.cmdline_len == sizeof lh_g.cmdline) {
        lh_g.cmdline[lh_g.cmdline_len - 1] = '\0'; /* truncated: keep it well-formed */
    }
    const char *arg0 = lh_g.cmdline_len ? lh_g.cmdline : lh_g.exe;
    const char *base = strrchr(arg0, '/');
    lh_sys_strlcpy(lh_g.progname, base ? base + 1 : arg0, sizeof lh_g.progname);
    /* A program name is part of a file name: keep it to safe characters. */
    for (char *c = lh_g.progname; *c; c++) {
        if (*c == '/' || *c < ' ') {
            *c = '_';
        }
    }
    if (!lh_g.progname[0]) {
        lh_sys_strlcpy(lh_g.progname, "prog", sizeof lh_g.progname);
    }
    lh_g.mono_start_ns = lh_sys_now_ns();
    lh_g.real_start_ns = lh_sys_realtime_ns();
}

/* What every trace file repeats after its header (writer lock held). */
static void
on_file_open(void)
{
    lh_maps_emit_all_locked();
    lh_script_emit_interp_locked();
}

int
lh_recorder_init(void)
{
    lh_sys_clock_init(lh_g.cfg.clock);
    read_identity();
    lh_maps_text_segment((uintptr_t)&lh_recorder_init, &lh_g.self_lo, &lh_g.self_hi,
                         lh_g.self_path, sizeof lh_g.self_path);
    if (lh_stacktab_init(&lh_g.stacks, 1u << 20, 32u << 20) != 0 || lh_maps_init() != 0) {
        lh_sys_log("cannot reserve memory for the agent; not tracing", "", "");
        goto off;
    }
    if (lh_slots_init() != 0) {
        goto off;
    }
    atomic_store(&lh_g.gen, 1);
    lh_script_init(); /* before the file opens: its INTERP records go in first */
    if (lh_utab_init() != 0 && lh_g.cfg.unwind == LH_UNWIND_TABLE) {
        lh_g.cfg.unwind = LH_UNWIND_LIBUNWIND; /* no memory for tables: DWARF as before */
    }
    if (lh_output_init(on_file_open) != 0) {
        goto off; /* io_failure said why */
    }
    /* libunwind checks the addresses it reads by writing them to a pipe of its own, made
     * now: a program that closes every descriptor it did not open would close it, and
     * libunwind, finding it broken, would close both numbers again, by then the
     * program's (its own file: e2e.closefds). Kept open like the trace (ownfd.h). */
    uint64_t fds_before = lh_ownfd_open_mask();
    lh_unwind_init();
    lh_ownfd_add_mask(lh_ownfd_open_mask() & ~fds_before);
    if (lh_sample_init(lh_g.cfg.sample_rate) != 0) {
        lh_sys_log("cannot reserve memory for sampling; recording everything", "", "");
        lh_g.cfg.sample_rate = 0;
    }
    lh_recorder_sampling = lh_g.cfg.sample_rate > 0;
    if (lh_recorder_sampling && !lh_g.cfg.snapshot_contents_set) {
        /* A sampled trace knows a few blocks in a thousand: a pointer held by a block it
         * does not know is no edge of the graph, so the reachability that contents are for
         * would call reachable blocks lost. And the contents child's fork and scan are most
         * of what sampling costs on a short run (bench/RESULTS.md). Asked for, it is done. */
        lh_g.cfg.snapshot_contents = LH_CONTENTS_NONE;
    }
    if (lh_snapshot_init(lh_g.cfg.snapshot_contents) != 0) {
        lh_sys_log("cannot reserve memory for snapshot contents; snapshots record the live set only",
                   "", "");
    }
    return 0;
off:
    atomic_store(&lh_g.state, LH_ST_STOPPED);
    return -1;
}

void
lh_recorder_begin(void)
{
    lh_fork_install();
    atomic_store(&lh_g.state, LH_ST_RECORDING);
    /* The blocks of other libraries' constructors and the loader, from before this start:
     * events before any other (a free waits for the replay of its block). */
    lh_preinit_replay(!lh_recorder_sampling);
    lh_maps_scan(1);
    lh_ticker_begin();
}

/* -------------------------------------------------------------------------------------
 * Again in the same process (a second attach), and the end of an attach
 * ----------------------------------------------------------------------------------- */
int
lh_recorder_restart(void)
{
    /* Memory, stacks and modules stay from the first start; like a fork child, the new
     * trace gets fresh buffers and counters, and stacks and modules are written again. */
    lh_output_after_fork();
    lh_slots_after_fork();
    lh_ticker_after_fork();
    atomic_fetch_add(&lh_g.gen, 1);
    lh_stacktab_after_fork(&lh_g.stacks);
    lh_script_after_fork();
    lh_maps_after_fork();
    lh_sys_clock_init(lh_g.cfg.clock);
    read_identity();
    lh_g.parent_pid = 0;
    lh_g.seed_path[0] = '\0';
    atomic_store(&lh_g.n_pre_init, 0);
    if (lh_output_open() != 0) {
        atomic_store(&lh_g.state, LH_ST_STOPPED);
        return -1;
    }
    if (lh_sample_init(lh_g.cfg.sample_rate) != 0) {
        lh_sys_log("cannot reserve memory for sampling; recording everything", "", "");
        lh_g.cfg.sample_rate = 0;
    }
    lh_recorder_sampling = lh_g.cfg.sample_rate > 0;
    return 0;
}

int
lh_recorder_detach(void)
{
    int saved = lh_tls.guard; /* this thread is the program's: it records at a next attach */
    lh_recorder_finish(LH_EXIT_DETACH, 0);
    lh_tls.guard = 1;
    int rc = lh_ticker_stop();
    lh_snapshot_reap(1);
    lh_output_close();
    lh_tls.guard = saved;
    return rc;
}
