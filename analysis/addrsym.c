/* leakhound - SPDX-License-Identifier: MIT
 *
 * addrsym.c: dwfl_module_addrinfo over a copy of the symbol table (addrsym.h).
 */
#include "addrsym.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

typedef struct cand {
    GElf_Sym sym;
    GElf_Addr value; /* the symbol's address as libdw reports it (bias applied) */
    const char *name;
    int ndx;         /* index in the table */
    GElf_Word shndx; /* its section (SHN_XINDEX resolved) */
    int elf;         /* which ELF it came from: index in ix->elfs */
} cand_t;

typedef struct sec {
    GElf_Addr addr, size;
    size_t ndx;
    int alloc; /* SHF_ALLOC */
} sec_t;

typedef struct elf_secs {
    Elf *elf;
    GElf_Addr bias; /* what libdw adds to this ELF's st_value */
    sec_t *secs;
    size_t n;
} elf_secs_t;

struct lh_addrsym {
    cand_t *c;
    size_t n;
    size_t n_global_first; /* c[0 .. n_global_first): globals; the rest: locals */
    int search_locals;     /* first_global > 1 */
    elf_secs_t elfs[4];
    size_t n_elfs;
};

static int
elf_index(lh_addrsym_t *ix, Elf *elf, GElf_Addr bias)
{
    for (size_t i = 0; i < ix->n_elfs; i++) {
        if (ix->elfs[i].elf == elf) {
            return ix->elfs[i].bias == bias ? (int)i : -1;
        }
    }
    if (ix->n_elfs == sizeof ix->elfs / sizeof ix->elfs[0]) {
        return -1;
    }
    elf_secs_t *e = &ix->elfs[ix->n_elfs];
    *e = (elf_secs_t){elf, bias, NULL, 0};
    size_t cap = 0;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr)) {
            continue;
        }
        if (lh_grow(&e->secs, &cap, e->n, sizeof *e->secs, 64) < 0) {
            free(e->secs);
            return -1;
        }
        e->secs[e->n++] = (sec_t){shdr.sh_addr, shdr.sh_size, elf_ndxscn(scn),
                                  (shdr.sh_flags & SHF_ALLOC) != 0};
    }
    return (int)ix->n_elfs++;
}

/* Whether libdw would consider a symbol: named, defined, not a section, file or TLS
 * symbol. (Its value being at or below the address is checked per lookup.) */
static int
eligible(const char *name, const GElf_Sym *sym)
{
    int type = GELF_ST_TYPE(sym->st_info);
    return name && name[0] && sym->st_shndx != SHN_UNDEF && type != STT_SECTION &&
           type != STT_FILE && type != STT_TLS;
}

static int
add_range(lh_addrsym_t *ix, Dwfl_Module *mod, int from, int to, size_t *cap)
{
    for (int i = from; i < to; i++) {
        GElf_Sym sym;
        GElf_Addr value;
        GElf_Word shndx;
        Elf *elf = NULL;
        Dwarf_Addr bias = 0;
        const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, &elf, &bias);
        if (!eligible(name, &sym)) {
            continue;
        }
        /* libdw tries a second value when the adjusted st_value differs from the
         * resolved one (function descriptors): not modelled, so not indexed. */
        if (sym.st_value + bias != value && sym.st_value != value) {
            return -1;
        }
        int e = elf_index(ix, elf, bias);
        if (e < 0 || lh_grow(&ix->c, cap, ix->n, sizeof *ix->c, 1024) < 0) {
            return -1;
        }
        ix->c[ix->n++] = (cand_t){sym, value, name, i, shndx, e};
    }
    return 0;
}

lh_addrsym_t *
lh_addrsym_new(Dwfl_Module *mod)
{
    Dwarf_Addr mbias;
    Elf *main_elf = dwfl_module_getelf(mod, &mbias);
    GElf_Ehdr eh;
    if (!main_elf || !gelf_getehdr(main_elf, &eh) ||
        (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) || eh.e_machine == EM_PPC64) {
        return NULL;
    }
    int n = dwfl_module_getsymtab(mod);
    int first_global = dwfl_module_getsymtab_first_global(mod);
    if (n < 0 || first_global < 0) {
        return NULL;
    }
    lh_addrsym_t *ix = calloc(1, sizeof *ix);
    if (!ix) {
        return NULL;
    }
    size_t cap = 0;
    if (add_range(ix, mod, first_global == 0 ? 1 : first_global, n, &cap) < 0) {
        lh_addrsym_free(ix);
        return NULL;
    }
    ix->n_global_first = ix->n;
    ix->search_locals = first_global > 1;
    if (ix->search_locals && add_range(ix, mod, 1, first_global, &cap) < 0) {
        lh_addrsym_free(ix);
        return NULL;
    }
    return ix;
}

void
lh_addrsym_free(lh_addrsym_t *ix)
{
    if (!ix) {
        return;
    }
    for (size_t i = 0; i < ix->n_elfs; i++) {
        free(ix->elfs[i].secs);
    }
    free(ix->c);
    free(ix);
}

/* ---------------------------------------------------------------------------------------
 * The selection
 * ------------------------------------------------------------------------------------- */

typedef struct search {
    const lh_addrsym_t *ix;
    GElf_Addr addr;
    long closest, sizeless; /* candidate indices, -1: none */
    GElf_Addr min_label;    /* no sizeless symbol below this: a sized one covers it */
    int addr_elf;           /* the ELF addr_shndx was computed for, -1: not yet */
    size_t addr_shndx;
    int ask_libdw;          /* a case not modelled was met: libdw answers */
} search_t;

static int
binding_rank(const GElf_Sym *s)
{
    switch (GELF_ST_BIND(s->st_info)) {
    case STB_GLOBAL:
        return 3;
    case STB_WEAK:
        return 2;
    case STB_LOCAL:
        return 1;
    default:
        return 0;
    }
}

/* Whether a symbol without a size may answer for addr: when it is at addr itself, or when
 * addr lies in its section (the first section of its ELF whose range holds addr, bias
 * removed). An absolute symbol only matches exactly. When no allocated section holds addr
 * (a gap between sections), libdw may still call it the symbol's section (seen: an
 * address past the end of .data, before .bss, given to a .data symbol): not modelled,
 * libdw answers. */
static int
same_section(search_t *st, size_t k)
{
    const cand_t *c = &st->ix->c[k];
    if (c->value == st->addr) {
        return 1;
    }
    if (c->shndx >= SHN_LORESERVE) {
        return 0;
    }
    if (st->addr_elf != c->elf) {
        const elf_secs_t *e = &st->ix->elfs[c->elf];
        GElf_Addr a = st->addr - e->bias;
        st->addr_elf = c->elf;
        st->addr_shndx = SHN_ABS;
        for (size_t i = 0; i < e->n; i++) {
            if (a >= e->secs[i].addr && a < e->secs[i].addr + e->secs[i].size) {
                st->addr_shndx = e->secs[i].alloc ? e->secs[i].ndx : SHN_ABS;
                break;
            }
        }
    }
    if (st->addr_shndx == SHN_ABS) {
        st->ask_libdw = 1;
    }
    return c->shndx == st->addr_shndx;
}

static void
try_cand(search_t *st, size_t k)
{
    const cand_t *c = &st->ix->c[k];
    const GElf_Sym *s = &c->sym;
    if (c->value + s->st_size > st->min_label) {
        st->min_label = c->value + s->st_size;
    }
    if (s->st_size != 0 && st->addr - c->value >= s->st_size) {
        return; /* sized, and addr is past its end */
    }
    const GElf_Sym *cs = st->closest >= 0 ? &st->ix->c[st->closest].sym : NULL;
    GElf_Addr cv = st->closest >= 0 ? st->ix->c[st->closest].value : 0;
    if (!cs || cv < c->value || binding_rank(cs) < binding_rank(s)) {
        if (s->st_size != 0) {
            st->closest = (long)k;
        } else if (!cs && c->value >= st->min_label && same_section(st, k)) {
            st->sizeless = (long)k;
        }
    } else if (s->st_size != 0 && cv == c->value &&
               ((cs->st_size > s->st_size && binding_rank(cs) <= binding_rank(s)) ||
                (cs->st_size >= s->st_size && binding_rank(cs) < binding_rank(s)))) {
        st->closest = (long)k;
    }
}

static void
search_range(search_t *st, size_t from, size_t to)
{
    const cand_t *c = st->ix->c;
    for (size_t k = from; k < to; k++) {
        if (c[k].value <= st->addr) {
            try_cand(st, k);
        }
    }
}

const char *
lh_addrsym_info(lh_addrsym_t *ix, Dwfl_Module *mod, GElf_Addr addr, GElf_Off *off,
                GElf_Sym *sym)
{
    if (!ix) {
        return dwfl_module_addrinfo(mod, addr, off, sym, NULL, NULL, NULL);
    }
    search_t st = {ix, addr, -1, -1, 0, -1, 0, 0};
    search_range(&st, 0, ix->n_global_first);
    if (st.closest < 0 && ix->search_locals &&
        (st.sizeless < 0 || ix->c[st.sizeless].value != addr)) {
        search_range(&st, ix->n_global_first, ix->n);
    }
    if (st.ask_libdw) {
        return dwfl_module_addrinfo(mod, addr, off, sym, NULL, NULL, NULL);
    }
    long k = st.closest;
    if (k < 0 && st.sizeless >= 0 && ix->c[st.sizeless].value >= st.min_label) {
        k = st.sizeless;
    }
    if (k < 0) {
        return NULL;
    }
    *off = addr - ix->c[k].value;
    *sym = ix->c[k].sym;
    return ix->c[k].name;
}

const char *
lh_addrsym_lazy(lh_addrsym_t **ix, int *built, Dwfl_Module *mod, GElf_Addr addr,
                GElf_Off *off, GElf_Sym *sym)
{
    if (!*built) {
        *built = 1;
        *ix = lh_addrsym_new(mod);
    }
    return lh_addrsym_info(*ix, mod, addr, off, sym);
}
