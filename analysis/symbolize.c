/* leakhound - SPDX-License-Identifier: MIT
 *
 * symbolize.c: return addresses to functions, files and lines, with elfutils libdwfl.
 *
 * One Dwfl session per module record, opened on first use: the module's file is reported
 * at its recorded load bias, and libdwfl's standard callbacks find separate debug info by
 * build id or debuglink.
 */
#include "symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "addrsym.h"
#include "nearsym.h"
#include "dupstr.h"
#include "dwscopes.h"
#include "grow.h"
#include "hash.h"
#include "scriptstack.h"
#include "strpool.h"
#include "symcache.h"

static const Dwfl_Callbacks dwfl_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = NULL, /* libdwfl's default: .debug dirs and /usr/lib/debug */
};

typedef struct sym_module {
    int opened; /* 0: not tried yet; 1: tried (dwfl may still be NULL) */
    Dwfl *dwfl;
    Dwfl_Module *mod;
    lh_symcache_t *sc; /* its on-disk cache (symcache.h), NULL when not used */
    int syms_indexed;
    lh_addrsym_t *syms; /* addrsym.h, built on the first ELF-symbol lookup */
    int near_indexed;
    lh_nearsym_t *near; /* nearsym.h, built on the first address no symbol covers */
} sym_module_t;

typedef struct cache_entry {
    uint64_t ip;
    long module;      /* index in the module table, -1: none */
    lh_frame_t *frames;
    uint32_t n;
} cache_entry_t;

struct lh_symbolizer {
    const lh_modules_t *mods;
    char *exe_path;
    sym_module_t *smods; /* parallel to mods->mods, grown on demand */
    size_t n_smods;
    cache_entry_t *cache; /* in the order resolved */
    size_t cache_n, cache_cap;
    uint32_t *cache_ix;   /* hash.h's index over cache by (ip, module) */
    size_t cache_mask;
    lh_strpool_t pool;
    lh_warnings_t warnings;
    lh_dwscopes_t *scopes; /* the functions at an address, per CU (all modules) */
    long last_module;      /* the module of the last address looked up, or -1 */
    int native; /* keep interpreter frames (scriptstack.h) */
};

static int native_default;

void
lh_sym_set_native(int native)
{
    native_default = native;
}

int
lh_sym_get_native(void)
{
    return native_default;
}

/* ---------------------------------------------------------------------------------------
 * Modules
 * ------------------------------------------------------------------------------------- */

static const char *
base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

const char *
lh_sym_module_label(const char *module)
{
    const char *b = base_name(module), *label = b;
    for (const char *p = strstr(module, "/auto/"); p; p = strstr(p + 1, "/auto/")) {
        if (p + 6 < b) { /* a directory under auto/: the package's (the last auto/) */
            label = p + 6;
        }
    }
    return label;
}

int
lh_sym_module_is_agent(const char *base)
{
    return strncmp(base, "libleakhound.so", 15) == 0;
}

static void
check_build_id(lh_symbolizer_t *s, const lh_module_t *m, Dwfl_Module *mod, const char *path)
{
    const unsigned char *bits = NULL;
    GElf_Addr vaddr;
    int n = dwfl_module_build_id(mod, &bits, &vaddr);
    /* The agent's frames are cut from every stack: a leakhound installed since the run
     * changes nothing shown, and a warning about it would only alarm. */
    if (m->build_id_len == 0 || n <= 0 || lh_sym_module_is_agent(base_name(path))) {
        return;
    }
    if ((size_t)n != m->build_id_len || memcmp(bits, m->build_id, (size_t)n) != 0) {
        char want[129], have[129];
        lh_hex(want, sizeof want, m->build_id, m->build_id_len);
        lh_hex(have, sizeof have, bits, (size_t)n);
        lh_warn(&s->warnings,
                "%s: build-id %s differs from the traced one (%s): the file changed since the "
                "run; its symbols may be wrong",
                path, have, want);
    }
}

const char *
lh_sym_module_file(const lh_module_t *m, const char *exe_path)
{
    const char *path = m->path[0] ? m->path : exe_path;
    if (!path || !path[0] || path[0] == '[' || strncmp(path, "linux-vdso", 10) == 0) {
        return NULL;
    }
    return path;
}

Dwfl_Module *
lh_sym_report_elf(const char *path, uint64_t load_bias, Dwfl **dwfl, lh_warnings_t *w)
{
    if (!(*dwfl = dwfl_begin(&dwfl_callbacks))) {
        return NULL;
    }
    dwfl_report_begin(*dwfl);
    /* add_p_vaddr = true: base is the load bias (dlpi_addr), the runtime address of file
     * vaddr 0, which is what the agent records (elfutils' own link_map reader does the
     * same). With false, base would be the start of the first PT_LOAD instead, which
     * differs for files whose first segment is not at vaddr 0. */
    Dwfl_Module *mod = dwfl_report_elf(*dwfl, base_name(path), path, -1, load_bias, true);
    dwfl_report_end(*dwfl, NULL, NULL);
    if (!mod) {
        if (w) {
            lh_warn(w, "%s: cannot read (%s); its frames are shown as module+offset", path,
                    dwfl_errmsg(-1));
        }
        dwfl_end(*dwfl);
        *dwfl = NULL;
    }
    return mod;
}

/* The Dwfl module for module record mi, opening it on first use; NULL if unusable (the
 * vdso has no file: nothing to warn about). */
static Dwfl_Module *
module_open(lh_symbolizer_t *s, long mi)
{
    sym_module_t *sm = lh_grow_slot(&s->smods, &s->n_smods, (size_t)mi, sizeof *s->smods,
                                    s->mods->n);
    if (!sm || sm->opened) {
        return sm ? sm->mod : NULL;
    }
    sm->opened = 1;
    const lh_module_t *m = &s->mods->mods[mi];
    const char *path = lh_sym_module_file(m, s->exe_path);
    if (path && (sm->mod = lh_sym_report_elf(path, m->load_bias, &sm->dwfl, &s->warnings))) {
        check_build_id(s, m, sm->mod, path);
        sm->sc = lh_symcache_open(path, sm->mod, ".sym");
    }
    return sm->mod;
}

/* ---------------------------------------------------------------------------------------
 * DWARF
 * ------------------------------------------------------------------------------------- */

/* A function's name: the demangled linkage name of C++ (with its class, namespace and
 * parameters), else the source name. A C function's linkage name is only its asm label:
 * glibc's own calls go to hidden aliases, so strdup's is "__GI___strdup" where the source
 * says __strdup. */
static const char *
die_name(lh_symbolizer_t *s, Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    const char *link = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
    if (!link) {
        link = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
    }
    if (link && strncmp(link, "_Z", 2) == 0) {
        return lh_strpool_demangled(&s->pool, link);
    }
    const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
    if (!name) {
        return link ? lh_strpool_demangled(&s->pool, link) : NULL;
    }
    return lh_strpool_add(&s->pool, name, strlen(name));
}

typedef struct frame_vec {
    lh_frame_t *v;
    uint32_t n;
    size_t cap;
} frame_vec_t;

static int
push_frame(frame_vec_t *fv, const lh_frame_t *f)
{
    if (lh_grow(&fv->v, &fv->cap, fv->n, sizeof *fv->v, 4) < 0) {
        return LH_ENOMEM;
    }
    fv->v[fv->n++] = *f;
    return 0;
}

/* The CU containing addr. libdwfl looks it up in .debug_aranges, which clang does not emit
 * by default (and elfutils 0.188 does not fall back); then scan the CUs' ranges. */
static Dwarf_Die *
find_cu(Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Addr *bias)
{
    Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, bias);
    if (cu) {
        return cu;
    }
    while ((cu = dwfl_module_nextcu(mod, cu, bias)) != NULL) {
        if (dwarf_haspc(cu, addr - *bias) == 1) {
            return cu;
        }
    }
    return NULL;
}

/* The line table's file and line of addr (NULL/0 when unknown). */
static void
find_line(Dwfl_Module *mod, Dwarf_Die *cu, Dwarf_Addr addr, Dwarf_Addr bias, const char **file,
          int *line)
{
    Dwfl_Line *l = dwfl_module_getsrc(mod, addr);
    *file = NULL;
    *line = 0;
    if (l) {
        *file = dwfl_lineinfo(l, NULL, line, NULL, NULL, NULL);
        return;
    }
    Dwarf_Line *dl = cu ? dwarf_getsrc_die(cu, addr - bias) : NULL;
    if (dl) {
        *file = dwarf_linesrc(dl, NULL, NULL);
        if (dwarf_lineno(dl, line) != 0) {
            *line = 0;
        }
    }
}

/* A source file as the line table names it, pooled; made absolute with the CU's
 * compilation directory when it is relative and that directory is absolute: a header
 * found through a relative -I (gcc and clang list "inc" as its directory, clang "." for
 * the source's own) would otherwise read "inc/x.h", relative to nothing the reader knows.
 * Valgrind gives the directory too. A relative compilation directory (a build mapped with
 * -fdebug-prefix-map=DIR=.) leaves the name as it is. */
static const char *
pool_file(lh_symbolizer_t *s, Dwarf_Die *cu, const char *file)
{
    if (!file) {
        return NULL;
    }
    Dwarf_Attribute attr;
    const char *dir =
        file[0] != '/' && cu ? dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr)) : NULL;
    if (!dir || dir[0] != '/') {
        return lh_strpool_add(&s->pool, file, strlen(file));
    }
    while (file[0] == '.' && file[1] == '/') {
        file += 2;
        while (file[0] == '/') {
            file++;
        }
    }
    size_t dl = strlen(dir), fl = strlen(file);
    while (dl > 1 && dir[dl - 1] == '/') {
        dl--;
    }
    char buf[4096];
    if (dl + 1 + fl >= sizeof buf) {
        return lh_strpool_add(&s->pool, file, fl);
    }
    memcpy(buf, dir, dl);
    buf[dl] = '/';
    memcpy(buf + dl + 1, file, fl);
    return lh_strpool_add(&s->pool, buf, dl + 1 + fl);
}

/* Frames from the DWARF scopes at addr in cudie: inlined calls innermost first, then the
 * function. file/line are the line table's location of addr. */
static int
dwarf_frames(lh_symbolizer_t *s, Dwarf_Die *cudie, Dwarf_Addr addr, Dwarf_Addr bias,
             const lh_frame_t *proto, const char *file, int line, frame_vec_t *fv)
{
    Dwarf_Die *scopes = NULL;
    Dwarf_Files *files = NULL;
    size_t n_files = 0;
    int rc = 0;
    int n = lh_dwscopes_at(s->scopes, cudie, addr - bias, &scopes);
    if (n == -1) {
        return LH_ENOMEM;
    }
    if (n == LH_DWSCOPES_NOINDEX && (n = dwarf_getscopes(cudie, addr - bias, &scopes)) > 0) {
        /* dwarf_getscopes goes from an inlined subroutine straight to the CU; the
         * concrete chain of enclosing scopes (the function it was inlined into) comes from
         * the DIE tree, as eu-addr2line -i does. */
        Dwarf_Die *chain = NULL;
        int n_chain = dwarf_getscopes_die(&scopes[0], &chain);
        if (n_chain > 0) {
            free(scopes);
            scopes = chain;
            n = n_chain;
        } else {
            free(chain);
        }
    }
    if (n <= 0) {
        free(scopes);
        return 0;
    }
    if (dwarf_getsrcfiles(cudie, &files, &n_files) != 0) {
        files = NULL;
    }
    uint32_t first = fv->n;
    for (int i = 0; i < n; i++) {
        Dwarf_Die *die = &scopes[i];
        int tag = dwarf_tag(die);
        if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine &&
            tag != DW_TAG_entry_point) {
            continue;
        }
        lh_frame_t f = *proto;
        f.function = die_name(s, die);
        f.file = pool_file(s, cudie, file);
        f.line = line > 0 ? (uint32_t)line : 0;
        f.inlined = tag == DW_TAG_inlined_subroutine;
        if ((rc = push_frame(fv, &f)) < 0) {
            break;
        }
        if (tag != DW_TAG_inlined_subroutine) {
            break; /* the real function: done */
        }
        /* The enclosing function is at the inlined call's call site. */
        Dwarf_Attribute attr;
        Dwarf_Word v;
        file = NULL;
        line = 0;
        if (files && dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &v) == 0) {
            file = dwarf_filesrc(files, (size_t)v, NULL, NULL);
        }
        if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &v) == 0 && v < 1u << 30) {
            line = (int)v;
        }
    }
    if (fv->n > first) {
        fv->v[fv->n - 1].inlined = 0; /* the outermost frame of an address is real */
    }
    free(scopes);
    return rc;
}

static int resolve_dwarf(lh_symbolizer_t *s, sym_module_t *sm, uint64_t ip, lh_frame_t f,
                         frame_vec_t *fv);

/* The frames of ip in module record mi (-1: none). What this gives for a module address
 * depends only on the module's file, its debug information and leakhound's code, which
 * the on-disk cache's key and fingerprint cover (symcache.h): the cache answers instead of
 * libdw when it has the address, and records what libdw answered otherwise. */
static int
resolve(lh_symbolizer_t *s, long mi, uint64_t ip, frame_vec_t *fv)
{
    lh_frame_t f = {0};
    f.ip = ip;
    f.offset = ip;
    if (mi < 0) {
        return push_frame(fv, &f);
    }
    const lh_module_t *m = &s->mods->mods[mi];
    f.module = m->path[0] ? m->path : (s->exe_path ? s->exe_path : "");
    f.offset = ip - m->load_bias;
    Dwfl_Module *mod = module_open(s, mi);
    if (!mod) {
        return push_frame(fv, &f);
    }
    lh_symcache_t *sc = s->smods[mi].sc;
    const lh_symcache_frame_t *cf;
    int nc = lh_symcache_get(sc, f.offset, &cf);
    for (int k = 0; k < nc; k++) {
        f.function = cf[k].function;
        f.file = cf[k].file;
        f.line = cf[k].line;
        f.inlined = (int)cf[k].inlined;
        if (push_frame(fv, &f) < 0) {
            return LH_ENOMEM;
        }
    }
    if (nc > 0) {
        return 0;
    }
    uint32_t first = fv->n;
    int rc = resolve_dwarf(s, &s->smods[mi], ip, f, fv);
    if (rc == 0 && sc && fv->n > first && fv->n - first <= 64) {
        lh_symcache_frame_t put[64];
        for (uint32_t k = first; k < fv->n; k++) {
            put[k - first] = (lh_symcache_frame_t){fv->v[k].function, fv->v[k].file,
                                                   fv->v[k].line, (uint32_t)fv->v[k].inlined};
        }
        lh_symcache_put(sc, f.offset, put, fv->n - first);
    }
    return rc;
}

/* resolve() with libdw: f has the module, ip and offset set. */
/* The ELF symbol containing addr (dwfl_module_addrinfo's answer, from the index). */
static const char *
elf_symbol(sym_module_t *sm, Dwarf_Addr addr)
{
    GElf_Off off;
    GElf_Sym sym;
    return lh_addrsym_lazy(&sm->syms, &sm->syms_indexed, sm->mod, addr, &off, &sym);
}

/* The name of code no symbol and no debug information covers: a static function of a
 * stripped module (a C extension without debug info). "<static 0xde0f0 after
 * PyArray_NewLikeArray>": the start of its function from the call frame information
 * (.eh_frame: every function has its FDE, so every address of one function gets the same
 * name and `--by function` adds them up), then the nearest exported function below it
 * (nearsym.h), a landmark in the library's source. "<after NAME+0x508>" without call
 * frame information; NULL with neither. */
static const char *
stripped_name(lh_symbolizer_t *s, sym_module_t *sm, Dwarf_Addr addr)
{
    if (!sm->near_indexed) {
        sm->near_indexed = 1;
        sm->near = lh_nearsym_new(sm->mod);
    }
    /* covered by an FDE at all (a gap between functions has none): then its start */
    Dwarf_Addr bias = 0;
    Dwarf_CFI *cfi = dwfl_module_eh_cfi(sm->mod, &bias);
    Dwarf_Frame *fr = NULL;
    GElf_Addr start = 0, low = 0;
    int have = cfi && dwarf_cfi_addrframe(cfi, addr - bias, &fr) == 0 &&
               lh_nearsym_func_start(sm->near, addr, &start) == 0;
    free(fr);
    const char *near = lh_nearsym_below(sm->near, have ? start : addr, &low);
    /* a C++ landmark demangled, without its parameters (a mangled name said nothing) */
    near = near ? lh_strpool_demangled_name(&s->pool, near) : NULL;
    char buf[512];
    if (have) {
        /* the function's start as an address of the ELF file, like a frame's offset */
        unsigned long long at = (unsigned long long)(start - bias);
        if (near) {
            snprintf(buf, sizeof buf, "<static 0x%llx after %.400s>", at, near);
        } else {
            snprintf(buf, sizeof buf, "<static 0x%llx>", at);
        }
    } else if (near) {
        snprintf(buf, sizeof buf, "<after %.400s+0x%llx>", near,
                 (unsigned long long)(addr - low));
    } else {
        return NULL;
    }
    return lh_strpool_add(&s->pool, buf, strlen(buf));
}

static int
resolve_dwarf(lh_symbolizer_t *s, sym_module_t *sm, uint64_t ip, lh_frame_t f, frame_vec_t *fv)
{
    Dwfl_Module *mod = sm->mod;
    /* A return address points after the call; ip - 1 is inside it. */
    Dwarf_Addr addr = ip ? ip - 1 : 0;
    const char *file = NULL;
    int line = 0;
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = find_cu(mod, addr, &bias);
    find_line(mod, cu, addr, bias, &file, &line);
    uint32_t first = fv->n;
    int rc = cu ? dwarf_frames(s, cu, addr, bias, &f, file, line, fv) : 0;
    if (rc < 0) {
        return rc;
    }
    if (fv->n > first) {
        if (!fv->v[fv->n - 1].function) {
            fv->v[fv->n - 1].function = lh_strpool_demangled(&s->pool, elf_symbol(sm, addr));
        }
        return 0;
    }
    f.function = lh_strpool_demangled(&s->pool, elf_symbol(sm, addr));
    if (!f.function && !cu) {
        f.function = stripped_name(s, sm, addr);
    }
    f.file = pool_file(s, cu, file);
    f.line = file && line > 0 ? (uint32_t)line : 0;
    return push_frame(fv, &f);
}

/* ---------------------------------------------------------------------------------------
 * Cache and public API
 * ------------------------------------------------------------------------------------- */

static size_t
cache_hash(uint64_t ip, long mi)
{
    uint64_t h = (ip ^ ((uint64_t)mi << 48)) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ (h >> 31));
}

static uint64_t
entry_hash(const void *s, size_t k)
{
    const cache_entry_t *e = &((const lh_symbolizer_t *)s)->cache[k];
    return cache_hash(e->ip, e->module);
}

int
lh_sym_new(const lh_modules_t *mods, const lh_sym_opts_t *opts, lh_symbolizer_t **out,
           lh_err_t *err)
{
    lh_symbolizer_t *s = calloc(1, sizeof *s);
    if (!s) {
        goto fail;
    }
    s->mods = mods;
    s->last_module = -1;
    s->native = native_default || (opts && opts->native);
    lh_warnings_init(&s->warnings);
    if (opts && opts->exe_path && !(s->exe_path = strdup(opts->exe_path))) {
        goto fail;
    }
    if (lh_index_rebuild(&s->cache_ix, &s->cache_mask, 1024, 0, 0, entry_hash, s) < 0 ||
        !(s->scopes = lh_dwscopes_new())) {
        goto fail;
    }
    *out = s;
    return 0;
fail:
    lh_sym_free(s);
    *out = NULL;
    return lh_err_set(err, LH_ENOMEM, "out of memory creating the symbolizer");
}

void
lh_sym_free(lh_symbolizer_t *s)
{
    if (!s) {
        return;
    }
    for (size_t i = 0; i < s->n_smods; i++) {
        lh_symcache_save(s->smods[i].sc); /* before the pool its new strings are in */
        lh_symcache_free(s->smods[i].sc);
        lh_addrsym_free(s->smods[i].syms);
        lh_nearsym_free(s->smods[i].near);
        if (s->smods[i].dwfl) {
            dwfl_end(s->smods[i].dwfl);
        }
    }
    free(s->smods);
    lh_dwscopes_free(s->scopes);
    LH_FREE_EACH(s->cache, s->cache_n, cache_entry_t, frames);
    free(s->cache_ix);
    lh_strpool_fini(&s->pool);
    lh_warnings_fini(&s->warnings);
    free(s->exe_path);
    free(s);
}

int
lh_sym_ip(lh_symbolizer_t *s, uint64_t ip, uint64_t epoch, const lh_frame_t **frames,
          lh_err_t *err)
{
    long mi = lh_modules_find_near(s->mods, ip ? ip - 1 : 0, epoch, s->last_module);
    s->last_module = mi;
    size_t i = cache_hash(ip, mi) & s->cache_mask;
    for (; s->cache_ix[i] != UINT32_MAX; i = (i + 1) & s->cache_mask) {
        const cache_entry_t *e = &s->cache[s->cache_ix[i]];
        if (e->ip == ip && e->module == mi) {
            *frames = e->frames;
            return (int)e->n;
        }
    }
    frame_vec_t fv = {0};
    if (resolve(s, mi, ip, &fv) < 0 || fv.n == 0) {
        free(fv.v);
        return lh_err_set(err, LH_ENOMEM, "out of memory symbolizing");
    }
    int grown = lh_index_room(&s->cache_ix, &s->cache_mask, 0, s->cache_n, entry_hash, s);
    if (grown < 0 || lh_grow(&s->cache, &s->cache_cap, s->cache_n, sizeof *s->cache, 1024) < 0) {
        free(fv.v);
        return lh_err_set(err, LH_ENOMEM, "out of memory symbolizing");
    }
    if (grown) {
        i = cache_hash(ip, mi) & s->cache_mask; /* the free slot moved with the rebuild */
        while (s->cache_ix[i] != UINT32_MAX) {
            i = (i + 1) & s->cache_mask;
        }
    }
    for (uint32_t k = 0; k < fv.n; k++) {
        lh_scriptstack_classify(&fv.v[k]); /* once per address, not per stack */
    }
    s->cache_ix[i] = (uint32_t)s->cache_n;
    s->cache[s->cache_n++] = (cache_entry_t){ip, mi, fv.v, fv.n};
    *frames = fv.v;
    return (int)fv.n;
}

static int
stop_here(const lh_frame_t *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (lh_scriptstack_is_eval_loop(&f[i])) {
            return 1;
        }
    }
    return 0;
}

int
lh_sym_stack(lh_symbolizer_t *s, const lh_stack_t *st, lh_frame_t **frames, size_t *n,
             lh_err_t *err)
{
    lh_frame_t *v = NULL;
    size_t nv = 0, cap = 0;
    for (uint32_t k = 0; k < st->n_ips; k++) {
        const lh_frame_t *f;
        int nf = lh_sym_ip(s, st->ips[k], st->epoch, &f, err);
        if (nf < 0) {
            free(v);
            return nf;
        }
        if (lh_grow_to(&v, &cap, nv + (size_t)nf, sizeof *v, 16) < 0) {
            free(v);
            return lh_err_set(err, LH_ENOMEM, "out of memory symbolizing");
        }
        memcpy(v + nv, f, (size_t)nf * sizeof *f);
        nv += (size_t)nf;
        /* Displayed without the interpreter's frames: nothing outside the innermost
         * eval-loop frame shows (scriptstack.h), so the rest is not symbolized. On a
         * python trace that was four in five lh_sym_ip calls. */
        if (st->n_script > 0 && !s->native && stop_here(f, (size_t)nf)) {
            break;
        }
    }
    if (st->n_script > 0) {
        lh_frame_t *m = malloc((nv + st->n_script + 1) * sizeof *m); /* + arena: scriptstack.h */
        if (!m) {
            free(v);
            return lh_err_set(err, LH_ENOMEM, "out of memory symbolizing");
        }
        nv = lh_scriptstack_merge(v, nv, st->script, st->n_script, st->sframes, s->native, m);
        free(v);
        v = m;
    } else if (nv) {
        if (lh_grow(&v, &cap, nv, sizeof *v, 16) < 0) {
            free(v);
            return lh_err_set(err, LH_ENOMEM, "out of memory symbolizing");
        }
        size_t k = lh_scriptstack_phase(v, nv); /* a phase of an interpreter: scriptstack.h */
        if (k && s->native) {
            nv = nv + 1;
        } else if (k) {
            /* The interpreter's allocator wrappers (Perl_safesysmalloc, PyMem_RawMalloc)
             * innermost tell one start-up site from no other: the frames outside them do. */
            size_t skip = 0;
            while (skip + 1 < k && lh_scriptstack_is_interp_alloc(&v[skip])) {
                skip++;
            }
            memmove(v, v + skip, (k - skip) * sizeof *v);
            nv = k - skip;
        }
    }
    *frames = v;
    *n = nv;
    return 0;
}

const lh_warnings_t *
lh_sym_warnings(const lh_symbolizer_t *s)
{
    return &s->warnings;
}
