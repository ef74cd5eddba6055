/* leakhound - SPDX-License-Identifier: MIT
 *
 * snapwp.c: pages written since the last delta snapshot, from userfaultfd write protection
 * and PAGEMAP_SCAN (see snapwp.h).
 */
#include "snapwp.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ownfd.h"
#include "sys.h"

/* The kernel ABI (userfaultfd.h of Linux 6.7; PAGEMAP_SCAN's is in sys.h): spelled out
 * here because the C library's headers may predate it (this machine's do). */
#define WP_UFFD_USER_MODE_ONLY 1
#define WP_UFFD_API 0xAAull
#define WP_FEATURE_UNPOPULATED (1ull << 13) /* protect pages never touched too */
#define WP_FEATURE_ASYNC (1ull << 15)       /* a write just clears the protection */
#define WP_REGISTER_MODE_WP 2ull
#define WP_UFFDIO_API _IOWR(0xAA, 0x3F, struct wp_uffdio_api)
#define WP_UFFDIO_REGISTER _IOWR(0xAA, 0x00, struct wp_uffdio_register)
#define WP_UFFDIO_UNREGISTER _IOR(0xAA, 0x01, struct wp_uffdio_range)
#define WP_UFFDIO_WRITEPROTECT _IOWR(0xAA, 0x06, struct wp_uffdio_writeprotect)

struct wp_uffdio_api {
    uint64_t api, features, ioctls;
};
struct wp_uffdio_register {
    uint64_t start, len, mode, ioctls;
};
struct wp_uffdio_range {
    uint64_t start, len;
};
struct wp_uffdio_writeprotect {
    struct wp_uffdio_range range;
    uint64_t mode; /* 0: unprotect */
};

#define MAX_LIST (1u << 18) /* ranges in one list: more, and everything counts as written */
#define VEC 4096            /* ranges per PAGEMAP_SCAN call */
#define MAX_TRACKED 65536   /* mappings of one scan (snapshot.c's MAX_REGIONS) */
#define MAPS_BYTES (8u << 20)

/* Shared (the parent writes it at a mark, the table's owner child empties it). */
typedef struct shared {
    int pid;         /* the process it belongs to */
    int all;         /* A is "everything": a mark was incomplete */
    uint32_t cur;    /* acc[cur] is A */
    uint64_t n[2];
    uint64_t reg_lo, reg_hi; /* span of what was registered */
    int no_register;         /* the program registers memory itself: the agent no more */
} shared_t;

#define SHARED_HEAD ((sizeof(shared_t) + 4095) & ~(size_t)4095)
#define SHARED_BYTES (SHARED_HEAD + 2 * (size_t)MAX_LIST * sizeof(lh_wp_range_t))

typedef struct tracked {
    uint64_t lo, hi;
    uint8_t ok;    /* the kernel tracked it since the mark */
    uint8_t eperm; /* not registered: register it for the next snapshot */
} tracked_t;

static shared_t *sh;
static lh_wp_range_t *acc[2];
static int uffd = -1, pagemap = -1;
static int owner_pid;
/* Private (each process, and each child, has its own copy). */
static lh_wp_range_t *list_a, *list_b; /* the mark's list, then the child's R and D */
static lh_pm_region_t *vec;
static tracked_t *tracked;
static char *maps;

/* The child's state. */
static int active, all;
static pid_t parent;
static size_t n_r, n_d, n_tracked, at_d, at_t;
static const lh_wp_range_t *d;

/* ioctl as a system call: the agent's own calls never go through its ioctl shim. */
static long
wp_ioctl(int fd, unsigned long request, void *arg)
{
    return syscall(SYS_ioctl, fd, request, arg);
}

size_t
lh_snapwp_union(const lh_wp_range_t *a, size_t na, const lh_wp_range_t *b, size_t nb,
                lh_wp_range_t *out, size_t cap)
{
    size_t i = 0, j = 0, n = 0;
    while (i < na || j < nb) {
        lh_wp_range_t r = j >= nb || (i < na && a[i].lo <= b[j].lo) ? a[i++] : b[j++];
        if (n && r.lo <= out[n - 1].hi) {
            out[n - 1].hi = r.hi > out[n - 1].hi ? r.hi : out[n - 1].hi;
            continue;
        }
        if (n == cap) {
            return (size_t)-1;
        }
        out[n++] = r;
    }
    return n;
}

/* Appends [lo, hi) to a sorted list, merging with its last range; 0 when full. */
static int
append(lh_wp_range_t *l, size_t *n, uint64_t lo, uint64_t hi)
{
    if (*n && lo <= l[*n - 1].hi) {
        l[*n - 1].hi = hi > l[*n - 1].hi ? hi : l[*n - 1].hi;
        return 1;
    }
    if (*n == MAX_LIST) {
        return 0;
    }
    l[(*n)++] = (lh_wp_range_t){lo, hi};
    return 1;
}

/* The pages of [lo, hi) written since their last protection appended to l: with protect,
 * protected again (what is not registered is skipped); else, and not present ones too
 * (a page zapped since the table's snapshot is either still not present or written), and
 * EPERM for what is not registered. 0, -1 (errno) on failure, 1 when l is full. */
static int
scan(uint64_t lo, uint64_t hi, int protect, lh_wp_range_t *l, size_t *n)
{
    uint64_t start = lo;
    while (start < hi) {
        lh_pm_scan_t a;
        memset(&a, 0, sizeof a);
        a.size = sizeof a;
        a.flags = protect ? LH_PM_WP_MATCHING : LH_PM_CHECK_WPASYNC;
        a.start = start;
        a.end = hi;
        a.vec = (uint64_t)(uintptr_t)vec;
        a.vec_len = VEC;
        if (protect) {
            /* written only: protecting a page never touched would make the kernel fill
             * the range with page tables of markers (and every clone copy them) */
            a.category_mask = LH_PAGE_IS_WRITTEN;
            a.return_mask = LH_PAGE_IS_WRITTEN;
        } else {
            /* written, or not present (inverted): a page MADV_DONTNEED zapped reads as
             * zeros now, and zapping does not count as a write */
            a.category_inverted = LH_PAGE_IS_PRESENT;
            a.category_anyof_mask = LH_PAGE_IS_WRITTEN | LH_PAGE_IS_PRESENT;
            a.return_mask = LH_PAGE_IS_WRITTEN | LH_PAGE_IS_PRESENT;
        }
        long r = wp_ioctl(pagemap, LH_PM_SCAN, &a);
        if (r < 0) {
            return -1;
        }
        for (long i = 0; i < r; i++) {
            if (!append(l, n, vec[i].start, vec[i].end)) {
                return 1;
            }
        }
        if (a.walk_end >= hi) {
            break;
        }
        if (a.walk_end <= start) {
            errno = EIO; /* no progress: never expected */
            return -1;
        }
        start = a.walk_end;
    }
    return 0;
}

int
lh_snapwp_prepare(void)
{
    int me = (int)syscall(SYS_getpid);
    if (owner_pid == me) {
        return sh ? 0 : -1;
    }
    if (owner_pid) {
        /* A forked copy: the descriptors and the shared lists are its parent's (the
         * pagemap descriptor reads the parent's memory). Let go and start over. */
        lh_ownfd_close(uffd);
        lh_ownfd_close(pagemap);
        if (sh) {
            lh_sys_unmap(sh, SHARED_BYTES);
        }
        uffd = pagemap = -1;
        sh = NULL;
    }
    owner_pid = me;
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | WP_UFFD_USER_MODE_ONLY);
    if (fd < 0) {
        return -1;
    }
    struct wp_uffdio_api api = {WP_UFFD_API, WP_FEATURE_ASYNC | WP_FEATURE_UNPOPULATED, 0};
    int pm = -1;
    if (wp_ioctl(fd, WP_UFFDIO_API, &api) != 0 ||
        (pm = lh_sys_open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)) < 0) {
        close(fd);
        return -1;
    }
    if (!vec) { /* private buffers: once, kept by forked copies */
        list_a = lh_sys_map((size_t)MAX_LIST * sizeof *list_a);
        list_b = lh_sys_map((size_t)MAX_LIST * sizeof *list_b);
        tracked = lh_sys_map((size_t)MAX_TRACKED * sizeof *tracked);
        maps = lh_sys_map(MAPS_BYTES);
        vec = lh_sys_map(VEC * sizeof *vec);
    }
    uint8_t *p = lh_sys_map_shared(SHARED_BYTES);
    if (!list_a || !list_b || !tracked || !maps || !vec || !p) {
        close(fd);
        close(pm);
        return -1;
    }
    /* Probe: PAGEMAP_SCAN is Linux 6.7+ (ENOTTY before). */
    size_t n = 0;
    uint64_t here = (uint64_t)(uintptr_t)vec & ~(uint64_t)4095;
    pagemap = pm;
    if (scan(here, here + 4096, 1, list_a, &n) != 0) {
        close(fd);
        close(pm);
        pagemap = -1;
        lh_sys_unmap(p, SHARED_BYTES);
        return -1;
    }
    uffd = lh_ownfd_keep(fd);
    pagemap = lh_ownfd_keep(pagemap);
    acc[0] = (lh_wp_range_t *)(p + SHARED_HEAD);
    acc[1] = acc[0] + MAX_LIST;
    sh = (shared_t *)p; /* zeroed: A empty, nothing registered */
    sh->pid = me;
    return 0;
}

int
lh_snapwp_mark(void)
{
    if (!sh || sh->pid != (int)syscall(SYS_getpid)) {
        return 0;
    }
    size_t n = 0;
    int r = sh->reg_lo < sh->reg_hi ? scan(sh->reg_lo, sh->reg_hi, 1, list_a, &n) : 0;
    uint32_t next = sh->cur ^ 1;
    size_t u = r == 0 ? lh_snapwp_union(acc[sh->cur], sh->n[sh->cur], list_a, n, acc[next],
                                        MAX_LIST)
                      : (size_t)-1;
    if (u == (size_t)-1) {
        sh->all = 1; /* what this mark protected is not all listed: read everything */
        return 1;
    }
    sh->n[next] = u;
    sh->cur = next;
    return 1;
}

int
lh_snapwp_begin(int marked, pid_t pid)
{
    active = 0;
    parent = pid;
    if (!marked || !sh || sh->pid != (int)pid) {
        return 0;
    }
    all = sh->all;
    n_r = n_tracked = at_d = at_t = 0;
    n_d = 0;
    d = NULL;
    active = 1;
    return 1;
}

void
lh_snapwp_region(uintptr_t lo, uintptr_t hi)
{
    if (!active || all) {
        return;
    }
    if (n_tracked == MAX_TRACKED) {
        all = 1;
        return;
    }
    tracked_t *t = &tracked[n_tracked++];
    t->lo = lo;
    t->hi = hi;
    t->eperm = 0;
    int r = scan(lo, hi, 0, list_a, &n_r);
    t->ok = r == 0;
    if (r < 0 && errno == EPERM) {
        t->eperm = 1;
    } else if (r > 0) {
        all = 1;
    }
}

/* Whether every tracked mapping is still in the parent's maps as it was at the clone. */
static void
check_maps(void)
{
    char path[40] = "/proc/";
    size_t k = 6 + lh_sys_fmt_u64(path + 6, (uint64_t)parent);
    lh_sys_strlcpy(path + k, "/maps", sizeof path - k);
    ssize_t n = lh_sys_read_file(path, maps, MAPS_BYTES - 1);
    if (n <= 0 || (size_t)n >= MAPS_BYTES - 1) {
        all = 1;
        return;
    }
    maps[n] = '\0';
    const char *p = maps;
    size_t t = 0;
    while (*p && t < n_tracked) {
        uintptr_t lo, hi;
        p += lh_sys_parse_hex(p, &lo);
        p += *p == '-';
        p += lh_sys_parse_hex(p, &hi);
        for (; t < n_tracked && tracked[t].lo < lo; t++) {
            tracked[t].ok = 0; /* no line starts there now */
        }
        if (t < n_tracked && tracked[t].lo == lo) {
            tracked[t].ok &= hi == tracked[t].hi;
            t++;
        }
        const char *eol = strchr(p, '\n');
        if (!eol) {
            break;
        }
        p = eol + 1;
    }
    for (; t < n_tracked; t++) {
        tracked[t].ok = 0;
    }
}

void
lh_snapwp_check(void)
{
    if (!active || all) {
        return;
    }
    check_maps();
    for (size_t t = 0; t < n_tracked; t++) {
        if (!tracked[t].eperm || __atomic_load_n(&sh->no_register, __ATOMIC_ACQUIRE)) {
            continue;
        }
        /* Untracked so far: written, all of it; tracked from the next mark on (a mapping
         * of another userfaultfd, or one the kernel refuses, stays untracked). */
        struct wp_uffdio_register reg = {tracked[t].lo, tracked[t].hi - tracked[t].lo,
                                         WP_REGISTER_MODE_WP, 0};
        if (wp_ioctl(uffd, WP_UFFDIO_REGISTER, &reg) == 0) {
            if (sh->reg_lo >= sh->reg_hi || tracked[t].lo < sh->reg_lo) {
                sh->reg_lo = tracked[t].lo;
            }
            if (tracked[t].hi > sh->reg_hi) {
                sh->reg_hi = tracked[t].hi;
            }
        }
    }
    if (all) {
        return;
    }
    size_t u = lh_snapwp_union(acc[sh->cur], sh->n[sh->cur], list_a, n_r, list_b, MAX_LIST);
    if (u == (size_t)-1) {
        all = 1;
        return;
    }
    d = list_b;
    n_d = u;
}

int
lh_snapwp_clean(uintptr_t lo, uintptr_t hi)
{
    if (!active || all || !d) {
        return 0;
    }
    while (at_t < n_tracked && tracked[at_t].hi <= lo) {
        at_t++;
    }
    if (at_t == n_tracked || tracked[at_t].lo > lo || tracked[at_t].hi < hi ||
        !tracked[at_t].ok) {
        return 0;
    }
    while (at_d < n_d && d[at_d].hi <= lo) {
        at_d++;
    }
    return at_d == n_d || d[at_d].lo >= hi;
}

void
lh_snapwp_end(int committed)
{
    /* A committed table is newer than the last mark: what was written since shows at the
     * next one. The table's owner alone writes here (the parent marks only a free table). */
    if (committed && sh && sh->pid == (int)parent) {
        sh->n[sh->cur] = 0;
        sh->all = 0;
    }
    active = 0;
}

/* Protection cleared first (unregistering may leave the bits in the page tables, where
 * the program's own write protection would find them), then the registration. A snapshot
 * child that finds the mapping unregistered reads it all (EPERM), as it reads any mapping
 * it cannot track. */
static void
let_go(void *yielded, uint64_t start, uint64_t end)
{
    struct wp_uffdio_writeprotect un = {{start, end - start}, 0};
    struct wp_uffdio_range range = {start, end - start};
    (void)wp_ioctl(uffd, WP_UFFDIO_WRITEPROTECT, &un);
    *(int *)yielded |= wp_ioctl(uffd, WP_UFFDIO_UNREGISTER, &range) == 0;
}

int
lh_snapwp_yield(int fd, unsigned long request, const void *arg)
{
    if (request != WP_UFFDIO_REGISTER || !arg || fd == uffd || !sh ||
        sh->pid != (int)syscall(SYS_getpid)) {
        return 0;
    }
    /* From now on no snapshot child registers anything (one may be doing it right now:
     * the caller then fails again, and tries again). */
    __atomic_store_n(&sh->no_register, 1, __ATOMIC_RELEASE);
    struct wp_uffdio_register want;
    memcpy(&want, arg, sizeof want);
    uint64_t lo = want.start & ~(uint64_t)4095;
    uint64_t hi = (want.start + want.len + 4095) & ~(uint64_t)4095;
    if (hi <= lo) {
        return 0;
    }
    /* The mappings registered for asynchronous write protection in that range: the
     * agent's (a program's own registration in that mode would be listed too; none is
     * known to use it). */
    int yielded = 0;
    (void)lh_sys_pm_each(pagemap, lo, hi, LH_PAGE_IS_WPALLOWED, let_go, &yielded);
    return yielded;
}
