/* leakhound - SPDX-License-Identifier: MIT
 *
 * agent.h: the agent's shared internal state (the global lh_g, the per-thread lh_tls, the
 * configuration and the slot layout), defined in recorder.c. Functions live with their
 * module's header: recorder.h (the core's entry points for front-ends), slots.h, output.h,
 * record.h, maps.h, ticker.h, fork.h, config.h, snapshot.h. Nothing here is exported from
 * libleakhound.so (-fvisibility=hidden); the only exported names are the interposed libc
 * functions and include/leakhound.h.
 *
 * Rules for code reachable from a hook: docs/agent-safety.md. In short: test the
 * per-thread guard first, call only AS-safe functions, unwind before taking any agent lock,
 * never call into the loader while holding one.
 */
#ifndef LH_AGENT_H
#define LH_AGENT_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stacktab.h"

#define LH_AGENT_VERSION LH_VERSION /* from CMakeLists.txt: project(VERSION) */

/* Every function the program can call (the interposed libc names, include/leakhound.h:
 * LH_ENTRY) and every callback glibc runs on the program's stack (exit handlers, ELF
 * destructors, atfork handlers, key destructors: LH_REALIGN). glibc's malloc and exit work
 * on a stack that is not 16-byte aligned (hand-written assembly and some JITs call them
 * so); code compiled from C may not (SSE spills with movaps), so each way in realigns the
 * stack once and everything below it, ours and the libraries we call (zstd, libunwind),
 * runs aligned (issue 11). aarch64's hardware keeps sp aligned. */
#if defined(__x86_64__) || defined(__i386__)
#define LH_REALIGN __attribute__((force_align_arg_pointer))
#else
#define LH_REALIGN
#endif
#define LH_ENTRY __attribute__((visibility("default"))) LH_REALIGN

/* The start of a hand-written entry point that must hand its caller's stack to C (lh_snapshot,
 * exit): saves the frame and the callee-saved registers (which may hold a program's only
 * pointer to a block) right below the return address, and puts that stack pointer in the
 * second argument register, so the scan sees the registers and the program's live frames
 * and nothing the agent wrote. name is a string literal; the caller's asm continues with
 * the call and its own epilogue (x86-64: callee-saved registers at -40(%rbp); aarch64: a
 * 96-byte frame, x19..x28 at sp+16..). */
#if defined(__x86_64__)
#define LH_ASM_SAVED_REGS_ENTRY(name)                                                      \
    ".text\n"                                                                              \
    ".globl " name "\n"                                                                    \
    ".type " name ", @function\n" name ":\n"                                               \
    ".cfi_startproc\n"                                                                     \
    "  push %rbp\n"                                                                        \
    ".cfi_def_cfa_offset 16\n"                                                             \
    ".cfi_offset %rbp, -16\n"                                                              \
    "  mov %rsp, %rbp\n"                                                                   \
    ".cfi_def_cfa_register %rbp\n"                                                         \
    "  push %rbx\n"                                                                        \
    "  push %r12\n"                                                                        \
    "  push %r13\n"                                                                        \
    "  push %r14\n"                                                                        \
    "  push %r15\n"                                                                        \
    "  mov %rsp, %rsi\n" /* the registers, then the return address, then the program */   \
    "  and $-16, %rsp\n" /* any alignment the caller had */
#elif defined(__aarch64__)
#define LH_ASM_SAVED_REGS_ENTRY(name)                                                      \
    ".text\n"                                                                              \
    ".globl " name "\n"                                                                    \
    ".type " name ", %function\n" name ":\n"                                               \
    ".cfi_startproc\n"                                                                     \
    "  stp x29, x30, [sp, #-96]!\n"                                                        \
    ".cfi_def_cfa_offset 96\n"                                                             \
    ".cfi_offset x29, -96\n"                                                               \
    ".cfi_offset x30, -88\n"                                                               \
    "  mov x29, sp\n"                                                                      \
    "  stp x19, x20, [sp, #16]\n"                                                          \
    "  stp x21, x22, [sp, #32]\n"                                                          \
    "  stp x23, x24, [sp, #48]\n"                                                          \
    "  stp x25, x26, [sp, #64]\n"                                                          \
    "  stp x27, x28, [sp, #80]\n"                                                          \
    "  mov x1, sp\n"
#endif

#define LH_MAX_DEPTH 256
#define LH_MAX_SLOTS 4096
#define LH_PATH_MAX 4096

/* Life cycle of the agent, in order. Hooks record only in LH_ST_RECORDING. */
enum lh_state {
    LH_ST_UNINIT = 0,    /* nothing resolved yet */
    LH_ST_RESOLVING = 1, /* dlsym running: allocations come from the bootstrap arena */
    LH_ST_RESOLVED = 2,  /* real functions known, constructor not run yet: pass through */
    LH_ST_RECORDING = 3,
    LH_ST_STOPPED = 4, /* exit, disabled or failed: pass through for good */
};

/* Which programs the traced process executes are traced too (LEAKHOUND_FOLLOW_EXEC). */
enum lh_follow {
    LH_FOLLOW_NONE = 0, /* "0": none; LD_PRELOAD leaves the environment at start */
    LH_FOLLOW_ALL = 1,  /* "1" (--follow-exec): every program any process executes */
    LH_FOLLOW_MAIN = 2, /* default: the traced process's own exec chain (a shell script, env,
                           a pyenv shim ending in exec the real program), not its children */
};

typedef struct lh_config {
    char output[LH_PATH_MAX]; /* pattern; %p = pid, %e = program name */
    int depth;
    int unwind; /* LH_UNWIND_* */
    int unwind_verify; /* compare table walks with libunwind, count mismatches */
    int follow_exec; /* LH_FOLLOW_*: which executed programs are traced */
    int is_descendant; /* follow_exec MAIN and this is not the traced line: stay off */
    int not_main; /* another pid than the traced line's (follow_exec ALL: a fork child's
                     exec): its trace is named with its pid, as a fork child's */
    uint64_t image_id; /* this program image (its start, ns): fork children keep their
                          parent's, an exec gets a new one */
    char index[LH_PATH_MAX]; /* LEAKHOUND_INDEX: one line per trace file opened, or "" */
    int flush_ms;
    size_t buffer_bytes;
    int rss_ms;              /* RSS sample period, 0 = off */
    int snapshot_signal;     /* 0 = none */
    int snapshot_every_ms;   /* 0 = off */
    uint64_t snapshot_growth; /* bytes of heap growth between snapshots, 0 = off */
    int snapshot_at_exit;
    int clock; /* lh_sys_clock_init mode */
    uint64_t sample_rate; /* mean bytes between samples, 0 = record everything */
    int snapshot_contents; /* LH_CONTENTS_* */
    int snapshot_contents_set; /* LEAKHOUND_SNAPSHOT_CONTENTS was given (else the default,
                                  which is full in a perl or python process) */
    int test_child_delay_ms; /* LEAKHOUND_TEST_SNAPSHOT_CHILD_DELAY_MS: tests only, a
                              * snapshot child waits this long before its END */
    int test_reg_hold_ms; /* LEAKHOUND_TEST_REG_HOLD_MS: tests only, the ticker holds the
                             registry of the agent's mappings this long at each RSS sample
                             (a clone or fork must not hand it to its child locked) */
    int snapshot_delta; /* LEAKHOUND_SNAPSHOT_DELTA: contents files refer to earlier ones
                           for what did not change (1, the default) or are whole (0) */
    int snapshot_wp; /* LEAKHOUND_SNAPSHOT_WP: a delta snapshot skips pages the kernel says
                        were not written (1, the default; snapwp.h) or reads them all (0) */
    int test_snapwp_verify; /* LEAKHOUND_TEST_SNAPWP_VERIFY: tests only, the child reads the
                               pages it skips anyway, compares, and logs the counts */
    int test_child_maps; /* LEAKHOUND_TEST_SNAPSHOT_CHILD_MAPS: tests only, the child logs
                            how many of the mappings it listed at its start are gone at
                            its end */
} lh_config_t;

#define LH_EV_CLOSED SIZE_MAX

/* One thread's event buffer. Owned by its thread; the ticker and exit path lock it to flush
 * idle threads. */
typedef struct lh_slot {
    atomic_int busy; /* owner inside a hook (see lh_slot_lock) */
    atomic_int req;  /* a sweep wants this slot: its owner steps aside */
    atomic_int in_use;
    uint32_t tid;
    uint32_t n_records;
    uint64_t n_events; /* events recorded through this slot since it was taken */
    uint8_t *buf;
    size_t len;
    size_t cap;
    uint64_t ts_base;
    uint64_t ts_last;
    uint64_t addr_last;
    size_t ev_at;      /* the open EVENTS record starts at buf + ev_at ... */
    size_t ev_end;     /* ... and ends at ev_end: open while len == ev_end; LH_EV_CLOSED:
                          none (record.c) */
    size_t ev_limit;   /* the end up to which one more event fits in that record */
    uint32_t ev_stack; /* the frame's current stack id for EVENTS (format.h) */
    uintptr_t stack_lo;
    uintptr_t stack_hi;
    uintptr_t self;    /* pthread_self(): the thread's descriptor (threads.h) */
    int is_exited;     /* registered again after its exit began: not a root (threads.h) */
    void *ucache; /* per-thread cache of recent DWARF-unwound stacks (record.c) */
    uint32_t uc_hits, uc_fills; /* how well it pays off for this thread (decaying) */
    size_t uc_esize;              /* bytes per entry of ucache */
} lh_slot_t;

/* Per-thread state, initial-exec TLS so the first access never allocates. */
typedef struct lh_tls {
    int guard;       /* inside a hook: nested allocations pass through unrecorded */
    int registered;  /* slot acquired for this thread (in this process) */
    lh_slot_t *slot;
    uint32_t pid_gen; /* fork generation the slot belongs to */
    uint32_t last_stack; /* id of this thread's previous stack: most stacks repeat */
    int exited;          /* the thread is exiting (its slot's key destructor ran) */
    int stop_sig;        /* a stop signal that arrived inside a hook (stopsig.c) */
    int *errnop;         /* &errno of this thread, once a hook asked (lh_errno_ptr) */
} lh_tls_t;

extern __thread lh_tls_t lh_tls __attribute__((tls_model("initial-exec")));

/* This thread's errno, which the hooks keep: its address asked of the C library once per
 * thread (a thread's errno stays where it is, in a fork child too), not twice per hook
 * through the PLT. AS-safe. */
static inline int *
lh_errno_ptr(void)
{
    int *p = lh_tls.errnop;
    if (__builtin_expect(p == NULL, 0)) {
        p = &errno;
        lh_tls.errnop = p;
    }
    return p;
}

/* stopsig.h: a stop signal that arrived while this thread was inside the agent. */
__attribute__((noreturn)) void lh_stopsig_deferred(void);

/* Leaves the agent's code (the guard set by a hook, the API, an exec): clears the guard,
 * then carries out a stop signal that arrived inside it, now that no lock of this thread
 * is held (stopsig.c). One load and a branch never taken in the usual run. */
static inline void
lh_guard_leave(void)
{
    lh_tls.guard = 0;
    if (__builtin_expect(lh_tls.stop_sig != 0, 0)) {
        lh_stopsig_deferred();
    }
}

typedef struct lh_agent {
    atomic_int state;
    lh_config_t cfg;

    /* Output. Guarded by wlock. */
    pthread_mutex_t wlock;
    int fd;
    int open_failed;
    char path[LH_PATH_MAX];
    uint64_t seq;
    void *cctx; /* ZSTD_CCtx */
    uint8_t *out;
    size_t out_cap;

    /* Identity, refreshed after fork. */
    pid_t pid;
    pid_t ppid;
    pid_t parent_pid; /* nonzero in a fork child */
    /* The trace that holds this process's heap as of its fork (INFO_PARENT, fork.c): the
     * parent's, or, when the parent wrote nothing of its own, the trace its heap came
     * from; "" when there is none. Its writer's pid, and the fork's time. */
    char seed_path[LH_PATH_MAX];
    pid_t seed_pid;
    uint64_t seed_ts_ns;
    int is_attached;  /* started by `leakhound attach` (attach.c), not at program start */
    atomic_uint gen;  /* trace-file generation: 1, bumped in each fork child */
    char exe[LH_PATH_MAX];
    char progname[256];
    char cmdline[32768];
    size_t cmdline_len;
    uint64_t mono_start_ns;
    uint64_t real_start_ns;

    /* Counters for the trailer. */
    atomic_ullong n_events; /* of released slots; lh_events_total() adds the live ones */
    atomic_ullong n_frames;
    atomic_ullong n_dropped;
    atomic_ullong n_pre_init;

    lh_stacktab_t stacks;
    atomic_uint epoch; /* bumped when a module is unloaded */
    uintptr_t self_lo, self_hi; /* the agent's own code, dropped from stacks */
    char self_path[LH_PATH_MAX]; /* the agent's file: its data is never scanned */

    lh_slot_t *slots; /* LH_MAX_SLOTS */
    pthread_key_t key;
    int key_ok;

    pthread_t ticker;
    int ticker_running;
    atomic_int ticker_stop;
    int exit_status;
    int have_exit_status;
} lh_agent_t;

extern lh_agent_t lh_g;

static inline int
lh_recording(void)
{
    return atomic_load_explicit(&lh_g.state, memory_order_acquire) == LH_ST_RECORDING;
}

#endif /* LH_AGENT_H */
