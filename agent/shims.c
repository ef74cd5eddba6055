/* leakhound - SPDX-License-Identifier: MIT
 *
 * shims.c: the LD_PRELOAD front-end's interposition of the malloc family, dlclose, exec,
 * _exit and _Exit, ioctl (a userfaultfd registration the agent's is in the way of), and
 * the bootstrap. What is recorded is the recorder's business (recorder.h); the process
 * life cycle (constructor, exit) is preload.c's.
 *
 * Bootstrap: the first allocation (often from inside the loader or libc's own start-up)
 * resolves the real functions with dlsym(RTLD_NEXT). dlsym itself may call calloc: while
 * resolving, allocations come from a static bump arena, and free/realloc recognise arena
 * pointers (heaptrack's DummyPool; jemalloc#443). Recording starts in the constructor;
 * the blocks allocated before it are noted and replayed as it starts (preinit.h).
 *
 * Every hook tests the per-thread guard first: nested allocations (from libunwind, zstd,
 * pthread, a signal handler interrupting a hook) pass straight to the real function.
 * free is recorded before the real free and malloc after the real malloc, so an address is
 * never seen reused before it was freed (see record.c for realloc's two time stamps).
 */
#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include "shims.h"

#include "agent.h"
#include "format.h"
#include "maps.h"
#include "mmaps.h"
#include "ownfd.h"
#include "output.h"
#include "recorder.h"
#include "sample.h"
#include "snapshot.h"
#include "snapwp.h"
#include "stopsig.h"
#include "sys.h"
#include "ticker.h"

#define LH_EXPORT LH_ENTRY
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
    int (*ioctl)(int, unsigned long, ...);
    int (*close)(int);
    int (*close_range)(unsigned, unsigned, int);
    int (*dup2)(int, int);
    int (*dup3)(int, int, int);
    long (*syscall)(long, ...);
    int (*setuid)(uid_t);
    int (*seteuid)(uid_t);
    int (*setreuid)(uid_t, uid_t);
    int (*setresuid)(uid_t, uid_t, uid_t);
    int (*setgid)(gid_t);
    int (*setegid)(gid_t);
    int (*setregid)(gid_t, gid_t);
    int (*setresgid)(gid_t, gid_t, gid_t);
    int (*setgroups)(size_t, const gid_t *);
    int (*initgroups)(const char *, gid_t);
    int (*capset)(void *, const void *);
    int (*unshare)(int);
    int (*chroot)(const char *);
    int (*setns)(int, int);
    lh_sigaction_fn sigaction;
    lh_signal_fn signal;
    lh_signal_fn sysv_signal;
    lh_signal_fn sigset;
} real;

/* -------------------------------------------------------------------------------------
 * Bootstrap arena: used only while dlsym runs. Never freed, never reused.
 * ----------------------------------------------------------------------------------- */
static _Alignas(64) char boot_arena[256 * 1024];
static atomic_size_t boot_used;

/* What free jumps to (see lh_shims_sampling). */
static void free_sampled(void *p);
static void free_sampled_boot(void *p);
static void free_record(void *p);
static void (*free_path)(void *) = free_record;

/* A block of the arena may now reach free: free_sampled must test for it. */
static void
boot_used_after_init(void)
{
    if (__atomic_load_n(&free_path, __ATOMIC_ACQUIRE) == free_sampled) {
        __atomic_store_n(&free_path, free_sampled_boot, __ATOMIC_RELEASE);
    }
}

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
            boot_used_after_init();
            memcpy(boot_arena + start - sizeof(size_t), &n, sizeof n);
            return boot_arena + start; /* static storage: already zero */
        }
    }
}

static int
is_boot(const void *p)
{
    /* One comparison (free's fast path tests it on every free). */
    return (uintptr_t)p - (uintptr_t)boot_arena < sizeof boot_arena;
}

static size_t
boot_size(const void *p)
{
    size_t n;
    memcpy(&n, (const char *)p - sizeof(size_t), sizeof n);
    return n;
}

#define RESOLVE(name) real.name = (__typeof__(real.name))dlsym(RTLD_NEXT, #name)

/* The executable segment that holds the real malloc. jemalloc, tcmalloc, mimalloc linked
 * as the program's allocator map their heap through the PLT, and those mappings are heap
 * (freed slots hold stale pointers), not a root of the program's (note_mapped). With
 * glibc's malloc this is libc's text, whose own mappings never come through here. */
static uintptr_t alloc_text_lo, alloc_text_len;

static void
find_allocator_text(void)
{
    uintptr_t lo, hi;
    if (real.malloc && lh_maps_text_segment((uintptr_t)real.malloc, &lo, &hi, NULL, 0)) {
        alloc_text_lo = lo;
        alloc_text_len = hi - lo;
    }
}

int
lh_shims_in_allocator(uintptr_t addr)
{
    return addr - alloc_text_lo < alloc_text_len;
}

void
lh_shims_resolve(void)
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
    RESOLVE(ioctl);
    RESOLVE(close);
    RESOLVE(close_range);
    RESOLVE(dup2);
    RESOLVE(dup3);
    RESOLVE(syscall);
    RESOLVE(setuid);
    RESOLVE(seteuid);
    RESOLVE(setreuid);
    RESOLVE(setresuid);
    RESOLVE(setgid);
    RESOLVE(setegid);
    RESOLVE(setregid);
    RESOLVE(setresgid);
    RESOLVE(setgroups);
    RESOLVE(initgroups);
    RESOLVE(capset);
    RESOLVE(unshare);
    RESOLVE(chroot);
    RESOLVE(setns);
    RESOLVE(sigaction);
    RESOLVE(signal);
    RESOLVE(sysv_signal);
    RESOLVE(sigset);
    find_allocator_text();
    lh_shims_cxx_resolve();
    real.exit_ = (void (*)(int))dlsym(RTLD_NEXT, "_exit");
    real.Exit_ = (void (*)(int))dlsym(RTLD_NEXT, "_Exit");
    if (!real.malloc || !real.free || !real.calloc || !real.realloc) {
        lh_sys_log("cannot find the real malloc/free/calloc/realloc; not tracing", "", "");
        atomic_store(&lh_g.state, LH_ST_STOPPED);
        return;
    }
    atomic_store(&lh_g.state, LH_ST_RESOLVED);
}

/* -------------------------------------------------------------------------------------
 * The malloc family
 * ----------------------------------------------------------------------------------- */
/* The slow parts of malloc and free live in their own functions, so that the common path
 * (sampling mode's countdown, a free of an unsampled block) is a few instructions with no
 * frame to set up. */
static inline __attribute__((always_inline)) void *
malloc_record(void *p, size_t n, uintptr_t entry_fp)
{
    if (p && lh_recorder_wants_alloc(n)) {
        lh_recorder_alloc_from(p, n, LH_AK_MALLOC, entry_fp);
    }
    return p;
}

/* The calling hook's frame for lh_recorder_alloc_from. The hooks that pass it are not
 * allowed to end in a tail call (NO_TAIL after the call): their frame must outlive the
 * recording. */
#define ENTRY_FP() ((uintptr_t)__builtin_frame_address(0))
#define NO_TAIL(v) __asm__ volatile("" : "+r"(v))

__attribute__((noinline)) static void *
malloc_boot(size_t n)
{
    lh_shims_resolve();
    return real.malloc ? malloc_record(real.malloc(n), n, 0) : boot_alloc(n, 16);
}

/* Everything but sampling mode's common case: the real call, then the recording. The
 * agent's code starts here, so this is where the stack is realigned (LH_REALIGN). */
__attribute__((noinline)) LH_REALIGN static void *
malloc_slow(size_t n)
{
    void *(*f)(size_t) = real.malloc;
    if (unlikely(!f)) {
        return malloc_boot(n);
    }
    void *p = malloc_record(f(n), n, ENTRY_FP());
    NO_TAIL(p);
    return p;
}

/* Sampling mode's common case, an allocation that does not reach the next sample, is the
 * countdown and a jump to the real malloc: no frame of ours, so no realignment either
 * (glibc's malloc runs on whatever stack the program called it with). lh_recorder_sampling
 * is set only by lh_recorder_init, which runs only once lh_shims_resolve found malloc,
 * free, calloc and realloc: the fast paths need not test their pointers. */
static void *
malloc_sampled(size_t n)
{
    if (likely(lh_sample_skip(n))) {
        return real.malloc(n);
    }
    return malloc_slow(n);
}

/* What malloc and free jump to: the general paths, or sampling's once lh_shims_sampling
 * chose them (one indirect jump instead of testing the mode on every call). Written once,
 * in the constructor; a thread that still reads the general path records correctly. */
static void *(*malloc_path)(size_t) = malloc_slow;

/* The bootstrap arena hands out blocks only while a real function is missing: before
 * lh_shims_resolve found it, or for good when the C library has none (the optional ones).
 * After the constructor, free_sampled can skip the arena test when no block came from it
 * yet and none can come: a missing optional function keeps the test, and boot_alloc puts
 * it back if the arena is used after all (a thread that still read real.malloc as NULL). */
static int
boot_possible(void)
{
    return atomic_load(&boot_used) != 0 || !real.posix_memalign || !real.aligned_alloc ||
           !real.memalign || !real.valloc || !real.pvalloc;
}

void
lh_shims_sampling(void)
{
    if (lh_recorder_sampling) {
        malloc_path = malloc_sampled;
        __atomic_store_n(&free_path, boot_possible() ? free_sampled_boot : free_sampled,
                         __ATOMIC_RELEASE);
    }
}

__attribute__((visibility("default"))) void *
malloc(size_t n)
{
    return malloc_path(n);
}

__attribute__((noinline)) LH_REALIGN static void *
calloc_slow(size_t n, size_t m)
{
    if (unlikely(!real.calloc)) {
        lh_shims_resolve();
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
    if (p && lh_recorder_wants_alloc(n * m)) {
        lh_recorder_alloc_from(p, n * m, LH_AK_CALLOC, ENTRY_FP());
    }
    return p;
}

/* As malloc: sampling mode's common case jumps to the real calloc. */
__attribute__((visibility("default"))) void *
calloc(size_t n, size_t m)
{
    size_t total;
    if (likely(lh_recorder_sampling) && !__builtin_mul_overflow(n, m, &total) &&
        lh_sample_skip(total)) {
        return real.calloc(n, m);
    }
    return calloc_slow(n, m);
}

__attribute__((noinline)) LH_REALIGN static void
free_record(void *p)
{
    if (unlikely(!p)) {
        return;
    }
    /* The real free's first step is the block's header, most often a cache miss (churn:
     * 14 of every 40 ns of a bare pair): asked for now, it arrives while the free is
     * recorded instead of after (perf, bench/RESULTS.md). A prefetch never faults. */
    __builtin_prefetch((const char *)p - 8, 1);
    if (unlikely(is_boot(p))) {
        return;
    }
    if (unlikely(!real.free)) {
        return; /* cannot happen for a pointer we did not hand out from the arena */
    }
    if (lh_recorder_wants_free(p)) {
        lh_recorder_free(p);
    }
    real.free(p);
}

/* As malloc: sampling mode's common case, a block that was not sampled, is the filter
 * lookup and a jump to the real free; the agent's code (and the realignment) starts in
 * free_record. free(NULL) takes the same path (the real free returns at once): testing for
 * it cost two instructions on every other free. */
static void
free_sampled(void *p)
{
    if (likely(!lh_sample_maybe(p))) {
        real.free(p); /* not a sampled block: nothing to record */
        return;
    }
    free_record(p);
}

/* free_sampled once a block came from the bootstrap arena (which free_sampled would pass
 * to the real free): not in the usual run, where the arena is used before the constructor
 * or not at all, and a real function is never missing afterwards (see lh_shims_sampling). */
static void
free_sampled_boot(void *p)
{
    if (likely(!lh_sample_maybe(p)) && !is_boot(p)) {
        real.free(p);
        return;
    }
    free_record(p);
}

__attribute__((visibility("default"))) void
free(void *p)
{
    free_path(p);
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
        lh_shims_resolve();
        if (!real.realloc) {
            return p ? NULL : boot_alloc(n, 16);
        }
    }
    return lh_recorder_realloc(real.realloc, p, n, kind);
}

__attribute__((noinline)) LH_REALIGN static void *
realloc_slow(void *p, size_t n)
{
    return realloc_impl(p, n, LH_AK_REALLOC);
}

/* As malloc: in sampling mode, resizing a block that was not sampled into one that does not
 * reach the next sample (the countdown) jumps to the real realloc. */
__attribute__((visibility("default"))) void *
realloc(void *p, size_t n)
{
    if (likely(lh_recorder_sampling) && (!p || (!lh_sample_maybe(p) && !is_boot(p))) &&
        lh_sample_skip(n)) {
        return real.realloc(p, n);
    }
    return realloc_slow(p, n);
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
        lh_shims_resolve();
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
    if (rc == 0 && lh_recorder_wants_alloc(n)) {
        lh_recorder_alloc(*out, n, LH_AK_MEMALIGN);
    }
    return rc;
}

#define ALIGNED_HOOK(name, kind, ...)                                                        \
    if (unlikely(!real.name)) {                                                              \
        lh_shims_resolve();                                                                  \
        if (!real.name) {                                                                    \
            return boot_alloc(n, align);                                                     \
        }                                                                                    \
    }                                                                                        \
    void *p = real.name(__VA_ARGS__);                                                        \
    if (p && lh_recorder_wants_alloc(n)) {                                                   \
        lh_recorder_alloc(p, n, kind);                                                       \
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
    n = lh_recorder_pvalloc_size(n); /* the same block: glibc rounds up to pages too */
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
        lh_shims_resolve();
    }
    return real.malloc_usable_size ? real.malloc_usable_size(p) : 0;
}

/* -------------------------------------------------------------------------------------
 * close, close_range: the agent's own descriptors stay open (ownfd.h)
 * ----------------------------------------------------------------------------------- */

/* The system call nr with six arguments, errno set as glibc's syscall sets it. Not through
 * glibc's syscall: this library's own calls to syscall() reach the shim below (it is the
 * first definition), and it must work before the real one is resolved. */
static long
raw_syscall(long nr, const long a[6])
{
    long r;
#if defined(__x86_64__)
    /* the fourth to sixth arguments' registers (cppcheck takes these for statements) */
    // cppcheck-suppress constStatement
    register long r10 __asm__("r10") = a[3];
    // cppcheck-suppress constStatement
    register long r8 __asm__("r8") = a[4];
    // cppcheck-suppress constStatement
    register long r9 __asm__("r9") = a[5];
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(nr), "D"(a[0]), "S"(a[1]), "d"(a[2]), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = nr;
    register long x0 __asm__("x0") = a[0];
    register long x1 __asm__("x1") = a[1];
    register long x2 __asm__("x2") = a[2];
    register long x3 __asm__("x3") = a[3];
    register long x4 __asm__("x4") = a[4];
    register long x5 __asm__("x5") = a[5];
    __asm__ volatile("svc 0"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                     : "memory");
    r = x0;
#else
    if (!real.syscall) {
        lh_shims_resolve();
    }
    if (!real.syscall) {
        errno = ENOSYS;
        return -1;
    }
    return real.syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
#endif
    if ((unsigned long)r > -4096UL) {
        errno = (int)-r;
        return -1;
    }
    return r;
}

static int
close_real(int fd)
{
    if (unlikely(!real.close)) {
        long a[6] = {fd, 0, 0, 0, 0, 0};
        return (int)raw_syscall(SYS_close, a);
    }
    return real.close(fd);
}

LH_EXPORT int
close(int fd)
{
    if (unlikely(lh_ownfd_has(fd))) {
        return 0; /* the program closes what it did not open: the agent's trace */
    }
    return close_real(fd);
}

static int
close_range_real(unsigned lo, unsigned hi, int flags)
{
    if (real.close_range) {
        return real.close_range(lo, hi, flags);
    }
    long a[6] = {(long)lo, (long)hi, flags, 0, 0, 0};
    return (int)raw_syscall(SYS_close_range, a);
}

/* The range less the agent's descriptors: the pieces between them. */
LH_EXPORT int
close_range(unsigned lo, unsigned hi, int flags)
{
    int own[8];
    int n = lo <= hi ? lh_ownfd_in_range(lo, hi, own, 8) : 0;
    unsigned from = lo;
    for (int i = 0; i < n; i++) {
        if ((unsigned)own[i] > from) {
            int rc = close_range_real(from, (unsigned)own[i] - 1, flags);
            if (rc != 0) {
                return rc;
            }
        }
        from = (unsigned)own[i] + 1;
    }
    if (n > 0 && (from > hi || from == 0)) {
        return 0; /* the range ended with one of ours (or at UINT_MAX) */
    }
    return close_range_real(from, hi, flags);
}

/* closefrom: glibc's calls its own close_range inside the library, which no shim sees
 * (sshd closes everything from 3 so). */
LH_EXPORT void
closefrom(int lo)
{
    if (lo < 0) {
        lo = 0;
    }
    if (close_range((unsigned)lo, ~0U, 0) == 0) {
        return;
    }
    int own[8]; /* no close_range (Linux before 5.9): one close each, ours left out */
    int n = lh_ownfd_in_range((unsigned)lo, ~0U, own, 8);
    long top = sysconf(_SC_OPEN_MAX);
    for (int fd = lo, i = 0; fd < (top > 0 && top < 65536 ? top : 65536); fd++) {
        if (i < n && fd == own[i]) {
            i++;
        } else {
            (void)close_real(fd);
        }
    }
}

/* dup2, dup3 onto one of the agent's descriptors (those it moved up, ownfd.h): EBADF, as
 * Valgrind answers for its own (replacing the trace would send the agent's frames into the
 * program's file). */
LH_EXPORT int
dup2(int fd, int to)
{
    if (fd != to && unlikely(!lh_ownfd_may_replace(to))) {
        errno = EBADF;
        return -1;
    }
    if (unlikely(!real.dup2)) {
        lh_shims_resolve();
    }
    return real.dup2 ? real.dup2(fd, to) : (errno = ENOSYS, -1);
}

LH_EXPORT int
dup3(int fd, int to, int flags)
{
    if (unlikely(!lh_ownfd_may_replace(to))) {
        errno = EBADF;
        return -1;
    }
    if (unlikely(!real.dup3)) {
        lh_shims_resolve();
    }
    return real.dup3 ? real.dup3(fd, to, flags) : (errno = ENOSYS, -1);
}

/* syscall(2) called by the program with a number that closes or replaces descriptors
 * (SYS_close, SYS_close_range, SYS_dup2, SYS_dup3): the shims above answer; every
 * other number goes through unchanged. Up to six arguments are read, as glibc's own
 * syscall does. */
LH_EXPORT long
syscall(long nr, ...)
{
    va_list ap;
    long a[6];
    va_start(ap, nr);
    for (int i = 0; i < 6; i++) {
        a[i] = va_arg(ap, long);
    }
    va_end(ap);
    switch (nr) {
    case SYS_close:
        return close((int)a[0]);
    case SYS_close_range:
        return close_range((unsigned)a[0], (unsigned)a[1], (int)a[2]);
#ifdef SYS_dup2
    case SYS_dup2:
        return dup2((int)a[0], (int)a[1]);
#endif
    case SYS_dup3:
        return dup3((int)a[0], (int)a[1], (int)a[2]);
    default:
        return raw_syscall(nr, a);
    }
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
        lh_shims_resolve();
        if (!real.dlclose) {
            return -1;
        }
    }
    int traced = lh_recording() && !lh_tls.guard;
    if (traced) {
        lh_recorder_modules_changed(); /* a module loaded and closed between two ticks */
    }
    int rc = real.dlclose(h);
    if (traced) {
        lh_recorder_modules_changed();
    }
    return rc;
}

/* The agent registers the program's anonymous memory with a userfaultfd of its own
 * (snapwp.h); a program that registers some of that memory with its own userfaultfd gets
 * EBUSY. The agent then lets go of it and the call is made again: the program never sees
 * the agent's registration (a raw syscall(SYS_ioctl) bypasses this). */
LH_EXPORT int
ioctl(int fd, unsigned long request, ...)
{
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *); /* one argument at most, as glibc's own ioctl reads */
    va_end(ap);
    for (int tries = 0;; tries++) {
        int rc = real.ioctl ? real.ioctl(fd, request, arg)
                            : (int)syscall(SYS_ioctl, fd, request, arg);
        if (likely(rc != -1 || errno != EBUSY) || tries == 3) {
            return rc;
        }
        int saved = errno;
        if (!lh_snapwp_yield(fd, request, arg)) {
            errno = saved;
            return rc;
        }
    }
}

/* What every exec shim does first: resolve the real functions unless resolved (whether
 * the shim's own is), then end the trace file as the image is replaced (recorder.h). */
static void
before_exec(int resolved, const char *path)
{
    if (!resolved) {
        lh_shims_resolve();
    }
    lh_recorder_exec(path);
}

LH_EXPORT int
execve(const char *path, char *const argv[], char *const envp[])
{
    before_exec(real.execve != NULL, path);
    return real.execve ? real.execve(path, argv, envp) : (errno = ENOSYS, -1);
}

LH_EXPORT int
execv(const char *path, char *const argv[])
{
    before_exec(real.execv != NULL, path);
    return real.execv ? real.execv(path, argv) : (errno = ENOSYS, -1);
}

LH_EXPORT int
execvp(const char *file, char *const argv[])
{
    before_exec(real.execvp != NULL, file);
    return real.execvp ? real.execvp(file, argv) : (errno = ENOSYS, -1);
}

LH_EXPORT int
execvpe(const char *file, char *const argv[], char *const envp[])
{
    before_exec(real.execvpe != NULL, file);
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

/* -------------------------------------------------------------------------------------
 * The program's own mappings (mmaps.h): anonymous writable memory it maps is a snapshot
 * root where no block lies. The system calls are made here directly (glibc's wrappers add
 * nothing to them); the agent's own calls (lh_tls.guard: libunwind's caches) are not
 * listed, nor are glibc's, which never pass through the PLT.
 * ----------------------------------------------------------------------------------- */
static void
note_mapped(void *p, size_t len, int prot, int flags, uintptr_t caller)
{
    if (p == MAP_FAILED) {
        return;
    }
    if ((flags & MAP_ANONYMOUS) && (prot & PROT_READ) && (prot & PROT_WRITE) &&
        !lh_tls.guard && caller - alloc_text_lo >= alloc_text_len) {
        lh_mmaps_add((uintptr_t)p, len);
    } else {
        lh_mmaps_remove((uintptr_t)p, len); /* MAP_FIXED over a listed mapping */
    }
}

LH_EXPORT void *
mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    void *p = (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
    note_mapped(p, len, prot, flags, (uintptr_t)__builtin_return_address(0));
    return p;
}

LH_EXPORT void *
mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    void *p = (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
    note_mapped(p, len, prot, flags, (uintptr_t)__builtin_return_address(0));
    return p;
}

LH_EXPORT int
munmap(void *addr, size_t len)
{
    int rc = (int)syscall(SYS_munmap, addr, len);
    if (rc == 0) {
        lh_mmaps_remove((uintptr_t)addr, len);
    }
    return rc;
}

LH_EXPORT void *
mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
    void *want = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        want = va_arg(ap, void *);
        va_end(ap);
    }
    void *p = (void *)syscall(SYS_mremap, old, old_len, new_len, flags, want);
    if (p != MAP_FAILED) {
        /* The moved or resized range keeps the old one's standing. */
        int listed = lh_mmaps_listed((uintptr_t)old);
        lh_mmaps_remove((uintptr_t)old, old_len);
        if (listed) {
            lh_mmaps_add((uintptr_t)p, new_len);
        } else {
            lh_mmaps_remove((uintptr_t)p, new_len);
        }
    }
    return p;
}

/* -------------------------------------------------------------------------------------
 * Dropping root: a server's worker (nginx's, a prefork Perl server's) that becomes nobody
 * can no longer create its trace or snapshot files in root's directory; they are made
 * just before (snapshot.h). Every call that changes credentials or capabilities runs with
 * the agent's thread stopped, and starts it again after: glibc has every thread repeat a
 * setuid-family call and aborts when one fails, and a thread whose capabilities the
 * program did not change (capset, PR_SET_KEEPCAPS are per thread) would (ticker.h); and
 * unshare and setns, which may want the process to have one thread. The calls themselves
 * are passed through unchanged, errno included.
 * ----------------------------------------------------------------------------------- */
static void
before_euid(uid_t euid)
{
    if (euid != (uid_t)-1 && euid != 0 && geteuid() == 0 && lh_recording() && !lh_tls.guard) {
        lh_snapshot_before_setuid();
    }
}

#define RESOLVED(name) (real.name || (lh_shims_resolve(), real.name))

/* The real call, with the ticker out of the way; ENOSYS when the C library has none. */
#define FOLLOWED(name, ...)                                                                \
    do {                                                                                   \
        if (!RESOLVED(name)) {                                                             \
            errno = ENOSYS;                                                                \
            return -1;                                                                     \
        }                                                                                  \
        int held_ = lh_ticker_follow_begin();                                              \
        int rc_ = real.name(__VA_ARGS__);                                                  \
        int errno_ = errno;                                                                \
        lh_ticker_follow_end(held_);                                                       \
        errno = errno_;                                                                    \
        return rc_;                                                                        \
    } while (0)

LH_EXPORT int
setuid(uid_t uid)
{
    before_euid(uid);
    FOLLOWED(setuid, uid);
}

LH_EXPORT int
seteuid(uid_t euid)
{
    before_euid(euid);
    FOLLOWED(seteuid, euid);
}

LH_EXPORT int
setreuid(uid_t ruid, uid_t euid)
{
    before_euid(euid);
    FOLLOWED(setreuid, ruid, euid);
}

LH_EXPORT int
setresuid(uid_t ruid, uid_t euid, uid_t suid)
{
    before_euid(euid);
    FOLLOWED(setresuid, ruid, euid, suid);
}

LH_EXPORT int
setgid(gid_t gid)
{
    FOLLOWED(setgid, gid);
}

LH_EXPORT int
setegid(gid_t egid)
{
    FOLLOWED(setegid, egid);
}

LH_EXPORT int
setregid(gid_t rgid, gid_t egid)
{
    FOLLOWED(setregid, rgid, egid);
}

LH_EXPORT int
setresgid(gid_t rgid, gid_t egid, gid_t sgid)
{
    FOLLOWED(setresgid, rgid, egid, sgid);
}

LH_EXPORT int
setgroups(size_t n, const gid_t *groups)
{
    FOLLOWED(setgroups, n, groups);
}

/* initgroups calls the C library's setgroups directly, not through this one. */
LH_EXPORT int
initgroups(const char *user, gid_t group)
{
    FOLLOWED(initgroups, user, group);
}

/* Per thread: no other thread repeats it, but the ticker is to hold no capability the
 * program gave up (the prototype is <sys/capability.h>'s, of libcap's headers). */
int capset(void *header, const void *data);
LH_EXPORT int
capset(void *header, const void *data)
{
    FOLLOWED(capset, header, data);
}

/* A new user namespace (unshare -U, setns into one), and setns into a mount namespace,
 * want a process of one thread (EINVAL otherwise): with the ticker stopped it is, when the
 * program has no thread of its own. The ticker then starts inside the new namespaces. */
LH_EXPORT int
unshare(int flags)
{
    FOLLOWED(unshare, flags);
}

LH_EXPORT int
setns(int fd, int nstype)
{
    FOLLOWED(setns, fd, nstype);
}

/* A process that chroots (sshd's pre-authentication child into /run/sshd, a daemon into
 * its jail) could no longer create its trace nor its snapshot files by their names, which
 * lie outside: they are made now, as before a uid change. */
LH_EXPORT int
chroot(const char *path)
{
    if (lh_recording() && !lh_tls.guard && lh_recorder_own_process()) {
        if (lh_g.fd < 0) {
            (void)lh_output_open(); /* a fork child's, made on first use otherwise */
        }
        lh_snapshot_before_setuid();
        lh_sys_keep_proc(); /* the maps, threads and pagemap, read by the snapshots */
    }
    if (!RESOLVED(chroot)) {
        errno = ENOSYS;
        return -1;
    }
    return real.chroot(path);
}

LH_EXPORT void
_exit(int status)
{
    lh_recorder_finish(LH_EXIT_UNDERSCORE, status);
    lh_recorder_exit_status(LH_EXIT_UNDERSCORE, status);
    if (real.exit_) {
        real.exit_(status);
    }
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

LH_EXPORT void
_Exit(int status)
{
    lh_recorder_finish(LH_EXIT_UNDERSCORE, status);
    lh_recorder_exit_status(LH_EXIT_UNDERSCORE, status);
    if (real.Exit_) {
        real.Exit_(status);
    }
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

/* -------------------------------------------------------------------------------------
 * Signal dispositions: the program's view (stopsig.h). The agent's handlers (stop
 * signals, the snapshot signal) hold only dispositions the program left at SIG_DFL, and it
 * is SIG_DFL the program is told; what it installs is installed for real. signal, ssignal
 * and bsd_signal are one function in the C library, sysv_signal and __sysv_signal
 * another, sigaction and __sigaction a third: each name is its own dynamic symbol.
 * ----------------------------------------------------------------------------------- */
lh_sigaction_fn
lh_shims_real_sigaction(void)
{
    return real.sigaction;
}

/* Before the first allocation resolved the real functions, or while another thread does:
 * wait for it (dlsym is short), then give up with ENOSYS. */
static int
resolved_sig(void *const *fn)
{
    for (int i = 0; !*fn && i < 100000; i++) {
        if (atomic_load(&lh_g.state) == LH_ST_UNINIT) {
            lh_shims_resolve();
        } else if (atomic_load(&lh_g.state) == LH_ST_RESOLVING) {
            sched_yield();
        } else {
            break;
        }
    }
    if (!*fn) {
        errno = ENOSYS;
        return 0;
    }
    return 1;
}
#define RESOLVED_SIG(name) resolved_sig((void *const *)&real.name)
/* The functions that set a handler go through sigaction too. */
#define RESOLVED_HANDLER(name) (RESOLVED_SIG(name) && RESOLVED_SIG(sigaction))

LH_EXPORT int
sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (!RESOLVED_SIG(sigaction)) {
        return -1;
    }
    return lh_stopsig_sigaction(real.sigaction, sig, act, old);
}
LH_EXPORT int __sigaction(int sig, const struct sigaction *act, struct sigaction *old)
    __attribute__((alias("sigaction"), copy(sigaction)));

LH_EXPORT lh_sighandler_fn
signal(int sig, lh_sighandler_fn h)
{
    return RESOLVED_HANDLER(signal) ? lh_stopsig_signal(real.signal, sig, h, SA_RESTART, 1)
                                    : SIG_ERR;
}
LH_EXPORT lh_sighandler_fn ssignal(int sig, lh_sighandler_fn h)
    __attribute__((alias("signal"), copy(signal)));
LH_EXPORT lh_sighandler_fn bsd_signal(int sig, lh_sighandler_fn h)
    __attribute__((alias("signal"), copy(signal)));

LH_EXPORT lh_sighandler_fn
sysv_signal(int sig, lh_sighandler_fn h)
{
    return RESOLVED_HANDLER(sysv_signal)
               ? lh_stopsig_signal(real.sysv_signal, sig, h, SA_RESETHAND | SA_NODEFER, 0)
               : SIG_ERR;
}
LH_EXPORT lh_sighandler_fn __sysv_signal(int sig, lh_sighandler_fn h)
    __attribute__((alias("sysv_signal"), copy(sysv_signal)));

LH_EXPORT lh_sighandler_fn
sigset(int sig, lh_sighandler_fn h)
{
    return RESOLVED_HANDLER(sigset) ? lh_stopsig_sigset(real.sigset, sig, h) : SIG_ERR;
}
