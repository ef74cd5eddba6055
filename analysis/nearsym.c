/* leakhound - SPDX-License-Identifier: MIT
 *
 * nearsym.c: the nearest function symbol below an address (see nearsym.h).
 */
#include "nearsym.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bound.h"
#include "err.h"
#include "grow.h"

typedef struct fsym {
    GElf_Addr addr;
    const char *name; /* libdw's: lives as long as the module */
} fsym_t;

struct lh_nearsym {
    fsym_t *v;
    size_t n;
    GElf_Addr *fde; /* FDE start addresses (bias included), ascending */
    size_t n_fde;
};

#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_datarel 0x30

/* The search table of .eh_frame_hdr (LSB: version 1, then the encodings of eh_frame_ptr,
 * fde_count and the table): read when the table is the usual datarel|sdata4 pairs and the
 * count udata4 (what GNU ld and lld write); otherwise none, and names go without a start. */
static void
read_fde_table(lh_nearsym_t *ix, Dwfl_Module *mod)
{
    GElf_Addr bias = 0;
    Elf *elf = dwfl_module_getelf(mod, &bias);
    size_t shstrndx;
    if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0) {
        return;
    }
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
        Elf_Data *d = name && strcmp(name, ".eh_frame_hdr") == 0 && sh.sh_type == SHT_PROGBITS
                          ? elf_getdata(scn, NULL)
                          : NULL;
        if (!d || !d->d_buf || d->d_size < 12) {
            continue;
        }
        const unsigned char *b = d->d_buf;
        /* eh_frame_ptr: 4 bytes in every sdata4/udata4 encoding (the only ones read) */
        if (b[0] != 1 || (b[1] & 0x0f) != DW_EH_PE_sdata4 || b[2] != DW_EH_PE_udata4 ||
            b[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4)) {
            return;
        }
        uint32_t count;
        memcpy(&count, b + 8, 4);
        if (count == 0 || count > (d->d_size - 12) / 8) {
            return;
        }
        ix->fde = malloc(count * sizeof *ix->fde);
        for (uint32_t i = 0; ix->fde && i < count; i++) {
            int32_t loc;
            memcpy(&loc, b + 12 + (size_t)i * 8, 4);
            ix->fde[i] = sh.sh_addr + bias + (GElf_Addr)(int64_t)loc;
        }
        ix->n_fde = ix->fde ? count : 0;
        return;
    }
}

static int
by_addr(const void *a, const void *b)
{
    const fsym_t *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

lh_nearsym_t *
lh_nearsym_new(Dwfl_Module *mod)
{
    int n = dwfl_module_getsymtab(mod);
    lh_nearsym_t *ix = calloc(1, sizeof *ix);
    size_t cap = 0;
    for (int i = 1; ix && i < n; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
        int type = GELF_ST_TYPE(sym.st_info);
        if (!name || !name[0] || sym.st_shndx == SHN_UNDEF || !addr ||
            (type != STT_FUNC && type != STT_GNU_IFUNC)) {
            continue;
        }
        if (lh_grow(&ix->v, &cap, ix->n, sizeof *ix->v, 256) < 0) {
            lh_nearsym_free(ix);
            return NULL;
        }
        ix->v[ix->n++] = (fsym_t){addr, name};
    }
    if (ix) {
        read_fde_table(ix, mod);
    }
    if (ix && ix->n == 0 && ix->n_fde == 0) {
        lh_nearsym_free(ix);
        return NULL;
    }
    if (ix && ix->n) {
        lh_qsort(ix->v, ix->n, sizeof *ix->v, by_addr);
    }
    return ix;
}

void
lh_nearsym_free(lh_nearsym_t *ix)
{
    if (ix) {
        free(ix->v);
        free(ix->fde);
        free(ix);
    }
}

/* The index of the last of n elements (stride bytes apart, each starting with its
 * GElf_Addr, ascending) whose address is <= addr; the caller checks the first is. */
static size_t
floor_index(const void *base, size_t n, size_t stride, GElf_Addr addr)
{
    size_t above = lh_bound_u64(base, n, stride, 0, addr, 1);
    return above ? above - 1 : 0;
}

const char *
lh_nearsym_below(const lh_nearsym_t *ix, GElf_Addr addr, GElf_Addr *start)
{
    if (!ix || !ix->n || ix->v[0].addr > addr) {
        return NULL;
    }
    size_t k = floor_index(ix->v, ix->n, sizeof *ix->v, addr);
    *start = ix->v[k].addr;
    return ix->v[k].name;
}

int
lh_nearsym_func_start(const lh_nearsym_t *ix, GElf_Addr addr, GElf_Addr *start)
{
    if (!ix || !ix->n_fde || ix->fde[0] > addr) {
        return -1;
    }
    *start = ix->fde[floor_index(ix->fde, ix->n_fde, sizeof *ix->fde, addr)];
    return 0;
}
