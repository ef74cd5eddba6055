/* leakhound - SPDX-License-Identifier: MIT
 *
 * datasym.c: data symbols, variable declaration files and vtable class names.
 */
#include "datasym.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addrmap.h"
#include "addrsym.h"
#include "bound.h"
#include "grow.h"
#include "hash.h"
#include "strpool.h"
#include "symbolize.h"
#include "symcache.h"

extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

typedef struct var_loc {
    uint64_t addr; /* runtime address */
    const char *file;
    uint64_t seq; /* order found: of two variables at one address the first is the answer */
} var_loc_t;

typedef struct dmod {
    int opened;
    Dwfl *dwfl;
    Dwfl_Module *mod;
    int syms_indexed;
    lh_addrsym_t *syms; /* addrsym.h: dwfl_module_addrinfo without reading the table */
    int vars_read;
    lh_symcache_t *vcache; /* the variables table on disk (symcache.h, ".vars") */
    lh_symcache_t *dcache; /* the symbol table's answers on disk (".dsym", below) */
    uint64_t load_bias;
    var_loc_t *vars; /* sorted by addr */
    size_t n_vars;
} dmod_t;

struct lh_datasym {
    const lh_modules_t *mods;
    char *exe_path;
    dmod_t *dm;
    size_t n_dm;
    lh_addrmap_t vt;     /* vtable address -> its index in vt_cls */
    const char **vt_cls; /* the class of each vtable asked for (NULL: none) */
    size_t n_vt_cls, cap_vt_cls;
    lh_strpool_t pool;
};

int
lh_datasym_new(const lh_modules_t *mods, const char *exe_path, lh_datasym_t **out,
               lh_err_t *err)
{
    lh_datasym_t *ds = calloc(1, sizeof *ds);
    if (ds) {
        ds->mods = mods;
        ds->exe_path = exe_path ? strdup(exe_path) : NULL;
    }
    if (!ds || (exe_path && !ds->exe_path)) {
        lh_datasym_free(ds); /* it frees a part-built one */
        ds = NULL;
    }
    *out = ds;
    return ds ? 0 : lh_err_set(err, LH_ENOMEM, "out of memory creating the data symbolizer");
}

void
lh_datasym_free(lh_datasym_t *ds)
{
    if (!ds) {
        return;
    }
    for (size_t i = 0; i < ds->n_dm; i++) {
        if (ds->dm[i].dwfl) {
            dwfl_end(ds->dm[i].dwfl);
        }
        lh_addrsym_free(ds->dm[i].syms);
        lh_symcache_save(ds->dm[i].vcache); /* before the pool its new strings are in */
        lh_symcache_free(ds->dm[i].vcache);
        lh_symcache_save(ds->dm[i].dcache);
        lh_symcache_free(ds->dm[i].dcache);
        free(ds->dm[i].vars);
    }
    free(ds->dm);
    lh_addrmap_fini(&ds->vt);
    free(ds->vt_cls);
    lh_strpool_fini(&ds->pool);
    free(ds->exe_path);
    free(ds);
}

static const char *
module_path(const lh_datasym_t *ds, long mi)
{
    const char *p = ds->mods->mods[mi].path;
    return p[0] ? p : (ds->exe_path ? ds->exe_path : "");
}

static dmod_t *
module_open(lh_datasym_t *ds, long mi)
{
    dmod_t *m = lh_grow_slot(&ds->dm, &ds->n_dm, (size_t)mi, sizeof *ds->dm, ds->mods->n);
    if (!m || m->opened) {
        return m;
    }
    m->opened = 1;
    const lh_module_t *mod = &ds->mods->mods[mi];
    const char *path = lh_sym_module_file(mod, ds->exe_path);
    if (path && (m->mod = lh_sym_report_elf(path, mod->load_bias, &m->dwfl, NULL))) {
        m->load_bias = mod->load_bias;
        m->vcache = lh_symcache_open(path, m->mod, ".vars");
        m->dcache = lh_symcache_open(path, m->mod, ".dsym");
    }
    return m;
}

/* ---------------------------------------------------------------------------------------
 * The symbol table's answers, cached on disk (".dsym", docs/FORMAT.md): what a lookup of
 * a data address gave (the symbol's name, the address's offset in it, its size; keyed by
 * the address's file address), and where a name asked for by lh_datasym_find is defined
 * (keyed by the name's FNV-1a hash with the top bit set; a file address never has it). A
 * warm report then reads no symbol table: building one's index (addrsym.h) read the
 * separate debug file (libc6-dbg's 33,000 symbols) for a few hundred roots, and the perl
 * probe walked every module's table on every trace with a snapshot. The answers depend on
 * the symbol tables only, which the cache file's key and fingerprint cover (symcache.h).
 * Numbers are kept as hex text in a frame's file string; a string that does not parse is
 * not used (the table answers, as without the cache).
 * ------------------------------------------------------------------------------------- */

#define KEY_NAME (1ull << 63)

static const char *
pool_str(lh_datasym_t *ds, const char *s)
{
    return s ? lh_strpool_add(&ds->pool, s, strlen(s)) : NULL;
}

/* "a" or "a b" in hex into the pool. */
static const char *
pool_hex(lh_datasym_t *ds, uint64_t a, const uint64_t *b)
{
    char buf[40];
    int n = b ? snprintf(buf, sizeof buf, "%" PRIx64 " %" PRIx64, a, *b)
              : snprintf(buf, sizeof buf, "%" PRIx64, a);
    return n > 0 && (size_t)n < sizeof buf ? lh_strpool_add(&ds->pool, buf, (size_t)n) : NULL;
}

/* Parses pool_hex's text (b NULL: one number). Returns 0, or -1 when s is not that. */
static int
parse_hex(const char *s, uint64_t *a, uint64_t *b)
{
    char *end;
    if (!s || !s[0] || s[0] == ' ') {
        return -1;
    }
    *a = strtoull(s, &end, 16);
    if (b) {
        if (*end != ' ' || !end[1] || end[1] == ' ') {
            return -1;
        }
        *b = strtoull(end + 1, &end, 16);
    }
    return *end == '\0' ? 0 : -1;
}

/* dwfl_module_addrinfo's name for addr in the opened module m (NULL: no symbol), with
 * the offset of addr in the symbol and its size; from the cache when it has addr, else
 * from the symbol table (and recorded). */
static const char *
data_addrinfo(lh_datasym_t *ds, dmod_t *m, uint64_t addr, uint64_t *off, uint64_t *size)
{
    uint64_t key = addr - m->load_bias;
    const lh_symcache_frame_t *f;
    if (!(key & KEY_NAME) && lh_symcache_get(m->dcache, key, &f) == 1 &&
        (!f[0].function || (f[0].function[0] && parse_hex(f[0].file, off, size) == 0))) {
        return f[0].function;
    }
    GElf_Off o = 0;
    GElf_Sym sym;
    const char *name = lh_addrsym_lazy(&m->syms, &m->syms_indexed, m->mod, addr, &o, &sym);
    if (name && !name[0]) {
        name = NULL;
    }
    *off = o;
    *size = name ? sym.st_size : 0;
    if (m->dcache && !(key & KEY_NAME)) {
        lh_symcache_frame_t cf = {pool_str(ds, name), name ? pool_hex(ds, o, size) : NULL, 0,
                                  0};
        if ((!name || (cf.function && cf.file))) {
            lh_symcache_put(m->dcache, key, &cf, 1);
        }
    }
    return name;
}

/* ---------------------------------------------------------------------------------------
 * Variables' declaration files: one scan of the module's CUs (top-level variables and
 * function-local statics), done the first time a name is asked for.
 * ------------------------------------------------------------------------------------- */

static int
push_var(dmod_t *m, size_t *cap, uint64_t addr, const char *file)
{
    if (lh_grow(&m->vars, cap, m->n_vars, sizeof *m->vars, 64) < 0) {
        return -1;
    }
    m->vars[m->n_vars] = (var_loc_t){addr, file, m->n_vars};
    m->n_vars++;
    return 0;
}

static void
scan_vars(lh_datasym_t *ds, dmod_t *m, Dwarf_Die *parent, Dwarf_Files *files, Dwarf_Addr bias,
          size_t *cap, int depth)
{
    Dwarf_Die child;
    if (dwarf_child(parent, &child) != 0) {
        return;
    }
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_subprogram && depth == 0) {
            scan_vars(ds, m, &child, files, bias, cap, 1);
            continue;
        }
        if (tag != DW_TAG_variable) {
            continue;
        }
        Dwarf_Attribute attr;
        Dwarf_Op *expr;
        size_t len;
        Dwarf_Word fi;
        if (!dwarf_attr(&child, DW_AT_location, &attr) ||
            dwarf_getlocation(&attr, &expr, &len) != 0 || len < 1 || expr[0].atom != DW_OP_addr) {
            continue;
        }
        const char *file = NULL;
        if (files && dwarf_formudata(dwarf_attr_integrate(&child, DW_AT_decl_file, &attr),
                                     &fi) == 0) {
            const char *f = dwarf_filesrc(files, (size_t)fi, NULL, NULL);
            file = f ? lh_strpool_add(&ds->pool, f, strlen(f)) : NULL;
        }
        if (push_var(m, cap, expr[0].number + bias, file) < 0) {
            return;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
}

/* The end marker of a ".vars" cache table: written after the whole scan. */
#define VARS_END UINT64_MAX

typedef struct vars_fill {
    dmod_t *m;
    size_t cap;
} vars_fill_t;

static void
var_from_cache(void *ctx, uint64_t offset, const lh_symcache_frame_t *f, uint32_t n)
{
    vars_fill_t *vf = ctx;
    (void)n;
    if (offset != VARS_END) {
        (void)push_var(vf->m, &vf->cap, offset + vf->m->load_bias, f[0].file);
    }
}

/* Reads the module's variables: from the cache when it has the table (the same list, in
 * another order: sorted below), else from every CU, then recorded in the cache. */
static void
read_vars(lh_datasym_t *ds, dmod_t *m)
{
    size_t cap = 0;
    if (lh_symcache_loaded(m->vcache)) {
        vars_fill_t vf = {m, 0};
        lh_symcache_each(m->vcache, var_from_cache, &vf);
        return;
    }
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = NULL;
    while ((cu = dwfl_module_nextcu(m->mod, cu, &bias)) != NULL) {
        Dwarf_Files *files = NULL;
        size_t nf;
        if (dwarf_getsrcfiles(cu, &files, &nf) != 0) {
            files = NULL;
        }
        scan_vars(ds, m, cu, files, bias, &cap, 0);
    }
    if (!m->vcache) {
        return;
    }
    for (size_t i = 0; i < m->n_vars; i++) {
        lh_symcache_frame_t f = {NULL, m->vars[i].file, 0, 0};
        lh_symcache_put(m->vcache, m->vars[i].addr - m->load_bias, &f, 1);
    }
    lh_symcache_frame_t end = {NULL, NULL, 0, 0};
    lh_symcache_put(m->vcache, VARS_END, &end, 1);
}

static const char *
var_file(lh_datasym_t *ds, dmod_t *m, uint64_t start)
{
    if (!m->vars_read) {
        m->vars_read = 1;
        read_vars(ds, m);
        if (m->n_vars) { /* qsort's array must not be NULL, even when empty (UBSan) */
            LH_SORT2(m->vars, m->n_vars, var_loc_t, addr, seq);
        }
    }
    size_t lo = LH_LOWER(m->vars, m->n_vars, var_loc_t, addr, start);
    return lo < m->n_vars && m->vars[lo].addr == start ? m->vars[lo].file : NULL;
}

int
lh_datasym_lookup(lh_datasym_t *ds, uint64_t addr, uint64_t epoch, lh_dsym_t *out)
{
    memset(out, 0, sizeof *out);
    long mi = lh_modules_find(ds->mods, addr, epoch);
    if (mi < 0) {
        return -1;
    }
    out->module = module_path(ds, mi);
    dmod_t *m = module_open(ds, mi);
    if (!m || !m->mod) {
        return 0;
    }
    uint64_t off = 0, size = 0;
    const char *name = data_addrinfo(ds, m, addr, &off, &size);
    if (!name) {
        return 0;
    }
    out->name = lh_strpool_demangled(&ds->pool, name);
    out->start = addr - off;
    out->size = size;
    out->file = var_file(ds, m, out->start);
    return out->name ? 1 : 0;
}

/* The first template argument of a class name that starts with prefix (up to the first
 * comma or '>' outside nested brackets), into buf; NULL when cls is not one. */
static const char *
first_targ(const char *cls, const char *prefix, char *buf, size_t len)
{
    size_t n = strlen(prefix);
    if (strncmp(cls, prefix, n) != 0) {
        return NULL;
    }
    int depth = 0;
    for (const char *p = cls + n; *p; p++) {
        if (*p == '<' || *p == '(') {
            depth++;
        } else if ((*p == '>' || *p == ')') && depth > 0) {
            depth--;
        } else if (depth == 0 && (*p == ',' || *p == '>')) {
            size_t k = (size_t)(p - (cls + n));
            if (k == 0 || k >= len) {
                return NULL;
            }
            memcpy(buf, cls + n, k);
            buf[k] = '\0';
            return buf;
        }
    }
    return NULL;
}

/* libstdc++'s shared_ptr control blocks are polymorphic, so a block from std::make_shared
 * is typed by the control block's vtable: std::_Sp_counted_ptr_inplace<Session,
 * std::allocator<void>, (__gnu_cxx::_Lock_policy)2>. Named after the object a user made:
 * "Session (std::make_shared)"; a shared_ptr<T>(new T)'s separate control block is
 * "shared_ptr control block of T". Other classes: NULL. */
static const char *
shared_ptr_class(lh_datasym_t *ds, const char *cls)
{
    char t[512], out[600];
    const char *arg;
    int n = -1;
    if ((arg = first_targ(cls, "std::_Sp_counted_ptr_inplace<", t, sizeof t))) {
        n = snprintf(out, sizeof out, "%s (std::make_shared)", arg);
    } else if ((arg = first_targ(cls, "std::_Sp_counted_ptr<", t, sizeof t))) {
        size_t k = strlen(t);
        while (k && (t[k - 1] == '*' || t[k - 1] == ' ')) {
            t[--k] = '\0';
        }
        n = snprintf(out, sizeof out, "shared_ptr control block of %s", arg);
    }
    return n > 0 && (size_t)n < sizeof out ? lh_strpool_add(&ds->pool, out, (size_t)n) : NULL;
}

/* "vtable for Foo" -> "Foo"; other names: NULL. */
static const char *
vtable_class(lh_datasym_t *ds, uint64_t value, uint64_t epoch)
{
    long mi = lh_modules_find(ds->mods, value, epoch);
    dmod_t *m = mi >= 0 ? module_open(ds, mi) : NULL;
    if (!m || !m->mod) {
        return NULL;
    }
    uint64_t off = 0, size = 0;
    const char *name = data_addrinfo(ds, m, value, &off, &size);
    if (!name || strncmp(name, "_ZTV", 4) != 0) {
        return NULL;
    }
    int status = -1;
    char *d = __cxa_demangle(name, NULL, NULL, &status);
    const char *r = NULL;
    static const char prefix[] = "vtable for ";
    if (d && status == 0 && strncmp(d, prefix, sizeof prefix - 1) == 0) {
        const char *cls = d + sizeof prefix - 1;
        r = shared_ptr_class(ds, cls);
        if (!r) {
            r = lh_strpool_add(&ds->pool, cls, strlen(cls));
        }
    } else {
        r = lh_strpool_add(&ds->pool, name + 4, strlen(name + 4)); /* undemanglable: the raw name */
    }
    free(d);
    return r;
}

const char *
lh_datasym_vtable_class(lh_datasym_t *ds, uint64_t value, uint64_t epoch)
{
    if (!value) {
        return NULL;
    }
    uint32_t k = lh_addrmap_get(&ds->vt, value, UINT32_MAX);
    if (k != UINT32_MAX) {
        return ds->vt_cls[k];
    }
    const char *cls = vtable_class(ds, value, epoch);
    /* without memory the answer is right but not cached */
    if (lh_grow(&ds->vt_cls, &ds->cap_vt_cls, ds->n_vt_cls, sizeof *ds->vt_cls, 64) == 0 &&
        lh_addrmap_put(&ds->vt, value, (uint32_t)ds->n_vt_cls) > 0) {
        ds->vt_cls[ds->n_vt_cls++] = cls;
    }
    return cls;
}

/* ---------------------------------------------------------------------------------------
 * Symbols by name (an interpreter's globals: PL_curinterp, _PyRuntime)
 * ------------------------------------------------------------------------------------- */

/* Where each of names[0 .. n) (n <= 32) is first defined, in table order, in the opened
 * module m: bit k of the result set when it is, with at[k] its run-time address. From the
 * cache when it has every name, else from one walk of the table (recorded, unless one of
 * the names is an absolute symbol: the load bias does not apply to it). -1 when the table
 * cannot be read. */
static int64_t
module_names(lh_datasym_t *ds, dmod_t *m, const char *const *names, int n, uint64_t *at)
{
    uint32_t have = 0;
    int k = 0;
    for (; k < n; k++) {
        uint64_t key = lh_fnv1a(LH_FNV_OFFSET, names[k], strlen(names[k])) | KEY_NAME, fa;
        const lh_symcache_frame_t *f;
        if (lh_symcache_get(m->dcache, key, &f) != 1 || !f[0].function ||
            strcmp(f[0].function, names[k]) != 0 ||
            (f[0].file && parse_hex(f[0].file, &fa, NULL) < 0)) {
            break;
        }
        if (f[0].file) {
            at[k] = fa + m->load_bias;
            have |= 1u << k;
        }
    }
    if (k == n) {
        return have;
    }
    have = 0;
    int ns = dwfl_module_getsymtab(m->mod);
    if (ns < 0) {
        return -1;
    }
    int absolute = 0;
    for (int i = 1; i < ns; i++) {
        GElf_Sym sym;
        GElf_Addr a;
        const char *s = dwfl_module_getsym_info(m->mod, i, &sym, &a, NULL, NULL, NULL);
        if (!s || sym.st_shndx == SHN_UNDEF) {
            continue;
        }
        for (k = 0; k < n; k++) {
            if (!(have & 1u << k) && strcmp(s, names[k]) == 0) {
                at[k] = a;
                have |= 1u << k;
                absolute |= sym.st_shndx == SHN_ABS;
            }
        }
    }
    for (k = 0; k < n && m->dcache && !absolute; k++) {
        uint64_t key = lh_fnv1a(LH_FNV_OFFSET, names[k], strlen(names[k])) | KEY_NAME;
        int def = (have & 1u << k) != 0;
        lh_symcache_frame_t cf = {pool_str(ds, names[k]),
                                  def ? pool_hex(ds, at[k] - m->load_bias, NULL) : NULL, 0, 0};
        if (cf.function && (!def || cf.file)) {
            lh_symcache_put(m->dcache, key, &cf, 1);
        }
    }
    return have;
}

int
lh_datasym_find(lh_datasym_t *ds, const char *module_prefix, const char *const *names,
                int n_names, uint64_t epoch, uint64_t *addr)
{
    size_t plen = strlen(module_prefix);
    int best = -1; /* the first of names met so far; only those before it are looked for */
    uint64_t at[LH_DATASYM_MAX_NAMES];
    if (n_names > LH_DATASYM_MAX_NAMES) {
        return -1;
    }
    for (size_t mi = 0; mi < ds->mods->n; mi++) {
        const lh_module_t *md = &ds->mods->mods[mi];
        if (md->epoch_loaded > epoch || md->epoch_unloaded <= epoch) {
            continue;
        }
        const char *path = module_path(ds, (long)mi);
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        if (strncmp(base, module_prefix, plen) != 0) {
            continue;
        }
        dmod_t *m = module_open(ds, (long)mi);
        int64_t have = m && m->mod ? module_names(ds, m, names, n_names, at) : -1;
        if (have <= 0) {
            continue;
        }
        /* the module's first name of those still looked for (at the address where the
         * table defines it first): what a walk that narrows the search as it finds finds */
        for (int k = 0; k < (best < 0 ? n_names : best); k++) {
            if (have & (int64_t)1 << k) {
                best = k;
                *addr = at[k];
                break;
            }
        }
        if (best == 0) {
            return 0;
        }
    }
    return best;
}
