/* leakhound - SPDX-License-Identifier: MIT
 *
 * pyheap.c: the CPython heap decoder (see pyheap.h). Sections: the decoder's state and
 * small tables; reading str and type objects; finding objects; the references of each
 * kind of object; roots; the collector's unreachable rule; the result.
 */
#include "pyheap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addrmap.h"
#include "bound.h"
#include "dupstr.h"
#include "grow.h"
#include "hash.h"

#define NONE32 UINT32_MAX
#define MAX_INTERPS 64
#define MAX_FRAMES 100000
#define MAX_ITEMS (1u << 26)  /* a container with more items is corrupt */
#define STR_MAX 200           /* labels and names are cut here */

/* ---------------------------------------------------------------------------------------
 * Decoder state
 * ------------------------------------------------------------------------------------- */
enum kind {
    K_OTHER = 0, K_TYPE, K_DICT, K_LIST, K_TUPLE, K_SET, K_FUNCTION, K_CELL, K_METHOD,
    K_MODULE, K_STR, K_INT, K_BYTES, K_FLOAT, K_CODE, K_WEAKREF, K_GEN, K_CORO, K_AGEN,
    K_FRAME, K_NONE_LIKE,
    K_DEQUE, /* collections.deque: known by name, no exported symbol (deque_refs) */
    K_TLOCAL, /* threading.local (_thread._local): known by name (tlocal_refs) */
};

typedef struct tinfo {
    uint64_t addr;
    uint64_t flags;
    int64_t basicsize, itemsize, dictoffset, weaklistoffset;
    uint8_t kind;       /* of the type or of its nearest builtin base */
    int8_t clayout;     /* index in c_layouts of it or a base (c_layout_of), -1: none */
    uint32_t name;      /* index into ph->types */
} tinfo_t;

typedef struct edge {
    uint32_t src, dst, label;
    uint8_t count;
} edge_t;

typedef struct dec {
    lh_procimage_t *pi;
    const lh_pyoffsets_t *o;
    lh_pyheap_t *ph;
    lh_addrmap_t objmap;   /* object address -> index */
    lh_addrmap_t typemap;  /* type address -> tinfo index (NONE32 - 1: not a type) */
    tinfo_t *tinfo;
    uint32_t n_tinfo;
    size_t cap_tinfo, cap_objs, cap_types;
    edge_t *edges;
    uint64_t n_edges;
    size_t cap_edges;
    lh_addrmap_t labelmap; /* label hash -> index (collisions checked by strcmp) */
    size_t cap_labels, cap_roots;
    uint64_t static_types[K_NONE_LIKE + 1];
    uint64_t set_dummy;
    uint32_t *work;
    uint32_t n_work;
    size_t cap_work;
    lh_addrmap_t local_keys; /* a thread's threading.local key object -> index in tids */
    uint64_t *tids;          /* thread ids, in the interpreters' thread lists' order */
    char **tnames;           /* their threading names (NULL: none), in tids' order */
    uint32_t n_tids;
    size_t cap_tids, cap_tnames;
    int nolab; /* opts->no_labels: every edge's label is "" (labels[0]) */
    int oom;
} dec_t;

static uint64_t
rd(dec_t *d, uint64_t addr, int *ok)
{
    return lh_procimage_word(d->pi, addr, ok);
}

/* The i-th word of an array at base into *v: 1, or 0 where that memory is not in the
 * snapshot (the end of a walk over the array). */
static int
rd_slot(dec_t *d, uint64_t base, uint64_t i, uint64_t *v)
{
    int ok;
    *v = lh_procimage_word(d->pi, base + i * 8, &ok);
    return ok;
}

static int64_t
rd_i64(dec_t *d, uint64_t addr, int *ok)
{
    return (int64_t)lh_procimage_word(d->pi, addr, ok);
}

static uint32_t
rd_u32(dec_t *d, uint64_t addr, int *ok)
{
    uint32_t v = 0;
    int r = lh_procimage_read(d->pi, addr, &v, sizeof v);
    if (ok) {
        *ok = r == 0;
    }
    return v;
}

static uint8_t
rd_u8(dec_t *d, uint64_t addr, int *ok)
{
    uint8_t v = 0;
    int r = lh_procimage_read(d->pi, addr, &v, 1);
    if (ok) {
        *ok = r == 0;
    }
    return v;
}

/* ---------------------------------------------------------------------------------------
 * Labels
 * ------------------------------------------------------------------------------------- */
/* Never 0 (an empty slot of the label table). */
static uint64_t
shash(const char *s)
{
    uint64_t h = lh_hash_str(s);
    return h ? h : 1;
}

static uint32_t
label(dec_t *d, const char *s)
{
    lh_pyheap_t *ph = d->ph;
    if (d->nolab) {
        if (ph->n_labels) {
            return 0;
        }
        s = ""; /* the first call makes it labels[0] */
    }
    uint64_t h = shash(s);
    /* linear probing on the hash itself: equal hashes of different strings are chained
     * by perturbing the key */
    for (uint64_t k = h;; k = k * 31 + 7) {
        k = k ? k : 1;
        uint32_t i = lh_addrmap_get(&d->labelmap, k, NONE32);
        if (i == NONE32) {
            if (lh_grow(&ph->labels, &d->cap_labels, ph->n_labels, sizeof *ph->labels, 256) <
                0) {
                d->oom = 1;
                return 0;
            }
            char *c = strdup(s);
            if (!c || lh_addrmap_put(&d->labelmap, k, ph->n_labels) < 0) {
                free(c);
                d->oom = 1;
                return 0;
            }
            ph->labels[ph->n_labels] = c;
            return ph->n_labels++;
        }
        if (strcmp(ph->labels[i], s) == 0) {
            return i;
        }
    }
}

/* ---------------------------------------------------------------------------------------
 * str objects: compact strings only (every str since 3.3 except the legacy API's)
 * ------------------------------------------------------------------------------------- */
static void
put_utf8(char *buf, size_t cap, size_t *n, uint32_t c)
{
    char t[4];
    size_t k;
    if (c < 0x80) {
        t[0] = (char)c;
        k = 1;
    } else if (c < 0x800) {
        t[0] = (char)(0xc0 | c >> 6);
        t[1] = (char)(0x80 | (c & 0x3f));
        k = 2;
    } else if (c < 0x10000) {
        t[0] = (char)(0xe0 | c >> 12);
        t[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        t[2] = (char)(0x80 | (c & 0x3f));
        k = 3;
    } else {
        t[0] = (char)(0xf0 | c >> 18);
        t[1] = (char)(0x80 | ((c >> 12) & 0x3f));
        t[2] = (char)(0x80 | ((c >> 6) & 0x3f));
        t[3] = (char)(0x80 | (c & 0x3f));
        k = 4;
    }
    if (*n + k < cap) {
        memcpy(buf + *n, t, k);
        *n += k;
    }
}

/* The text of a str object (cut at cap - 1 bytes, "..." appended when cut). Returns the
 * length, or -1 when obj is not a readable compact str. */
static long
read_str(dec_t *d, uint64_t obj, char *buf, size_t cap)
{
    const lh_pyoffsets_t *o = d->o;
    int ok;
    int64_t len = rd_i64(d, obj + o->u_length, &ok);
    uint32_t state = ok ? rd_u32(d, obj + o->u_state, &ok) : 0;
    if (!ok || len < 0 || !(state >> o->u_compact_bit & 1)) {
        return -1;
    }
    unsigned kind = state >> o->u_kind_shift & 7;
    int ascii = state >> o->u_ascii_bit & 1;
    if (kind != 1 && kind != 2 && kind != 4) {
        return -1;
    }
    uint64_t data = obj + (ascii ? o->u_ascii_size : o->u_compact_size);
    size_t want = (size_t)(len < STR_MAX ? len : STR_MAX);
    uint8_t raw[STR_MAX * 4];
    if (lh_procimage_read(d->pi, data, raw, want * kind) != 0) {
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < want; i++) {
        uint32_t c = kind == 1 ? raw[i]
                   : kind == 2 ? (uint32_t)(raw[2 * i] | raw[2 * i + 1] << 8)
                               : (uint32_t)(raw[4 * i] | raw[4 * i + 1] << 8 |
                                            raw[4 * i + 2] << 16 | (uint32_t)raw[4 * i + 3] << 24);
        put_utf8(buf, cap > 4 ? cap - 3 : cap, &n, c);
    }
    if ((size_t)len > want && n + 4 <= cap) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n] = '\0';
    return (long)n;
}

/* ---------------------------------------------------------------------------------------
 * Types
 * ------------------------------------------------------------------------------------- */
static uint32_t
add_type_name(dec_t *d, uint64_t addr, const char *name, const char *module)
{
    lh_pyheap_t *ph = d->ph;
    if (lh_grow(&ph->types, &d->cap_types, ph->n_types, sizeof *ph->types, 256) < 0) {
        d->oom = 1;
        return 0;
    }
    lh_pytype_t *t = &ph->types[ph->n_types];
    t->addr = addr;
    t->name = strdup(name);
    t->module = module ? strdup(module) : NULL;
    t->obj = NONE32;
    if (!t->name || (module && !t->module)) {
        LH_FREE_ALL(t->name, t->module);
        d->oom = 1;
        return 0;
    }
    return ph->n_types++;
}

static uint8_t
static_kind(dec_t *d, uint64_t t)
{
    for (int k = 1; k <= K_NONE_LIKE; k++) {
        if (d->static_types[k] && d->static_types[k] == t) {
            return (uint8_t)k;
        }
    }
    return K_OTHER;
}

static long get_dict_item(dec_t *d, uint64_t dict, const char *key, uint64_t *val);
static int c_layout_of(dec_t *d, uint64_t t);

/* Whether the type at t is the C type whose tp_name is want (at most 31 characters), for
 * C types no symbol exports: collections.deque (a static type of the _collections module
 * until 3.12, a heap type of its module state in 3.13) and _thread._local (static until
 * 3.9, a heap type since). A class written in Python has no dot in its tp_name. */
static int
is_named_type(dec_t *d, uint64_t t, const char *want)
{
    char name[32];
    int ok;
    uint64_t np = rd(d, t + d->o->tp_name, &ok);
    return ok && lh_procimage_cstr(d->pi, np, name, sizeof name) == (long)strlen(want) &&
           strcmp(name, want) == 0;
}

/* The tinfo of a type object at t, validating it: its own type must be a type (a
 * metatype's flags carry TYPE_SUBCLASS) and its name must read. Returns NONE32 when t is
 * not a type. */
static uint32_t
type_info(dec_t *d, uint64_t t)
{
    const lh_pyoffsets_t *o = d->o;
    uint32_t ti = lh_addrmap_get(&d->typemap, t, NONE32);
    if (ti != NONE32) {
        return ti == NONE32 - 1 ? NONE32 : ti;
    }
    int ok = t && !(t & 7);
    uint64_t meta = ok ? rd(d, t + o->ob_type, &ok) : 0;
    uint64_t mflags = ok ? rd(d, meta + o->tp_flags, &ok) : 0;
    uint64_t flags = ok ? rd(d, t + o->tp_flags, &ok) : 0;
    int64_t bs = ok ? rd_i64(d, t + o->tp_basicsize, &ok) : 0;
    int64_t is = ok ? rd_i64(d, t + o->tp_itemsize, &ok) : 0;
    int64_t dof = ok ? rd_i64(d, t + o->tp_dictoffset, &ok) : 0;
    int64_t wof = ok ? rd_i64(d, t + o->tp_weaklistoffset, &ok) : 0;
    uint64_t np = ok ? rd(d, t + o->tp_name, &ok) : 0;
    char name[STR_MAX + 8];
    if (!ok || !(mflags & (uint64_t)o->tpf_type_sub) || bs <= 0 || bs > (1 << 24) || is < 0 ||
        is > (1 << 16) || lh_procimage_cstr(d->pi, np, name, sizeof name) <= 0) {
        lh_addrmap_put(&d->typemap, t, NONE32 - 1);
        return NONE32;
    }
    char module[STR_MAX + 8];
    int has_module = 0;
    if (flags & (uint64_t)o->tpf_heaptype) {
        uint64_t tdict = rd(d, t + o->tp_dict, &ok);
        uint64_t mv = 0;
        if (ok && tdict && get_dict_item(d, tdict, "__module__", &mv) >= 0 &&
            read_str(d, mv, module, sizeof module) > 0) {
            has_module = 1;
        }
    }
    if (lh_grow(&d->tinfo, &d->cap_tinfo, d->n_tinfo, sizeof *d->tinfo, 256) < 0) {
        d->oom = 1;
        return NONE32;
    }
    ti = d->n_tinfo++;
    tinfo_t *x = &d->tinfo[ti];
    x->addr = t;
    x->flags = flags;
    x->basicsize = bs;
    x->itemsize = is;
    x->dictoffset = dof;
    x->weaklistoffset = wof;
    x->name = add_type_name(d, t, name, has_module ? module : NULL);
    /* The kind: the type itself, or the nearest builtin base (a list subclass decodes its
     * items, then its instance attributes). */
    uint8_t kind = K_OTHER;
    uint64_t b = t;
    for (int depth = 0; b && depth < 64 && kind == K_OTHER; depth++) {
        kind = static_kind(d, b);
        if (kind == K_OTHER && is_named_type(d, b, "collections.deque")) {
            kind = K_DEQUE;
        } else if (kind == K_OTHER && is_named_type(d, b, "_thread._local")) {
            kind = K_TLOCAL;
        }
        b = rd(d, b + o->tp_base, &ok);
        if (!ok) {
            break;
        }
    }
    if (kind == K_OTHER && (mflags & (uint64_t)o->tpf_type_sub) &&
        (flags & (uint64_t)o->tpf_type_sub)) {
        kind = K_TYPE;
    }
    x->kind = kind;
    x->clayout = kind == K_OTHER ? (int8_t)c_layout_of(d, t) : -1;
    lh_addrmap_put(&d->typemap, t, ti);
    return ti;
}

/* ---------------------------------------------------------------------------------------
 * Objects
 * ------------------------------------------------------------------------------------- */
static uint32_t
obj_add(dec_t *d, uint64_t addr, uint32_t ti, uint32_t flags)
{
    lh_pyheap_t *ph = d->ph;
    if (lh_grow(&ph->objs, &d->cap_objs, ph->n_objs, sizeof *ph->objs, 4096) < 0) {
        d->oom = 1;
        return NONE32;
    }
    uint32_t i = ph->n_objs;
    lh_pyobj_t *ob = &ph->objs[i];
    memset(ob, 0, sizeof *ob);
    ob->addr = addr;
    ob->type = ti; /* tinfo index until the end, then the type name index */
    ob->flags = flags;
    ob->refcnt = rd(d, addr + d->o->ob_refcnt, NULL);
    if (lh_addrmap_put(&d->objmap, addr, i) < 0) {
        d->oom = 1;
        return NONE32;
    }
    ph->n_objs++;
    if (lh_grow(&d->work, &d->cap_work, d->n_work, sizeof *d->work, 4096) < 0) {
        d->oom = 1;
        return i;
    }
    d->work[d->n_work++] = i;
    return i;
}

/* The object at addr: known, or validated (aligned, readable, a type that validates) and
 * added. NONE32 when addr is not an object. */
static uint32_t
obj_get(dec_t *d, uint64_t addr)
{
    if (!addr || (addr & 7)) {
        return NONE32;
    }
    uint32_t i = lh_addrmap_get(&d->objmap, addr, NONE32);
    if (i != NONE32) {
        return i;
    }
    int ok;
    uint64_t t = rd(d, addr + d->o->ob_type, &ok);
    uint32_t ti = ok ? type_info(d, t) : NONE32;
    if (ti == NONE32) {
        return NONE32;
    }
    return obj_add(d, addr, ti, 0);
}

/* obj_get for a word a conservative scan found (scan_words), which may be any pointer: a
 * block whose second word points to a type is no object when its first word, the
 * reference count, is the address of an object too (a C module's state, which starts
 * with its objects: _sqlite3's with &DataError, &DatabaseError, was taken for a
 * DatabaseError). A count as large as an address is no real one, but a small address
 * (Debian's python3 is no PIE: its data from 0x400000) can be: only an object's is
 * refused, which no count equals. */
static uint32_t
obj_get_scanned(dec_t *d, uint64_t addr)
{
    uint32_t i = addr && !(addr & 7) ? lh_addrmap_get(&d->objmap, addr, NONE32) : NONE32;
    if (i != NONE32 || !addr || (addr & 7)) {
        return i;
    }
    int ok;
    uint64_t rc = rd(d, addr + d->o->ob_refcnt, &ok);
    if (ok && rc && !(rc & 7)) {
        if (lh_addrmap_get(&d->objmap, rc, NONE32) != NONE32) {
            return NONE32;
        }
        uint64_t t = rd(d, rc + d->o->ob_type, &ok);
        if (ok && type_info(d, t) != NONE32) {
            return NONE32;
        }
    }
    return obj_get(d, addr);
}

static void
edge_add(dec_t *d, uint32_t src, uint32_t dst, uint32_t lab, int count)
{
    if (lh_grow(&d->edges, &d->cap_edges, d->n_edges, sizeof *d->edges, 16384) < 0) {
        d->oom = 1;
        return;
    }
    d->edges[d->n_edges++] = (edge_t){src, dst, lab, (uint8_t)count};
}

/* A reference from object src to the object at addr, if it is one. */
static void
ref(dec_t *d, uint32_t src, uint64_t addr, const char *lab, int count)
{
    uint32_t dst = obj_get(d, addr);
    if (dst != NONE32) {
        edge_add(d, src, dst, label(d, lab), count);
    }
}

static void
ref_field_kind(dec_t *d, uint32_t src, uint64_t obj, int64_t off, const char *lab, int kind)
{
    int ok;
    uint64_t v = rd(d, obj + (uint64_t)off, &ok);
    if (ok && v) {
        ref(d, src, v, lab, kind);
    }
}

static void
ref_field(dec_t *d, uint32_t src, uint64_t obj, int64_t off, const char *lab)
{
    ref_field_kind(d, src, obj, off, lab, LH_PYEDGE_COUNTED);
}

/* ---------------------------------------------------------------------------------------
 * Dicts
 * ------------------------------------------------------------------------------------- */
typedef struct dictview {
    uint64_t entries;     /* first entry */
    uint64_t n;           /* entries in use or deleted (dk_nentries) */
    uint64_t esize, koff, voff;
    uint64_t values;      /* split table: the values array, else 0 */
    uint64_t keys_bytes;  /* size of the keys object */
} dictview_t;

static int
keys_view(dec_t *d, uint64_t keys, dictview_t *v)
{
    const lh_pyoffsets_t *o = d->o;
    int ok;
    memset(v, 0, sizeof *v);
    int64_t nent = rd_i64(d, keys + o->dk_nentries, &ok);
    if (!ok || nent < 0 || nent > MAX_ITEMS) {
        return -1;
    }
    uint64_t size, index_bytes;
    if (o->dk_layout == 0) {
        int64_t s = rd_i64(d, keys + o->dk_size, &ok);
        if (!ok || s <= 0 || s > MAX_ITEMS || (s & (s - 1))) {
            return -1;
        }
        size = (uint64_t)s;
        unsigned w = size <= 0xff ? 1 : size <= 0xffff ? 2 : size <= 0xffffffffULL ? 4 : 8;
        index_bytes = size * w;
        v->esize = (uint64_t)o->dk_entry_size;
        v->koff = (uint64_t)o->dk_entry_key;
        v->voff = (uint64_t)o->dk_entry_value;
    } else {
        uint8_t l2 = rd_u8(d, keys + o->dk_log2_size, &ok);
        uint8_t l2i = ok ? rd_u8(d, keys + o->dk_log2_index_bytes, &ok) : 0;
        uint8_t kind = ok ? rd_u8(d, keys + o->dk_kind, &ok) : 0;
        if (!ok || l2 > 30 || l2i > 34) {
            return -1;
        }
        size = 1ULL << l2;
        index_bytes = 1ULL << l2i;
        int general = kind == (uint8_t)o->dk_kind_general;
        v->esize = (uint64_t)(general ? o->dk_entry_size : o->dk_uentry_size);
        v->koff = (uint64_t)(general ? o->dk_entry_key : o->dk_uentry_key);
        v->voff = (uint64_t)(general ? o->dk_entry_value : o->dk_uentry_value);
    }
    if ((uint64_t)nent > size) {
        return -1;
    }
    v->entries = keys + (uint64_t)o->dk_indices + index_bytes;
    v->n = (uint64_t)nent;
    v->keys_bytes = (uint64_t)o->dk_indices + index_bytes + (2 * size / 3) * v->esize;
    return 0;
}

/* A dict's entries. Returns 0, or -1 when the dict does not read. */
static int
dict_view(dec_t *d, uint64_t dict, dictview_t *v)
{
    int ok;
    uint64_t keys = rd(d, dict + d->o->d_keys, &ok);
    uint64_t values = ok ? rd(d, dict + d->o->d_values, &ok) : 0;
    if (!ok || !keys || keys_view(d, keys, v) != 0) {
        return -1;
    }
    v->values = values ? values + (uint64_t)d->o->dv_values : 0;
    return 0;
}

static uint64_t
entry_key(dec_t *d, const dictview_t *v, uint64_t i)
{
    return rd(d, v->entries + i * v->esize + v->koff, NULL);
}

static uint64_t
entry_value(dec_t *d, const dictview_t *v, uint64_t i)
{
    if (v->values) {
        return rd(d, v->values + i * 8, NULL);
    }
    return rd(d, v->entries + i * v->esize + v->voff, NULL);
}

/* The value of the str key in a dict; returns its entry index or -1. */
static long
get_dict_item(dec_t *d, uint64_t dict, const char *key, uint64_t *val)
{
    dictview_t v;
    if (dict_view(d, dict, &v) != 0) {
        return -1;
    }
    char buf[STR_MAX + 8];
    for (uint64_t i = 0; i < v.n; i++) {
        uint64_t k = entry_key(d, &v, i);
        if (k && read_str(d, k, buf, sizeof buf) >= 0 && strcmp(buf, key) == 0) {
            *val = entry_value(d, &v, i);
            return *val ? (long)i : -1;
        }
    }
    return -1;
}

static int64_t var_size(dec_t *d, uint64_t obj);

/* A dict key as Python writes it, in buf: 'name', 3, -1, a tuple of those ("('10.0.0.7',
 * 443)", two levels at most, four items each: a per-request key). Returns 0, or -1 when
 * the key is none of these (or does not fit). */
static int
key_repr(dec_t *d, uint64_t k, char *buf, size_t cap, int depth)
{
    char s[STR_MAX + 8];
    int ok;
    uint64_t t = rd(d, k + d->o->ob_type, &ok);
    uint32_t ti = ok ? type_info(d, t) : NONE32;
    uint8_t kind = ti != NONE32 ? d->tinfo[ti].kind : K_OTHER;
    int n = -1;
    if (kind == K_STR && read_str(d, k, s, sizeof s) >= 0) {
        n = snprintf(buf, cap, "'%s'", s);
    } else if (kind == K_INT) {
        int64_t nd = rd_i64(d, k + d->o->l_tag, &ok);
        int neg = 0;
        if (d->o->l_tag_shift) {
            neg = (nd & 3) == 2;
            nd = nd >> d->o->l_tag_shift;
        } else if (nd < 0) {
            neg = 1;
            nd = -nd;
        }
        /* up to 64 bits (30-bit digits): a thread id, a pointer, a 64-bit hash */
        uint64_t val = 0;
        int fits = ok && nd <= 3;
        for (int64_t j = 0; fits && j < nd; j++) {
            uint32_t dig = rd_u32(d, k + d->o->l_digit + (uint64_t)j * 4, &ok);
            fits = ok && dig < (1u << 30) && (j < 2 || dig < 16);
            val |= (uint64_t)dig << (30 * j);
        }
        if (fits) {
            n = snprintf(buf, cap, "%s%llu", neg ? "-" : "", (unsigned long long)val);
        }
    } else if (kind == K_TUPLE && depth < 2) {
        int64_t items = var_size(d, k);
        size_t at = 0;
        if (items < 0 || items > 4 || cap < 4) {
            return -1;
        }
        buf[at++] = '(';
        for (int64_t i = 0; i < items; i++) {
            uint64_t v = rd(d, k + (uint64_t)d->o->tu_item + (uint64_t)i * 8, &ok);
            if (i && at + 2 < cap) {
                buf[at++] = ',';
                buf[at++] = ' ';
            }
            if (!ok || !v || at + 2 >= cap || key_repr(d, v, buf + at, cap - at, depth + 1) < 0) {
                return -1;
            }
            at += strlen(buf + at);
        }
        n = snprintf(buf + at, cap - at, "%s)", items == 1 ? "," : "");
        n = n < 0 ? n : (int)at + n;
    }
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* The label of a dict entry whose key is at k: "['name']", "[3]", "[('a', 1)]",
 * "[<frozenset>]". */
static void
key_label(dec_t *d, uint64_t k, char *buf, size_t cap, const char *pre, const char *post)
{
    char r[STR_MAX + 8];
    if (key_repr(d, k, r, sizeof r, 0) == 0) {
        snprintf(buf, cap, "%s%s%s", pre, r, post);
        return;
    }
    int ok;
    uint64_t t = rd(d, k + d->o->ob_type, &ok);
    uint32_t ti = ok ? type_info(d, t) : NONE32;
    snprintf(buf, cap, "%s<%s>%s", pre, ti != NONE32 ? d->ph->types[d->tinfo[ti].name].name : "?",
             post);
}

/* The references of a dict. skip_values: a namespace whose values became roots. */
static uint64_t
dict_refs(dec_t *d, uint32_t src, uint64_t dict, int skip_values)
{
    dictview_t v;
    if (dict_view(d, dict, &v) != 0) {
        return 0;
    }
    char lab[STR_MAX + 16];
    for (uint64_t i = 0; i < v.n; i++) {
        uint64_t k = entry_key(d, &v, i);
        uint64_t val = entry_value(d, &v, i);
        if (!k || !val) {
            continue; /* an empty or deleted entry */
        }
        if (!d->nolab) {
            key_label(d, k, lab, sizeof lab, "[", "]");
        }
        if (!v.values) {
            ref(d, src, k, "(key)", 1); /* split tables share their keys: the type holds them */
        }
        uint32_t dst = obj_get(d, val);
        if (dst != NONE32) {
            edge_add(d, src, dst, label(d, lab),
                     skip_values ? LH_PYEDGE_NAMESPACE : LH_PYEDGE_COUNTED);
        }
    }
    /* owned memory: the keys object when not shared (a split table shares its type's),
     * the values array of a split table */
    lh_pyobj_t *ob = &d->ph->objs[src];
    if (v.values) {
        ob->buf[1] = v.values - (uint64_t)d->o->dv_values;
    } else {
        ob->buf[0] = rd(d, dict + d->o->d_keys, NULL);
    }
    return v.values ? v.n * 8 : v.keys_bytes;
}

/* ---------------------------------------------------------------------------------------
 * References by kind
 * ------------------------------------------------------------------------------------- */
static int64_t
var_size(dec_t *d, uint64_t obj)
{
    int64_t n = rd_i64(d, obj + d->o->ob_size, NULL);
    return n < 0 ? -n : n;
}

/* "[i]" in lab (at least 32 bytes), without printf: a million list items are common. */
static const char *
index_label(char *lab, int64_t i)
{
    char num[24];
    size_t k = sizeof num;
    uint64_t x = (uint64_t)i;
    do {
        num[--k] = (char)('0' + x % 10);
        x /= 10;
    } while (x);
    lab[0] = '[';
    memcpy(lab + 1, num + k, sizeof num - k);
    lab[1 + sizeof num - k] = ']';
    lab[2 + sizeof num - k] = '\0';
    return lab;
}

static void
items_refs(dec_t *d, uint32_t src, uint64_t items, int64_t n)
{
    char lab[32];
    if (n < 0 || n > MAX_ITEMS) {
        return;
    }
    uint64_t v;
    for (int64_t i = 0; i < n && rd_slot(d, items, (uint64_t)i, &v); i++) {
        if (v) {
            ref(d, src, v, index_label(lab, i), 1);
        }
    }
}

/* collections.deque (Modules/_collectionsmodule.c, the same from 3.5 to 3.13): after the
 * var head (ob_size: the length), block *leftblock, *rightblock, Py_ssize_t leftindex,
 * rightindex; a block is {leftlink, PyObject *data[64], rightlink}, malloc'd apart from
 * the deque. The items live in that chain, not in the deque's struct: without this, what
 * only a deque held (queue.Queue's backlog, an event system's listeners) was "referenced
 * from C". The chain is checked first: exactly ob_size items from leftblock[leftindex]
 * to rightblock[rightindex], through at most ob_size / 64 + 2 blocks. Returns 0 when the
 * items were decoded, -1 when the deque does not read as one (then its struct is scanned
 * as an unknown type's). */
#define DQ_BLOCKLEN 64
static int
deque_refs(dec_t *d, uint32_t src, uint64_t a)
{
    const uint64_t head = (uint64_t)d->o->ob_size + 8; /* leftblock */
    const uint64_t rlink = 8 + DQ_BLOCKLEN * 8;         /* a block's rightlink */
    int ok;
    int64_t n = var_size(d, a);
    uint64_t lb = rd(d, a + head, &ok);
    uint64_t rb = ok ? rd(d, a + head + 8, &ok) : 0;
    int64_t li = ok ? rd_i64(d, a + head + 16, &ok) : -1;
    int64_t ri = ok ? rd_i64(d, a + head + 24, &ok) : -1;
    if (!ok || n < 0 || n > MAX_ITEMS || li < 0 || li >= DQ_BLOCKLEN || ri < -1 ||
        ri >= DQ_BLOCKLEN || !lb || !rb) {
        return -1;
    }
    for (int pass = 0; pass < 2; pass++) {
        uint64_t b = lb;
        int64_t i = li, blocks = 1;
        for (int64_t k = 0; k < n; k++, i++) {
            if (i == DQ_BLOCKLEN) {
                b = rd(d, b + rlink, &ok);
                i = 0;
                if (!ok || !b || ++blocks > n / DQ_BLOCKLEN + 2) {
                    return -1;
                }
            }
            if (pass == 1) {
                char lab[32];
                uint64_t v = rd(d, b + 8 + (uint64_t)i * 8, &ok);
                if (ok && v) {
                    ref(d, src, v, index_label(lab, k), LH_PYEDGE_COUNTED);
                }
            }
        }
        if (n > 0 && (b != rb || i - 1 != ri)) {
            return -1;
        }
    }
    return 0;
}

/* threading.local (Modules/_threadmodule.c; not in any header, so its layout is written
 * here, by version, and checked: the base type's size and a dict where the table says).
 * 3.8-3.12: {key, args, kw, weakreflist, dummies, wr_callback}, dummies a dict {weak
 * reference to a thread's localdummy: that thread's attribute dict}, the localdummy being
 * the value of `key` in the thread's state dict; 3.13: {args, kw, weakreflist, localdicts,
 * thread_death_handles}, localdicts a dict {the thread's threading_local_key: its dict}.
 * The references are what local_traverse visits (args, kw, the dicts' dict, 3.13's set),
 * plus key and wr_callback (not visited: NAME edges). Then, as the program sees them, one
 * NAME edge per thread to its dict (".__dict__ [thread TID]") and one per attribute
 * (".sessions [thread NAME]"): the attributes a thread set are in no field of the object,
 * and a path through the dicts' dict read "+0x30 -> [<weakref>] -> ['sessions']". The
 * thread is the one whose key is the dict's key (thread_tag; "[thread ?]": a thread that
 * has ended, or a key no thread state holds). Returns 0, or -1 when the object does not read as one
 * (its words are then scanned as an unknown type's). */
/* "[thread NAME]" for thread ti (an index in tids): its threading name (Thread.name, what
 * the program calls it), else its ident (a thread the threading module does not know: one
 * C started), "[thread ?]" for no thread. */
static void
thread_tag(const dec_t *d, uint32_t ti, char *buf, size_t cap)
{
    if (ti == NONE32 || ti >= d->n_tids) {
        snprintf(buf, cap, "[thread ?]");
    } else if (d->tnames[ti]) {
        snprintf(buf, cap, "[thread %s]", d->tnames[ti]);
    } else {
        snprintf(buf, cap, "[thread %llu]", (unsigned long long)d->tids[ti]);
    }
}

static int
tlocal_refs(dec_t *d, uint32_t src, uint64_t a)
{
    const lh_pyoffsets_t *o = d->o;
    const int v13 = o->minor >= 13;
    const int64_t size = v13 ? 56 : 64, args = v13 ? 16 : 24, dicts = v13 ? 40 : 48;
    int ok;
    uint64_t t = rd(d, a + o->ob_type, &ok);
    for (int depth = 0; ok && t && depth < 64 && !is_named_type(d, t, "_thread._local"); depth++) {
        t = rd(d, t + o->tp_base, &ok);
    }
    uint64_t dd = ok && t && rd_i64(d, t + o->tp_basicsize, &ok) == size ? rd(d, a + dicts, &ok) : 0;
    uint32_t di = ok && dd ? obj_get(d, dd) : NONE32;
    dictview_t v;
    if (di == NONE32 || d->tinfo[d->ph->objs[di].type].kind != K_DICT || dict_view(d, dd, &v)) {
        return -1;
    }
    ref_field(d, src, a, args, ".<args>");
    ref_field(d, src, a, args + 8, ".<kw>");
    ref_field(d, src, a, dicts, ".<dicts of threads>");
    if (v13) {
        ref_field(d, src, a, dicts + 8, ".<thread death handles>");
    } else {
        ref_field_kind(d, src, a, 16, ".<key>", LH_PYEDGE_NAME);
        ref_field_kind(d, src, a, dicts + 8, ".<weakref callback>", LH_PYEDGE_NAME);
    }
    char thr[STR_MAX + 16], lab[2 * STR_MAX + 64];
    for (uint64_t i = 0; i < v.n; i++) {
        uint64_t k = entry_key(d, &v, i);
        uint64_t ldict = entry_value(d, &v, i);
        if (!k || !ldict) {
            continue;
        }
        /* 3.8-3.12: the key is a weak reference to the localdummy */
        uint64_t dummy = v13 ? k : rd(d, k + o->wr_object, NULL);
        uint32_t ti = lh_addrmap_get(&d->local_keys, dummy, NONE32);
        thread_tag(d, ti, thr, sizeof thr);
        snprintf(lab, sizeof lab, ".__dict__ %s", thr);
        ref(d, src, ldict, lab, LH_PYEDGE_NAME);
        dictview_t lv;
        if (dict_view(d, ldict, &lv) != 0) {
            continue;
        }
        char name[STR_MAX + 8];
        for (uint64_t j = 0; j < lv.n; j++) {
            uint64_t nk = entry_key(d, &lv, j);
            uint64_t val = entry_value(d, &lv, j);
            if (nk && val && read_str(d, nk, name, sizeof name) >= 0) {
                snprintf(lab, sizeof lab, ".%s %s", name, thr);
                ref(d, src, val, lab, LH_PYEDGE_NAME);
            }
        }
    }
    return 0;
}

static void
func_refs(dec_t *d, uint32_t src, uint64_t f)
{
    const lh_pyoffsets_t *o = d->o;
    ref_field(d, src, f, o->fn_code, ".__code__");
    ref_field(d, src, f, o->fn_globals, ".__globals__");
    ref_field(d, src, f, o->fn_name, ".__name__");
    ref_field(d, src, f, o->fn_qualname, ".__qualname__");
    ref_field(d, src, f, o->fn_closure, ".__closure__");
    ref_field(d, src, f, o->fn_defaults, ".__defaults__");
    ref_field(d, src, f, o->fn_kwdefaults, ".__kwdefaults__");
    ref_field(d, src, f, o->fn_dict, ".__dict__");
    ref_field(d, src, f, o->fn_module, ".__module__");
    ref_field(d, src, f, o->fn_doc, ".__doc__");
    ref_field(d, src, f, o->fn_annotations, ".__annotations__");
}

/* One PyMemberDef of a type's tp_members array (a __slots__ name, a C type's field). */
typedef struct member {
    uint64_t name; /* its char * */
    int type;      /* T_OBJECT, T_INT, ... */
    int64_t off;   /* its byte offset in an instance */
} member_t;

#define MEMBERS_MAX 4096 /* members read of one type's array */

/* The k-th member of the tp_members array at m (k < MEMBERS_MAX). Returns 0, or -1 at the
 * array's end (a NULL name) or when it does not read. */
static int
member_read(dec_t *d, uint64_t m, int k, member_t *mb)
{
    const lh_pyoffsets_t *o = d->o;
    int ok;
    m += (uint64_t)k * (uint64_t)o->md_size;
    mb->name = rd(d, m + o->md_name, &ok);
    mb->type = ok ? (int)rd_u32(d, m + o->md_type, &ok) : 0;
    mb->off = ok ? rd_i64(d, m + o->md_offset, &ok) : 0;
    return ok && mb->name ? 0 : -1;
}

/* Whether a member holds an object reference (T_OBJECT, T_OBJECT_EX). */
static int
member_is_object(const dec_t *d, const member_t *mb)
{
    return mb->type == d->o->md_t_object || mb->type == d->o->md_t_object_ex;
}

/* C types whose fields are no PyMemberDef (their attributes are getters), so a scan of
 * their words could only say "+0x40": the fields that hold objects, by CPython minor
 * version, from Modules/_asynciomodule.c's FutureObj_HEAD (loop, callback0, context0,
 * callbacks, exception, [exception_tb 3.10+], result, ...) and TaskObj, each checked
 * against the type's tp_basicsize (probed on 3.8-3.13 with ctypes: the word holding
 * fut._result, fut._exception, task.get_coro(), task.get_name(), task.get_context(), and
 * before 3.12, which has no get_context(), the Context object after the name). A
 * subclass (class MyFuture(asyncio.Future)) has the same words. Labels are the
 * attributes Python shows (fut._result) or the getter's name without "get_".
 * functools.lru_cache's wrapper (Modules/_functoolsmodule.c, lru_cache_object: after the
 * root link of its list, the wrapper and typed, the cache dict at 72 and the function at
 * 88 in 3.8-3.13, probed the same way): its cache is what keeps every argument it was
 * called with (a method's self) alive, ".<cache>" (no attribute shows it). An exception
 * (Include/cpython/pyerrors.h, PyException_HEAD: dict, args, [notes 3.11+], traceback,
 * context, cause; every exception type has that head) and a traceback's tb_next are
 * getters too (probed the same way: the words holding e.args, e.__traceback__,
 * e.__context__, e.__cause__, tb.tb_next). */
typedef struct cfield {
    int16_t off;
    const char *name;
} cfield_t;

typedef struct c_layout {
    const char *tp_name;
    uint8_t minor;
    int16_t basicsize;
    cfield_t f[9];
} c_layout_t;

#define FUT_HEAD(res) {16, "._loop"}, {24, "._callbacks[0]"}, {40, "._callbacks"}, \
    {48, "._exception"}, {res, "._result"}
static const c_layout_t c_layouts[] = {
    {"_asyncio.Future", 8, 104, {FUT_HEAD(56)}},
    {"_asyncio.Future", 9, 144, {FUT_HEAD(56)}},
    {"_asyncio.Future", 10, 152, {FUT_HEAD(64)}},
    {"_asyncio.Future", 11, 128, {FUT_HEAD(64)}},
    {"_asyncio.Future", 12, 128, {FUT_HEAD(64)}},
    {"_asyncio.Future", 13, 104, {FUT_HEAD(64)}},
    {"_asyncio.Task", 8, 144, {FUT_HEAD(56), {112, ".coro"}, {120, ".name"}, {128, ".context"}}},
    {"_asyncio.Task", 9, 184, {FUT_HEAD(56), {152, ".coro"}, {160, ".name"}, {168, ".context"}}},
    {"_asyncio.Task", 10, 192, {FUT_HEAD(64), {160, ".coro"}, {168, ".name"}, {176, ".context"}}},
    {"_asyncio.Task", 11, 176, {FUT_HEAD(64), {136, ".coro"}, {144, ".name"}, {152, ".context"}}},
    {"_asyncio.Task", 12, 176, {FUT_HEAD(64), {136, ".coro"}, {144, ".name"},
                                 {152, ".context"}}},
    {"_asyncio.Task", 13, 144, {FUT_HEAD(64), {120, ".coro"}, {128, ".name"},
                                 {136, ".context"}}},
#define LRU(minor, size) \
    {"functools._lru_cache_wrapper", minor, size, {{72, ".<cache>"}, {88, ".__wrapped__"}}}
    LRU(8, 128), LRU(9, 136), LRU(10, 152), LRU(11, 152), LRU(12, 152), LRU(13, 152),
#undef LRU
#define EXC(minor) {"BaseException", minor, 64, {{24, ".args"}, {32, ".__traceback__"}, \
                                          {40, ".__context__"}, {48, ".__cause__"}}}
#define EXC11(minor) {"BaseException", minor, 72, {{24, ".args"}, {32, ".__notes__"}, \
                      {40, ".__traceback__"}, {48, ".__context__"}, {56, ".__cause__"}}}
    EXC(8), EXC(9), EXC(10), EXC11(11), EXC11(12), EXC11(13),
#undef EXC
#undef EXC11
#define TB(minor) {"traceback", minor, 40, {{16, ".tb_next"}}}
    TB(8), TB(9), TB(10), TB(11), TB(12), TB(13),
#undef TB
};
#undef FUT_HEAD

/* The index in c_layouts of the type at t or its nearest base with one (tp_name and this
 * version's tp_basicsize), -1 when none. */
static int
c_layout_of(dec_t *d, uint64_t t)
{
    int ok = 1;
    for (int depth = 0; ok && t && depth < 64; depth++) {
        for (size_t k = 0; k < sizeof c_layouts / sizeof c_layouts[0]; k++) {
            const c_layout_t *l = &c_layouts[k];
            if (l->minor == d->o->minor && is_named_type(d, t, l->tp_name)) {
                int64_t bs = rd_i64(d, t + d->o->tp_basicsize, &ok);
                return ok && bs == l->basicsize ? (int)k : -1;
            }
        }
        t = rd(d, t + d->o->tp_base, &ok);
    }
    return -1;
}

/* The name of the object member at byte offset off of an instance of the type at type
 * (its tp_members, then its bases', then c_layouts), into buf. Returns 0, or -1 when no
 * member is there. */
static int
member_name(dec_t *d, uint64_t type, int64_t off, char *buf, size_t cap)
{
    uint32_t ti = lh_addrmap_get(&d->typemap, type, NONE32);
    if (ti < d->n_tinfo && d->tinfo[ti].clayout >= 0) {
        const c_layout_t *l = &c_layouts[d->tinfo[ti].clayout];
        for (size_t k = 0; k < sizeof l->f / sizeof l->f[0] && l->f[k].name; k++) {
            if (l->f[k].off == off) {
                snprintf(buf, cap, "%s", l->f[k].name + 1); /* (the caller writes the dot) */
                return 0;
            }
        }
    }
    int ok = 1;
    for (int depth = 0; ok && type && depth < 64; depth++) {
        uint64_t m = rd(d, type + d->o->tp_members, &ok);
        member_t mb;
        for (int k = 0; ok && m && k < MEMBERS_MAX && member_read(d, m, k, &mb) == 0; k++) {
            if (mb.off == off && member_is_object(d, &mb) &&
                lh_procimage_cstr(d->pi, mb.name, buf, cap) > 0) {
                return 0;
            }
        }
        type = ok ? rd(d, type + d->o->tp_base, &ok) : 0;
    }
    return -1;
}

/* Conservative: the words of [base + from, base + bytes) that hold known or valid objects,
 * as edges that are never counted as references for the collector's rule: the fields of
 * a type the decoder does not know, a C module's state. An edge is labelled .name where
 * the type at type (0: none) has an object member at the word's offset (a C type's
 * PyMemberDef: a traceback's .tb_frame), else PREFIX+0xOFF. A word whose bit is set in
 * skip (one bit per word from base; NULL: none) is not read: a reference already found
 * another way, a weak reference list, a member that is not an object. */
#define SCAN_MAX 65536
static void
scan_words(dec_t *d, uint32_t src, uint64_t base, int64_t from, int64_t bytes,
           const uint8_t *skip, uint64_t type, const char *prefix)
{
    static uint8_t buf[SCAN_MAX];
    bytes = bytes > SCAN_MAX ? SCAN_MAX : bytes;
    if (bytes <= from || lh_procimage_read(d->pi, base, buf, (size_t)bytes) != 0) {
        return;
    }
    uint64_t self = d->ph->objs[src].addr;
    char lab[STR_MAX + 16];
    for (int64_t off = from; off + 8 <= bytes; off += 8) {
        if (skip && (skip[off >> 6] >> (off >> 3 & 7) & 1)) {
            continue;
        }
        uint64_t v;
        memcpy(&v, buf + off, 8);
        if (v && !(v & 7) && v != self) {
            uint32_t dst = obj_get_scanned(d, v);
            if (dst != NONE32) {
                lab[0] = '.';
                if (d->nolab) {
                    lab[0] = '\0';
                } else if (!type || member_name(d, type, off, lab + 1, sizeof lab - 1) < 0) {
                    snprintf(lab, sizeof lab, "%s+0x%llx", prefix, (unsigned long long)off);
                }
                edge_add(d, src, dst, label(d, lab), LH_PYEDGE_SCANNED);
            }
        }
    }
}

/* Marks the word at byte offset off of an object in skip (see scan_words). */
static void
skip_word(uint8_t *skip, int64_t off)
{
    if (off >= 0 && off < SCAN_MAX) {
        skip[off >> 6] |= (uint8_t)(1u << (off >> 3 & 7));
    }
}

/* Where the attributes of obj, of a type with (managed) dict, are: its dict in *dictp, or
 * its dict-less values in *valuesp (0 when none). The words it reads and the weak reference
 * list's are marked in skip. Returns the bytes of the pre-header it owns. */
static uint64_t
inst_attrs(dec_t *d, uint64_t obj, const tinfo_t *t, uint64_t *dictp, uint64_t *valuesp,
           uint8_t *skip)
{
    const lh_pyoffsets_t *o = d->o;
    uint64_t owned = 0;
    int ok;
    uint64_t dict = 0, values = 0;
    if (o->tpf_managed_dict && (t->flags & (uint64_t)o->tpf_managed_dict)) {
        if (o->managed_kind == 1) {
            dict = rd(d, obj - 24, NULL);
            values = rd(d, obj - 32, NULL);
        } else if (o->managed_kind == 2) {
            uint64_t w = rd(d, obj - 24, NULL);
            if (w & 1) {
                values = w + 1; /* stored as (char *)values - 1 (_PyDictOrValues_SetValues) */
            } else {
                dict = w;
            }
        } else if (o->managed_kind == 3) {
            dict = rd(d, obj - 24, NULL);
            if (!dict && o->tpf_inline_values && (t->flags & (uint64_t)o->tpf_inline_values)) {
                values = obj + (uint64_t)t->basicsize;
                /* PyDictValues: capacity, size, embedded, valid, then the values */
                if (!rd_u8(d, values + 3, &ok) || !ok) {
                    values = 0;
                }
            }
        }
        owned += 16; /* the pre-header: dict and weakref words */
    } else if (t->dictoffset > 0) {
        dict = rd(d, obj + (uint64_t)t->dictoffset, NULL);
        skip_word(skip, t->dictoffset);
    } else if (t->dictoffset < 0 && t->itemsize && !(t->kind == K_INT && o->l_tag_shift)) {
        /* 3.8-3.11, a subclass of a var-sized type (an IntEnum member): counted from the
         * end of the items, rounded up to a word (_PyObject_GetDictPtr) */
        uint64_t end = (uint64_t)t->basicsize + (uint64_t)(var_size(d, obj) * t->itemsize);
        end = (end + 7) & ~(uint64_t)7;
        dict = rd(d, obj + end + (uint64_t)t->dictoffset, NULL);
    }
    skip_word(skip, t->weaklistoffset);
    *dictp = dict;
    *valuesp = values;
    return owned;
}

/* The value of an instance's attribute name (in its __dict__ or its dict-less values), or
 * 0 when it has none that reads. */
static uint64_t
inst_attr(dec_t *d, uint64_t obj, const char *name)
{
    int ok;
    uint64_t t = rd(d, obj + d->o->ob_type, &ok);
    uint32_t ti = ok ? type_info(d, t) : NONE32;
    uint8_t skip[SCAN_MAX / 64];
    uint64_t dict = 0, values = 0, val = 0;
    if (ti == NONE32) {
        return 0;
    }
    inst_attrs(d, obj, &d->tinfo[ti], &dict, &values, skip);
    if (dict) {
        return get_dict_item(d, dict, name, &val) >= 0 ? val : 0;
    }
    uint64_t keys = values ? rd(d, d->tinfo[ti].addr + d->o->ht_cached_keys, &ok) : 0;
    dictview_t v;
    if (!ok || !keys || keys_view(d, keys, &v) != 0) {
        return 0;
    }
    char s[STR_MAX + 8];
    for (uint64_t i = 0; i < v.n; i++) {
        uint64_t k = entry_key(d, &v, i);
        if (k && read_str(d, k, s, sizeof s) >= 0 && strcmp(s, name) == 0) {
            return rd_slot(d, values + (uint64_t)d->o->dv_values, i, &val) ? val : 0;
        }
    }
    return 0;
}

static uint64_t
instance_refs(dec_t *d, uint32_t src, uint64_t obj, const tinfo_t *t, uint8_t *skip)
{
    const lh_pyoffsets_t *o = d->o;
    int ok;
    uint64_t dict = 0, values = 0;
    uint64_t owned = inst_attrs(d, obj, t, &dict, &values, skip);
    if (dict) {
        uint32_t dst = obj_get(d, dict);
        if (dst != NONE32) {
            edge_add(d, src, dst, label(d, ".__dict__"), 1);
        }
    } else if (values) {
        /* Attributes without a dict: names from the type's cached (shared) keys. */
        uint64_t keys = rd(d, t->addr + o->ht_cached_keys, &ok);
        dictview_t v;
        if (ok && keys && keys_view(d, keys, &v) == 0) {
            uint64_t base = values + (uint64_t)o->dv_values;
            char lab[STR_MAX + 16];
            uint64_t val;
            for (uint64_t i = 0; i < v.n && rd_slot(d, base, i, &val); i++) {
                uint64_t k = entry_key(d, &v, i);
                if (k && val) {
                    char s[STR_MAX + 8];
                    if (d->nolab) {
                        s[0] = '\0';
                    } else if (read_str(d, k, s, sizeof s) < 0) {
                        snprintf(s, sizeof s, "?");
                    }
                    snprintf(lab, sizeof lab, ".%s", s);
                    ref(d, src, val, lab, 1);
                }
            }
            if (o->managed_kind != 3) {
                owned += v.n * 8;
            }
        }
    }
    /* __slots__: the members of every heap type in the base chain */
    uint64_t b = t->addr;
    for (int depth = 0; b && depth < 64; depth++) {
        uint64_t fl = rd(d, b + o->tp_flags, &ok);
        if (!ok || !(fl & (uint64_t)o->tpf_heaptype)) {
            break;
        }
        uint64_t m = rd(d, b + o->tp_members, &ok);
        member_t mb;
        for (int k = 0; ok && m && k < MEMBERS_MAX && member_read(d, m, k, &mb) == 0; k++) {
            if (mb.off > 0 && mb.off < t->basicsize) {
                skip_word(skip, mb.off);
            }
            if (!member_is_object(d, &mb) || mb.off <= 0 || mb.off >= t->basicsize) {
                continue;
            }
            char s[STR_MAX + 8], lab[STR_MAX + 16];
            if (lh_procimage_cstr(d->pi, mb.name, s, sizeof s) <= 0 ||
                strcmp(s, "__weakref__") == 0) {
                continue;
            }
            snprintf(lab, sizeof lab, ".%s", s);
            ref_field(d, src, obj, mb.off, lab);
        }
        b = rd(d, b + o->tp_base, &ok);
    }
    /* instances count as references to their heap type (subtype_traverse) */
    if (t->flags & (uint64_t)o->tpf_heaptype) {
        ref(d, src, t->addr, ".__class__", 1);
    }
    return owned;
}

/* The names of a code object's local slots, in frame order (3.8-3.10: co_varnames, then
 * co_cellvars, then co_freevars; 3.11+: co_localsplusnames): up to cap str objects into
 * names[]. Returns how many slots are named (the value stack follows them), -1 when the
 * tuples do not read. */
static int64_t
slot_names(dec_t *d, uint64_t code, uint64_t *names, int64_t cap)
{
    const lh_pyoffsets_t *o = d->o;
    uint64_t tuples[3];
    int nt = 0;
    if (o->frame_kind == 1) {
        tuples[nt++] = rd(d, code + o->co_localsplusnames, NULL);
    } else {
        tuples[nt++] = rd(d, code + o->co_varnames, NULL);
        tuples[nt++] = rd(d, code + o->co_cellvars, NULL);
        tuples[nt++] = rd(d, code + o->co_freevars, NULL);
    }
    int64_t slot = 0;
    for (int t = 0; t < nt; t++) {
        int64_t n = tuples[t] ? var_size(d, tuples[t]) : 0;
        if (n > 65536) {
            return -1;
        }
        for (int64_t i = 0; i < n; i++, slot++) {
            if (slot < cap) {
                names[slot] = rd(d, tuples[t] + o->tu_item + (uint64_t)i * 8, NULL);
            }
        }
    }
    return slot;
}

#define FRAME_SLOTS_MAX 4096 /* locals labelled by name; more are labelled by number */

/* The locals and value stack of a frame that is not running on a thread (a suspended
 * generator's, a frame object's kept by a traceback): n slots from localsplus, what the
 * frame's tp_traverse visits. A local is labelled PREFIX.f_locals['name'] (what the
 * program would type to get it), a stack entry PREFIX.f_stack[k]. */
static void
frame_slot_refs(dec_t *d, uint32_t src, uint64_t code, uint64_t localsplus, int64_t n,
                const char *prefix)
{
    static uint64_t names[FRAME_SLOTS_MAX];
    int64_t named = slot_names(d, code, names, FRAME_SLOTS_MAX);
    if (named < 0 || n <= 0) {
        return;
    }
    uint64_t v;
    for (int64_t i = 0; i < n && rd_slot(d, localsplus, (uint64_t)i, &v); i++) {
        if (!v) {
            continue;
        }
        char lname[STR_MAX + 8], lab[STR_MAX + 64];
        if (i < named && i < FRAME_SLOTS_MAX && read_str(d, names[i], lname, sizeof lname) >= 0) {
            snprintf(lab, sizeof lab, "%s.f_locals['%s']", prefix, lname);
        } else {
            snprintf(lab, sizeof lab, "%s.f_stack[%lld]", prefix, (long long)(i - named));
        }
        ref(d, src, v, lab, LH_PYEDGE_COUNTED);
    }
}

/* 3.11+: the references of an _PyInterpreterFrame held by an object (a generator's
 * embedded frame, a frame object's own copy) that _PyFrame_Traverse visits: its frame
 * object, f_locals, function, code and the stacktop slots of locals and stack. Returns
 * the bytes of its slots. */
static uint64_t
iframe_refs(dec_t *d, uint32_t src, uint64_t f, const char *prefix)
{
    const lh_pyoffsets_t *o = d->o;
    char lab[64];
    snprintf(lab, sizeof lab, "%s", *prefix ? prefix : ".f_frame");
    ref_field(d, src, f, o->fr_frame_obj, lab);
    snprintf(lab, sizeof lab, "%s.f_locals", prefix);
    ref_field(d, src, f, o->fr_locals, lab);
    snprintf(lab, sizeof lab, "%s.f_func", prefix);
    ref_field(d, src, f, o->fr_func, lab);
    snprintf(lab, sizeof lab, "%s.f_code", prefix);
    ref_field(d, src, f, o->fr_code, lab);
    int ok;
    uint64_t code = rd(d, f + o->fr_code, &ok);
    uint32_t ci = ok ? obj_get(d, code) : NONE32;
    if (ci == NONE32 || d->tinfo[d->ph->objs[ci].type].kind != K_CODE) {
        return 0;
    }
    int64_t nslots = (int64_t)rd_u32(d, code + o->co_nlocalsplus, NULL) +
                     (int64_t)rd_u32(d, code + o->co_stacksize, NULL);
    int32_t top = (int32_t)rd_u32(d, f + o->fr_stacktop, &ok);
    if (ok && top > 0 && top <= nslots) {
        frame_slot_refs(d, src, code, f + (uint64_t)o->fr_localsplus, top, prefix);
    }
    return nslots > 0 && nslots < 65536 ? (uint64_t)nslots * 8 : 0;
}

/* A generator, coroutine or async generator: its name, code, the exception it handles,
 * a coroutine's origin, an async generator's finalizer, and its frame's locals and stack
 * while it has not finished. 3.8-3.10: a reference to its frame object (decoded as one);
 * 3.11+: the frame it embeds. Returns the bytes of the embedded frame's slots. */
static uint64_t
gen_refs(dec_t *d, uint32_t src, uint64_t g, uint8_t kind)
{
    const lh_pyoffsets_t *o = d->o;
    const char *pre = kind == K_CORO ? ".cr_frame" : kind == K_AGEN ? ".ag_frame" : ".gi_frame";
    char lab[16];
    ref_field(d, src, g, o->ge_name, ".__name__");
    ref_field(d, src, g, o->ge_qualname, ".__qualname__");
    ref_field(d, src, g, o->ge_exc_value, "<handled exception>");
    if (o->ge_code) {
        snprintf(lab, sizeof lab, "%.3s_code", pre);
        ref_field(d, src, g, o->ge_code, lab);
    }
    if (o->ge_exc_type) {
        ref_field(d, src, g, o->ge_exc_type, "<handled exception type>");
        ref_field(d, src, g, o->ge_exc_tb, "<handled exception traceback>");
    }
    if (kind == K_CORO) {
        ref_field_kind(d, src, g, o->cr_origin, ".cr_origin", LH_PYEDGE_NAME);
    } else if (kind == K_AGEN) {
        ref_field(d, src, g, o->ag_finalizer, "<finalizer>");
    }
    if (o->frame_kind == 0) {
        ref_field(d, src, g, o->ge_frame, pre);
        return 0;
    }
    int ok;
    int8_t state = (int8_t)rd_u8(d, g + o->ge_frame_state, &ok);
    if (!ok || state >= o->ge_frame_cleared) {
        return 0;
    }
    return iframe_refs(d, src, g + (uint64_t)o->ge_frame, pre);
}

/* A frame object: its caller (f_back) and trace function; 3.8-3.10 its code, builtins,
 * globals, f_locals dict, locals (f_valuestack - f_localsplus slots) and value stack
 * (f_stacktop, NULL while the frame runs; 3.10: f_stackdepth); 3.11+ the frame it owns
 * once its function returned (f_frame points into itself), else nothing more (the
 * generator or thread running it has it). Returns the bytes of an owned frame's slots. */
static uint64_t
frame_refs(dec_t *d, uint32_t src, uint64_t f)
{
    const lh_pyoffsets_t *o = d->o;
    int ok;
    ref_field(d, src, f, o->fo_back, ".f_back");
    ref_field(d, src, f, o->fo_trace, ".f_trace");
    if (o->frame_kind == 1) {
        uint64_t own = f + (uint64_t)o->fo_frame_data;
        return rd(d, f + o->fo_frame, &ok) == own && ok ? iframe_refs(d, src, own, "") : 0;
    }
    ref_field(d, src, f, o->fr_code, ".f_code");
    ref_field(d, src, f, o->fo_builtins, ".f_builtins");
    ref_field(d, src, f, o->fr_globals, ".f_globals");
    ref_field(d, src, f, o->fr_locals, ".f_locals");
    uint64_t code = rd(d, f + o->fr_code, &ok);
    uint64_t locals = f + (uint64_t)o->fr_localsplus;
    uint64_t vstack = ok ? rd(d, f + o->fo_valuestack, &ok) : 0;
    int64_t max = var_size(d, f);
    if (!ok || vstack < locals || max > 65536 || (int64_t)(vstack - locals) / 8 > max) {
        return 0;
    }
    int64_t n = (int64_t)(vstack - locals) / 8;
    if (o->fo_stackdepth) {
        int32_t depth = (int32_t)rd_u32(d, f + o->fo_stackdepth, NULL);
        n += depth > 0 ? depth : 0;
    } else {
        uint64_t top = rd(d, f + o->fo_stacktop, NULL);
        n += top > vstack ? (int64_t)(top - vstack) / 8 : 0;
    }
    frame_slot_refs(d, src, code, locals, n < max ? n : max, "");
    return 0;
}

/* Decodes one object: its references and its size. */
static void
decode(dec_t *d, uint32_t i, int ns_dict)
{
    const lh_pyoffsets_t *o = d->o;
    lh_pyobj_t *ob = &d->ph->objs[i];
    uint64_t a = ob->addr;
    const tinfo_t t = d->tinfo[ob->type];
    int64_t n = t.itemsize ? var_size(d, a) : 0;
    if (n > MAX_ITEMS) {
        /* not a count: a var-sized type whose word after the head is a field (3.11+'s
         * generator: gi_code; its items are the frame, sized by the code) */
        n = 0;
    }
    uint64_t size = (uint64_t)t.basicsize + (uint64_t)(n * t.itemsize);
    if (t.flags & (uint64_t)o->tpf_have_gc) {
        size += (uint64_t)o->gc_head_size;
    }
    int ok;
    int known = 1;
    switch (t.kind) {
    case K_DICT:
        size += dict_refs(d, i, a, ns_dict);
        break;
    case K_LIST: {
        uint64_t items = rd(d, a + o->li_item, &ok);
        int64_t alloc = rd_i64(d, a + o->li_allocated, NULL);
        items_refs(d, i, items, var_size(d, a));
        d->ph->objs[i].buf[0] = items;
        size = (uint64_t)t.basicsize + (uint64_t)o->gc_head_size;
        size += alloc > 0 && alloc < MAX_ITEMS ? (uint64_t)alloc * 8 : 0;
        break;
    }
    case K_TUPLE:
        items_refs(d, i, a + o->tu_item, var_size(d, a));
        break;
    case K_SET: {
        uint64_t table = rd(d, a + o->se_table, &ok);
        int64_t mask = rd_i64(d, a + o->se_mask, NULL);
        if (!ok || mask < 0 || mask > MAX_ITEMS) {
            break;
        }
        for (int64_t k = 0; k <= mask; k++) {
            uint64_t key = rd(d, table + (uint64_t)k * (uint64_t)o->se_entry_size +
                                     (uint64_t)o->se_entry_key, &ok);
            if (!ok) {
                break;
            }
            if (key && key != d->set_dummy) {
                ref(d, i, key, "{}", 1);
            }
        }
        if (table < a || table >= a + (uint64_t)t.basicsize) {
            size += (uint64_t)(mask + 1) * (uint64_t)o->se_entry_size;
            d->ph->objs[i].buf[0] = table;
        }
        break;
    }
    case K_FUNCTION:
        func_refs(d, i, a);
        break;
    case K_CELL:
        ref_field(d, i, a, o->ce_ref, ".cell_contents");
        break;
    case K_WEAKREF:
        ref_field_kind(d, i, a, o->wr_object, "()", LH_PYEDGE_WEAK);
        ref_field(d, i, a, o->wr_callback, ".__callback__");
        break;
    case K_METHOD:
        ref_field(d, i, a, o->me_func, ".__func__");
        ref_field(d, i, a, o->me_self, ".__self__");
        break;
    case K_MODULE: {
        ref_field(d, i, a, o->mo_dict, ".__dict__");
        /* A C module's state (PEP 3121/489: m_size bytes at md_state) holds objects its
         * m_traverse visits: types, exceptions, caches such as _ssl's error-code dict,
         * which may be in no module dict and not tracked by the collector. */
        uint64_t def = rd(d, a + o->mo_def, &ok);
        uint64_t st = ok && def ? rd(d, a + o->mo_state, &ok) : 0;
        int64_t msz = st ? rd_i64(d, def + o->mdef_size, &ok) : 0;
        if (ok && st && msz > 0 && msz < MAX_ITEMS) {
            scan_words(d, i, st, 0, msz, NULL, 0, "<state>");
            size += (uint64_t)msz;
            d->ph->objs[i].buf[0] = st;
        }
        break;
    }
    case K_TYPE:
        if (t.addr == d->static_types[K_TYPE] || (t.flags & (uint64_t)o->tpf_type_sub)) {
            ref_field(d, i, a, o->tp_dict, ".__dict__");
            ref_field(d, i, a, o->tp_mro, ".__mro__");
            ref_field(d, i, a, o->tp_bases, ".__bases__");
            ref_field(d, i, a, o->tp_base, ".__base__");
            uint64_t fl = rd(d, a + o->tp_flags, NULL);
            if (fl & (uint64_t)o->tpf_heaptype) {
                if (o->ht_module) {
                    ref_field(d, i, a, o->ht_module, ".__module_object__");
                }
                /* name, qualname, slots: not visited by type_traverse (not GC objects) */
                uint64_t nm = rd(d, a + o->ht_name, NULL);
                uint32_t dst = obj_get(d, nm);
                if (dst != NONE32) {
                    edge_add(d, i, dst, label(d, ".__name__"), LH_PYEDGE_NAME);
                }
                size = (uint64_t)o->heaptype_size + (uint64_t)o->gc_head_size;
            }
        }
        break;
    case K_STR: {
        int64_t len = rd_i64(d, a + o->u_length, NULL);
        uint32_t state = rd_u32(d, a + o->u_state, NULL);
        unsigned kind = state >> o->u_kind_shift & 7;
        if (len >= 0 && (state >> o->u_compact_bit & 1)) {
            size = (state >> o->u_ascii_bit & 1) ? (uint64_t)o->u_ascii_size + (uint64_t)len + 1
                                                 : (uint64_t)o->u_compact_size +
                                                       ((uint64_t)len + 1) * kind;
        }
        break;
    }
    case K_INT: {
        int64_t tag = rd_i64(d, a + o->l_tag, NULL);
        int64_t nd = o->l_tag_shift ? tag >> o->l_tag_shift : tag < 0 ? -tag : tag;
        size = (uint64_t)o->l_digit + (uint64_t)(nd > 1 ? nd : 1) * (uint64_t)o->l_digit_size;
        break;
    }
    case K_BYTES:
        size = (uint64_t)o->by_sval + (uint64_t)var_size(d, a) + 1;
        break;
    case K_GEN:
    case K_CORO:
    case K_AGEN:
        /* exactly what gen_traverse visits: a generator's fields are not all set (3.12+
         * leaves a generator's gi_origin_or_finalizer as the allocator gave it) */
        size = (o->frame_kind == 1 ? (uint64_t)t.basicsize : size) + gen_refs(d, i, a, t.kind);
        break;
    case K_FRAME:
        /* exactly what frame_traverse visits: the rest of a frame object's fields are
         * numbers and its block stack, words the allocator's last user left */
        size = (o->frame_kind == 1 ? (uint64_t)t.basicsize + (uint64_t)o->gc_head_size : size) +
               frame_refs(d, i, a);
        break;
    case K_DEQUE:
        known = deque_refs(d, i, a) == 0;
        break;
    case K_TLOCAL:
        known = tlocal_refs(d, i, a) == 0;
        break;
    case K_FLOAT:
    case K_CODE:
    case K_NONE_LIKE:
        break;
    default:
        known = 0;
        break;
    }
    /* The fixed part only of a type the decoder does not know: the items of an unknown
     * var-sized object (a generator's frame, its value stack) hold stale words past their
     * live top. A heap type's is a C extension's type (_sre.Pattern, 3.12's TypeVar) or
     * a class over one (an Exception's args): its C fields are scanned, its attributes,
     * slots and weak reference list are not (read above, or not references). */
    int scan = !known && (t.flags & (uint64_t)o->tpf_have_gc);
    if (scan || (t.flags & (uint64_t)o->tpf_heaptype)) {
        uint8_t skip[SCAN_MAX / 64];
        memset(skip, 0, sizeof skip);
        skip_word(skip, t.weaklistoffset);
        if (t.flags & (uint64_t)o->tpf_heaptype) {
            size += instance_refs(d, i, a, &t, skip);
        }
        if (scan) {
            scan_words(d, i, a, 16, t.basicsize, skip, t.addr, "");
        }
    }
    d->ph->objs[i].size = size;
}

/* ---------------------------------------------------------------------------------------
 * The interpreter: version, runtime, generation lists
 * ------------------------------------------------------------------------------------- */
static const char *const py_modules[] = {"python", "libpython", NULL};

/* Reads the version: Py_Version (3.11+) or the module's name ("libpython3.9.so",
 * "python3.8"). Returns 0 with *major, *minor, or -1. A "d" (debug) or "t"
 * (free-threaded) suffix sets *abi. */
static int
find_version(lh_procimage_t *pi, long mi, int *major, int *minor, char *abi)
{
    *abi = 0;
    const char *path = lh_procimage_module_path(pi, mi);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *p = strstr(base, "python");
    int fmaj = 0, fmin = -1;
    if (p && sscanf(p, "python%d.%d", &fmaj, &fmin) == 2) {
        const char *q = strchr(p, '.');
        q = q ? q + 1 : p;
        while (*q >= '0' && *q <= '9') {
            q++;
        }
        if (*q == 'd' || *q == 't') {
            *abi = *q;
        }
    }
    uint64_t pv = lh_procimage_module_symbol(pi, mi, "Py_Version");
    uint32_t hex = 0;
    if (pv && lh_procimage_read(pi, pv, &hex, sizeof hex) == 0 && (hex >> 24) == 3) {
        *major = 3;
        *minor = (int)(hex >> 16 & 0xff);
        return 0;
    }
    if (fmin >= 0) {
        *major = fmaj;
        *minor = fmin;
        return 0;
    }
    return -1;
}

static void
walk_list(dec_t *d, uint64_t head, const char *what, uint32_t flags)
{
    const lh_pyoffsets_t *o = d->o;
    int ok;
    uint64_t g = rd(d, head, &ok) & ~(uint64_t)3;
    uint64_t steps = 0;
    while (ok && g && g != head) {
        uint64_t obj = g + (uint64_t)o->gc_head_size;
        uint32_t i = lh_addrmap_get(&d->objmap, obj, NONE32);
        if (i == NONE32) {
            uint64_t t = rd(d, obj + o->ob_type, &ok);
            uint32_t ti = ok ? type_info(d, t) : NONE32;
            if (ti == NONE32) {
                snprintf(d->ph->warning, sizeof d->ph->warning,
                         "the collector's %s list is broken at 0x%llx: objects after it are "
                         "missing", what, (unsigned long long)g);
                return;
            }
            i = obj_add(d, obj, ti, flags);
            if (i == NONE32) {
                return;
            }
        } else {
            d->ph->objs[i].flags |= flags;
        }
        if (++steps > (1ULL << 31) || d->oom) {
            return;
        }
        g = rd(d, g, &ok) & ~(uint64_t)3;
    }
}

/* ---------------------------------------------------------------------------------------
 * Roots
 * ------------------------------------------------------------------------------------- */
static void
root_add(dec_t *d, int kind, const char *name, uint64_t addr)
{
    uint32_t obj = obj_get(d, addr);
    if (obj == NONE32) {
        return;
    }
    if (kind == LH_PYROOT_GLOBAL || kind == LH_PYROOT_CLASSATTR || kind == LH_PYROOT_LOCAL) {
        /* None, True, False, ... are every variable's: naming them after one is wrong */
        const char *tn = d->ph->types[d->tinfo[d->ph->objs[obj].type].name].name;
        if (strcmp(tn, "NoneType") == 0 || strcmp(tn, "bool") == 0 ||
            strcmp(tn, "ellipsis") == 0 || strcmp(tn, "NotImplementedType") == 0) {
            return;
        }
    }
    lh_pyheap_t *ph = d->ph;
    if (lh_grow(&ph->roots, &d->cap_roots, ph->n_roots, sizeof *ph->roots, 256) < 0) {
        d->oom = 1;
        return;
    }
    lh_pyroot_t *r = &ph->roots[ph->n_roots];
    r->kind = (uint8_t)kind;
    r->obj = obj;
    if (!(r->name = strdup(name))) {
        d->oom = 1;
        return;
    }
    ph->n_roots++;
}

static int
is_dunder(const char *s)
{
    size_t n = strlen(s);
    return n > 4 && s[0] == '_' && s[1] == '_' && s[n - 1] == '_' && s[n - 2] == '_';
}

/* The entries of the dict at dict (once: ns_dicts marks it) with a string key that is not a
 * dunder, as roots of kind named "prefix.key". With mname (a module's globals), a class
 * the module defines adds its attributes, "prefix.class.attr". */
static void
dict_roots(dec_t *d, uint64_t dict, const char *prefix, int kind, const char *mname,
           lh_addrmap_t *ns_dicts)
{
    dictview_t g;
    if (lh_addrmap_get(ns_dicts, dict, NONE32) != NONE32 || dict_view(d, dict, &g) != 0) {
        return;
    }
    lh_addrmap_put(ns_dicts, dict, 1);
    for (uint64_t j = 0; j < g.n; j++) {
        char key[STR_MAX + 8], name[1024], cmod[STR_MAX + 8];
        uint64_t gk = entry_key(d, &g, j);
        uint64_t gv = entry_value(d, &g, j);
        if (!gk || !gv || read_str(d, gk, key, sizeof key) < 0 || is_dunder(key)) {
            continue;
        }
        snprintf(name, sizeof name, "%s.%s", prefix, key);
        root_add(d, kind, name, gv);
        uint32_t co = mname ? obj_get(d, gv) : NONE32;
        if (co == NONE32 || d->tinfo[d->ph->objs[co].type].kind != K_TYPE ||
            !(rd(d, gv + d->o->tp_flags, NULL) & (uint64_t)d->o->tpf_heaptype)) {
            continue;
        }
        uint64_t cd = rd(d, gv + d->o->tp_dict, NULL), cm = 0;
        if (cd && get_dict_item(d, cd, "__module__", &cm) >= 0 &&
            read_str(d, cm, cmod, sizeof cmod) >= 0 && strcmp(cmod, mname) == 0) {
            dict_roots(d, cd, name, LH_PYROOT_CLASSATTR, NULL, ns_dicts);
        }
    }
}

/* Module globals and the attributes of the classes a module defines, as roots; the dicts
 * are marked so their value edges are not object edges (dict_refs skip_values). */
static void
module_roots(dec_t *d, uint64_t modules, lh_addrmap_t *ns_dicts)
{
    dictview_t v;
    if (dict_view(d, modules, &v) != 0) {
        return;
    }
    /* Pass 0 roots the modules themselves, by their sys.modules name: the name a module
     * object is known by before any "importer.alias" global that also holds it. Pass 1
     * then roots their globals. */
    for (int pass = 0; pass < 2; pass++) {
        for (uint64_t i = 0; i < v.n; i++) {
            char mname[STR_MAX + 8];
            uint64_t k = entry_key(d, &v, i);
            uint64_t mod = entry_value(d, &v, i);
            uint32_t mo = obj_get(d, mod);
            if (!k || mo == NONE32 || read_str(d, k, mname, sizeof mname) < 0 ||
                d->tinfo[d->ph->objs[mo].type].kind != K_MODULE) {
                continue;
            }
            uint64_t md = pass ? rd(d, mod + d->o->mo_dict, NULL) : 0;
            if (!pass) {
                root_add(d, LH_PYROOT_GLOBAL, mname, mod);
            } else if (md && obj_get(d, md) != NONE32) {
                dict_roots(d, md, mname, LH_PYROOT_GLOBAL, mname, ns_dicts);
            }
        }
    }
}

/* The name of a code object's function: qualname (3.11+) or name. */
static void
code_name(dec_t *d, uint64_t code, char *buf, size_t cap)
{
    const lh_pyoffsets_t *o = d->o;
    uint64_t n = o->co_qualname ? rd(d, code + o->co_qualname, NULL) : 0;
    if (!n || read_str(d, n, buf, cap) < 0) {
        n = rd(d, code + o->co_name, NULL);
        if (!n || read_str(d, n, buf, cap) < 0) {
            snprintf(buf, cap, "?");
        }
    }
}

/* The locals of one frame as roots: "handle() local 'buf'". */
static void
frame_locals(dec_t *d, uint64_t code, uint64_t localsplus, uint32_t ti, int many)
{
    static uint64_t names[FRAME_SLOTS_MAX];
    char fname[STR_MAX + 8];
    code_name(d, code, fname, sizeof fname);
    int64_t n = slot_names(d, code, names, FRAME_SLOTS_MAX);
    for (int64_t slot = 0; slot < n && slot < FRAME_SLOTS_MAX; slot++) {
        uint64_t val = rd(d, localsplus + (uint64_t)slot * 8, NULL);
        char lname[STR_MAX + 8], rname[3 * STR_MAX + 64], thr[STR_MAX + 16];
        if (!val || read_str(d, names[slot], lname, sizeof lname) < 0) {
            continue;
        }
        if (many) {
            thread_tag(d, ti, thr, sizeof thr);
            snprintf(rname, sizeof rname, "%s() local '%s' %s", fname, lname, thr);
        } else {
            snprintf(rname, sizeof rname, "%s() local '%s'", fname, lname);
        }
        root_add(d, LH_PYROOT_LOCAL, rname, val);
    }
}

/* The thread's threading.local keys (see tlocal_refs): 3.13's threading_local_key, or
 * every value of the thread's state dict (3.8-3.12: one localdummy per threading.local
 * the thread used, under the local's key string). */
static void
local_keys(dec_t *d, uint64_t ts, uint32_t ti)
{
    const lh_pyoffsets_t *o = d->o;
    if (o->ts_local_key) {
        uint64_t k = rd(d, ts + o->ts_local_key, NULL);
        if (k && lh_addrmap_put(&d->local_keys, k, ti) < 0) {
            d->oom = 1;
        }
        return;
    }
    uint64_t sd = rd(d, ts + o->ts_dict, NULL);
    dictview_t v;
    if (!sd || dict_view(d, sd, &v) != 0) {
        return;
    }
    for (uint64_t i = 0; i < v.n; i++) {
        uint64_t val = entry_value(d, &v, i);
        if (val && lh_addrmap_put(&d->local_keys, val, ti) < 0) {
            d->oom = 1;
        }
    }
}

/* The threading name of the thread whose ident is tid: threading._active (a dict in
 * modules, sys.modules) maps each ident to its Thread, whose _name is the name. A copy
 * the caller frees, or NULL when there is none. */
static char *
thread_name(dec_t *d, uint64_t modules, uint64_t tid)
{
    uint64_t mod = 0, active = 0;
    if (!modules || get_dict_item(d, modules, "threading", &mod) < 0 || obj_get(d, mod) == NONE32 ||
        d->tinfo[d->ph->objs[obj_get(d, mod)].type].kind != K_MODULE) {
        return NULL;
    }
    uint64_t md = rd(d, mod + d->o->mo_dict, NULL);
    dictview_t v;
    if (!md || get_dict_item(d, md, "_active", &active) < 0 || dict_view(d, active, &v) != 0) {
        return NULL;
    }
    char want[32], key[STR_MAX + 8], name[STR_MAX + 8];
    snprintf(want, sizeof want, "%llu", (unsigned long long)tid);
    for (uint64_t i = 0; i < v.n; i++) {
        uint64_t k = entry_key(d, &v, i);
        uint64_t th = entry_value(d, &v, i);
        if (k && th && key_repr(d, k, key, sizeof key, 0) == 0 && strcmp(key, want) == 0) {
            uint64_t n = inst_attr(d, th, "_name");
            return n && read_str(d, n, name, sizeof name) >= 0 ? strdup(name) : NULL;
        }
    }
    return NULL;
}

/* Adds the thread of state ts to tids (its name from modules: thread_name); returns its
 * index there, or NONE32 out of memory. */
static uint32_t
thread_add(dec_t *d, uint64_t ts, uint64_t tid, uint64_t modules)
{
    if (lh_grow(&d->tids, &d->cap_tids, d->n_tids, sizeof *d->tids, 16) < 0 ||
        lh_grow(&d->tnames, &d->cap_tnames, d->n_tids, sizeof *d->tnames, 16) < 0) {
        d->oom = 1;
        return NONE32;
    }
    uint32_t ti = d->n_tids++;
    d->tids[ti] = tid;
    d->tnames[ti] = thread_name(d, modules, tid);
    local_keys(d, ts, ti);
    return ti;
}

static void
thread_roots(dec_t *d, uint64_t interp)
{
    const lh_pyoffsets_t *o = d->o;
    uint64_t ts = rd(d, interp + o->is_tstate_head, NULL);
    int many = ts && rd(d, ts + o->ts_next, NULL) != 0;
    for (int n = 0; ts && n < 4096; n++, ts = rd(d, ts + o->ts_next, NULL)) {
        uint64_t tid = rd(d, ts + o->ts_thread_id, NULL);
        uint32_t ti = thread_add(d, ts, tid, rd(d, interp + o->is_modules, NULL));
        uint64_t f;
        if (o->ts_cframe) {
            uint64_t cf = rd(d, ts + o->ts_cframe, NULL);
            f = cf ? rd(d, cf + o->cf_current_frame, NULL) : 0;
        } else {
            f = rd(d, ts + o->ts_frame, NULL);
        }
        for (int k = 0; f && k < MAX_FRAMES; k++, f = rd(d, f + o->fr_back, NULL)) {
            if (o->fr_owner >= 0) {
                int ok;
                uint8_t owner = rd_u8(d, f + o->fr_owner, &ok);
                if (!ok || (int64_t)owner == o->fr_owner_cstack) {
                    continue; /* a C entry shim: no code */
                }
            }
            uint64_t code = rd(d, f + o->fr_code, NULL);
            uint32_t ci = obj_get(d, code);
            if (ci == NONE32 || d->tinfo[d->ph->objs[ci].type].kind != K_CODE) {
                continue;
            }
            frame_locals(d, code, f + (uint64_t)o->fr_localsplus, ti, many);
        }
    }
}

/* atexit.register()'s callbacks as roots: "atexit.<callbacks>[3]" (the function),
 * "atexit.<callbacks>[3].<args>" and ".<kwargs>". No object holds them: the interpreter
 * does (3.10+, the table's fields), or the atexit module's state (3.8-3.9: in no header,
 * Modules/atexitmodule.c's {callbacks, ncallbacks, callback_len} of callbacks {func,
 * args, kwargs}, written here and checked by the module's m_size, 16). Without them a
 * callback is only "[referenced from C]". Named like a module's variable (the program
 * put them there, atexit keeps them), the number being the order of registration
 * (atexit._ncallbacks() before it); an unregistered callback's entry is NULL. */
static void
atexit_roots(dec_t *d, uint64_t interp, uint64_t modules)
{
    const lh_pyoffsets_t *o = d->o;
    uint64_t arr = 0, mod = 0;
    int64_t n = 0, args = o->ax_args, kwargs = o->ax_kwargs;
    int ok = 0;
    if (o->is_atexit_callbacks) {
        arr = rd(d, interp + o->is_atexit_callbacks, &ok);
        n = ok ? (int32_t)rd_u32(d, interp + o->is_atexit_ncallbacks, &ok) : 0;
    } else if (modules && get_dict_item(d, modules, "atexit", &mod) >= 0 &&
               obj_get(d, mod) != NONE32 &&
               d->tinfo[d->ph->objs[obj_get(d, mod)].type].kind == K_MODULE) {
        uint64_t def = rd(d, mod + o->mo_def, &ok);
        uint64_t st = ok && def ? rd(d, mod + o->mo_state, &ok) : 0;
        if (ok && st && rd_i64(d, def + o->mdef_size, &ok) == 16 && ok) {
            arr = rd(d, st, &ok);
            n = ok ? (int32_t)rd_u32(d, st + 8, &ok) : 0;
            args = 8;
            kwargs = 16;
        }
    }
    for (int64_t i = 0; ok && arr && i < n && i < MAX_ITEMS; i++) {
        uint64_t cb = rd(d, arr + (uint64_t)i * 8, &ok);
        if (!ok || !cb) {
            continue;
        }
        char name[64];
        snprintf(name, sizeof name, "atexit.<callbacks>[%lld]", (long long)i);
        root_add(d, LH_PYROOT_GLOBAL, name, rd(d, cb, NULL));
        uint64_t a = rd(d, cb + (uint64_t)args, NULL);
        if (a && var_size(d, a) > 0) { /* not (): every call's, the program's own */
            snprintf(name, sizeof name, "atexit.<callbacks>[%lld].<args>", (long long)i);
            root_add(d, LH_PYROOT_GLOBAL, name, a);
        }
        snprintf(name, sizeof name, "atexit.<callbacks>[%lld].<kwargs>", (long long)i);
        root_add(d, LH_PYROOT_GLOBAL, name, rd(d, cb + (uint64_t)kwargs, NULL));
        ok = 1;
    }
}

/* Words of the modules' writable data holding objects: C globals and statics. The
 * interpreter's own state (_PyRuntime: 3.12+ keeps the main interpreter in it) is not a C
 * static of anyone's: its objects have their own roots. Symbols are looked up once per
 * variable (a variable's extent is cached) and once per 4 KiB page without one. */
static void
cstatic_roots(dec_t *d, const lh_snapfile_t *sf, const lh_pyheap_opts_t *opts, uint64_t rt,
              const int64_t *gcrefs)
{
    lh_addrmap_t seen = {0}; /* (name, object) pairs already made roots */
    char sym[256] = "";
    uint64_t s_lo = 0, s_hi = 0;     /* the cached symbol's extent */
    uint64_t miss_page = UINT64_MAX; /* a page where the last lookup found no symbol */
    for (size_t r = 0; r < sf->n_regions; r++) {
        const lh_region_t *rg = &sf->regions[r];
        if (rg->kind != 2 /* LH_REGION_DATA */) {
            continue;
        }
        const char *base = strrchr(rg->name, '/');
        base = base ? base + 1 : rg->name;
        if (strncmp(base, "python", 6) == 0 || strncmp(base, "libpython", 9) == 0) {
            /* The interpreter's own statics: static types, caches and free lists whose
             * stale entries point at memory reused by live objects. What only they hold
             * is found by the reference counts ("referenced from C"). */
            continue;
        }
        for (uint64_t a = rg->start; a < rg->start + rg->len; a += 8) {
            int ok;
            uint64_t v = rd(d, a, &ok);
            if (!ok) {
                a = (a | 4095); /* an unreadable page */
                continue;
            }
            if (!v || (v & 7)) {
                continue;
            }
            uint32_t i = lh_addrmap_get(&d->objmap, v, NONE32);
            if (i == NONE32) {
                continue; /* only objects already found: a stray word is no object */
            }
            if ((d->ph->objs[i].flags & LH_PYOBJ_GC) && gcrefs[i] <= 0) {
                continue; /* its count is explained without this word: stale or borrowed */
            }
            if (!(a >= s_lo && a < s_hi) && (a & ~(uint64_t)4095) != miss_page) {
                uint64_t st = 0, sz = 0;
                const char *n = opts->data_symbol ? opts->data_symbol(opts->ctx, a, &st, &sz)
                                                  : NULL;
                if (n && sz && a >= st && a - st < sz) {
                    snprintf(sym, sizeof sym, "%s", n);
                    s_lo = st;
                    s_hi = st + sz;
                } else {
                    sym[0] = '\0';
                    s_lo = s_hi = 0;
                    miss_page = a & ~(uint64_t)4095;
                }
            }
            int in_sym = a >= s_lo && a < s_hi;
            if ((in_sym && s_lo == rt) || (in_sym && strcmp(sym, "_PyRuntime") == 0)) {
                a = s_hi - 8; /* the interpreter's state */
                continue;
            }
            char name[512];
            snprintf(name, sizeof name, "C static %s (%s)", in_sym ? sym : "?", base);
            uint64_t key = shash(name) ^ (v * 0x9e3779b97f4a7c15ULL);
            if (lh_addrmap_get(&seen, key, NONE32) != NONE32) {
                continue;
            }
            lh_addrmap_put(&seen, key, 1);
            root_add(d, LH_PYROOT_CSTATIC, name, v);
        }
    }
    lh_addrmap_fini(&seen);
}

/* ---------------------------------------------------------------------------------------
 * The collector's rule, offline, and the roots of what only C holds
 * ------------------------------------------------------------------------------------- */
typedef struct csr {
    uint64_t *off;
    uint32_t *dst;
} csr_t;

static int
build_csr(dec_t *d, csr_t *c)
{
    uint32_t n = d->ph->n_objs;
    c->off = calloc((size_t)n + 1, sizeof *c->off);
    c->dst = malloc((d->n_edges ? d->n_edges : 1) * sizeof *c->dst);
    if (!c->off || !c->dst) {
        return -1;
    }
    /* weak references keep nothing alive */
    for (uint64_t e = 0; e < d->n_edges; e++) {
        if (d->edges[e].count != LH_PYEDGE_WEAK) {
            c->off[d->edges[e].src + 1]++;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        c->off[i + 1] += c->off[i];
    }
    uint64_t *pos = malloc(((size_t)n + 1) * sizeof *pos);
    if (!pos) {
        return -1;
    }
    memcpy(pos, c->off, ((size_t)n + 1) * sizeof *pos);
    for (uint64_t e = 0; e < d->n_edges; e++) {
        if (d->edges[e].count != LH_PYEDGE_WEAK) {
            c->dst[pos[d->edges[e].src]++] = d->edges[e].dst;
        }
    }
    free(pos);
    return 0;
}

/* Marks everything reachable from the marked objects in work[0 .. n) (all edges). */
static void
flood(const csr_t *c, uint8_t *seen, uint32_t *stack, uint32_t n)
{
    while (n) {
        uint32_t v = stack[--n];
        for (uint64_t e = c->off[v]; e < c->off[v + 1]; e++) {
            uint32_t w = c->dst[e];
            if (!seen[w]) {
                seen[w] = 1;
                stack[n++] = w;
            }
        }
    }
}

static int
collector_rule(dec_t *d, const lh_pyheap_opts_t *opts, uint64_t rt)
{
    lh_pyheap_t *ph = d->ph;
    uint32_t n = ph->n_objs;
    int64_t *gcrefs = calloc(n ? n : 1, sizeof *gcrefs);
    uint8_t *seen = calloc(n ? n : 1, 1);
    uint32_t *stack = malloc((n ? n : 1) * sizeof *stack);
    csr_t c = {0};
    int rc = -1;
    if (!gcrefs || !seen || !stack || build_csr(d, &c) != 0) {
        goto done;
    }
    for (uint32_t i = 0; i < n; i++) {
        gcrefs[i] = (int64_t)ph->objs[i].refcnt;
    }
    for (uint64_t e = 0; e < d->n_edges; e++) {
        const edge_t *x = &d->edges[e];
        if ((x->count == LH_PYEDGE_COUNTED || x->count == LH_PYEDGE_NAMESPACE) &&
            (ph->objs[x->src].flags & LH_PYOBJ_GC) &&
            (ph->objs[x->dst].flags & LH_PYOBJ_GC)) {
            gcrefs[x->dst]--;
        }
    }
    if (opts && opts->sf) {
        cstatic_roots(d, opts->sf, opts, rt, gcrefs);
    }
    /* Alive: the named roots and every tracked object whose count is not explained by the
     * references found, and what they reach. */
    uint32_t sp = 0;
    for (uint32_t r = 0; r < ph->n_roots; r++) {
        uint32_t v = ph->roots[r].obj;
        if (!seen[v]) {
            seen[v] = 1;
            stack[sp++] = v;
        }
    }
    flood(&c, seen, stack, sp);
    /* Static objects (a builtin type, None, the small ints of 3.12+) live in a module's
     * data: the collector never frees them. One root per such object not reached yet. */
    for (uint32_t i = 0; opts && opts->sf && i < n; i++) {
        const lh_region_t *rg = seen[i] ? NULL : lh_snapfile_region(opts->sf, ph->objs[i].addr);
        if (rg && rg->kind == 2 /* LH_REGION_DATA */) {
            const char *base = strrchr(rg->name, '/');
            char name[STR_MAX + 64];
            snprintf(name, sizeof name, "static object of %s", base ? base + 1 : rg->name);
            root_add(d, LH_PYROOT_CSTATIC, name, ph->objs[i].addr);
            seen[i] = 1;
            stack[0] = i;
            flood(&c, seen, stack, 1);
        }
    }
    /* What only C holds: one root per object not reached from a root yet (what it reaches
     * is then reached). */
    for (uint32_t i = 0; i < n; i++) {
        lh_pyobj_t *ob = &ph->objs[i];
        if ((ob->flags & LH_PYOBJ_GC) && gcrefs[i] > 0) {
            ob->flags |= LH_PYOBJ_CREF;
            if (!seen[i]) {
                char name[STR_MAX + 64];
                snprintf(name, sizeof name, "referenced from C (%lld of %llu references "
                         "not found)", (long long)gcrefs[i], (unsigned long long)ob->refcnt);
                root_add(d, LH_PYROOT_CREF, name, ob->addr);
                seen[i] = 1;
                stack[0] = i;
                flood(&c, seen, stack, 1);
            }
        }
    }
    /* Garbage: the tracked objects nothing alive reaches, and what only they reach. An
     * untracked object (a code object, a str) that no garbage reaches either is held by
     * something the decoder does not read (a C structure): alive, referenced from C. */
    uint8_t *gar = malloc(n ? n : 1);
    if (!gar) {
        goto done;
    }
    memcpy(gar, seen, n);
    sp = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!seen[i] && (ph->objs[i].flags & LH_PYOBJ_GC)) {
            gar[i] = 1;
            stack[sp++] = i;
        }
    }
    flood(&c, gar, stack, sp);
    for (uint32_t i = 0; i < n; i++) {
        if (!gar[i]) {
            root_add(d, LH_PYROOT_CREF, "referenced from C", ph->objs[i].addr);
            seen[i] = 1;
            stack[0] = i;
            flood(&c, seen, stack, 1);
        }
    }
    free(gar);
    for (uint32_t i = 0; i < n; i++) {
        if (!seen[i]) {
            ph->objs[i].flags |= LH_PYOBJ_GARBAGE;
        }
    }
    rc = d->oom ? -1 : 0;
done:
    LH_FREE_ALL(gcrefs, seen, stack, c.off, c.dst);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * The result: objects by address, edges in CSR form, types by name
 * ------------------------------------------------------------------------------------- */
static int
finish(dec_t *d)
{
    lh_pyheap_t *ph = d->ph;
    uint32_t n = ph->n_objs;
    /* old index -> new index after sorting by address: sort, then look up by address */
    for (uint32_t i = 0; i < n; i++) {
        ph->objs[i].type = d->tinfo[ph->objs[i].type].name;
    }
    LH_SORT(ph->objs, n, lh_pyobj_t, addr);
    uint32_t *remap = malloc((n ? n : 1) * sizeof *remap);
    if (!remap) {
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t old = lh_addrmap_get(&d->objmap, ph->objs[i].addr, NONE32);
        remap[old] = i;
    }
    for (uint32_t t = 0; t < ph->n_types; t++) {
        uint32_t old = lh_addrmap_get(&d->objmap, ph->types[t].addr, NONE32);
        ph->types[t].obj = old != NONE32 ? remap[old] : NONE32;
    }
    for (uint32_t r = 0; r < ph->n_roots; r++) {
        ph->roots[r].obj = remap[ph->roots[r].obj];
    }
    ph->eoff = calloc((size_t)n + 1, sizeof *ph->eoff);
    size_t ne = d->n_edges ? d->n_edges : 1;
    ph->edst = malloc(ne * sizeof *ph->edst);
    ph->elabel = malloc(ne * sizeof *ph->elabel);
    ph->ecount = malloc(ne);
    if (!ph->eoff || !ph->edst || !ph->elabel || !ph->ecount) {
        free(remap);
        return -1;
    }
    for (uint64_t e = 0; e < d->n_edges; e++) {
        ph->eoff[remap[d->edges[e].src] + 1]++;
    }
    for (uint32_t i = 0; i < n; i++) {
        ph->eoff[i + 1] += ph->eoff[i];
    }
    uint64_t *pos = malloc(((size_t)n + 1) * sizeof *pos);
    if (!pos) {
        free(remap);
        return -1;
    }
    memcpy(pos, ph->eoff, ((size_t)n + 1) * sizeof *pos);
    for (uint64_t e = 0; e < d->n_edges; e++) {
        const edge_t *x = &d->edges[e];
        uint64_t k = pos[remap[x->src]]++;
        ph->edst[k] = remap[x->dst];
        ph->elabel[k] = x->label;
        ph->ecount[k] = x->count;
    }
    ph->n_edges = d->n_edges;
    LH_FREE_ALL(pos, remap);
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Free, and the entry point (which frees on failure)
 * ------------------------------------------------------------------------------------- */

void
lh_pyheap_free(lh_pyheap_t *ph)
{
    if (!ph) {
        return;
    }
    LH_FREE_EACH2(ph->types, ph->n_types, lh_pytype_t, name, module);
    LH_FREE_EACH(ph->roots, ph->n_roots, lh_pyroot_t, name);
    lh_strv_free(ph->labels, ph->n_labels);
    LH_FREE_ALL(ph->objs, ph->eoff, ph->edst, ph->elabel, ph->ecount, ph);
}

static const struct {
    int kind;
    const char *sym;
} static_type_syms[] = {
    {K_TYPE, "PyType_Type"},         {K_DICT, "PyDict_Type"},      {K_LIST, "PyList_Type"},
    {K_TUPLE, "PyTuple_Type"},       {K_SET, "PySet_Type"},        {K_FUNCTION, "PyFunction_Type"},
    {K_CELL, "PyCell_Type"},         {K_METHOD, "PyMethod_Type"},  {K_MODULE, "PyModule_Type"},
    {K_STR, "PyUnicode_Type"},       {K_INT, "PyLong_Type"},       {K_BYTES, "PyBytes_Type"},
    {K_FLOAT, "PyFloat_Type"},       {K_CODE, "PyCode_Type"},      {K_WEAKREF, "_PyWeakref_RefType"},
    {K_GEN, "PyGen_Type"},           {K_CORO, "PyCoro_Type"},      {K_AGEN, "PyAsyncGen_Type"},
    {K_FRAME, "PyFrame_Type"},
};

int
lh_pyheap_decode(lh_procimage_t *pi, const lh_pyheap_opts_t *opts, lh_pyheap_t **out,
                 lh_err_t *err)
{
    *out = NULL;
    long mi = -1;
    uint64_t rt = lh_procimage_symbol(pi, py_modules, "_PyRuntime", &mi);
    int major = 0, minor = 0;
    char abi = 0;
    if (!rt) {
        /* CPython before 3.7 has no _PyRuntime: say which one it is when it is there */
        if (lh_procimage_symbol(pi, py_modules, "Py_Initialize", &mi) &&
            find_version(pi, mi, &major, &minor, &abi) == 0) {
            return lh_err_set(err, LH_EVERSION, "python %d.%d is not known to this "
                              "leakhound: native view only", major, minor);
        }
        return lh_err_set(err, LH_ENOENT, "no CPython in this process (no _PyRuntime symbol)");
    }
    if (find_version(pi, mi, &major, &minor, &abi) != 0) {
        return lh_err_set(err, LH_EVERSION, "the CPython in %s has no version this leakhound "
                          "can read: native view only", lh_procimage_module_path(pi, mi));
    }
    const lh_pyoffsets_t *o = lh_pyoffsets_find(major, minor);
    if (abi == 'd' || abi == 't') {
        return lh_err_set(err, LH_EVERSION, "python %d.%d%c is a %s build, not known to this "
                          "leakhound: native view only", major, minor, abi,
                          abi == 'd' ? "debug" : "free-threaded");
    }
    if (!o) {
        return lh_err_set(err, LH_EVERSION, "python %d.%d is not known to this leakhound: "
                          "native view only", major, minor);
    }
    dec_t d;
    memset(&d, 0, sizeof d);
    d.pi = pi;
    d.o = o;
    d.nolab = opts && opts->no_labels;
    d.ph = calloc(1, sizeof *d.ph);
    if (!d.ph) {
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    lh_pyheap_t *ph = d.ph;
    ph->off = o;
    snprintf(ph->version, sizeof ph->version, "%d.%d", major, minor);
    for (size_t k = 0; k < sizeof static_type_syms / sizeof static_type_syms[0]; k++) {
        d.static_types[static_type_syms[k].kind] =
            lh_procimage_module_symbol(pi, mi, static_type_syms[k].sym);
    }
    uint64_t dummy = lh_procimage_module_symbol(pi, mi, "_PySet_Dummy");
    d.set_dummy = dummy ? rd(&d, dummy, NULL) : 0;
    int ok;
    uint64_t interp = rd(&d, rt + o->rt_interp_head, &ok);
    if (!ok || !interp || !d.static_types[K_TYPE] ||
        type_info(&d, d.static_types[K_TYPE]) == NONE32) {
        lh_pyheap_free(ph);
        return lh_err_set(err, LH_EFORMAT, "python %d.%d: the interpreter state cannot be read "
                          "from the snapshot (not initialized yet, or already finalized)",
                          major, minor);
    }
    lh_addrmap_t ns_dicts = {0};
    uint64_t interps[MAX_INTERPS];
    int n_interps = 0;
    for (; interp && n_interps < MAX_INTERPS; interp = rd(&d, interp + o->is_next, NULL)) {
        interps[n_interps++] = interp;
        uint64_t gc = o->rt_gc ? rt + (uint64_t)o->rt_gc : interp + (uint64_t)o->is_gc;
        char what[32];
        if (n_interps == 1) { /* the main interpreter's collector */
            int ok1 = 0, ok2 = 0;
            uint32_t on = rd_u32(&d, gc + (uint64_t)o->gc_enabled, &ok1);
            uint32_t thr = rd_u32(&d, gc + (uint64_t)o->gc_generations +
                                  (uint64_t)o->gc_gen_threshold, &ok2);
            ph->collector = ok1 && on == 0    ? LH_PYGC_DISABLED
                            : ok2 && thr == 0 ? LH_PYGC_THRESHOLD0
                                              : LH_PYGC_RUNS;
        }
        for (int g = 0; g < o->gc_n_generations; g++) {
            snprintf(what, sizeof what, "generation %d", g);
            walk_list(&d, gc + (uint64_t)o->gc_generations + (uint64_t)g * (uint64_t)o->gc_gen_size,
                      what, LH_PYOBJ_GC);
        }
        walk_list(&d, gc + (uint64_t)o->gc_permanent, "permanent generation",
                  LH_PYOBJ_GC | LH_PYOBJ_FROZEN);
        if (o->rt_gc) {
            /* 3.8: one gc state for the runtime, walked once */
            interp = rd(&d, interp + o->is_next, NULL);
            for (; interp && n_interps < MAX_INTERPS; interp = rd(&d, interp + o->is_next, NULL)) {
                interps[n_interps++] = interp;
            }
            break;
        }
    }
    for (int k = 0; k < n_interps; k++) {
        uint64_t it = interps[k];
        uint64_t modules = rd(&d, it + o->is_modules, NULL);
        module_roots(&d, modules, &ns_dicts);
        root_add(&d, LH_PYROOT_INTERP, "sys.modules", modules);
        root_add(&d, LH_PYROOT_INTERP, "sys.__dict__", rd(&d, it + o->is_sysdict, NULL));
        root_add(&d, LH_PYROOT_INTERP, "builtins.__dict__", rd(&d, it + o->is_builtins, NULL));
        thread_roots(&d, it);
        atexit_roots(&d, it, modules);
    }
    /* Decode every object found, and those their references find. */
    for (uint32_t w = 0; w < d.n_work && !d.oom; w++) {
        uint32_t i = d.work[w];
        decode(&d, i, lh_addrmap_get(&ns_dicts, ph->objs[i].addr, NONE32) != NONE32);
    }
    int rc = 0;
    if (d.oom || collector_rule(&d, opts, rt) != 0 || d.oom || finish(&d) != 0) {
        rc = lh_err_set(err, LH_ENOMEM, "out of memory decoding the python heap");
    }
    lh_addrmap_fini(&ns_dicts);
    lh_addrmap_fini(&d.objmap);
    lh_addrmap_fini(&d.typemap);
    lh_addrmap_fini(&d.labelmap);
    lh_addrmap_fini(&d.local_keys);
    for (uint32_t t = 0; t < d.n_tids; t++) {
        free(d.tnames[t]);
    }
    LH_FREE_ALL(d.tinfo, d.edges, d.work, d.tids, d.tnames);
    if (rc < 0) {
        lh_pyheap_free(ph);
        return rc;
    }
    *out = ph;
    return 0;
}

const char *
lh_pyheap_describe(lh_procimage_t *pi, const lh_pyheap_t *ph, uint32_t obj, char *buf,
                   size_t len)
{
    dec_t d;
    memset(&d, 0, sizeof d);
    d.pi = pi;
    d.o = ph->off;
    const lh_pyoffsets_t *o = ph->off;
    const lh_pyobj_t *ob = &ph->objs[obj];
    const lh_pytype_t *t = &ph->types[ob->type];
    const char *tn = t->name;
    char s[STR_MAX + 8], f[STR_MAX + 8];
    uint64_t a = ob->addr;
    if (strcmp(tn, "function") == 0) {
        uint64_t code = rd(&d, a + o->fn_code, NULL);
        uint64_t qn = rd(&d, a + o->fn_qualname, NULL);
        uint64_t fn = code ? rd(&d, code + o->co_filename, NULL) : 0;
        int line = code ? (int)rd_u32(&d, code + o->co_firstlineno, NULL) : 0;
        if (!qn || read_str(&d, qn, s, sizeof s) < 0) {
            snprintf(s, sizeof s, "?");
        }
        if (!fn || read_str(&d, fn, f, sizeof f) < 0) {
            snprintf(f, sizeof f, "?");
        }
        const char *base = strrchr(f, '/');
        snprintf(buf, len, "function %s (%s:%d)", s, base ? base + 1 : f, line);
    } else if (strcmp(tn, "code") == 0) {
        uint64_t fn = rd(&d, a + o->co_filename, NULL);
        code_name(&d, a, s, sizeof s);
        if (!fn || read_str(&d, fn, f, sizeof f) < 0) {
            snprintf(f, sizeof f, "?");
        }
        const char *base = strrchr(f, '/');
        snprintf(buf, len, "code %s (%s:%u)", s, base ? base + 1 : f,
                 rd_u32(&d, a + o->co_firstlineno, NULL));
    } else if (strcmp(tn, "str") == 0 && read_str(&d, a, s, 40) >= 0) {
        snprintf(buf, len, "str '%s'", s);
    } else if (strcmp(tn, "module") == 0) {
        uint64_t md = rd(&d, a + o->mo_dict, NULL);
        uint64_t nm = 0;
        if (md && get_dict_item(&d, md, "__name__", &nm) >= 0 && read_str(&d, nm, s, sizeof s) >= 0) {
            snprintf(buf, len, "module %s", s);
        } else {
            snprintf(buf, len, "module");
        }
    } else if (strcmp(tn, "int") == 0) {
        int64_t tag = rd_i64(&d, a + o->l_tag, NULL);
        int neg = o->l_tag_shift ? (tag & 3) == 2 : tag < 0;
        int64_t nd = o->l_tag_shift ? tag >> o->l_tag_shift : tag < 0 ? -tag : tag;
        uint32_t dig = rd_u32(&d, a + o->l_digit, NULL);
        if (nd <= 1) {
            snprintf(buf, len, "int %s%u", neg ? "-" : "", nd ? dig : 0);
        } else {
            snprintf(buf, len, "int");
        }
    } else {
        uint64_t np = 0;
        for (uint32_t k = 0; k < ph->n_types; k++) {
            if (ph->types[k].obj == obj) {
                np = rd(&d, a + o->tp_name, NULL);
                break;
            }
        }
        if (np && lh_procimage_cstr(pi, np, s, sizeof s) > 0) {
            snprintf(buf, len, "class %s", s);
        } else {
            snprintf(buf, len, "%s", tn);
        }
    }
    return buf;
}
