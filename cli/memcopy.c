/* leakhound - SPDX-License-Identifier: MIT
 *
 * memcopy.c: maps and writable memory of a held process (see memcopy.h).
 */
#include "memcopy.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bound.h"

int
lh_memcopy_maps(lh_memcopy_t *m, pid_t pid, lh_err_t *err)
{
    memset(m, 0, sizeof *m);
    m->pid = pid;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f) {
        return lh_err_set(err, LH_EIO, "cannot read %s: %s", path,
                          strerror(errno));
    }
    char *line = NULL;
    size_t cap = 0, mcap = 0;
    int rc = 0;
    while (getline(&line, &cap, f) > 0) {
        unsigned long lo, hi, off;
        char perms[8];
        int pos = 0;
        if (sscanf(line, "%lx-%lx %7s %lx %*s %*s%n", &lo, &hi, perms, &off, &pos) < 4) {
            continue;
        }
        char *file = line + pos;
        while (*file == ' ') {
            file++;
        }
        file[strcspn(file, "\n")] = '\0';
        if (m->n == mcap) {
            mcap = mcap ? 2 * mcap : 256;
            lh_mapping_t *p = realloc(m->maps, mcap * sizeof *p);
            if (!p) {
                rc = lh_err_set(err, LH_ENOMEM, "out of memory");
                break;
            }
            m->maps = p;
        }
        lh_mapping_t *mp = &m->maps[m->n];
        memset(mp, 0, sizeof *mp);
        mp->lo = lo;
        mp->hi = hi;
        mp->offset = off;
        memcpy(mp->perms, perms, 4);
        mp->path = strdup(file);
        if (!mp->path) {
            rc = lh_err_set(err, LH_ENOMEM, "out of memory");
            break;
        }
        m->n++;
    }
    free(line);
    fclose(f);
    return rc;
}

static int
copied(const lh_mapping_t *mp)
{
    if (mp->perms[0] != 'r' || mp->perms[1] != 'w') {
        return 0;
    }
    return strcmp(mp->path, "[vvar]") != 0 && strcmp(mp->path, "[vdso]") != 0 &&
           strcmp(mp->path, "[vsyscall]") != 0;
}

int
lh_memcopy_read_live(pid_t pid, uint64_t addr, void *buf, size_t len)
{
    struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
    return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* Private anonymous memory ([heap], stacks, arenas, mmapped chunks): a page that is not
 * resident and not swapped out has never been written and reads as zeros, so only the
 * others are read. (File-backed and shared pages are read whole: an untouched page of a
 * file mapping holds the file's bytes.) */
static int
sparse(const lh_mapping_t *mp)
{
    return mp->perms[3] == 'p' && (mp->path[0] == '\0' || mp->path[0] == '[');
}

#define PM_CHUNK 4096

/* Calls fn(ctx, lo, hi) for each run of pages of mapping mp that are resident or swapped
 * out, from /proc/PID/pagemap; the whole mapping when it is not sparse or pagemap cannot
 * be read. */
static int
runs(pid_t pid, const lh_mapping_t *mp, int (*fn)(void *, uint64_t, uint64_t), void *ctx)
{
    uint64_t lo = mp->lo, hi = mp->hi;
    if (!sparse(mp)) {
        return fn(ctx, lo, hi);
    }
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/pagemap", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return fn(ctx, lo, hi);
    }
    uint64_t ent[PM_CHUNK];
    uint64_t run_lo = 0;
    int in_run = 0, rc = 0;
    for (uint64_t a = lo; a < hi && rc == 0;) {
        size_t n = (size_t)((hi - a) / page);
        n = n > PM_CHUNK ? PM_CHUNK : n;
        ssize_t r = pread(fd, ent, n * 8, (off_t)(a / page * 8));
        if (r != (ssize_t)(n * 8)) {
            close(fd);
            return fn(ctx, in_run ? run_lo : a, hi);
        }
        for (size_t i = 0; i < n && rc == 0; i++, a += page) {
            int here = (ent[i] >> 62) != 0; /* bit 63 present, bit 62 swapped */
            if (here && !in_run) {
                run_lo = a;
                in_run = 1;
            } else if (!here && in_run) {
                rc = fn(ctx, run_lo, a);
                in_run = 0;
            }
        }
    }
    if (in_run && rc == 0) {
        rc = fn(ctx, run_lo, hi);
    }
    close(fd);
    return rc;
}

static int
count_run(void *ctx, uint64_t lo, uint64_t hi)
{
    *(uint64_t *)ctx += hi - lo;
    return 0;
}

typedef struct touch {
    uint8_t *buf;
    uint64_t base;
} touch_t;

static int
touch_run(void *ctx, uint64_t lo, uint64_t hi)
{
    touch_t *t = ctx;
    memset(t->buf + (lo - t->base), 0, (size_t)(hi - lo));
    return 0;
}

static void *
map_buf(size_t len)
{
    void *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return b == MAP_FAILED ? NULL : b;
}

int
lh_mempool_init(lh_mempool_t *p, const lh_memcopy_t *pre, uint64_t limit, uint64_t *need)
{
    memset(p, 0, sizeof *p);
    *need = 0;
    for (size_t i = 0; i < pre->n; i++) {
        const lh_mapping_t *mp = &pre->maps[i];
        if (copied(mp)) {
            runs(pre->pid, mp, count_run, need);
        }
    }
    if (*need > limit) {
        return -2;
    }
    p->v = calloc(pre->n ? pre->n : 1, sizeof *p->v);
    if (!p->v) {
        return -1;
    }
    for (size_t i = 0; i < pre->n; i++) {
        const lh_mapping_t *mp = &pre->maps[i];
        if (!copied(mp)) {
            continue;
        }
        lh_prebuf_t *b = &p->v[p->n];
        b->lo = mp->lo;
        b->hi = mp->hi;
        if (!(b->bytes = map_buf((size_t)(mp->hi - mp->lo)))) {
            continue;
        }
        p->n++;
        touch_t t = {b->bytes, mp->lo};
        runs(pre->pid, mp, touch_run, &t);
    }
    return 0;
}

void
lh_mempool_fini(lh_mempool_t *p)
{
    for (size_t i = 0; i < p->n; i++) {
        munmap(p->v[i].bytes, (size_t)(p->v[i].hi - p->v[i].lo));
    }
    free(p->v);
    memset(p, 0, sizeof *p);
}

typedef struct reader {
    lh_memcopy_t *m;
    lh_mapping_t *mp;
} reader_t;

/* Reads [lo, hi) of the process into the mapping's copy: at once, else page by page
 * (zeros where a page fails: a hole of a file mapping past its end, a vanished mapping). */
static int
read_run(void *ctx, uint64_t lo, uint64_t hi)
{
    reader_t *r = ctx;
    uint8_t *dst = r->mp->bytes + (lo - r->mp->lo);
    if (lh_memcopy_read_live(r->m->pid, lo, dst, (size_t)(hi - lo)) == 0) {
        r->m->bytes_copied += hi - lo;
        return 0;
    }
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    for (uint64_t a = lo; a < hi; a += page) {
        if (lh_memcopy_read_live(r->m->pid, a, dst + (a - lo), (size_t)page) == 0) {
            r->m->bytes_copied += page;
        } else {
            memset(dst + (a - lo), 0, (size_t)page);
        }
    }
    return 0;
}

int
lh_memcopy_copy(lh_memcopy_t *m, lh_mempool_t *pool, lh_err_t *err)
{
    for (size_t k = 0; pool && k < pool->n; k++) {
        pool->v[k].taken = 0;
    }
    for (size_t i = 0; i < m->n; i++) {
        lh_mapping_t *mp = &m->maps[i];
        if (!copied(mp)) {
            continue;
        }
        size_t len = (size_t)(mp->hi - mp->lo);
        for (size_t k = 0; pool && k < pool->n && !mp->bytes; k++) {
            lh_prebuf_t *b = &pool->v[k];
            if (!b->taken && b->lo == mp->lo && b->hi == mp->hi) {
                b->taken = 1;
                mp->bytes = b->bytes;
                mp->in_pool = 1;
                /* pages it held before may be gone: zero what is not read again */
                if (sparse(mp)) {
                    memset(mp->bytes, 0, len);
                }
            }
        }
        if (!mp->bytes) {
            mp->bytes = map_buf(len);
        }
        if (!mp->bytes) {
            return lh_err_set(err, LH_ENOMEM, "snapshot -p: out of memory copying %zu bytes "
                              "at 0x%" PRIx64, len, mp->lo);
        }
        reader_t r = {m, mp};
        runs(m->pid, mp, read_run, &r);
    }
    return 0;
}

void
lh_memcopy_fini(lh_memcopy_t *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->maps[i].path);
        if (!m->maps[i].in_pool && m->maps[i].bytes) {
            munmap(m->maps[i].bytes, (size_t)(m->maps[i].hi - m->maps[i].lo));
        }
    }
    free(m->maps);
    memset(m, 0, sizeof *m);
}

const lh_mapping_t *
lh_memcopy_find(const lh_memcopy_t *m, uint64_t addr)
{
    /* the last mapping starting at or before addr (sorted, without overlaps) */
    size_t i = LH_UPPER(m->maps, m->n, lh_mapping_t, lo, addr);
    const lh_mapping_t *mp = i ? &m->maps[i - 1] : NULL;
    return mp && addr < mp->hi ? mp : NULL;
}

int
lh_memcopy_read(const lh_memcopy_t *m, uint64_t addr, void *buf, size_t len)
{
    uint8_t *out = buf;
    while (len) {
        const lh_mapping_t *mp = lh_memcopy_find(m, addr);
        if (!mp || !mp->bytes) {
            return -1;
        }
        size_t n = (size_t)(mp->hi - addr);
        if (n > len) {
            n = len;
        }
        memcpy(out, mp->bytes + (addr - mp->lo), n);
        out += n;
        addr += n;
        len -= n;
    }
    return 0;
}

uint64_t
lh_memcopy_word(const lh_memcopy_t *m, uint64_t addr, int *ok)
{
    uint64_t v = 0;
    if (lh_memcopy_read(m, addr, &v, sizeof v) < 0) {
        if (ok) {
            *ok = 0;
        }
        return 0;
    }
    return v;
}
