/* leakhound - SPDX-License-Identifier: MIT
 *
 * procimage.c: a snapshot's pages plus the modules' files, read as one address space
 * (see procimage.h).
 */
#include "procimage.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct pseg {
    uint64_t vaddr, filesz, offset;
    int writable;
} pseg_t;

typedef struct pmod {
    int state; /* 0 not opened, 1 usable, -1 unusable */
    int fd;
    Elf *elf;
    pseg_t *segs;
    size_t n_segs;
} pmod_t;

struct lh_procimage {
    const lh_snapfile_t *sf;
    size_t last_page; /* the page of the last read: most reads are near the one before */
    const lh_modules_t *mods;
    uint64_t epoch;
    const char *exe_path;
    pmod_t *pm; /* one per module record */
};

int
lh_procimage_new(const lh_snapfile_t *sf, const lh_modules_t *mods, uint64_t epoch,
                 const char *exe_path, lh_procimage_t **out, lh_err_t *err)
{
    *out = NULL;
    if (!sf->n_pages) {
        return lh_err_set(err, LH_EINVAL, "%s: the snapshot has no memory contents (mode "
                          "full is needed)", sf->path ? sf->path : "snapshot");
    }
    lh_procimage_t *pi = calloc(1, sizeof *pi);
    if (!pi || !(pi->pm = calloc(mods->n ? mods->n : 1, sizeof *pi->pm))) {
        free(pi);
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    pi->sf = sf;
    pi->mods = mods;
    pi->epoch = epoch;
    pi->exe_path = exe_path ? exe_path : "";
    elf_version(EV_CURRENT);
    *out = pi;
    return 0;
}

void
lh_procimage_free(lh_procimage_t *pi)
{
    if (!pi) {
        return;
    }
    for (size_t i = 0; i < pi->mods->n; i++) {
        pmod_t *m = &pi->pm[i];
        if (m->elf) {
            elf_end(m->elf);
        }
        if (m->state == 1) {
            close(m->fd);
        }
        free(m->segs);
    }
    free(pi->pm);
    free(pi);
}

const char *
lh_procimage_module_path(lh_procimage_t *pi, long mi)
{
    if (mi < 0 || (size_t)mi >= pi->mods->n) {
        return "";
    }
    const char *p = pi->mods->mods[mi].path;
    return p && p[0] ? p : pi->exe_path;
}

/* Opens a module's file, once; a file whose build id differs from the recorded one (the
 * file was rebuilt since the run) is not used. */
static pmod_t *
module_open(lh_procimage_t *pi, long mi)
{
    pmod_t *m = &pi->pm[mi];
    if (m->state) {
        return m->state > 0 ? m : NULL;
    }
    m->state = -1;
    const lh_module_t *mod = &pi->mods->mods[mi];
    const char *path = lh_procimage_module_path(pi, mi);
    if (!path[0] || (m->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        return NULL;
    }
    m->elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL);
    size_t nph = 0;
    if (!m->elf || elf_kind(m->elf) != ELF_K_ELF || elf_getphdrnum(m->elf, &nph) != 0) {
        goto fail;
    }
    if (mod->build_id_len) {
        const void *id = NULL;
        ssize_t n = dwelf_elf_gnu_build_id(m->elf, &id);
        if (n != (ssize_t)mod->build_id_len || memcmp(id, mod->build_id, (size_t)n) != 0) {
            goto fail;
        }
    }
    m->segs = calloc(nph ? nph : 1, sizeof *m->segs);
    if (!m->segs) {
        goto fail;
    }
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(m->elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
            m->segs[m->n_segs++] = (pseg_t){ph.p_vaddr, ph.p_filesz, ph.p_offset,
                                            (ph.p_flags & PF_W) != 0};
        }
    }
    m->state = 1;
    return m;
fail:
    if (m->elf) {
        elf_end(m->elf);
        m->elf = NULL;
    }
    close(m->fd);
    return NULL;
}

/* Bytes from the snapshot's pages: how many of len could be read at addr (contiguous
 * pages only). */
static size_t
read_pages(lh_procimage_t *pi, uint64_t addr, uint8_t *buf, size_t len)
{
    const lh_snapfile_t *sf = pi->sf;
    size_t lo = 0, hi = sf->n_pages;
    const lh_page_t *lp = pi->last_page < sf->n_pages ? &sf->pages[pi->last_page] : NULL;
    if (lp && addr >= lp->addr && addr - lp->addr < lp->len) {
        lo = pi->last_page;
    } else {
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (sf->pages[mid].addr + sf->pages[mid].len <= addr) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        pi->last_page = lo;
    }
    size_t done = 0;
    for (size_t i = lo; i < sf->n_pages && done < len; i++) {
        const lh_page_t *p = &sf->pages[i];
        uint64_t a = addr + done;
        if (a < p->addr || a >= p->addr + p->len) {
            break;
        }
        size_t k = (size_t)(p->addr + p->len - a);
        k = k < len - done ? k : len - done;
        memcpy(buf + done, p->bytes + (a - p->addr), k);
        done += k;
    }
    return done;
}

/* Bytes of a read-only segment of a module file. */
static int
read_file(lh_procimage_t *pi, uint64_t addr, uint8_t *buf, size_t len)
{
    long mi = lh_modules_find(pi->mods, addr, pi->epoch);
    pmod_t *m = mi >= 0 ? module_open(pi, mi) : NULL;
    if (!m) {
        return -1;
    }
    uint64_t va = addr - pi->mods->mods[mi].load_bias;
    for (size_t i = 0; i < m->n_segs; i++) {
        const pseg_t *s = &m->segs[i];
        if (!s->writable && va >= s->vaddr && va - s->vaddr < s->filesz &&
            len <= s->filesz - (va - s->vaddr)) {
            ssize_t n = pread(m->fd, buf, len, (off_t)(s->offset + (va - s->vaddr)));
            return n == (ssize_t)len ? 0 : -1;
        }
    }
    return -1;
}

int
lh_procimage_read(lh_procimage_t *pi, uint64_t addr, void *buf, size_t len)
{
    if (addr + len < addr) {
        return -1;
    }
    size_t n = read_pages(pi, addr, buf, len);
    if (n == len) {
        return 0;
    }
    if (n > 0) {
        return -1; /* a page run that ends inside the object */
    }
    return read_file(pi, addr, buf, len);
}

uint64_t
lh_procimage_word(lh_procimage_t *pi, uint64_t addr, int *ok)
{
    uint64_t v = 0;
    int r = lh_procimage_read(pi, addr, &v, sizeof v);
    if (ok) {
        *ok = r == 0;
    }
    return r == 0 ? v : 0;
}

long
lh_procimage_cstr(lh_procimage_t *pi, uint64_t addr, char *buf, size_t cap)
{
    /* Byte runs up to the end of the page, so a string at the end of a mapping reads. */
    size_t n = 0;
    while (n + 1 < cap) {
        size_t chunk = 64 - (size_t)((addr + n) % 64);
        if (chunk > cap - 1 - n) {
            chunk = cap - 1 - n;
        }
        if (lh_procimage_read(pi, addr + n, buf + n, chunk) != 0) {
            /* byte by byte near the end of what is readable */
            if (lh_procimage_read(pi, addr + n, buf + n, 1) != 0) {
                return -1;
            }
            chunk = 1;
        }
        void *z = memchr(buf + n, 0, chunk);
        if (z) {
            return (long)((char *)z - buf);
        }
        n += chunk;
    }
    return -1;
}

static uint64_t
find_in_symtab(Elf *elf, const char *name)
{
    Elf_Scn *scn = NULL;
    uint64_t found = 0;
    while (!found && (scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
            !sh.sh_entsize) {
            continue;
        }
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t n = d ? d->d_size / sh.sh_entsize : 0;
        for (size_t i = 1; i < n; i++) {
            GElf_Sym s;
            if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value) {
                continue;
            }
            const char *nm = elf_strptr(elf, sh.sh_link, s.st_name);
            if (nm && strcmp(nm, name) == 0) {
                found = s.st_value;
                break;
            }
        }
    }
    return found;
}

uint64_t
lh_procimage_module_symbol(lh_procimage_t *pi, long mi, const char *name)
{
    pmod_t *m = mi >= 0 && (size_t)mi < pi->mods->n ? module_open(pi, mi) : NULL;
    if (!m) {
        return 0;
    }
    uint64_t v = find_in_symtab(m->elf, name);
    return v ? v + pi->mods->mods[mi].load_bias : 0;
}

uint64_t
lh_procimage_symbol(lh_procimage_t *pi, const char *const *prefixes, const char *name,
                    long *mod_idx)
{
    for (size_t i = 0; i < pi->mods->n; i++) {
        const lh_module_t *mod = &pi->mods->mods[i];
        if (mod->epoch_loaded > pi->epoch ||
            (mod->epoch_unloaded != LH_EPOCH_NEVER && mod->epoch_unloaded <= pi->epoch)) {
            continue;
        }
        const char *path = lh_procimage_module_path(pi, (long)i);
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        int match = !prefixes;
        for (size_t k = 0; prefixes && prefixes[k] && !match; k++) {
            match = strncmp(base, prefixes[k], strlen(prefixes[k])) == 0;
        }
        if (!match) {
            continue;
        }
        uint64_t v = lh_procimage_module_symbol(pi, (long)i, name);
        if (v) {
            if (mod_idx) {
                *mod_idx = (long)i;
            }
            return v;
        }
    }
    return 0;
}
