/* leakhound - SPDX-License-Identifier: MIT
 *
 * addrsym.c: dwfl_module_addrinfo over a copy of the symbol table (addrsym.h).
 */
#include "addrsym.h"

#include <stdlib.h>
#include <string.h>

#include "bound.h"
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

/* The candidates in runs of BLOCK (in table order, globals and locals apart), so that a
 * lookup skips a run at once when no candidate of it can change the answer: none of them
 * at or below the address holds it, and none without a size is at or above min_label (one
 * below it is never chosen, nor its section looked at). Such a run would only raise the
 * search's min_label (a maximum: order does not matter) to its largest end at or below the
 * address; every other run is searched one candidate after the other as before, so the
 * selection's order-dependent choices are the same. On python3 with libc6-dbg a data
 * address was 120,000 instructions (callgrind) searched linearly. */
#define BLOCK 64

typedef struct ends {
    GElf_Addr value; /* sorted within the run */
    GElf_Addr end;   /* the largest value + st_size up to here, as try_cand computes it */
    GElf_Addr holds; /* the largest end of a sized candidate up to here, saturated */
    GElf_Addr label; /* the largest value of one without a size up to here (0: none) */
} ends_t;

typedef struct run {
    size_t first, n;        /* candidates c[first .. first + n) */
    GElf_Addr min_value;    /* their smallest value */
    GElf_Addr min_sizeless; /* the smallest value of one without a size, or UINT64_MAX */
} run_t;

struct lh_addrsym {
    cand_t *c;
    size_t n;
    size_t n_global_first; /* c[0 .. n_global_first): globals; the rest: locals */
    int search_locals;     /* first_global > 1 */
    elf_secs_t elfs[4];
    size_t n_elfs;
    run_t *runs; /* in table order */
    size_t n_runs;
    ends_t *ends; /* run r's at ends[runs[r].first ..], by value */
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

/* Cuts c[from .. to) into runs. */
static void
add_runs(lh_addrsym_t *ix, size_t from, size_t to)
{
    for (size_t f = from; f < to; f += BLOCK) {
        run_t *r = &ix->runs[ix->n_runs++];
        *r = (run_t){f, to - f < BLOCK ? to - f : BLOCK, UINT64_MAX, UINT64_MAX};
        ends_t *e = &ix->ends[f];
        for (size_t i = 0; i < r->n; i++) {
            const cand_t *c = &ix->c[f + i];
            GElf_Addr end = c->value + c->sym.st_size;
            GElf_Addr holds = c->sym.st_size == 0 ? 0 : end < c->value ? UINT64_MAX : end;
            e[i] = (ends_t){c->value, end, holds, c->sym.st_size == 0 ? c->value : 0};
            if (c->value < r->min_value) {
                r->min_value = c->value;
            }
            if (c->sym.st_size == 0 && c->value < r->min_sizeless) {
                r->min_sizeless = c->value;
            }
        }
        LH_SORT(e, r->n, ends_t, value);
        for (size_t i = 1; i < r->n; i++) {
            if (e[i - 1].end > e[i].end) {
                e[i].end = e[i - 1].end;
            }
            if (e[i - 1].holds > e[i].holds) {
                e[i].holds = e[i - 1].holds;
            }
            if (e[i - 1].label > e[i].label) {
                e[i].label = e[i - 1].label;
            }
        }
    }
}

static int
index_runs(lh_addrsym_t *ix)
{
    ix->runs = malloc((ix->n / BLOCK + 2) * sizeof *ix->runs);
    ix->ends = malloc((ix->n ? ix->n : 1) * sizeof *ix->ends);
    if (!ix->runs || !ix->ends) {
        return -1;
    }
    add_runs(ix, 0, ix->n_global_first);
    add_runs(ix, ix->n_global_first, ix->n);
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
    if ((ix->search_locals && add_range(ix, mod, 1, first_global, &cap) < 0) ||
        index_runs(ix) < 0) {
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
    free(ix->runs);
    free(ix->ends);
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
    const lh_addrsym_t *ix = st->ix;
    const cand_t *c = ix->c;
    for (size_t r = 0; r < ix->n_runs; r++) {
        const run_t *run = &ix->runs[r];
        if (run->first < from || run->first >= to || run->min_value > st->addr) {
            continue;
        }
        const ends_t *e = &ix->ends[run->first];
        const ends_t *last = &e[LH_UPPER(e, run->n, ends_t, value, st->addr) - 1];
        /* (when min_sizeless <= addr, that candidate is among those up to last: its label
         * is set) */
        if (last->holds <= st->addr &&
            (run->min_sizeless > st->addr || last->label < st->min_label)) {
            if (last->end > st->min_label) {
                st->min_label = last->end;
            }
            continue;
        }
        for (size_t k = run->first; k < run->first + run->n; k++) {
            if (c[k].value <= st->addr) {
                try_cand(st, k);
            }
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
