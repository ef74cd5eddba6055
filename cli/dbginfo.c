/* leakhound - SPDX-License-Identifier: MIT
 *
 * dbginfo.c: a module's separate debug info by build id (see dbginfo.h).
 */
#include "dbginfo.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"

typedef struct named_die {
    const char *name; /* owned by libdw's string table */
    Dwarf_Die die;
} named_die_t;

struct lh_dbginfo {
    char path[512];
    int fd;
    Elf *elf;
    Dwarf *dw;
    named_die_t *structs; /* complete top-level struct definitions, first of each name */
    size_t n_structs, cap_structs;
    int indexed;
};

static void
hex(char *out, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sprintf(out + 2 * i, "%02x", p[i]);
    }
}

int
lh_dbginfo_open(const char *path, const char *pkg, lh_dbginfo_t **out, lh_err_t *err)
{
    *out = NULL;
    elf_version(EV_CURRENT);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return lh_err_set(err, LH_ENOENT, "cannot open %s", path);
    }
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    const void *id = NULL;
    ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &id) : -1;
    if (n <= 0 || n > 64) {
        if (elf) {
            elf_end(elf);
        }
        close(fd);
        return lh_err_set(err, LH_EFORMAT, "%s has no build id: its debug info cannot be "
                          "matched", path);
    }
    char hx[130];
    hex(hx, id, (size_t)n);
    elf_end(elf);
    close(fd);

    lh_dbginfo_t *d = calloc(1, sizeof *d);
    if (!d) {
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    d->fd = -1;
    /* LEAKHOUND_DEBUG_DIR: another root than Debian's (a debug tree unpacked elsewhere). */
    const char *root = getenv("LEAKHOUND_DEBUG_DIR");
    snprintf(d->path, sizeof d->path, "%s/.build-id/%.2s/%s.debug",
             root && *root ? root : "/usr/lib/debug", hx, hx + 2);
    d->fd = open(d->path, O_RDONLY | O_CLOEXEC);
    if (d->fd < 0) {
        int rc = lh_err_set(err, LH_ENOENT,
                            "no debug info for %s (build id %s, looked for %s): install the "
                            "Debian package %s matching the installed version",
                            path, hx, d->path, pkg);
        lh_dbginfo_close(d);
        return rc;
    }
    d->elf = elf_begin(d->fd, ELF_C_READ_MMAP, NULL);
    d->dw = d->elf ? dwarf_begin_elf(d->elf, DWARF_C_READ, NULL) : NULL;
    if (!d->dw) {
        int rc = lh_err_set(err, LH_EFORMAT, "%s (debug info of %s) has no readable DWARF",
                            d->path, path);
        lh_dbginfo_close(d);
        return rc;
    }
    *out = d;
    return 0;
}

void
lh_dbginfo_close(lh_dbginfo_t *d)
{
    if (!d) {
        return;
    }
    if (d->dw) {
        dwarf_end(d->dw);
    }
    if (d->elf) {
        elf_end(d->elf);
    }
    if (d->fd >= 0) {
        close(d->fd);
    }
    free(d->structs);
    free(d);
}

const char *
lh_dbginfo_path(const lh_dbginfo_t *d)
{
    return d->path;
}

int
lh_dbginfo_symbol(lh_dbginfo_t *d, const char *name, uint64_t *value)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(d->elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize) {
            continue;
        }
        Elf_Data *data = elf_getdata(scn, NULL);
        size_t n = sh.sh_size / sh.sh_entsize;
        for (size_t i = 0; data && i < n; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF) {
                continue;
            }
            int t = GELF_ST_TYPE(sym.st_info);
            if (t != STT_OBJECT && t != STT_TLS) {
                continue;
            }
            const char *s = elf_strptr(d->elf, sh.sh_link, sym.st_name);
            if (s && strcmp(s, name) == 0) {
                *value = sym.st_value;
                return 0;
            }
        }
    }
    return LH_ENOENT;
}

/* Indexes the complete struct definitions at the top of every compilation unit, once. */
static int
index_structs(lh_dbginfo_t *d)
{
    if (d->indexed) {
        return 0;
    }
    d->indexed = 1;
    Dwarf_Off off = 0, next;
    size_t hsize;
    while (dwarf_nextcu(d->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu, child;
        if (dwarf_offdie(d->dw, off + hsize, &cu) && dwarf_child(&cu, &child) == 0) {
            do {
                if (dwarf_tag(&child) != DW_TAG_structure_type ||
                    dwarf_hasattr(&child, DW_AT_declaration) ||
                    !dwarf_hasattr(&child, DW_AT_byte_size)) {
                    continue;
                }
                const char *nm = dwarf_diename(&child);
                if (!nm) {
                    continue;
                }
                int dup = 0;
                for (size_t i = 0; i < d->n_structs && !dup; i++) {
                    dup = strcmp(d->structs[i].name, nm) == 0;
                }
                if (dup) {
                    continue;
                }
                if (lh_grow(&d->structs, &d->cap_structs, d->n_structs, sizeof *d->structs,
                            256) < 0) {
                    return LH_ENOMEM;
                }
                d->structs[d->n_structs].name = nm;
                d->structs[d->n_structs++].die = child;
            } while (dwarf_siblingof(&child, &child) == 0);
        }
        off = next;
    }
    return 0;
}

static int
find_struct(lh_dbginfo_t *d, const char *name, Dwarf_Die *out)
{
    if (index_structs(d) < 0) {
        return LH_ENOMEM;
    }
    for (size_t i = 0; i < d->n_structs; i++) {
        if (strcmp(d->structs[i].name, name) == 0) {
            *out = d->structs[i].die;
            return 0;
        }
    }
    return LH_ENOENT;
}

int
lh_dbginfo_struct_size(lh_dbginfo_t *d, const char *name, uint64_t *size)
{
    Dwarf_Die s;
    Dwarf_Word sz;
    if (find_struct(d, name, &s) < 0 || dwarf_aggregate_size(&s, &sz) != 0) {
        return LH_ENOENT;
    }
    *size = sz;
    return 0;
}

/* The type of die with typedefs and qualifiers removed. */
static int
strip_type(Dwarf_Die *die, Dwarf_Die *out)
{
    Dwarf_Attribute a;
    if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, out)) {
        return -1;
    }
    for (int guard = 0; guard < 32; guard++) {
        int tag = dwarf_tag(out);
        if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type &&
            tag != DW_TAG_atomic_type) {
            return 0;
        }
        Dwarf_Die next;
        if (!dwarf_attr_integrate(out, DW_AT_type, &a) || !dwarf_formref_die(&a, &next)) {
            return -1;
        }
        *out = next;
    }
    return -1;
}

int
lh_dbginfo_member(lh_dbginfo_t *d, const char *strct, const char *member, uint64_t *off,
                  uint64_t *size, uint64_t *count)
{
    Dwarf_Die s, m;
    if (find_struct(d, strct, &s) < 0 || dwarf_child(&s, &m) != 0) {
        return LH_ENOENT;
    }
    do {
        const char *nm = dwarf_diename(&m);
        if (dwarf_tag(&m) != DW_TAG_member || !nm || strcmp(nm, member) != 0) {
            continue;
        }
        Dwarf_Attribute a;
        Dwarf_Word o, sz;
        Dwarf_Die t;
        if (!dwarf_attr(&m, DW_AT_data_member_location, &a) || dwarf_formudata(&a, &o) != 0 ||
            strip_type(&m, &t) < 0 || dwarf_aggregate_size(&t, &sz) != 0) {
            return LH_ENOENT;
        }
        *off = o;
        *size = sz;
        *count = 1;
        Dwarf_Die sub;
        if (dwarf_tag(&t) == DW_TAG_array_type && dwarf_child(&t, &sub) == 0 &&
            dwarf_tag(&sub) == DW_TAG_subrange_type) {
            Dwarf_Word c;
            if (dwarf_attr(&sub, DW_AT_count, &a) && dwarf_formudata(&a, &c) == 0) {
                *count = c;
            } else if (dwarf_attr(&sub, DW_AT_upper_bound, &a) && dwarf_formudata(&a, &c) == 0) {
                *count = c + 1;
            } else {
                return LH_ENOENT;
            }
        }
        return 0;
    } while (dwarf_siblingof(&m, &m) == 0);
    return LH_ENOENT;
}

size_t
lh_dbginfo_cu_ranges(lh_dbginfo_t *d, const char *cu_base, uint64_t (*out)[2], size_t max)
{
    Dwarf_Off off = 0, next;
    size_t hsize, n = 0;
    while (dwarf_nextcu(d->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        const char *nm;
        if (dwarf_offdie(d->dw, off + hsize, &cu) && (nm = dwarf_diename(&cu))) {
            const char *b = strrchr(nm, '/');
            if (strcmp(b ? b + 1 : nm, cu_base) == 0) {
                Dwarf_Addr base, lo, hi;
                ptrdiff_t it = 0;
                while (n < max && (it = dwarf_ranges(&cu, it, &base, &lo, &hi)) > 0) {
                    out[n][0] = lo;
                    out[n][1] = hi;
                    n++;
                }
                return n;
            }
        }
        off = next;
    }
    return 0;
}
