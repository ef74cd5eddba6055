/* leakhound - SPDX-License-Identifier: MIT
 *
 * sys.c: raw, AS-safe system helpers for the agent (see sys.h).
 */
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

uint64_t
lh_sys_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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
    const char *p = buf;
    while (len > 0) {
        long n = syscall(SYS_write, fd, p, len);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -errno;
        }
        if (n == 0) {
            return -EIO;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

void *
lh_sys_map(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void
lh_sys_unmap(void *p, size_t len)
{
    if (p) {
        munmap(p, len);
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

ssize_t
lh_sys_read_file(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
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
