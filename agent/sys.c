/* leakhound - SPDX-License-Identifier: MIT
 *
 * sys.c: raw, AS-safe system helpers for the agent (see sys.h).
 */
#include "sys.h"
#include "ownfd.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

uint64_t
lh_sys_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Time stamps from the CPU's counter: one instruction and a multiply, where the vDSO's
 * clock_gettime costs a serialized counter read and more (16% of the agent's time on the
 * churn benchmark). Used only when the kernel itself trusts the counter (clocksource "tsc";
 * aarch64's generic timer always), so it is synchronized across CPUs. The conversion is
 * fixed at init, so every time stamp of a process, including the ticker's SYNC times, comes
 * from the same scale: ordering is exact, absolute times are within calibration error
 * (about 2e-5, see CALIBRATE_NS) of CLOCK_MONOTONIC; the ticker's own waits are on
 * CLOCK_MONOTONIC itself (ticker.c). lh_sys_now_ns (sys.h) is inline: it runs twice per
 * malloc/free pair. */
lh_sys_clock_t lh_sys_clock;

#if defined(__x86_64__)
/* The calibration window. Each end is a (counter, clock) pair read as clock_gettime
 * between two counter reads, the counter taken as their midpoint, best of 5 (the pair
 * with the two counter reads closest together): each end is then known to a few ns, so
 * 0.5 ms give the scale to about 2e-5 -- what a 2 ms window of single reads gave (that
 * window was 2 ms of CPU at every process start: 1% of a 0.2 s program). */
#define CALIBRATE_NS 500000u

static void
clock_pair(uint64_t *c, uint64_t *t)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a = lh_sys_counter();
        uint64_t ns = lh_sys_clock_ns();
        uint64_t b = lh_sys_counter();
        if (b > a && b - a < best) {
            best = b - a;
            *c = a + (b - a) / 2;
            *t = ns;
        }
    }
    if (best == UINT64_MAX) { /* the counter never moved forward: no use */
        *c = 0;
        *t = lh_sys_clock_ns();
    }
}
#endif

void
lh_sys_clock_init(int mode)
{
    lh_sys_clock.use_counter = 0;
    if (mode == 0) {
        return;
    }
#if defined(__x86_64__)
    char cs[64] = {0};
    if (mode < 0) {
        ssize_t n = lh_sys_read_file("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                                     cs, sizeof cs - 1);
        if (n < 3 || memcmp(cs, "tsc", 3) != 0) {
            return;
        }
    }
    uint64_t c0, t0, c1, t1;
    clock_pair(&c0, &t0);
    do {
        t1 = lh_sys_clock_ns();
    } while (t1 - t0 < CALIBRATE_NS);
    clock_pair(&c1, &t1);
    if (c0 == 0 || c1 <= c0 || t1 <= t0) {
        return;
    }
    lh_sys_clock.mult = (uint64_t)(((unsigned __int128)(t1 - t0) << 32) / (c1 - c0));
    lh_sys_clock.counter0 = c1;
    lh_sys_clock.ns0 = t1;
    lh_sys_clock.use_counter = lh_sys_clock.mult != 0;
#elif defined(__aarch64__)
    uint64_t freq;
    __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(freq));
    if (!freq) {
        return;
    }
    lh_sys_clock.mult = (uint64_t)(((unsigned __int128)1000000000u << 32) / freq);
    lh_sys_clock.counter0 = lh_sys_counter();
    lh_sys_clock.ns0 = lh_sys_clock_ns();
    lh_sys_clock.use_counter = 1;
#endif
}

uint64_t
lh_sys_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

pid_t
lh_sys_gettid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

int
lh_sys_write_all(int fd, const void *buf, size_t len)
{
    return lh_sys_write2_all(fd, buf, len, NULL, 0);
}

int
lh_sys_write2_all(int fd, const void *a, size_t alen, const void *b, size_t blen)
{
    struct iovec iov[2] = {{(void *)a, alen}, {(void *)b, blen}};
    struct iovec *v = iov;
    int cnt = 2;
    for (;;) {
        while (cnt > 0 && v->iov_len == 0) { /* written, or empty from the start */
            v++;
            cnt--;
        }
        if (cnt == 0) {
            return 0;
        }
        long n = syscall(SYS_writev, fd, v, cnt);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -errno;
        }
        if (n == 0) {
            return -EIO;
        }
        size_t done = (size_t)n;
        while (done > 0 && cnt > 0) {
            size_t k = done < v->iov_len ? done : v->iov_len;
            v->iov_base = (char *)v->iov_base + k;
            v->iov_len -= k;
            done -= k;
            if (v->iov_len == 0) {
                v++;
                cnt--;
            }
        }
    }
}

/* Every mapping the agent makes is remembered, so that heap snapshots never scan the agent's
 * own memory (buffers, stack table, zstd's workspace) as if it were the program's. */
#define MAP_REG_MAX 1024
static struct {
    uintptr_t lo, hi;
} map_reg[MAP_REG_MAX];
static int map_reg_n;
static volatile int map_reg_lock;

static void
reg_lock(void)
{
    while (__atomic_exchange_n(&map_reg_lock, 1, __ATOMIC_ACQUIRE)) {
    }
}

static void
reg_unlock(void)
{
    __atomic_store_n(&map_reg_lock, 0, __ATOMIC_RELEASE);
}

static void *
map_flags(size_t len, int share)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, share | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) {
        return NULL;
    }
    reg_lock();
    if (map_reg_n < MAP_REG_MAX) {
        map_reg[map_reg_n].lo = (uintptr_t)p;
        map_reg[map_reg_n].hi = (uintptr_t)p + len;
        map_reg_n++;
    }
    reg_unlock();
    return p;
}

void *
lh_sys_map(size_t len)
{
    return map_flags(len, MAP_PRIVATE);
}

void *
lh_sys_map_shared(size_t len)
{
    return map_flags(len, MAP_SHARED);
}

void
lh_sys_unmap(void *p, size_t len)
{
    if (!p) {
        return;
    }
    reg_lock();
    for (int i = 0; i < map_reg_n; i++) {
        if (map_reg[i].lo == (uintptr_t)p) {
            map_reg[i] = map_reg[--map_reg_n];
            break;
        }
    }
    reg_unlock();
    munmap(p, len);
}

void *
lh_sys_zalloc(void *opaque, size_t size)
{
    (void)opaque;
    size_t total = size + 16;
    uint8_t *p = lh_sys_map(total);
    if (!p) {
        return NULL;
    }
    memcpy(p, &total, sizeof total);
    return p + 16;
}

void
lh_sys_zfree(void *opaque, void *ptr)
{
    (void)opaque;
    if (ptr) {
        uint8_t *b = (uint8_t *)ptr - 16;
        size_t total;
        memcpy(&total, b, sizeof total);
        lh_sys_unmap(b, total);
    }
}

int
lh_sys_is_agent_memory(uintptr_t lo, uintptr_t hi)
{
    /* Read without the lock: called in a snapshot child, where no other thread exists. */
    for (int i = 0; i < map_reg_n; i++) {
        if (lo < map_reg[i].hi && hi > map_reg[i].lo) {
            return 1;
        }
    }
    return 0;
}

int
lh_sys_pm_each(int fd, uint64_t lo, uint64_t hi, uint64_t mask,
               void (*fn)(void *ctx, uint64_t start, uint64_t end), void *ctx)
{
    lh_pm_region_t v[64]; /* of this call: the ticker and a program thread may both scan */
    uint64_t start = lo;
    while (start < hi) {
        lh_pm_scan_t a;
        memset(&a, 0, sizeof a);
        a.size = sizeof a;
        a.start = start;
        a.end = hi;
        a.vec = (uint64_t)(uintptr_t)v;
        a.vec_len = sizeof v / sizeof *v;
        a.category_mask = mask;
        a.return_mask = mask;
        long n = syscall(SYS_ioctl, fd, LH_PM_SCAN, &a);
        if (n < 0) {
            return -1;
        }
        for (long k = 0; k < n; k++) {
            fn(ctx, v[k].start, v[k].end);
        }
        if (a.walk_end >= hi || a.walk_end <= start) {
            break;
        }
        start = a.walk_end;
    }
    return 0;
}

static void
add_bytes(void *ctx, uint64_t start, uint64_t end)
{
    *(uint64_t *)ctx += end - start;
}

uint64_t
lh_sys_agent_resident(void)
{
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) {
        return 0;
    }
    unsigned char vec[1024];
    uint64_t pages = 0, bytes = 0;
    /* The kernel's page-table walk where it has PAGEMAP_SCAN: mincore costs a page-cache
     * lookup for each page of a shared mapping (the snapshot tables: 170 MB, mostly never
     * touched) and more than the walk on the agent's private ones too. perf, 10 s of
     * bench/snapcost with --snapshot-every 1s: 117-134 ms of mincore, 51-69 ms of
     * PAGEMAP_SCAN (mincore for the private ones only: 75-87 ms). Opened for each call: a
     * program may close descriptors it does not know of. */
    int fd = lh_sys_open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    /* One range at a time, outside the lock: the lock is a spinlock that a clone or fork
     * must be able to take at once (lh_sys_reg_hold). A range unmapped meanwhile makes
     * mincore fail (ENOMEM): it is then left out. */
    for (int i = 0;; i++) {
        reg_lock();
        int more = i < map_reg_n;
        uintptr_t rlo = more ? map_reg[i].lo : 0, rhi = more ? map_reg[i].hi : 0;
        reg_unlock();
        if (!more) {
            break;
        }
        uintptr_t lo = rlo & ~(uintptr_t)(page - 1);
        if (fd >= 0) {
            /* the pages mapped in this process's page tables: what statm counts */
            uintptr_t end = (rhi + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
            if (lh_sys_pm_each(fd, lo, end, LH_PAGE_IS_PRESENT, add_bytes, &bytes) == 0 ||
                (errno != ENOTTY && errno != EINVAL)) {
                continue; /* done, or unmapped meanwhile */
            }
            close(fd); /* not this kernel: mincore from now on */
            fd = -1;
        }
        while (lo < rhi) {
            size_t n = (rhi - lo + (uintptr_t)page - 1) / (uintptr_t)page;
            n = n < sizeof vec ? n : sizeof vec;
            if (mincore((void *)lo, n * (size_t)page, vec) != 0) {
                break;
            }
            /* Eight pages per step (the ticker reads this every RSS sample, over hundreds
             * of MiB the agent reserved): bit 0 of each byte is "resident"; the masked
             * bytes are 0 or 1, and the multiply sums them into the top byte. */
            size_t k = 0;
            for (; k + 8 <= n; k += 8) {
                uint64_t w;
                memcpy(&w, vec + k, 8);
                pages += ((w & 0x0101010101010101ull) * 0x0101010101010101ull) >> 56;
            }
            for (; k < n; k++) {
                pages += vec[k] & 1;
            }
            lo += n * (uintptr_t)page;
        }
    }
    if (fd >= 0) {
        close(fd);
    }
    return bytes + pages * (uint64_t)page;
}

void
lh_sys_reg_hold(void)
{
    reg_lock();
}

void
lh_sys_reg_release(void)
{
    reg_unlock();
}

int
lh_sys_agent_range(int i, uintptr_t *lo, uintptr_t *hi)
{
    if (i < 0 || i >= map_reg_n) {
        return 0;
    }
    *lo = map_reg[i].lo;
    *hi = map_reg[i].hi;
    return 1;
}

size_t
lh_sys_parse_hex(const char *s, uintptr_t *v)
{
    size_t i = 0;
    *v = 0;
    for (;; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) {
            return i;
        }
        *v = *v << 4 | (uintptr_t)d;
    }
}

static size_t
append(char *buf, size_t at, size_t cap, const char *s)
{
    while (s && *s && at < cap) {
        buf[at++] = *s++;
    }
    return at;
}

void
lh_sys_log(const char *a, const char *b, const char *c)
{
    char buf[512];
    size_t n = append(buf, 0, sizeof buf - 1, "<lh>: ");
    n = append(buf, n, sizeof buf - 1, a);
    n = append(buf, n, sizeof buf - 1, b);
    n = append(buf, n, sizeof buf - 1, c);
    buf[n++] = '\n';
    int saved = errno;
    (void)lh_sys_write_all(2, buf, n);
    errno = saved;
}

size_t
lh_sys_fmt_u64(char *buf, uint64_t v)
{
    char tmp[21];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++) {
        buf[i] = tmp[n - 1 - i];
    }
    return n;
}

size_t
lh_sys_strlcpy(char *dst, const char *src, size_t dst_len)
{
    size_t n = 0;
    while (src && src[n] && n + 1 < dst_len) {
        dst[n] = src[n];
        n++;
    }
    dst[n] = '\0';
    return n;
}

static int proc_dir = -1; /* lh_sys_keep_proc */

void
lh_sys_keep_proc(void)
{
    if (proc_dir < 0) {
        int fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        proc_dir = fd >= 0 ? lh_ownfd_keep(fd) : -1;
    }
}

int
lh_sys_open(const char *path, int flags)
{
    if (proc_dir >= 0 && strncmp(path, "/proc/", 6) == 0) {
        return openat(proc_dir, path + 6, flags);
    }
    return open(path, flags);
}

ssize_t
lh_sys_read_file(const char *path, char *buf, size_t len)
{
    int fd = lh_sys_open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, buf + got, len - got);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        got += (size_t)n;
    }
    close(fd);
    return (ssize_t)got;
}
