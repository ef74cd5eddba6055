/* leakhound - SPDX-License-Identifier: MIT
 *
 * threadsp.c: a sleeping thread's stack pointer from /proc (see threadsp.h).
 */
#include "threadsp.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sys.h"

/* One thread as the child needs it. */
typedef struct known_sp {
    uint64_t tid;
    uint64_t sp;
} known_sp_t;

static lh_threadsp_t pre[LH_THREADSP_MAX]; /* parent: read before the clone */
static int n_pre;
static known_sp_t known[LH_THREADSP_MAX]; /* parent: what it sends; child: what it got */
static int n_known;

/* "/proc/self/task/TID/" + leaf into out. */
static void
task_path(char *out, size_t len, uint32_t tid, const char *leaf)
{
    char num[21];
    num[lh_sys_fmt_u64(num, tid)] = '\0';
    size_t k = lh_sys_strlcpy(out, "/proc/self/task/", len);
    k += lh_sys_strlcpy(out + k, num, len > k ? len - k : 0);
    k += lh_sys_strlcpy(out + k, "/", len > k ? len - k : 0);
    lh_sys_strlcpy(out + k, leaf, len > k ? len - k : 0);
}

/* The decimal number after the first occurrence of key in text (0 when absent). */
static int
field_u64(const char *text, const char *key, uint64_t *v)
{
    const char *p = strstr(text, key);
    if (!p) {
        return 0;
    }
    p += strlen(key);
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    if (*p < '0' || *p > '9') {
        return 0;
    }
    *v = 0;
    while (*p >= '0' && *p <= '9') {
        *v = *v * 10 + (uint64_t)(*p++ - '0');
    }
    return 1;
}

int
lh_threadsp_read(uint32_t tid, lh_threadsp_t *out)
{
    char path[64];
    static char text[8192]; /* under the snapshot lock; a status file is ~1.5 KiB */
    /* "NR ARG1 .. ARG6 SP PC" in a system call, "-1 SP PC" outside one, "running". */
    task_path(path, sizeof path, tid, "syscall");
    ssize_t n = lh_sys_read_file(path, text, sizeof text - 1);
    if (n <= 0) {
        return 0;
    }
    text[n] = '\0';
    if (text[0] != '-' && (text[0] < '0' || text[0] > '9')) {
        return 0; /* "running" */
    }
    const char *fields[9];
    int nf = 0;
    for (char *p = text; *p && *p != '\n' && nf < 9;) {
        fields[nf++] = p;
        while (*p && *p != ' ' && *p != '\n') {
            p++;
        }
        while (*p == ' ') {
            p++;
        }
    }
    if (nf != 3 && nf != 9) {
        return 0;
    }
    uintptr_t sp, pc;
    const char *s = fields[nf - 2], *c = fields[nf - 1];
    if (strncmp(s, "0x", 2) != 0 || strncmp(c, "0x", 2) != 0 ||
        lh_sys_parse_hex(s + 2, &sp) == 0 || lh_sys_parse_hex(c + 2, &pc) == 0 || !sp) {
        return 0;
    }
    task_path(path, sizeof path, tid, "status");
    n = lh_sys_read_file(path, text, sizeof text - 1);
    if (n <= 0) {
        return 0;
    }
    text[n] = '\0';
    uint64_t vol, invol;
    /* "nonvoluntary_ctxt_switches" contains "voluntary_ctxt_switches": the line start */
    if (!field_u64(text, "\nvoluntary_ctxt_switches:", &vol) ||
        !field_u64(text, "\nnonvoluntary_ctxt_switches:", &invol)) {
        return 0;
    }
    out->tid = tid;
    out->sp = sp;
    out->pc = pc;
    out->switches = vol + invol;
    return 1;
}

int
lh_threadsp_same(const lh_threadsp_t *a, const lh_threadsp_t *b)
{
    return a->tid == b->tid && a->sp == b->sp && a->pc == b->pc && a->switches == b->switches;
}

int
lh_threadsp_before(uint32_t self)
{
    n_pre = 0;
    int fd = lh_sys_open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    static char buf[8192];
    for (;;) {
        long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n <= 0) {
            break;
        }
        for (long off = 0; off < n;) {
            /* struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, name */
            unsigned short reclen;
            memcpy(&reclen, buf + off + 16, sizeof reclen);
            const char *name = buf + off + 19;
            uint64_t tid = 0;
            int digits = 1;
            for (const char *c = name; *c; c++) {
                digits = digits && *c >= '0' && *c <= '9';
                tid = tid * 10 + (uint64_t)(*c - '0');
            }
            if (digits && name[0] && tid != self && tid <= UINT32_MAX &&
                n_pre < LH_THREADSP_MAX && lh_threadsp_read((uint32_t)tid, &pre[n_pre])) {
                n_pre++;
            }
            if (reclen == 0) {
                break;
            }
            off += reclen;
        }
    }
    close(fd);
    return n_pre;
}

void
lh_threadsp_after(int fd)
{
    n_known = 0;
    for (int i = 0; i < n_pre; i++) {
        lh_threadsp_t now;
        if (lh_threadsp_read(pre[i].tid, &now) && lh_threadsp_same(&pre[i], &now)) {
            known[n_known++] = (known_sp_t){pre[i].tid, pre[i].sp};
        }
    }
    uint64_t count = (uint64_t)n_known;
    if (lh_sys_write_all(fd, &count, sizeof count) == 0 && n_known) {
        (void)lh_sys_write_all(fd, known, (size_t)n_known * sizeof known[0]);
    }
}

/* Reads exactly len bytes from fd, waiting at most 2 s for each part. */
static int
read_exact(int fd, void *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, 2000);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            return -1;
        }
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n <= 0) {
            return -1;
        }
        got += (size_t)n;
    }
    return 0;
}

int
lh_threadsp_receive(int fd)
{
    uint64_t count = 0;
    n_known = 0; /* the parent's table of its previous capture, in this copy */
    if (fd < 0 || read_exact(fd, &count, sizeof count) != 0 || count > LH_THREADSP_MAX ||
        (count && read_exact(fd, known, (size_t)count * sizeof known[0]) != 0)) {
        return 0;
    }
    n_known = (int)count;
    return n_known;
}

uintptr_t
lh_threadsp_of(uint32_t tid)
{
    for (int i = 0; i < n_known; i++) {
        if (known[i].tid == tid) {
            return (uintptr_t)known[i].sp;
        }
    }
    return 0;
}
