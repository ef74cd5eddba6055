/* leakhound - SPDX-License-Identifier: MIT
 *
 * ownfd.c: the agent's long-lived file descriptors (ownfd.h).
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ownfd.h"

#define N_OWNFD 16

/* -1: a free slot. The trace, two reserved snapshot files, userfaultfd, pagemap,
 * libunwind's pipe: 7. */
static atomic_int owned[N_OWNFD] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                    -1, -1, -1, -1, -1, -1, -1, -1};

int
lh_ownfd_add(int fd)
{
    for (int i = 0; i < N_OWNFD; i++) {
        int free_slot = -1;
        if (atomic_compare_exchange_strong(&owned[i], &free_slot, fd)) {
            return 0;
        }
    }
    return -1;
}

int
lh_ownfd_keep(int fd)
{
    struct rlimit rl;
    if (fd >= 0 && getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur >= 64) {
        rlim_t low = rl.rlim_cur == RLIM_INFINITY ? 768 : rl.rlim_cur / 4 * 3;
        int moved = fcntl(fd, F_DUPFD_CLOEXEC, (int)(low < 768 ? low : 768));
        if (moved >= 0) {
            (void)syscall(SYS_close, fd);
            fd = moved;
        }
    }
    (void)lh_ownfd_add(fd);
    return fd;
}

int
lh_ownfd_has(int fd)
{
    if (fd < 0) {
        return 0;
    }
    for (int i = 0; i < N_OWNFD; i++) {
        if (atomic_load_explicit(&owned[i], memory_order_relaxed) == fd) {
            return 1;
        }
    }
    return 0;
}

int
lh_ownfd_may_replace(int fd)
{
    return fd < 64 || !lh_ownfd_has(fd);
}

void
lh_ownfd_forget(int fd)
{
    for (int i = 0; fd >= 0 && i < N_OWNFD; i++) {
        int f = fd;
        (void)atomic_compare_exchange_strong(&owned[i], &f, -1);
    }
}

void
lh_ownfd_close(int fd)
{
    if (fd < 0) {
        return;
    }
    lh_ownfd_forget(fd);
    (void)syscall(SYS_close, fd);
}

int
lh_ownfd_in_range(unsigned lo, unsigned hi, int *out, int n)
{
    int k = 0;
    for (int i = 0; i < N_OWNFD; i++) {
        int fd = atomic_load_explicit(&owned[i], memory_order_relaxed);
        if (fd >= 0 && (unsigned)fd >= lo && (unsigned)fd <= hi && k < n) {
            int j = k++;
            while (j > 0 && out[j - 1] > fd) { /* insertion: a handful of entries */
                out[j] = out[j - 1];
                j--;
            }
            out[j] = fd;
        }
    }
    return k;
}

uint64_t
lh_ownfd_open_mask(void)
{
    uint64_t m = 0;
    for (int fd = 0; fd < 64; fd++) {
        if (fcntl(fd, F_GETFD) >= 0) {
            m |= 1ull << fd;
        }
    }
    return m;
}

void
lh_ownfd_add_mask(uint64_t mask)
{
    for (int fd = 0; fd < 64; fd++) {
        if (mask >> fd & 1) {
            (void)lh_ownfd_add(fd);
        }
    }
}
