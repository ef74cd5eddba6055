/* leakhound - SPDX-License-Identifier: MIT
 *
 * hooks.c: interposition of the malloc family, _exit, exec and dlclose; bootstrap; the
 * constructor and destructor.
 *
 * Bootstrap: the first allocation (often from inside the loader or libc's own start-up)
 * resolves the real functions with dlsym(RTLD_NEXT). dlsym itself may call calloc: while
 * resolving, allocations come from a static bump arena, and free/realloc recognise arena
 * pointers (heaptrack's DummyPool; jemalloc#443). Recording starts in the constructor;
 * allocations before it pass through and are counted (pre_init_allocs in the trailer).
 *
 * Every hook tests the per-thread guard first: nested allocations (from libunwind, zstd,
 * pthread, a signal handler interrupting a hook) pass straight to the real function.
 * free is recorded before the real free and malloc after the real malloc, so an address is
 * never seen reused before it was freed (see record.c for realloc's two time stamps).
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent.h"
#include "enc.h"
#include "format.h"
#include "sample.h"
#include "snapshot.h"
#include "sys.h"
#include "unwind.h"
#include "unwind_table.h"

#define LH_EXPORT __attribute__((visibility("default")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

static struct {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void *(*reallocarray)(void *, size_t, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    size_t (*malloc_usable_size)(void *);
    int (*dlclose)(void *);
    void (*exit_)(int);
    void (*Exit_)(int);
    int (*execve)(const char *, char *const[], char *const[]);
    int (*execv)(const char *, char *const[]);
    int (*execvp)(const char *, char *const[]);
    int (*execvpe)(const char *, char *const[], char *const[]);
} real;

/* -------------------------------------------------------------------------------------
 * Bootstrap arena: used only while dlsym runs. Never freed, never reused.
 * ----------------------------------------------------------------------------------- */
static _Alignas(64) char boot_arena[256 * 1024];
static atomic_size_t boot_used;

static void *
boot_alloc(size_t n, size_t align)
{
    if (align < 16) {
        align = 16;
    }
    size_t old = atomic_load(&boot_used);
    for (;;) {
        size_t start = (old + 16 + align - 1) & ~(align - 1);
        if (n > sizeof boot_arena || start + n > sizeof boot_arena) {
            return NULL;
        }
        if (atomic_compare_exchange_weak(&boot_used, &old, start + n)) {
            memcpy(boot_arena + start - sizeof(size_t), &n, sizeof n);
            return boot_arena + start; /* static storage: already zero */
        }
    }
}

static int
is_boot(const void *p)
{
    return (const char *)p >= boot_arena && (const char *)p < boot_arena + sizeof boot_arena;
}

static size_t
boot_size(const void *p)
{
    size_t n;
    memcpy(&n, (const char *)p - sizeof(size_t), sizeof n);
    return n;
}

#define RESOLVE(name) real.name = (__typeof__(real.name))dlsym(RTLD_NEXT, #name)

static void
resolve(void)
{
    int expect = LH_ST_UNINIT;
    if (!atomic_compare_exchange_strong(&lh_g.state, &expect, LH_ST_RESOLVING)) {
        return; /* another thread (or our own dlsym's calloc) is resolving */
    }
    RESOLVE(malloc);
    RESOLVE(free);
    RESOLVE(calloc);
    RESOLVE(realloc);
    RESOLVE(reallocarray);
    RESOLVE(posix_memalign);
    RESOLVE(aligned_alloc);
    RESOLVE(memalign);
    RESOLVE(valloc);
    RESOLVE(pvalloc);
    RESOLVE(malloc_usable_size);
    RESOLVE(dlclose);
    RESOLVE(execve);
    RESOLVE(execv);
    RESOLVE(execvp);
    RESOLVE(execvpe);
    real.exit_ = (void (*)(int))dlsym(RTLD_NEXT, "_exit");
    real.Exit_ = (void (*)(int))dlsym(RTLD_NEXT, "_Exit");
    if (!real.malloc || !real.free || !real.calloc || !real.realloc) {
        lh_sys_log("cannot find the real malloc/free/calloc/realloc; not tracing", "", "");
        atomic_store(&lh_g.state, LH_ST_STOPPED);
        return;
    }
    atomic_store(&lh_g.state, LH_ST_RESOLVED);
}

/* Returns nonzero when the hook must record. Counts allocations that arrive before the
 * constructor started recording. */
static inline int
should_record(void)
{
    int st = atomic_load_explicit(&lh_g.state, memory_order_relaxed);
    if (likely(st == LH_ST_RECORDING)) {
        return !lh_tls.guard;
    }
    if (st == LH_ST_RESOLVED) {
        atomic_fetch_add_explicit(&lh_g.n_pre_init, 1, memory_order_relaxed);
    }
    return 0;
}

static int sampling; /* LEAKHOUND_SAMPLE_RATE > 0 */

/* An allocation the hook must record: every one, or in sampling mode the sampled ones. */
static inline int
should_record_alloc(size_t n)
{
    if (!should_record()) {
        return 0;
    }
    return !sampling || lh_sample_take(n);
}

/* A free the hook must record: every one, or in sampling mode those of sampled blocks. */
static inline int
should_record_free(const void *p)
{
    if (!should_record()) {
        return 0;
    }
    return !sampling || lh_sample_unmark(p);
}

static void
record_alloc(void *p, size_t size, int kind)
{
    lh_rec_t r;
    int saved = errno;
    if (sampling) {
        lh_sample_mark(p);
    }
    lh_tls.guard = 1;
    if (lh_rec_begin(&r, 1) == 0) {
        lh_rec_alloc(&r, p, size, kind);
        lh_rec_end(&r);
    }
    lh_tls.guard = 0;
    errno = saved;
}

/* -------------------------------------------------------------------------------------
 * The malloc family
 * ----------------------------------------------------------------------------------- */
/* The slow parts of malloc and free live in their own functions, so that the common path
 * (sampling mode's countdown, a free of an unsampled block) is a few instructions with no
 * frame to set up. */
__attribute__((noinline)) static void *
malloc_boot(size_t n)
{
    resolve();
    return real.malloc ? real.malloc(n) : boot_alloc(n, 16);
}

__attribute__((noinline)) static void *
malloc_record(void *p, size_t n)
{
    if (p && should_record_alloc(n)) {
        record_alloc(p, n, LH_AK_MALLOC);
    }
    return p;
}

LH_EXPORT void *
malloc(size_t n)
{
    void *(*f)(size_t) = real.malloc;
    if (unlikely(!f)) {
        return malloc_boot(n);
    }
    void *p = f(n);
    if (likely(sampling) && lh_sample_skip(n)) {
        return p;
    }
    return malloc_record(p, n);
}

LH_EXPORT void *
calloc(size_t n, size_t m)
{
    if (unlikely(!real.calloc)) {
        resolve();
        if (!real.calloc) {
            size_t total;
            if (__builtin_mul_overflow(n, m, &total)) {
                errno = ENOMEM;
                return NULL;
            }
            return boot_alloc(total, 16);
        }
    }
    void *p = real.calloc(n, m);
    if (p && should_record_alloc(n * m)) {
        record_alloc(p, n * m, LH_AK_CALLOC);
    }
    return p;
}

__attribute__((noinline)) static void
free_record(void *p)
{
    if (unlikely(is_boot(p))) {
        return;
    }
    if (unlikely(!real.free)) {
        return; /* cannot happen for a pointer we did not hand out from the arena */
    }
    if (should_record_free(p)) {
        lh_rec_t r;
        int saved = errno;
        lh_tls.guard = 1;
        if (lh_rec_begin(&r, 0) == 0) {
            lh_rec_free(&r, p);
            lh_rec_end(&r);
        }
        lh_tls.guard = 0;
        errno = saved;
    }
    real.free(p);
}

LH_EXPORT void
free(void *p)
{
    if (unlikely(!p)) {
        return;
    }
    if (likely(sampling) && !lh_sample_maybe(p) && !is_boot(p)) {
        real.free(p); /* not a sampled block: nothing to record */
        return;
    }
    free_record(p);
}

/* Sampling mode: realloc is the free of the old block (recorded when it was sampled) and
 * an allocation of the new one (recorded when sampled). */
static void *
realloc_sampled(void *p, size_t n, int kind)
{
    int old_sampled = p && lh_sample_unmark(p);
    lh_rec_t r;
    int ok = 0;
    lh_tls.guard = 1;
    if (old_sampled) {
        ok = lh_rec_begin(&r, 0) == 0; /* stamped before the call, as a free must be */
    }
    void *q = real.realloc(p, n);
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
    lh_tls.guard = 0;
    if (q && lh_sample_take(n)) {
        record_alloc(q, n, kind);
    }
    errno = saved;
    return q;
}

static void *
realloc_impl(void *p, size_t n, int kind)
{
    if (unlikely(is_boot(p))) {
        size_t old = boot_size(p);
        void *q = malloc(n ? n : 1);
        if (q) {
            memcpy(q, p, old < n ? old : n);
        }
        return q;
    }
    if (unlikely(!real.realloc)) {
        resolve();
        if (!real.realloc) {
            return p ? NULL : boot_alloc(n, 16);
        }
    }
    if (!should_record()) {
        return real.realloc(p, n);
    }
    if (sampling) {
        return realloc_sampled(p, n, kind);
    }
    lh_rec_t r;
    lh_tls.guard = 1;
    /* The slot stays locked across the real call: the free half's time stamp is taken
     * before it, and the ticker must not write a SYNC between that stamp and the record. */
    int ok = lh_rec_begin(&r, 1) == 0;
    void *q = real.realloc(p, n);
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
    lh_tls.guard = 0;
    errno = saved;
    return q;
}

LH_EXPORT void *
realloc(void *p, size_t n)
{
    return realloc_impl(p, n, LH_AK_REALLOC);
}

LH_EXPORT void *
reallocarray(void *p, size_t n, size_t m)
{
    size_t total;
    if (__builtin_mul_overflow(n, m, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc_impl(p, total, LH_AK_REALLOCARRAY);
}

LH_EXPORT int
posix_memalign(void **out, size_t align, size_t n)
{
    if (unlikely(!real.posix_memalign)) {
        resolve();
        if (!real.posix_memalign) {
            void *p = boot_alloc(n, align);
            if (!p) {
                return ENOMEM;
            }
            *out = p;
            return 0;
        }
    }
    int rc = real.posix_memalign(out, align, n);
    if (rc == 0 && should_record_alloc(n)) {
        record_alloc(*out, n, LH_AK_MEMALIGN);
    }
    return rc;
}

#define ALIGNED_HOOK(name, kind, ...)                                                        \
    if (unlikely(!real.name)) {                                                              \
        resolve();                                                                           \
        if (!real.name) {                                                                    \
            return boot_alloc(n, align);                                                     \
        }                                                                                    \
    }                                                                                        \
    void *p = real.name(__VA_ARGS__);                                                        \
    if (p && should_record_alloc(n)) {                                                       \
        record_alloc(p, n, kind);                                                            \
    }                                                                                        \
    return p

LH_EXPORT void *
aligned_alloc(size_t align, size_t n)
{
    ALIGNED_HOOK(aligned_alloc, LH_AK_MEMALIGN, align, n);
}

LH_EXPORT void *
memalign(size_t align, size_t n)
{
    ALIGNED_HOOK(memalign, LH_AK_MEMALIGN, align, n);
}

LH_EXPORT void *
valloc(size_t n)
{
    size_t align = 4096;
    ALIGNED_HOOK(valloc, LH_AK_VALLOC, n);
}

LH_EXPORT void *
pvalloc(size_t n)
{
    size_t align = 4096;
    ALIGNED_HOOK(pvalloc, LH_AK_VALLOC, n);
}

LH_EXPORT size_t
malloc_usable_size(void *p)
{
    if (!p) {
        return 0;
    }
    if (is_boot(p)) {
        return boot_size(p);
    }
    if (!real.malloc_usable_size) {
        resolve();
    }
    return real.malloc_usable_size ? real.malloc_usable_size(p) : 0;
}

/* -------------------------------------------------------------------------------------
 * dlclose, exec, _exit
 *
 * dlopen is deliberately not interposed: glibc resolves a relative name against the
 * *caller's* RUNPATH, and the caller would become this library. New modules are found
 * instead when a new stack is first seen, by the ticker, and before every dlclose.
 * ----------------------------------------------------------------------------------- */
LH_EXPORT int
dlclose(void *h)
{
    if (!real.dlclose) {
        resolve();
        if (!real.dlclose) {
            return -1;
        }
    }
    int traced = lh_recording() && !lh_tls.guard;
    if (traced) {
        lh_tls.guard = 1;
        lh_maps_scan(0); /* record a module loaded and closed between two ticks */
        lh_tls.guard = 0;
    }
    int rc = real.dlclose(h);
    if (traced) {
        int saved = errno;
        lh_tls.guard = 1;
        lh_maps_scan(0);
        lh_tls.guard = 0;
        errno = saved;
    }
    return rc;
}

/* A vfork child shares our memory: it must not touch the parent's buffers or file. */
static int
in_own_process(void)
{
    return getpid() == lh_g.pid;
}

static void
before_exec(const char *path)
{
    if (!lh_recording() || lh_tls.guard || !in_own_process()) {
        return;
    }
    int saved = errno;
    lh_tls.guard = 1;
    lh_flush_all(1);
    if (lh_g.fd >= 0 || lh_events_total() > 0) {
        uint8_t buf[LH_PATH_MAX + 32];
        lh_enc_t e;
        lh_enc_init(&e, buf, sizeof buf);
        uint8_t *r = lh_enc_rec_begin(&e, LH_REC_EXEC);
        lh_enc_varint(&e, 0);
        lh_enc_str(&e, path);
        lh_enc_rec_end(&e, r);
        if (lh_enc_ok(&e)) {
            lh_write_agent_frame(buf, (size_t)(e.p - buf), 1, lh_sys_now_ns(), 0);
        }
        /* The trace ends here if the exec succeeds. If it fails, recording goes on and the
         * END written at exit supersedes this one (readers keep the last END). */
        lh_write_end(LH_EXIT_EXEC, 0);
    }
    if (!lh_g.cfg.follow_exec && !lh_g.parent_pid) {
        /* A wrapper (env, a script, a pyenv shim) becoming the real program: say why its
         * trace holds only the wrapper. Children's execs (a shell's commands) stay quiet. */
        lh_sys_log(lh_g.progname, " is replacing itself with ", path);
        lh_sys_log("that program is not traced: leakhound run --follow-exec traces it too", "",
                   "");
    }
    lh_tls.guard = 0;
    errno = saved;
}

LH_EXPORT int
execve(const char *path, char *const argv[], char *const envp[])
{
    if (!real.execve) {
        resolve();
    }
    before_exec(path);
    return real.execve ? real.execve(path, argv, envp) : (errno = ENOSYS, -1);
}

LH_EXPORT int
execv(const char *path, char *const argv[])
{
    if (!real.execv) {
        resolve();
    }
    before_exec(path);
    return real.execv ? real.execv(path, argv) : (errno = ENOSYS, -1);
}

LH_EXPORT int
execvp(const char *file, char *const argv[])
{
    if (!real.execvp) {
        resolve();
    }
    before_exec(file);
    return real.execvp ? real.execvp(file, argv) : (errno = ENOSYS, -1);
}

LH_EXPORT int
execvpe(const char *file, char *const argv[], char *const envp[])
{
    if (!real.execvpe) {
        resolve();
    }
    before_exec(file);
    return real.execvpe ? real.execvpe(file, argv, envp) : (errno = ENOSYS, -1);
}

/* The variadic exec functions call glibc's internal execve, not ours: interpose them too,
 * so a fork child that execs right away still writes what it recorded. */
#define COLLECT_ARGS(first, extra)                                                           \
    va_list ap;                                                                              \
    size_t argc = 1;                                                                         \
    va_start(ap, first);                                                                     \
    while (va_arg(ap, char *)) {                                                             \
        argc++;                                                                              \
    }                                                                                        \
    va_end(ap);                                                                              \
    if (argc > 65536) {                                                                      \
        errno = E2BIG;                                                                       \
        return -1;                                                                           \
    }                                                                                        \
    char *argv[argc + 1];                                                                    \
    argv[0] = (char *)(first);                                                               \
    va_start(ap, first);                                                                     \
    for (size_t i = 1; i <= argc; i++) {                                                     \
        argv[i] = va_arg(ap, char *);                                                        \
    }                                                                                        \
    extra;                                                                                   \
    va_end(ap)

LH_EXPORT int
execl(const char *path, const char *arg, ...)
{
    COLLECT_ARGS(arg, (void)0);
    return execv(path, argv);
}

LH_EXPORT int
execlp(const char *file, const char *arg, ...)
{
    COLLECT_ARGS(arg, (void)0);
    return execvp(file, argv);
}

LH_EXPORT int
execle(const char *path, const char *arg, ...)
{
    char *const *envp;
    COLLECT_ARGS(arg, envp = va_arg(ap, char *const *));
    return execve(path, argv, envp);
}

static void
final_flush(int kind, int status)
{
    int expect = LH_ST_RECORDING;
    if (lh_tls.guard) {
        /* exit() from a signal handler that interrupted one of our hooks: our locks may be
         * held by this very thread. Stop without flushing rather than deadlock. */
        atomic_store(&lh_g.state, LH_ST_STOPPED);
        return;
    }
    if (!in_own_process() ||
        !atomic_compare_exchange_strong(&lh_g.state, &expect, LH_ST_STOPPED)) {
        return;
    }
    lh_tls.guard = 1;
    atomic_store(&lh_g.ticker_stop, 1);
    lh_flush_all(1);
    if (lh_g.fd >= 0 || lh_events_total() > 0) {
        if (lh_g.cfg.rss_ms) {
            lh_write_rss(1);
        }
        if (lh_g.cfg.snapshot_at_exit) {
            lh_snapshot_take("exit", LH_SNAP_EXIT, 0);
        }
        lh_snapshot_reap(1); /* the contents must be complete when the program is gone */
    }
    lh_write_end(kind, status);
    /* The guard stays set: what this thread frees from now on is not recorded. */
}

LH_EXPORT void
_exit(int status)
{
    final_flush(LH_EXIT_UNDERSCORE, status);
    if (real.exit_) {
        real.exit_(status);
    }
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

LH_EXPORT void
_Exit(int status)
{
    final_flush(LH_EXIT_UNDERSCORE, status);
    if (real.Exit_) {
        real.Exit_(status);
    }
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

/* -------------------------------------------------------------------------------------
 * Constructor and destructor
 * ----------------------------------------------------------------------------------- */
static int
self_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t here = (uintptr_t)arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && here >= lo &&
            here < lo + ph->p_memsz) {
            lh_g.self_lo = lo;
            lh_g.self_hi = lo + ph->p_memsz;
            lh_sys_strlcpy(lh_g.self_path, info->dlpi_name, sizeof lh_g.self_path);
            return 1;
        }
    }
    return 0;
}

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

/* Takes this library out of LD_PRELOAD in place (no allocation), so programs the target
 * executes are not traced unless --follow-exec asked for it. */
static void
strip_preload(void)
{
    extern char **environ;
    for (char **ep = environ; ep && *ep; ep++) {
        if (strncmp(*ep, "LD_PRELOAD=", 11) != 0) {
            continue;
        }
        char *s = *ep + 11;
        char *w = s;
        char *p = s;
        while (*p) {
            while (*p == ':' || *p == ' ') {
                p++;
            }
            char *tok = p;
            while (*p && *p != ':' && *p != ' ') {
                p++;
            }
            size_t len = (size_t)(p - tok);
            if (!len) {
                continue;
            }
            const char *base = tok;
            for (char *c = tok; c < p; c++) {
                if (*c == '/') {
                    base = c + 1;
                }
            }
            if ((size_t)(p - base) == strlen("libleakhound.so") &&
                memcmp(base, "libleakhound.so", (size_t)(p - base)) == 0) {
                continue;
            }
            if (w != s) {
                *w++ = ':';
            }
            memmove(w, tok, len);
            w += len;
        }
        *w = '\0';
    }
}

/* exit() runs on_exit/atexit handlers in reverse order of registration. Ours is registered
 * in the constructor, before __libc_start_main registers the loader's destructor pass, so it
 * runs after every ELF destructor and C++ static destructor of the program (and after our
 * own destructor): the last frees are recorded, and the exit status is known. */
static int on_exit_registered;

static void
at_exit(int status, void *arg)
{
    (void)arg;
    lh_g.exit_status = status;
    lh_g.have_exit_status = 1;
    final_flush(LH_EXIT_NORMAL, status);
}

static void
on_snapshot_signal(int sig)
{
    (void)sig;
    lh_request_snapshot(); /* AS-safe: the ticker writes the record */
}

static void
install_snapshot_signal(void)
{
    int sig = lh_g.cfg.snapshot_signal;
    struct sigaction old;
    if (!sig || sigaction(sig, NULL, &old) != 0) {
        return;
    }
    /* Only where the program (so far) has no use for the signal. */
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_snapshot_signal;
        sa.sa_flags = SA_RESTART;
        sigfillset(&sa.sa_mask);
        sigaction(sig, &sa, NULL);
    }
}

static void
fork_prepare(void)
{
    if (lh_recording()) {
        lh_writer_fork_prepare();
    }
}

static void
fork_parent(void)
{
    if (lh_recording()) {
        lh_writer_fork_parent();
    }
}

static void
fork_child(void)
{
    lh_sample_after_fork();
    if (lh_recording()) {
        lh_writer_fork_child();
    }
}

__attribute__((constructor)) static void
lh_ctor(void)
{
    if (atomic_load(&lh_g.state) == LH_ST_UNINIT) {
        resolve();
    }
    if (atomic_load(&lh_g.state) != LH_ST_RESOLVED) {
        return;
    }
    lh_tls.guard = 1;
    if (lh_config_load(&lh_g.cfg) != 0) {
        goto off;
    }
    lh_sys_clock_init(lh_g.cfg.clock);
    read_identity();
    dl_iterate_phdr(self_cb, (void *)(uintptr_t)&lh_ctor);
    if (lh_stacks_init(&lh_g.stacks, 1u << 20, 32u << 20) != 0 || lh_maps_init() != 0) {
        lh_sys_log("cannot reserve memory for the agent; not tracing", "", "");
        goto off;
    }
    if (lh_utab_init() != 0 && lh_g.cfg.unwind == LH_UNWIND_TABLE) {
        lh_g.cfg.unwind = LH_UNWIND_LIBUNWIND; /* no memory for tables: DWARF as before */
    }
    if (lh_writer_init() != 0) {
        goto off; /* lh_disable said why */
    }
    lh_unwind_init();
    if (lh_sample_init(lh_g.cfg.sample_rate) != 0) {
        lh_sys_log("cannot reserve memory for sampling; recording everything", "", "");
        lh_g.cfg.sample_rate = 0;
    }
    sampling = lh_g.cfg.sample_rate > 0;
    if (lh_snapshot_init(lh_g.cfg.snapshot_contents) != 0) {
        lh_sys_log("cannot reserve memory for snapshot contents; snapshots record the live set only",
                   "", "");
    }
    on_exit_registered = on_exit(at_exit, NULL) == 0;
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    if (!lh_g.cfg.follow_exec) {
        strip_preload();
    }
    install_snapshot_signal();
    atomic_store(&lh_g.state, LH_ST_RECORDING);
    lh_maps_scan(1);
    lh_ticker_start();
    lh_tls.guard = 0;
    return;
off:
    atomic_store(&lh_g.state, LH_ST_STOPPED);
    lh_tls.guard = 0;
}

__attribute__((destructor)) static void
lh_dtor(void)
{
    if (!on_exit_registered) {
        final_flush(LH_EXIT_NORMAL, 0);
    }
}
