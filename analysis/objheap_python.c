/* leakhound - SPDX-License-Identifier: MIT
 *
 * objheap_python.c: the CPython decoder of objheap.h. pyheap.h does the decoding (objects,
 * labelled references, roots, the collector's unreachable rule) from the snapshot's memory
 * (procimage.h: the pages, and the modules' files for read-only strings); this file hands
 * the result to the generic graph:
 *
 *   - every object with its type's tp_name as kind and, for instances of classes defined
 *     in Python, the class qualified by its module as class ("app.Connection");
 *   - references: list/tuple items as ELEM, dict values under str keys as KEY, attributes
 *     and fields as ATTR, a weak reference's referent as a WEAK REF; the rest (a key
 *     object, a set element, a word of an unknown C type) as INTERNAL with pyheap's label;
 *   - module globals and class attributes as GLOBAL names ("app._handlers",
 *     "app.Connection.pool"), frame locals as LEXICAL names ("handle() local 'buf'");
 *   - roots: the module table (sys.modules), the sys and builtins dicts, the frames of the
 *     threads (their locals), C statics, and the objects only C code holds ("referenced
 *     from C": a reference count higher than the references found);
 *   - the native blocks of an object (with PYTHONMALLOC=malloc, or objects larger than
 *     pymalloc's 512 bytes): its own (which starts at its GC header) and its buffers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objheap.h"
#include "procimage.h"
#include "pyheap.h"

static const char *
data_symbol(void *ctx, uint64_t addr, uint64_t *start, uint64_t *size)
{
    lh_heapgraph_t *hg = ctx;
    lh_dsym_t s;
    if (!hg->ds || lh_datasym_lookup(hg->ds, addr, hg->epoch, &s) != 1) {
        return NULL;
    }
    *start = s.start;
    *size = s.size;
    return s.name;
}

/* A module of the snapshot that is a CPython: the python executable or libpython. */
static int
has_python(const lh_heapgraph_t *hg)
{
    const lh_modules_t *mods = &lh_trace_parts(hg->trace)->modules;
    const char *exe = lh_trace_parts(hg->trace)->info.exe;
    for (size_t i = 0; i < mods->n; i++) {
        const char *p = mods->mods[i].path && mods->mods[i].path[0] ? mods->mods[i].path
                                                                    : exe ? exe : "";
        const char *b = strrchr(p, '/');
        b = b ? b + 1 : p;
        if (strncmp(b, "python", 6) == 0 || strncmp(b, "libpython", 9) == 0) {
            return 1;
        }
    }
    return 0;
}

static int
is_index(const char *s, uint64_t *idx)
{
    if (s[0] != '[' || !s[1]) {
        return 0;
    }
    uint64_t v = 0;
    size_t i = 1;
    for (; s[i] >= '0' && s[i] <= '9'; i++) {
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (i == 1 || s[i] != ']' || s[i + 1]) {
        return 0;
    }
    *idx = v;
    return 1;
}

/* One pyheap edge as an objheap edge. */
static int
add_edge(lh_objheap_t *oh, int64_t src, uint64_t dst, const char *lab, int ekind)
{
    uint64_t idx;
    size_t n = strlen(lab);
    if (ekind == LH_PYEDGE_WEAK) {
        return lh_objheap_add_edge(oh, src, dst, LH_OBJEDGE_REF, LH_OBJEDGE_WEAK, NULL, 0);
    }
    if (is_index(lab, &idx)) {
        return lh_objheap_add_edge(oh, src, dst, LH_OBJEDGE_ELEM, 0, NULL, idx);
    }
    if (n >= 4 && strncmp(lab, "['", 2) == 0 && strcmp(lab + n - 2, "']") == 0) {
        char key[512];
        snprintf(key, sizeof key, "%.*s", (int)(n - 4), lab + 2);
        return lh_objheap_add_edge(oh, src, dst, LH_OBJEDGE_KEY, 0, key, 0);
    }
    if (lab[0] == '.' && strcmp(lab, ".__class__") != 0) {
        return lh_objheap_add_edge(oh, src, dst, LH_OBJEDGE_ATTR, 0, lab + 1, 0);
    }
    return lh_objheap_add_edge(oh, src, dst, LH_OBJEDGE_INTERNAL, 0, lab, 0);
}

static int
fill(lh_objheap_t *oh, lh_procimage_t *pi, const lh_pyheap_t *ph)
{
    int rc;
    char cls[600], detail[600];
    /* which objects are classes: they say "class Connection" in paths */
    uint8_t *is_type = calloc(ph->n_objs ? ph->n_objs : 1, 1);
    if (!is_type) {
        return LH_ENOMEM;
    }
    for (uint32_t t = 0; t < ph->n_types; t++) {
        if (ph->types[t].obj != UINT32_MAX) {
            is_type[ph->types[t].obj] = 1;
        }
    }
    for (uint32_t i = 0; i < ph->n_objs; i++) {
        const lh_pyobj_t *ob = &ph->objs[i];
        const lh_pytype_t *t = &ph->types[ob->type];
        const char *c = NULL;
        if (t->module && !oh->claim_only && strcmp(t->module, "builtins") != 0) {
            if (strchr(t->name, '.')) {
                c = t->name; /* a C extension's heap type names its module already */
            } else {
                snprintf(cls, sizeof cls, "%s.%s", t->module, t->name);
                c = cls;
            }
        }
        /* objheap adds the sizes of the native blocks an object owns to its size (a Perl
         * SV's body and buffers are blocks of their own): pass what those blocks do not
         * cover (all of it under pymalloc, where objects are not malloc blocks) */
        uint64_t head = ob->flags & LH_PYOBJ_GC ? ob->addr - (uint64_t)ph->off->gc_head_size
                                                : ob->addr;
        uint64_t owned[3] = {head, ob->buf[0], ob->buf[1]};
        uint32_t blk[3];
        uint64_t covered = 0;
        for (int j = 0; j < 3; j++) {
            blk[j] = owned[j] ? lh_heapgraph_block_at(oh->hg, owned[j]) : LH_NODE_NONE;
            if (blk[j] != LH_NODE_NONE && (j == 0 || blk[j] != blk[0]) &&
                (j < 2 || blk[j] != blk[1])) {
                covered += oh->hg->blocks[blk[j]].size;
            }
        }
        int64_t k = lh_objheap_add(oh, ob->addr, ob->size > covered ? ob->size - covered : 0,
                                   oh->claim_only ? NULL : t->name, c);
        if (k < 0) {
            free(is_type);
            return (int)k;
        }
        if (!oh->claim_only &&
            (is_type[i] || strcmp(t->name, "function") == 0 ||
             strcmp(t->name, "module") == 0 || strcmp(t->name, "code") == 0)) {
            lh_pyheap_describe(pi, ph, i, detail, sizeof detail);
            if ((rc = lh_objheap_set_detail(oh, k, detail)) < 0) {
                free(is_type);
                return rc;
            }
        }
        /* its own block starts at its GC header (and, for instances with a managed dict,
         * two words before that: the block contains the header either way) */
        if ((rc = lh_objheap_own(oh, k, head)) < 0 ||
            (ob->buf[0] && (rc = lh_objheap_own(oh, k, ob->buf[0])) < 0) ||
            (ob->buf[1] && (rc = lh_objheap_own(oh, k, ob->buf[1])) < 0)) {
            free(is_type);
            return rc;
        }
    }
    free(is_type);
    for (uint32_t i = 0; i < ph->n_objs; i++) {
        for (uint64_t e = ph->eoff[i]; e < ph->eoff[i + 1]; e++) {
            uint64_t dst = ph->objs[ph->edst[e]].addr;
            int weak = ph->ecount[e] == LH_PYEDGE_WEAK;
            rc = oh->claim_only /* (an ELEM edge has no label to intern) */
                     ? lh_objheap_add_edge(oh, i, dst, LH_OBJEDGE_ELEM,
                                           weak ? LH_OBJEDGE_WEAK : 0, NULL, 0)
                     : add_edge(oh, i, dst, ph->labels[ph->elabel[e]], ph->ecount[e]);
            if (rc < 0) {
                return rc;
            }
        }
    }
    for (uint32_t r = 0; r < ph->n_roots; r++) {
        const lh_pyroot_t *pr = &ph->roots[r];
        uint64_t addr = ph->objs[pr->obj].addr;
        switch (pr->kind) {
        case LH_PYROOT_GLOBAL:
        case LH_PYROOT_CLASSATTR:
            rc = oh->claim_only ? 0 : lh_objheap_add_name(oh, pr->obj, LH_OBJNAME_GLOBAL,
                                                          pr->name);
            break;
        case LH_PYROOT_LOCAL:
            rc = oh->claim_only ? 0 : lh_objheap_add_name(oh, pr->obj, LH_OBJNAME_LEXICAL,
                                                          pr->name);
            if (rc == 0) {
                rc = lh_objheap_add_root(oh, LH_OBJROOT_STACK, "the frames of the threads",
                                         addr);
            }
            break;
        case LH_PYROOT_INTERP:
            rc = lh_objheap_add_root(oh, strcmp(pr->name, "sys.modules") == 0
                                             ? LH_OBJROOT_SYMTAB : LH_OBJROOT_INTERP,
                                     pr->name, addr);
            break;
        case LH_PYROOT_CSTATIC:
            rc = lh_objheap_add_root(oh, LH_OBJROOT_INTERP, pr->name, addr);
            break;
        default:
            rc = lh_objheap_add_root(oh, LH_OBJROOT_INTERP, "referenced from C", addr);
            break;
        }
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}

int
lh_objheap_python_decode(lh_objheap_t *oh, lh_err_t *err)
{
    lh_heapgraph_t *hg = oh->hg;
    if (!has_python(hg)) {
        return 0;
    }
    oh->lang = LH_OBJLANG_PYTHON;
    if (!hg->sf.n_pages) {
        snprintf(oh->note, sizeof oh->note, "python: snapshot %zu has no memory contents",
                 hg->cur + 1);
        oh->needs_full = 1;
        return 1;
    }
    lh_procimage_t *pi = NULL;
    lh_pyheap_t *ph = NULL;
    lh_err_t e2 = {{0}};
    int rc = lh_procimage_new(&hg->sf, &lh_trace_parts(hg->trace)->modules, hg->epoch,
                              lh_trace_parts(hg->trace)->info.exe, &pi, &e2);
    if (rc < 0) {
        snprintf(oh->note, sizeof oh->note, "%s", e2.msg);
        return rc == LH_ENOMEM ? lh_err_set(err, rc, "%s", e2.msg) : 1;
    }
    lh_pyheap_opts_t po = {data_symbol, hg, &hg->sf, oh->claim_only};
    rc = lh_pyheap_decode(pi, &po, &ph, &e2);
    if (rc == LH_ENOENT) {
        /* a python module whose symbols cannot be read: its file changed since the run
         * (another build id), or it is no interpreter (a python3 wrapper of some kind) */
        snprintf(oh->note, sizeof oh->note, "python: no _PyRuntime symbol in the python "
                 "module of this trace (its file changed since the run?): native view only");
        lh_procimage_free(pi);
        return 1;
    }
    if (rc == LH_ENOMEM) {
        lh_procimage_free(pi);
        return lh_err_set(err, rc, "%s", e2.msg);
    }
    if (rc < 0) {
        snprintf(oh->note, sizeof oh->note, "%s", e2.msg);
        lh_procimage_free(pi);
        return 1;
    }
    snprintf(oh->version, sizeof oh->version, "%s", ph->version);
    oh->collector_off = ph->collector;
    if (ph->warning[0]) {
        snprintf(oh->note, sizeof oh->note, "python %s: %s", ph->version, ph->warning);
    }
    rc = fill(oh, pi, ph);
    lh_pyheap_free(ph);
    lh_procimage_free(pi);
    if (rc < 0) {
        return rc == LH_ENOMEM ? lh_err_set(err, rc, "out of memory decoding the python heap")
                               : lh_err_set(err, rc, "python heap: inconsistent objects");
    }
    return 1;
}
