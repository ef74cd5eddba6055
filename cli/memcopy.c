/* leakhound - SPDX-License-Identifier: MIT
 *
 * memcopy.c: maps and writable memory of a held process (see memcopy.h).
 */
#include "memcopy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

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

int
lh_mempool_init(lh_mempool_t *p, size_t len)
{
    memset(p, 0, sizeof *p);
    void *b = len ? mmap(NULL, len, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE | MAP_NORESERVE, -1, 0)
                  : MAP_FAILED;
    if (b == MAP_FAILED) {
        return -1;
    }
    p->base = b;
    p->len = len;
    return 0;
}

void
lh_mempool_fini(lh_mempool_t *p)
{
    if (p->base) {
        munmap(p->base, p->len);
    }
    memset(p, 0, sizeof *p);
}

uint64_t
lh_memcopy_size(const lh_memcopy_t *m)
{
    uint64_t n = 0;
    for (size_t i = 0; i < m->n; i++) {
        n += copied(&m->maps[i]) ? m->maps[i].hi - m->maps[i].lo : 0;
    }
    return n;
}

int
lh_memcopy_copy(lh_memcopy_t *m, lh_mempool_t *pool, lh_err_t *err)
{
    long page = sysconf(_SC_PAGESIZE);
    if (pool) {
        pool->used = 0;
    }
    for (size_t i = 0; i < m->n; i++) {
        lh_mapping_t *mp = &m->maps[i];
        if (!copied(mp)) {
            continue;
        }
        size_t len = (size_t)(mp->hi - mp->lo);
        if (pool && pool->base && pool->len - pool->used >= len) {
            mp->bytes = pool->base + pool->used;
            mp->in_pool = 1;
            pool->used += len;
        } else {
            mp->bytes = malloc(len);
        }
        if (!mp->bytes) {
            return lh_err_set(err, LH_ENOMEM, "snapshot -p: out of memory copying %zu bytes "
                              "at 0x%" PRIx64, len, mp->lo);
        }
        if (lh_memcopy_read_live(m->pid, mp->lo, mp->bytes, len) == 0) {
            m->bytes_copied += len;
            continue;
        }
        /* Some page failed (a hole of a file mapping past its end, a vanished mapping):
         * page by page, zeros where it fails. */
        for (size_t o = 0; o < len; o += (size_t)page) {
            if (lh_memcopy_read_live(m->pid, mp->lo + o, mp->bytes + o, (size_t)page) == 0) {
                m->bytes_copied += (uint64_t)page;
            } else {
                memset(mp->bytes + o, 0, (size_t)page);
                m->pages_unreadable++;
            }
        }
    }
    return 0;
}

void
lh_memcopy_fini(lh_memcopy_t *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->maps[i].path);
        if (!m->maps[i].in_pool) {
            free(m->maps[i].bytes);
        }
    }
    free(m->maps);
    memset(m, 0, sizeof *m);
}

const lh_mapping_t *
lh_memcopy_find(const lh_memcopy_t *m, uint64_t addr)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (addr < m->maps[mid].lo) {
            hi = mid;
        } else if (addr >= m->maps[mid].hi) {
            lo = mid + 1;
        } else {
            return &m->maps[mid];
        }
    }
    return NULL;
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
