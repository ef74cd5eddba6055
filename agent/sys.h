/* leakhound - SPDX-License-Identifier: MIT
 *
 * sys.h: the agent's raw system helpers. Everything here is AS-safe: raw syscalls, no
 * stdio, no malloc, no locale. Hooks may only call functions marked AS-safe.
 */
#ifndef LH_SYS_H
#define LH_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/types.h>

/* PAGEMAP_SCAN, the ioctl of /proc/PID/pagemap that lists pages by category (Linux 6.7+,
 * include/uapi/linux/fs.h), spelled out: the C library's headers may predate it (this
 * machine's do). */
typedef struct lh_pm_region {
    uint64_t start, end, categories;
} lh_pm_region_t;
typedef struct lh_pm_scan {
    uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages, category_inverted,
        category_mask, category_anyof_mask, return_mask;
} lh_pm_scan_t;
#define LH_PM_SCAN _IOWR('f', 16, lh_pm_scan_t)
#define LH_PM_WP_MATCHING (1ull << 0)   /* protect what matches (userfaultfd async WP) */
#define LH_PM_CHECK_WPASYNC (1ull << 1) /* EPERM where a mapping is not so registered */
#define LH_PAGE_IS_WPALLOWED (1ull << 0)
#define LH_PAGE_IS_WRITTEN (1ull << 1)
#define LH_PAGE_IS_PRESENT (1ull << 3)

/* PAGEMAP_SCAN of [lo, hi) (page-aligned) on fd, a /proc/PID/pagemap: fn(ctx, start, end)
 * for each run of pages that have every category in mask, in increasing order. 0, or -1
 * (errno; ENOTTY before Linux 6.7) with the runs before the failure reported. AS-safe. */
int lh_sys_pm_each(int fd, uint64_t lo, uint64_t hi, uint64_t mask,
                   void (*fn)(void *ctx, uint64_t start, uint64_t end), void *ctx);

/* Chooses the time source, once, before any time stamp is taken: mode 0 = clock_gettime,
 * 1 = the CPU counter, -1 = the counter when the kernel's clocksource is "tsc". */
void lh_sys_clock_init(int mode);
/* CLOCK_MONOTONIC in ns through clock_gettime. AS-safe. */
uint64_t lh_sys_clock_ns(void);

/* The time source chosen by lh_sys_clock_init (see sys.c): the CPU's counter, converted as
 * ns = ns0 + ((counter - counter0) * mult) >> 32, or clock_gettime. */
typedef struct lh_sys_clock {
    int use_counter;
    uint64_t counter0, ns0, mult;
} lh_sys_clock_t;
extern lh_sys_clock_t lh_sys_clock;

static inline uint64_t
lh_sys_counter(void)
{
#if defined(__x86_64__)
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    return 0;
#endif
}

/* Monotonic time in ns on the CLOCK_MONOTONIC scale (see sys.c). AS-safe. */
static inline uint64_t
lh_sys_now_ns(void)
{
    if (__builtin_expect(lh_sys_clock.use_counter, 1)) {
        uint64_t d = lh_sys_counter() - lh_sys_clock.counter0;
        if ((int64_t)d < 0) {
            d = 0; /* a CPU whose counter lags by a few cycles */
        }
        return lh_sys_clock.ns0 + (uint64_t)(((unsigned __int128)d * lh_sys_clock.mult) >> 32);
    }
    return lh_sys_clock_ns();
}
/* Spreads a 64-bit value over all bits (MurmurHash3's finalizer): hash table slots and the
 * last step of a hash. Pure; AS-safe. */
static inline uint64_t
lh_sys_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

/* CLOCK_REALTIME in ns. AS-safe. */
uint64_t lh_sys_realtime_ns(void);
/* The calling thread's kernel tid. AS-safe. */
pid_t lh_sys_gettid(void);
/* Writes all of buf, retrying on EINTR and short writes. Returns 0 or -errno. AS-safe and
 * not a cancellation point (raw syscall), so a cancelled thread cannot die holding a lock. */
int lh_sys_write_all(int fd, const void *buf, size_t len);
/* The same for a then b in one writev (a frame's header and its records where they lie,
 * not copied behind the header first). AS-safe, not a cancellation point. */
int lh_sys_write2_all(int fd, const void *a, size_t alen, const void *b, size_t blen);
/* Anonymous private mapping of len bytes, NULL on failure. AS-safe. */
void *lh_sys_map(size_t len);
/* The same, shared: what a copy-on-write child writes there, its parent and the next
 * child see (snapshot.c's per-page sums). Agent memory too. AS-safe. */
void *lh_sys_map_shared(size_t len);
void lh_sys_unmap(void *p, size_t len);
/* An allocator for zstd's ZSTD_customMem, on lh_sys_map: zstd's workspace never comes
 * from the host's heap. AS-safe. */
void *lh_sys_zalloc(void *opaque, size_t size);
void lh_sys_zfree(void *opaque, void *ptr);
/* Nonzero when [lo, hi) overlaps a mapping made by lh_sys_map (the agent's own memory). */
int lh_sys_is_agent_memory(uintptr_t lo, uintptr_t hi);
/* The i-th mapping of the agent's own memory in *lo, *hi: 1, or 0 past the last. Not
 * locked: for the snapshot child, where no other thread runs. AS-safe. */
int lh_sys_agent_range(int i, uintptr_t *lo, uintptr_t *hi);
/* Bytes of the agent's own mappings that are resident now (PAGEMAP_SCAN, or mincore
 * before Linux 6.7): what the process's RSS holds of the agent and not of the program.
 * AS-safe. */
uint64_t lh_sys_agent_resident(void);
/* The registry of the agent's mappings is held across every clone and fork, and released
 * after it in the parent and in the child: a child must not inherit it locked by a thread
 * that does not exist there (the snapshot child would spin forever in its first
 * lh_sys_unmap, a forked program child in its first lh_sys_map). Spinlock, leaf: take it
 * last, with no other lock taken while it is held. AS-safe. */
void lh_sys_reg_hold(void);
void lh_sys_reg_release(void);
/* "<lh>: " + the NULL-terminated list of strings + "\n" to stderr in one write. AS-safe. */
void lh_sys_log(const char *a, const char *b, const char *c);
/* Lower-case hex digits at s into *v (a /proc/PID/maps address); returns how many were
 * read (0: none, *v = 0). AS-safe. */
size_t lh_sys_parse_hex(const char *s, uintptr_t *v);
/* Decimal formatting; returns the length written (no NUL). buf needs 21 bytes. AS-safe. */
size_t lh_sys_fmt_u64(char *buf, uint64_t v);
/* Bounded string copy that always terminates (dst_len > 0). Returns the length. AS-safe. */
size_t lh_sys_strlcpy(char *dst, const char *src, size_t dst_len);
/* open(path, flags), except that a path under /proc/ is opened from the /proc kept by
 * lh_sys_keep_proc once it has been: a process that chroots (sshd's pre-authentication
 * child in /run/sshd) has no /proc by name, and the agent still reads its maps, its
 * threads and its pagemap. AS-safe. */
int lh_sys_open(const char *path, int flags);
/* Keeps a descriptor of /proc (ownfd.h) for lh_sys_open: called before a chroot. AS-safe. */
void lh_sys_keep_proc(void);
/* Reads up to len bytes of a whole small file (e.g. /proc/self/cmdline), through
 * lh_sys_open. Returns bytes read or -1. AS-safe. */
ssize_t lh_sys_read_file(const char *path, char *buf, size_t len);

#endif /* LH_SYS_H */
