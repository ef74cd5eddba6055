/* leakhound - SPDX-License-Identifier: MIT
 *
 * objheap_perl.c: the perl decoder of objheap.h (issue 12): finds the interpreter through
 * PL_curinterp (threads + multiplicity builds: the executable or libperl), checks its
 * version against the headers this analyzer was built with (perl_layout.h), walks the SV
 * arena chain from PL_sv_arenaroot as sv.c's visit() does (the first slot of each arena is
 * the arena's header: sv_any = next arena, refcnt = number of slots; free slots have type
 * SVTYPEMASK), and turns every live SV into an object with its references, names and owned
 * buffers. Everything is read from the snapshot's pages; nothing the target holds is
 * trusted: every count is bounded by what the snapshot has, a loop in a chain stops.
 *
 * Names follow Devel::MAT: package variables from a walk of the stashes from PL_defstash
 * ("%MyApp::SESSION_CACHE", "$main::LOG", "&MyApp::handle", "*MyApp::x" for the glob,
 * "%MyApp::" for a stash), lexicals from the first pad of each named sub and of the main
 * program ("my %seen in MyApp::handle", "my @queue in main"). Roots: the symbol table, the
 * main program, the Perl argument stack, the mortals, and every SV the interpreter struct
 * itself points to (PL_strtab, PL_modglobal, PL_regex_padav, the begin/end blocks, ...),
 * found by scanning the struct and the interpreter-owned native blocks it points to.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addrmap.h"
#include "bound.h"
#include "format.h"
#include "grow.h"
#include "objheap.h"
#include "perl_layout.h"

#define L (&lh_perl_layout)
#define MAX_ARENAS (1u << 24)
#define MAX_ELEMS (1ull << 28)
#define MAX_KEY 4096

typedef struct psv {
    uint64_t addr, any, u;
    uint32_t refcnt, flags;
    int64_t id; /* builder index */
} psv_t;

typedef struct pctx {
    lh_objheap_t *oh;
    lh_err_t *err;
    uint8_t *ibuf; /* the interpreter struct */
    psv_t *svs;    /* by address */
    size_t n_svs, cap_svs;
    lh_addrmap_t weak_avs;  /* AVs whose elements do not hold (backrefs) */
    lh_addrmap_t stashes_seen;
    uint8_t *blk_mark; /* hg->n_blocks: 1 arena, 2 owned by an SV */
    uint64_t strtab;
    uint32_t *found;   /* per svs[i]: the counted references found to it */
    uint32_t last_blk; /* block_at's cache */
} pctx_t;

/* ---------------------------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------------------------- */

/* The n-byte (1..8) unsigned integer at addr in the snapshot, 0 when unreadable. The
 * snapshot is of a little-endian process (x86-64, aarch64): its n bytes are v's low ones. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "snapshots of little-endian processes");
static uint64_t
rdn(const pctx_t *c, uint64_t addr, size_t n)
{
    uint64_t v = 0;
    if (!addr || lh_objheap_read(c->oh, addr, &v, n) < 0) {
        return 0;
    }
    return v;
}
#define rd64(c, addr) rdn(c, addr, 8)
#define rd32(c, addr) ((uint32_t)rdn(c, addr, 4))
#define rd16(c, addr) ((uint16_t)rdn(c, addr, 2))
#define rd8(c, addr) ((uint8_t)rdn(c, addr, 1))

static uint64_t
ivar(const pctx_t *c, uint32_t off)
{
    uint64_t v;
    memcpy(&v, c->ibuf + off, 8);
    return v;
}

static const psv_t *
sv_at(const pctx_t *c, uint64_t addr)
{
    size_t lo = LH_LOWER(c->svs, c->n_svs, psv_t, addr, addr);
    return lo < c->n_svs && c->svs[lo].addr == addr ? &c->svs[lo] : NULL;
}

static unsigned
sv_type(const psv_t *s)
{
    return s->flags & 0xff;
}

/* A HEK's key into buf (NUL-terminated, at most len - 1 bytes). Returns its length or -1. */
static int
hek_key(const pctx_t *c, uint64_t hek, char *buf, size_t len)
{
    int32_t klen;
    if (!hek || lh_objheap_read(c->oh, hek + L->hek_len, &klen, 4) < 0 || klen < 0) {
        return -1;
    }
    size_t n = (size_t)klen < len - 1 ? (size_t)klen : len - 1;
    if (lh_objheap_read(c->oh, hek + L->hek_key, buf, n) < 0) {
        return -1;
    }
    buf[n] = '\0';
    return (int)n;
}

/* A stash's name (HvNAME), or -1. */
static int
hv_name(const pctx_t *c, const psv_t *hv, char *buf, size_t len)
{
    if (!hv || sv_type(hv) != L->t_pvhv || !(hv->flags & L->f_ook)) {
        return -1;
    }
    uint64_t aux = hv->any + L->xpvhv_aux;
    uint64_t name = rd64(c, aux + L->hvaux_name);
    int32_t count = (int32_t)rd32(c, aux + L->hvaux_name_count);
    if (count != 0) { /* xhvnameu_names: an array, the first is the effective name */
        name = rd64(c, name);
    }
    return name ? hek_key(c, name, buf, len) : -1;
}

/* The package an SV is blessed into, into buf; "" when not blessed. */
static const char *
blessed(pctx_t *c, const psv_t *s, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!(s->flags & L->f_object) || sv_type(s) < L->t_pvmg) {
        return buf;
    }
    const psv_t *st = sv_at(c, rd64(c, s->any + L->xpv_stash));
    if (hv_name(c, st, buf, len) < 0) {
        snprintf(buf, len, "__ANON__");
    }
    return buf;
}

/* The value at byte offset off of the layout table (a field named by offsetof, for the
 * tables below that name layout fields). */
static uint32_t
layout_at(size_t off)
{
    uint32_t v;
    memcpy(&v, (const char *)L + off, sizeof v);
    return v;
}

/* The SV types with a body, as one table rather than a branch per type in each question
 * asked of a type: the layout fields of its number and body size, the kind shown for it
 * (NULL: a scalar, named by its flags), and whether its sv_u is a string buffer (SvPVX)
 * with xpv_len in the body. NULL, IV and NV are bodyless scalars. */
#define SVT(t, kind, pv)                                                                   \
    {offsetof(lh_perl_layout_t, t_##t), offsetof(lh_perl_layout_t, body_##t), kind, pv}
typedef struct sv_kind {
    size_t type, body;
    const char *kind;
    int pv;
} sv_kind_t;
static const sv_kind_t sv_kinds[] = {
    SVT(pvav, "ARRAY", 0),  SVT(pvhv, "HASH", 0),     SVT(pvcv, "CODE", 0),
    SVT(pvgv, "GLOB", 0),   SVT(pvio, "IO", 0),       SVT(pvfm, "FORMAT", 0),
    SVT(regexp, "REGEXP", 0), SVT(pvlv, "LVALUE", 1), SVT(invlist, "INVLIST", 1),
    SVT(pv, NULL, 1),       SVT(pviv, NULL, 1),       SVT(pvnv, NULL, 1),
    SVT(pvmg, NULL, 1),
};
#undef SVT

static const sv_kind_t *
sv_kind(unsigned t)
{
    for (size_t k = 0; k < sizeof sv_kinds / sizeof sv_kinds[0]; k++) {
        if (layout_at(sv_kinds[k].type) == t) {
            return &sv_kinds[k];
        }
    }
    return NULL;
}

static const char *
kind_of(const psv_t *s, const sv_kind_t *k)
{
    if (s->flags & L->f_rok) return "REF";
    if (k && k->kind) return k->kind;
    if (s->flags & (L->f_pok | L->f_ppok)) return "SCALAR(PV)";
    if (s->flags & L->f_nok) return "SCALAR(NV)";
    if (s->flags & L->f_iok) return "SCALAR(IV)";
    return "SCALAR(UNDEF)";
}

/* The live block containing addr; consecutive lookups mostly land in the same arena, so
 * the last answer is tried first. */
static uint32_t
block_at(pctx_t *c, uint64_t addr)
{
    const lh_heapgraph_t *hg = c->oh->hg;
    if (c->last_blk < hg->n_blocks) {
        const lh_hblock_t *b = &hg->blocks[c->last_blk];
        if (addr >= b->addr && addr - b->addr < b->size) {
            return c->last_blk;
        }
    }
    uint32_t r = lh_heapgraph_block_at(hg, addr);
    if (r != LH_NODE_NONE) {
        c->last_blk = r;
    }
    return r;
}

static void
mark_block(pctx_t *c, uint64_t addr, uint8_t mark)
{
    uint32_t b = block_at(c, addr);
    if (b != LH_NODE_NONE && !c->blk_mark[b]) {
        c->blk_mark[b] = mark;
    }
}

static int
own(pctx_t *c, int64_t id, uint64_t addr)
{
    if (!addr) {
        return 0;
    }
    mark_block(c, addr, id < 0 ? 1 : 2);
    return lh_objheap_own(c->oh, id, addr);
}

/* More slabs than a sub's op tree has (they double in size up to 2048 pointers): a loop
 * in torn memory. */
#define MAX_OP_SLABS 4096

/* The op slabs of the sub whose root op is at root, owned by the sub: perl allocates a
 * sub's ops in a chain of slabs of its own (op.h: the slot before an op says how far into
 * its slab it is, a slab names the chain's head, the head the next ones and its array of
 * freed ops). A string eval'd sub's ops were most of its bytes, shown under no object
 * (`roots` credited %VALIDATORS with a quarter of what its 400 subs hold). A chain whose
 * head does not name itself as head is not read (not a slab: a torn snapshot). */
static int
own_op_slabs(pctx_t *c, int64_t id, uint64_t root)
{
    if (!root) {
        return 0;
    }
    uint64_t slot = root - L->opslot_op;
    uint64_t mine = slot - (uint64_t)rd16(c, slot + L->opslot_offset) * L->ptrsize -
                    L->opslab_slots;
    uint64_t head = rd64(c, mine + L->opslab_head);
    if (!head || rd64(c, head + L->opslab_head) != head) {
        return 0;
    }
    int rc = own(c, id, rd64(c, head + L->opslab_freed));
    for (int k = 0; head && k < MAX_OP_SLABS && rc == 0; k++) {
        rc = own(c, id, head);
        head = rd64(c, head + L->opslab_next);
    }
    return rc;
}

static int
edge(pctx_t *c, const psv_t *s, uint64_t dst, int kind, int flags, const char *label,
     uint64_t idx)
{
    /* A strong edge is a reference count the holder owns, except the CV's view of its
     * pad entries (the pad AV's elements own those). */
    if (!(flags & LH_OBJEDGE_WEAK) && kind != LH_OBJEDGE_PAD && kind != LH_OBJEDGE_CAPTURE) {
        const psv_t *t = sv_at(c, dst);
        if (t) {
            c->found[t - c->svs]++;
        }
    }
    return lh_objheap_add_edge(c->oh, s->id, dst, kind, flags, label, idx);
}

/* ---------------------------------------------------------------------------------------
 * The arena walk
 * ------------------------------------------------------------------------------------- */

static int
walk_arenas(pctx_t *c)
{
    uint64_t sva = ivar(c, L->i_sv_arenaroot);
    uint8_t *buf = NULL;
    size_t cap_buf = 0;
    unsigned n_arenas = 0;
    lh_addrmap_t seen = {0};
    int rc = 0;
    while (sva) {
        uint64_t hdr[3];
        if (++n_arenas > MAX_ARENAS || lh_addrmap_put(&seen, sva, 1) == 0 ||
            lh_objheap_read(c->oh, sva, hdr, sizeof hdr) < 0) {
            break; /* a loop or an arena the snapshot lacks: stop, keep what we have */
        }
        uint32_t slots = (uint32_t)hdr[1];
        size_t bytes = (size_t)slots * L->sizeof_sv;
        if (slots < 2 || slots > (1u << 20)) {
            break;
        }
        if (lh_grow_to(&buf, &cap_buf, bytes, 1, bytes) < 0) {
            rc = LH_ENOMEM;
            goto out;
        }
        if (lh_objheap_read(c->oh, sva, buf, bytes) < 0) {
            break;
        }
        own(c, -1, sva);
        for (uint32_t i = 1; i < slots; i++) {
            const uint8_t *p = buf + (size_t)i * L->sizeof_sv;
            psv_t s = {0};
            memcpy(&s.any, p + L->sv_any, 8);
            memcpy(&s.refcnt, p + L->sv_refcnt, 4);
            memcpy(&s.flags, p + L->sv_flags, 4);
            memcpy(&s.u, p + L->sv_u, 8);
            if ((s.flags & 0xff) == L->svtypemask || s.refcnt == 0 ||
                (s.flags & 0xff) >= L->t_last) {
                continue;
            }
            s.addr = sva + (uint64_t)i * L->sizeof_sv;
            if (lh_grow(&c->svs, &c->cap_svs, c->n_svs, sizeof *c->svs, 4096) < 0) {
                rc = LH_ENOMEM;
                goto out;
            }
            c->svs[c->n_svs++] = s;
        }
        sva = hdr[0];
    }
    LH_SORT(c->svs, c->n_svs, psv_t, addr);
out:
    free(buf);
    lh_addrmap_fini(&seen);
    return rc;
}

/* Pass 1: every SV becomes an object with its kind, class, size and owned buffers. */
static int
add_objects(pctx_t *c)
{
    char cls[256];
    for (size_t i = 0; i < c->n_svs; i++) {
        psv_t *s = &c->svs[i];
        unsigned t = sv_type(s);
        const sv_kind_t *kd = sv_kind(t);
        int pv = kd && kd->pv;
        uint64_t body = kd ? layout_at(kd->body) : 0;
        if (t == L->t_pvhv && (s->flags & L->f_ook)) {
            body = L->body_pvhv_aux;
        }
        int64_t id = lh_objheap_add(c->oh, s->addr, L->sizeof_sv + body, kind_of(s, kd),
                                    blessed(c, s, cls, sizeof cls));
        if (id < 0) {
            return (int)id;
        }
        s->id = id;
        if (body) { /* the body lives in a body arena (the part perl allocates) */
            own(c, -1, s->any + (pv && t != L->t_pvmg && t != L->t_pvlv ?
                                 L->xpv_cur : 0));
        }
        int rc = 0;
        if (pv && (s->flags & (L->f_pok | L->f_ppok)) && !(s->flags & L->f_rok)) {
            uint64_t len = rd64(c, s->any + L->xpv_lenfield);
            if (len > 0) {
                rc = own(c, id, s->u);
            }
        } else if (t == L->t_pvav) {
            rc = own(c, id, rd64(c, s->any + L->xpvav_alloc));
        } else if (t == L->t_pvhv) {
            rc = own(c, id, s->u);
            if (s->flags & L->f_ook) {
                rc = rc < 0 ? rc : own(c, id, rd64(c, s->any + L->xpvhv_aux + L->hvaux_mro));
            }
        } else if (t == L->t_pvgv && (s->flags & L->f_gv_gp) && !(s->flags & L->f_ppok)) {
            rc = own(c, id, s->u);
        } else if (t == L->t_pvcv || t == L->t_pvfm) {
            uint32_t cvf = rd32(c, s->any + L->xpvcv_flags);
            if (!(cvf & L->cvf_isxsub)) {
                uint64_t pl = rd64(c, s->any + L->xpvcv_padlist);
                uint64_t arr = pl ? rd64(c, pl + L->padlist_arr) : 0;
                rc = own(c, id, pl);
                rc = rc < 0 ? rc : own(c, id, arr);
                /* a closure shares its prototype's pad names (cv_clone counts a reference
                 * to them): they are the prototype's, made when its line was compiled, and
                 * one closure of many owning them took that line as where it was made */
                uint64_t pnl = arr && !(cvf & L->cvf_cloned) ? rd64(c, arr) : 0;
                if (pnl) {
                    rc = rc < 0 ? rc : own(c, id, pnl);
                    rc = rc < 0 ? rc : own(c, id, rd64(c, pnl + L->padnl_alloc));
                }
                /* its op tree, shared by its closures as the pad names are */
                if (!(cvf & L->cvf_cloned)) {
                    rc = rc < 0 ? rc : own_op_slabs(c, id, rd64(c, s->any + L->xpvcv_root));
                }
            }
        }
        if (rc < 0) {
            return rc;
        }
        /* Magic structs and their buffers. */
        if (t >= L->t_pvmg && (s->flags & (L->f_rmg | L->f_gmg | L->f_smg))) {
            uint64_t mg = rd64(c, s->any + L->xpv_magic);
            for (int k = 0; mg && k < 64; k++) {
                if ((rc = own(c, id, mg)) < 0) {
                    return rc;
                }
                int64_t mlen = (int64_t)rd64(c, mg + L->mg_len);
                if (mlen > 0 && (rc = own(c, id, rd64(c, mg + L->mg_ptr))) < 0) {
                    return rc;
                }
                mg = rd64(c, mg + L->mg_moremagic);
            }
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Pass 2: references
 * ------------------------------------------------------------------------------------- */

typedef int (*he_fn)(pctx_t *c, const psv_t *hv, const char *key, uint64_t val, void *arg);

/* Calls fn for each entry of hv (key, value), bucket by bucket. */
static int
hv_each(pctx_t *c, const psv_t *hv, he_fn fn, void *arg)
{
    uint64_t max = rd64(c, hv->any + L->xpvhv_max);
    uint64_t keys = rd64(c, hv->any + L->xpvhv_keys);
    uint64_t arr = hv->u;
    char key[MAX_KEY];
    uint32_t ab = arr ? block_at(c, arr) : LH_NODE_NONE;
    const lh_hblock_t *blk = ab != LH_NODE_NONE ? &c->oh->hg->blocks[ab] : NULL;
    /* The bucket array lies in one live block; a chain that loops, or more entries than
     * the hash counts, stops the walk (hostile or torn memory). */
    if (!blk || max >= MAX_ELEMS || (max + 1) * 8 > blk->addr + blk->size - arr) {
        return 0;
    }
    uint64_t budget = keys + max + 16;
    for (uint64_t b = 0; b <= max && budget > 0; b++) {
        uint64_t he = rd64(c, arr + b * 8);
        for (; he && budget > 0; budget--) {
            uint64_t f[3];
            if (lh_objheap_read(c->oh, he, f, sizeof f) < 0) {
                break;
            }
            if (c->oh->hg && he) {
                own(c, -1, he); /* HE arenas (or a shared_he of PL_strtab) */
            }
            uint64_t hek = f[L->he_hek / 8], val = f[L->he_val / 8];
            if (hek_key(c, hek, key, sizeof key) < 0) {
                key[0] = '\0';
            }
            int rc = fn(c, hv, key, val, arg);
            if (rc < 0) {
                return rc;
            }
            he = f[L->he_next / 8];
        }
    }
    return 0;
}

static int
hv_value_edge(pctx_t *c, const psv_t *hv, const char *key, uint64_t val, void *arg)
{
    (void)arg;
    return edge(c, hv, val, LH_OBJEDGE_KEY, 0, key, 0);
}

/* The sub's full name ("MyApp::handle", "main::__ANON__") into buf. */
static const char *
cv_name(pctx_t *c, const psv_t *cv, char *buf, size_t len)
{
    uint32_t cvf = rd32(c, cv->any + L->xpvcv_flags);
    char pkg[256], nm[256];
    uint64_t gvp = rd64(c, cv->any + L->xpvcv_gv);
    pkg[0] = '\0';
    if (cvf & L->cvf_named) {
        if (hek_key(c, gvp, nm, sizeof nm) < 0) {
            snprintf(nm, sizeof nm, "?");
        }
        hv_name(c, sv_at(c, rd64(c, cv->any + L->xpvcv_stash)), pkg, sizeof pkg);
    } else {
        const psv_t *gv = sv_at(c, gvp);
        if (!gv || hek_key(c, rd64(c, gv->any + L->xpvgv_namehek), nm, sizeof nm) < 0) {
            snprintf(nm, sizeof nm, "__ANON__");
        }
        if (gv) {
            hv_name(c, sv_at(c, rd64(c, gv->any + L->xpvgv_stash)), pkg, sizeof pkg);
        }
    }
    snprintf(buf, len, "%s%s%s", pkg, pkg[0] ? "::" : "", nm);
    return buf;
}

/* A CV's pads: entries with names become `my $x` (or closure captures), the first pad of a
 * named sub or of the main program names its lexicals. */
static int
cv_pads(pctx_t *c, const psv_t *cv, int is_main)
{
    uint32_t cvf = rd32(c, cv->any + L->xpvcv_flags);
    if (cvf & L->cvf_isxsub) {
        return 0;
    }
    uint64_t pl = rd64(c, cv->any + L->xpvcv_padlist);
    if (!pl) {
        return 0;
    }
    int64_t max = (int64_t)rd64(c, pl + L->padlist_max);
    uint64_t arr = rd64(c, pl + L->padlist_arr);
    if (!arr || max < 0 || max > 10000) {
        return 0;
    }
    uint64_t pnl = rd64(c, arr);
    int64_t nfill = pnl ? (int64_t)rd64(c, pnl + L->padnl_fill) : -1;
    uint64_t names = pnl ? rd64(c, pnl + L->padnl_alloc) : 0;
    int closure = (cvf & L->cvf_cloned) != 0;
    int anon = (cvf & L->cvf_anon) != 0;
    char subname[300];
    if (is_main) {
        snprintf(subname, sizeof subname, "main");
    } else {
        cv_name(c, cv, subname, sizeof subname);
    }
    for (int64_t d = 1; d <= max; d++) {
        uint64_t pad = rd64(c, arr + (uint64_t)d * 8);
        const psv_t *pav = sv_at(c, pad);
        if (!pav || sv_type(pav) != L->t_pvav) {
            continue;
        }
        char lab[32];
        snprintf(lab, sizeof lab, "pad depth %" PRId64, d);
        int rc = edge(c, cv, pad, LH_OBJEDGE_INTERNAL, 0, lab, 0);
        int64_t fill = (int64_t)rd64(c, pav->any + L->xpvav_fill);
        if (rc < 0) {
            return rc;
        }
        for (int64_t i = 1; i <= fill && i <= nfill && names && i < 100000; i++) {
            uint64_t pn = rd64(c, names + (uint64_t)i * 8);
            uint64_t ent = rd64(c, pav->u + (uint64_t)i * 8);
            if (!pn || !ent) {
                continue;
            }
            uint64_t pv = rd64(c, pn + L->padname_pv);
            uint8_t nlen = rd8(c, pn + L->padname_len);
            uint8_t pflags = rd8(c, pn + L->padname_flags);
            char nm[260];
            if (!pv || nlen == 0 || lh_objheap_read(c->oh, pv, nm, nlen) < 0) {
                continue;
            }
            nm[nlen] = '\0';
            if (nm[0] != '$' && nm[0] != '@' && nm[0] != '%' && nm[0] != '&') {
                continue;
            }
            if (rd64(c, pn + L->padname_ourstash)) {
                continue; /* `our $x`: the package variable, named by the stash walk */
            }
            int outer = (pflags & L->padname_outer) != 0;
            int kind = closure && outer ? LH_OBJEDGE_CAPTURE : LH_OBJEDGE_PAD;
            if ((rc = edge(c, cv, ent, kind, 0, nm, 0)) < 0) {
                return rc;
            }
            const psv_t *es = sv_at(c, ent);
            if (d == 1 && !outer && !closure && !anon && es) {
                char full[600];
                snprintf(full, sizeof full, "my %s in %s", nm, subname);
                if ((rc = lh_objheap_add_name(c->oh, es->id, LH_OBJNAME_LEXICAL, full)) < 0) {
                    return rc;
                }
            }
        }
    }
    return 0;
}

static const char *
magic_label(char *buf, size_t len, int type)
{
    if (type > 0x20 && type < 0x7f) {
        snprintf(buf, len, "%c", type);
    } else {
        snprintf(buf, len, "\\x%02x", type & 0xff);
    }
    return buf;
}

/* A blessed string whose buffer is an XS module's C struct (EV's watchers: SvPVX is the
 * ev_watcher, which holds a reference to its callback, its loop, fh and data SVs): the SVs
 * its aligned words point to, other than itself, each a reference the struct owns
 * (LH_OBJEDGE_XS). Without them a closure given to an AnyEvent/EV timer was "held outside
 * Perl data", and the timer it is the callback of was nowhere on the path. */
#define XS_STRUCT_MAX 4096
static int
xs_struct_edges(pctx_t *c, const psv_t *s)
{
    uint64_t cur = rd64(c, s->any + L->xpv_cur);
    uint64_t w[XS_STRUCT_MAX / 8];
    size_t n = (size_t)(cur < XS_STRUCT_MAX ? cur : XS_STRUCT_MAX) / 8;
    if ((s->u & 7) || n == 0 || lh_objheap_read(c->oh, s->u, w, n * 8) < 0) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (w[i] && w[i] != s->addr && !(w[i] & 7) && sv_at(c, w[i])) {
            int rc = edge(c, s, w[i], LH_OBJEDGE_XS, 0, NULL, 0);
            if (rc < 0) {
                return rc;
            }
        }
    }
    return 0;
}

static int
sv_edges(pctx_t *c, const psv_t *s)
{
    unsigned t = sv_type(s);
    int rc = 0;
    if (s->flags & L->f_rok) {
        rc = edge(c, s, s->u, LH_OBJEDGE_REF, (s->flags & L->f_weakref) ? LH_OBJEDGE_WEAK : 0,
                  NULL, 0);
    } else if ((s->flags & L->f_iok) && (t == L->t_iv || t == L->t_pviv || t == L->t_pvmg) &&
               !(s->flags & (L->f_pok | L->f_ppok))) {
        /* An IV holding a pointer: an XS module's struct (resolved only when it points to a
         * live native block). */
        uint64_t iv = t == L->t_iv ? s->u : rd64(c, s->any + L->xpvmg_iv);
        if (iv > 4096 && lh_heapgraph_block_at(c->oh->hg, iv) != LH_NODE_NONE &&
            !sv_at(c, iv)) {
            rc = edge(c, s, iv, LH_OBJEDGE_NATIVE, 0, NULL, 0);
        }
    }
    if (rc < 0) {
        return rc;
    }
    if (t == L->t_pvmg && (s->flags & L->f_object) && (s->flags & L->f_pok) &&
        !(s->flags & L->f_rok) && s->u) {
        rc = xs_struct_edges(c, s);
    }
    if (rc < 0) {
        return rc;
    }
    if (t >= L->t_pvmg && (s->flags & L->f_object)) {
        rc = edge(c, s, rd64(c, s->any + L->xpv_stash), LH_OBJEDGE_INTERNAL, LH_OBJEDGE_WEAK,
                  "stash", 0);
    }
    if (rc < 0) {
        return rc;
    }
    if (t == L->t_pvav) {
        int64_t fill = (int64_t)rd64(c, s->any + L->xpvav_fill);
        int weak = !(s->flags & L->f_av_real) || lh_addrmap_get(&c->weak_avs, s->addr, 0) != 0;
        /* The elements must lie in one live block (AvALLOC): a corrupt fill cannot make
         * us read, or allocate, more than the snapshot holds. */
        uint32_t ab = s->u ? block_at(c, s->u) : LH_NODE_NONE;
        const lh_hblock_t *blk = ab != LH_NODE_NONE ? &c->oh->hg->blocks[ab] : NULL;
        if (fill >= 0 && (uint64_t)fill < MAX_ELEMS && blk &&
            ((uint64_t)fill + 1) * 8 <= blk->addr + blk->size - s->u) {
            uint64_t n = (uint64_t)fill + 1;
            uint64_t *el = malloc(n * 8);
            if (!el) {
                return LH_ENOMEM;
            }
            if (lh_objheap_read(c->oh, s->u, el, n * 8) == 0) {
                for (uint64_t i = 0; i < n && rc == 0; i++) {
                    if (el[i]) {
                        rc = edge(c, s, el[i], LH_OBJEDGE_ELEM, weak ? LH_OBJEDGE_WEAK : 0,
                                  NULL, i);
                    }
                }
            }
            free(el);
        }
    } else if (t == L->t_pvhv) {
        rc = hv_each(c, s, hv_value_edge, NULL);
        if (rc == 0 && (s->flags & L->f_ook)) {
            uint64_t aux = s->any + L->xpvhv_aux;
            rc = edge(c, s, rd64(c, aux + L->hvaux_backrefs), LH_OBJEDGE_INTERNAL, 0,
                      "backrefs", 0);
            uint64_t mro = rd64(c, aux + L->hvaux_mro);
            for (uint64_t w = 0; mro && w < 8 && rc == 0; w++) { /* struct mro_meta */
                uint64_t v = rd64(c, mro + w * 8);
                if (sv_at(c, v)) {
                    rc = edge(c, s, v, LH_OBJEDGE_INTERNAL, 0, "mro", 0);
                }
            }
        }
    } else if (t == L->t_pvgv && (s->flags & L->f_gv_gp) && !(s->flags & L->f_ppok) && s->u) {
        static const struct {
            const char *name;
            int weak;
        } slots[] = {{"SCALAR", 0}, {"IO", 0}, {"CODE", 0}, {"HASH", 0}, {"ARRAY", 0},
                     {"FORM", 0}, {"EGV", 1}};
        uint32_t offs[] = {L->gp_sv, L->gp_io, L->gp_cv, L->gp_hv, L->gp_av, L->gp_form,
                           L->gp_egv};
        for (int k = 0; k < 7 && rc == 0; k++) {
            uint64_t v = rd64(c, s->u + offs[k]);
            if (v && v != s->addr) {
                rc = edge(c, s, v, LH_OBJEDGE_GLOB, slots[k].weak ? LH_OBJEDGE_WEAK : 0,
                          slots[k].name, 0);
            }
        }
        if (rc == 0) {
            rc = edge(c, s, rd64(c, s->any + L->xpvgv_stash), LH_OBJEDGE_INTERNAL,
                      LH_OBJEDGE_WEAK, "stash", 0);
        }
    } else if (t == L->t_pvcv || t == L->t_pvfm) {
        uint32_t cvf = rd32(c, s->any + L->xpvcv_flags);
        rc = edge(c, s, rd64(c, s->any + L->xpvcv_stash), LH_OBJEDGE_INTERNAL, LH_OBJEDGE_WEAK,
                  "stash", 0);
        if (rc == 0 && !(cvf & L->cvf_named)) {
            rc = edge(c, s, rd64(c, s->any + L->xpvcv_gv), LH_OBJEDGE_INTERNAL,
                      LH_OBJEDGE_WEAK, "glob", 0);
        }
        if (rc == 0) {
            rc = edge(c, s, rd64(c, s->any + L->xpvcv_outside), LH_OBJEDGE_INTERNAL,
                      (cvf & L->cvf_weakoutside) ? LH_OBJEDGE_WEAK : 0, "outside", 0);
        }
        if (rc == 0) {
            rc = cv_pads(c, s, s->addr == ivar(c, L->i_main_cv));
        }
    } else if (t == L->t_pvlv) {
        rc = edge(c, s, rd64(c, s->any + L->xpvlv_targ), LH_OBJEDGE_INTERNAL, 0, "targ", 0);
    }
    if (rc < 0) {
        return rc;
    }
    /* Magic: its object, and an SV or a native struct behind mg_ptr. */
    if (t >= L->t_pvmg && (s->flags & (L->f_rmg | L->f_gmg | L->f_smg))) {
        uint64_t mg = rd64(c, s->any + L->xpv_magic);
        for (int k = 0; mg && k < 64 && rc == 0; k++) {
            char lab[8];
            int type = (int8_t)rd8(c, mg + L->mg_type);
            uint8_t mflags = rd8(c, mg + L->mg_flags);
            uint64_t obj = rd64(c, mg + L->mg_obj), ptr = rd64(c, mg + L->mg_ptr);
            int64_t mlen = (int64_t)rd64(c, mg + L->mg_len);
            magic_label(lab, sizeof lab, type);
            if (obj) {
                int strong = (mflags & L->mgf_refcounted) || type == '<';
                rc = edge(c, s, obj, LH_OBJEDGE_MAGIC, strong ? 0 : LH_OBJEDGE_WEAK, lab, 0);
            }
            if (rc == 0 && ptr && (mlen == -2 /* HEf_SVKEY */ || (mlen == 0 && !sv_at(c, ptr)))) {
                rc = edge(c, s, ptr, mlen == -2 ? LH_OBJEDGE_MAGIC : LH_OBJEDGE_NATIVE, 0, lab,
                          0);
            }
            mg = rd64(c, mg + L->mg_moremagic);
        }
    }
    return rc;
}

/* Backref arrays (weak referrers of an HV or, through '<' magic, of any SV) hold nothing. */
static int
find_weak_avs(pctx_t *c)
{
    for (size_t i = 0; i < c->n_svs; i++) {
        const psv_t *s = &c->svs[i];
        unsigned t = sv_type(s);
        if (t == L->t_pvhv && (s->flags & L->f_ook) && s->u) {
            uint64_t br = rd64(c, s->any + L->xpvhv_aux + L->hvaux_backrefs);
            if (br && lh_addrmap_put(&c->weak_avs, br, 1) < 0) {
                return LH_ENOMEM;
            }
        }
        if (t >= L->t_pvmg && (s->flags & (L->f_rmg | L->f_gmg | L->f_smg))) {
            uint64_t mg = rd64(c, s->any + L->xpv_magic);
            for (int k = 0; mg && k < 64; k++) {
                if (rd8(c, mg + L->mg_type) == '<' &&
                    lh_addrmap_put(&c->weak_avs, rd64(c, mg + L->mg_obj), 1) < 0) {
                    return LH_ENOMEM;
                }
                mg = rd64(c, mg + L->mg_moremagic);
            }
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Names: the stash walk
 * ------------------------------------------------------------------------------------- */

typedef struct stash_arg {
    const char *pkg;
    int depth;
} stash_arg_t;

static int walk_stash(pctx_t *c, const psv_t *st, const char *pkg, int depth);

static int
stash_entry(pctx_t *c, const psv_t *st, const char *key, uint64_t val, void *arg)
{
    const stash_arg_t *sa = arg;
    (void)st;
    const psv_t *gv = sv_at(c, val);
    if (!gv || sv_type(gv) != L->t_pvgv || !(gv->flags & L->f_gv_gp) || !gv->u || !key[0]) {
        return 0;
    }
    size_t kl = strlen(key);
    char full[MAX_KEY + 300];
    int rc = 0;
    if (kl > 2 && key[kl - 2] == ':' && key[kl - 1] == ':') {
        const psv_t *sub = sv_at(c, rd64(c, gv->u + L->gp_hv));
        char name[300];
        if (sub && hv_name(c, sub, name, sizeof name) >= 0) {
            snprintf(full, sizeof full, "%%%s::", name);
            if (lh_addrmap_put(&c->stashes_seen, sub->addr, 1) == 1) {
                rc = lh_objheap_add_name(c->oh, sub->id, LH_OBJNAME_GLOBAL, full);
                if (rc == 0) {
                    rc = walk_stash(c, sub, name, sa->depth + 1);
                }
            }
        }
        return rc;
    }
    snprintf(full, sizeof full, "*%s::%s", sa->pkg, key);
    rc = lh_objheap_add_name(c->oh, gv->id, LH_OBJNAME_GLOBAL, full);
    const char sig[] = {'$', '@', '%', '&'};
    uint32_t offs[] = {L->gp_sv, L->gp_av, L->gp_hv, L->gp_cv};
    for (int k = 0; k < 4 && rc == 0; k++) {
        const psv_t *v = sv_at(c, rd64(c, gv->u + offs[k]));
        if (v) {
            snprintf(full, sizeof full, "%c%s::%s", sig[k], sa->pkg, key);
            rc = lh_objheap_add_name(c->oh, v->id, LH_OBJNAME_GLOBAL, full);
        }
    }
    return rc;
}

static int
walk_stash(pctx_t *c, const psv_t *st, const char *pkg, int depth)
{
    stash_arg_t sa = {pkg, depth};
    if (depth > 64) { /* nesting deeper than any real program: a loop in torn memory */
        return 0;
    }
    return hv_each(c, st, stash_entry, &sa);
}

/* ---------------------------------------------------------------------------------------
 * Roots
 * ------------------------------------------------------------------------------------- */

static int
root_range(pctx_t *c, int kind, const char *name, uint64_t base, int64_t n)
{
    if (!base || n <= 0 || (uint64_t)n > MAX_ELEMS) {
        return 0;
    }
    for (int64_t i = 0; i < n; i++) {
        uint64_t v = rd64(c, base + (uint64_t)i * 8);
        if (v && sv_at(c, v)) {
            int rc = lh_objheap_add_root(c->oh, kind, name, v);
            if (rc < 0) {
                return rc;
            }
        }
    }
    return 0;
}

/* What a Perl programmer calls the interpreter members that hold what a program put there
 * (perlvar): the rest are named by their member alone. */
static const struct {
    const char *member;
    const char *perl;
} perl_names[] = {
    {"PL_warnhook", "$SIG{__WARN__}"},
    {"PL_diehook", "$SIG{__DIE__}"},
    {"PL_strtab", "the shared hash keys"},
    {"PL_curstack", "the Perl stack"},
    {"PL_mainstack", "the Perl stack"},
    {"PL_patchlevel", "$^V"},
    {"PL_errgv", "*@"},
    {"PL_defgv", "*_"},
    {"PL_incgv", "*INC"},
    {"PL_envgv", "*ENV"},
    {"PL_argvgv", "*ARGV"},
    {"PL_stdingv", "*STDIN"},
    {"PL_stderrgv", "*STDERR"},
    {"PL_defoutgv", "the selected output handle"},
    {"PL_rs", "$/"},
    {"PL_ors_sv", "$\\"},
    {"PL_beginav", "BEGIN blocks"},
    {"PL_endav", "END blocks"},
    {"PL_initav", "INIT blocks"},
    {"PL_checkav", "CHECK blocks"},
    {"PL_unitcheckav", "UNITCHECK blocks"},
    {"PL_main_cv", "the main program"},
    {"PL_defstash", "%main::"},
    {"PL_regex_padav", "the op tree's compiled patterns"},
    {"PL_modglobal", "XS modules' per-interpreter data"},
    {"PL_fdpid", "the pids of piped opens"},
};

/* "PL_warnhook ($SIG{__WARN__})", "PL_regex_padav (the op tree's compiled patterns)",
 * "PL_sv_consts": the interpreter member at byte off, or "the interpreter" when no member
 * covers it (a build whose table is missing). */
static const char *
interp_member(uint32_t off, char *buf, size_t len)
{
    for (uint32_t i = 0; i < L->n_ifields; i++) {
        const lh_perl_ifield_t *f = &L->ifields[i];
        if (off < f->off || off - f->off >= f->size) {
            continue;
        }
        for (size_t k = 0; k < sizeof perl_names / sizeof perl_names[0]; k++) {
            if (strcmp(perl_names[k].member, f->name) == 0) {
                snprintf(buf, len, "%s (%s)", f->name, perl_names[k].perl);
                return buf;
            }
        }
        return f->name;
    }
    return "the interpreter";
}

/* SVs the interpreter holds: every word of its struct that is an SV head (PL_strtab,
 * PL_modglobal, PL_regex_padav, the BEGIN/END blocks, $SIG{__WARN__}...), each named by
 * its member. The native blocks it points to are not scanned: stacks (save, context,
 * mortals) keep stale pointers past their tops; what those blocks hold for real is found
 * by the reference counts (held_roots). */
static int
interp_roots(pctx_t *c)
{
    int rc = 0;
    for (uint32_t off = 0; off + 8 <= L->sizeof_interp && rc == 0; off += 8) {
        uint64_t v = ivar(c, off);
        if (!v || !sv_at(c, v)) {
            continue;
        }
        char name[96];
        rc = lh_objheap_add_root(c->oh, LH_OBJROOT_INTERP, interp_member(off, name, sizeof name),
                                 v);
    }
    return rc;
}

/* An SV whose reference count is higher than the references found to it is held by
 * something the decoder does not read (an XS module's C struct, the op tree, a C stack,
 * the save stack): it is alive for a reason outside Perl data, so a root; without this,
 * such SVs would look like cycles nothing reaches. */
static int
held_roots(pctx_t *c)
{
    for (size_t i = 0; i < c->n_svs; i++) {
        if (c->svs[i].refcnt > c->found[i]) {
            int rc = lh_objheap_add_root(c->oh, LH_OBJROOT_HELD, "held outside Perl data "
                                         "(XS, op tree, C stack)", c->svs[i].addr);
            if (rc < 0) {
                return rc;
            }
        }
    }
    return 0;
}

/* SVs held by C globals (perl's own, PL_user_def_props; XS modules' statics): the pointer
 * words of the modules' data and bss, each named by its variable. */
static int
global_roots(pctx_t *c)
{
    lh_heapgraph_t *hg = c->oh->hg;
    for (size_t i = 0; i < hg->sf.n_words; i++) {
        const lh_word_t *w = &hg->sf.words[i];
        const lh_region_t *r = lh_snapfile_region(&hg->sf, w->addr);
        if (!r || r->kind != LH_REGION_DATA || !sv_at(c, w->val)) {
            continue;
        }
        lh_dsym_t ds;
        char name[300];
        if (lh_datasym_lookup(hg->ds, w->addr, hg->epoch, &ds) > 0) {
            snprintf(name, sizeof name, "C global %s", ds.name);
        } else {
            const char *base = strrchr(r->name, '/');
            snprintf(name, sizeof name, "C global in %s", base ? base + 1 : r->name);
        }
        int rc = lh_objheap_add_root(c->oh, LH_OBJROOT_INTERP, name, w->val);
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Entry point
 * ------------------------------------------------------------------------------------- */

/* The string of a PV SV at addr into buf ("" when it is not one). */
static void
pv_string(const pctx_t *c, uint64_t addr, char *buf, size_t len)
{
    uint64_t hdr[3];
    buf[0] = '\0';
    if (addr && lh_objheap_read(c->oh, addr, hdr, sizeof hdr) == 0) {
        uint64_t cur = rd64(c, hdr[0] + L->xpv_cur);
        if (hdr[2] && cur > 0 && cur < len && lh_objheap_read(c->oh, hdr[2], buf, cur) == 0) {
            buf[cur] = '\0';
        }
    }
}

/* A scalar's value as Devel::MAT's `show` prints it, for the shell: a string quoted with
 * its length (the first LH_VALUE_SHOWN bytes, C escapes for control bytes and, unless the
 * SV is UTF8, for bytes >= 0x80), an integer, a number. Returns 1 with buf set, 0 when v is
 * not a defined plain scalar (a reference, an aggregate, undef) or is unreadable. */
#define LH_VALUE_SHOWN 200
int
lh_objheap_perl_value(const lh_objheap_t *oh, uint64_t addr, char *buf, size_t len)
{
    pctx_t c0 = {0};
    c0.oh = (lh_objheap_t *)oh;
    const pctx_t *c = &c0;
    uint64_t hdr[3];
    if (len < 16 || lh_objheap_read(oh, addr, hdr, sizeof hdr) < 0) {
        return 0;
    }
    psv_t s = {addr, hdr[0], hdr[2], (uint32_t)hdr[1], (uint32_t)(hdr[1] >> 32), 0};
    unsigned t = sv_type(&s);
    const sv_kind_t *kd = sv_kind(t);
    if ((s.flags & L->f_rok) || (kd && kd->kind && t != L->t_pvlv) || t >= L->t_pvav) {
        return 0;
    }
    if (kd && kd->pv && (s.flags & (L->f_pok | L->f_ppok)) && s.u) {
        uint64_t cur = rd64(c, s.any + L->xpv_cur);
        size_t n = cur < LH_VALUE_SHOWN ? (size_t)cur : LH_VALUE_SHOWN;
        unsigned char raw[LH_VALUE_SHOWN];
        if (lh_objheap_read(oh, s.u, raw, n) < 0) {
            return 0;
        }
        int utf8 = (s.flags & L->f_utf8) != 0;
        size_t o = 0;
        buf[o++] = '"';
        for (size_t i = 0; i < n && o + 8 < len; i++) {
            unsigned char ch = raw[i];
            const char e = ch == '\\' ? '\\' : ch == '"' ? '"' : ch == '\n' ? 'n'
                         : ch == '\t' ? 't' : ch == '\r' ? 'r' : 0;
            if (e) {
                buf[o++] = '\\';
                buf[o++] = e;
            } else if (ch < 0x20 || ch == 0x7f || (ch >= 0x80 && !utf8)) {
                o += (size_t)snprintf(buf + o, len - o, "\\x%02x", ch);
            } else {
                buf[o++] = (char)ch;
            }
        }
        snprintf(buf + o, len - o, "\"%s (%" PRIu64 " byte%s%s)", n < cur ? "..." : "", cur,
                 cur == 1 ? "" : "s", utf8 ? ", UTF-8" : "");
        return 1;
    }
    if (s.flags & L->f_nok) {
        double d;
        if (L->nvsize != 8 || lh_objheap_read(oh, s.any + L->xpvmg_nv, &d, 8) < 0) {
            return 0;
        }
        snprintf(buf, len, "%.15g", d);
        return 1;
    }
    if (s.flags & L->f_iok) {
        int64_t iv = (int64_t)rd64(c, s.any + L->xpvmg_iv);
        snprintf(buf, len, "%" PRId64, iv);
        return 1;
    }
    return 0;
}

/* The version: PL_patchlevel ("v5.36.0"), or, once version.pm has made $^V an object, its
 * {original}. */
static int
version_ok(pctx_t *c)
{
    lh_objheap_t *oh = c->oh;
    uint64_t pl = ivar(c, L->i_patchlevel);
    uint32_t flags = rd32(c, pl + L->sv_flags);
    char v[32] = "";
    if (pl && (flags & L->f_rok)) {
        uint64_t hv = rd64(c, pl + L->sv_u);
        uint64_t any = rd64(c, hv + L->sv_any), arr = rd64(c, hv + L->sv_u);
        uint64_t max = rd64(c, any + L->xpvhv_max);
        char key[16];
        for (uint64_t b = 0; arr && b <= max && b < 64 && !v[0]; b++) {
            for (uint64_t he = rd64(c, arr + b * 8), k = 0; he && k < 64; k++) {
                if (hek_key(c, rd64(c, he + L->he_hek), key, sizeof key) >= 0 &&
                    strcmp(key, "original") == 0) {
                    pv_string(c, rd64(c, he + L->he_val), v, sizeof v);
                    break;
                }
                he = rd64(c, he + L->he_next);
            }
        }
    } else {
        pv_string(c, pl, v, sizeof v);
    }
    snprintf(oh->version, sizeof oh->version, "%s", v[0] == 'v' ? v + 1 : v);
    char want[32];
    snprintf(want, sizeof want, "%u.%u.%u", L->revision, L->version, L->subversion);
    if (strcmp(oh->version, want) != 0) {
        snprintf(oh->note, sizeof oh->note, "perl %s in the snapshot, this leakhound decodes "
                 "perl %s (%s): native view only", oh->version[0] ? oh->version : "(unknown "
                 "version)", want, L->core);
        return 0;
    }
    return 1;
}

int
lh_objheap_perl_decode(lh_objheap_t *oh, lh_err_t *err)
{
    uint64_t sym, interp = 0;
    lh_heapgraph_t *hg = oh->hg;
    static const char *const names[] = {"PL_curinterp", "perl_construct"};
    int found = lh_objheap_symbol(oh, "", names, 2, &sym);
    if (found != 0) {
        if (found == 1) {
            oh->lang = LH_OBJLANG_PERL;
            snprintf(oh->note, sizeof oh->note, "a perl built without multiplicity (no "
                     "PL_curinterp): this leakhound decodes threaded perl %u.%u.%u; native "
                     "view only", L->revision, L->version, L->subversion);
            return 1;
        }
        return 0; /* no perl at all */
    }
    oh->lang = LH_OBJLANG_PERL;
    if (!lh_perl_layout.has_layout) {
        snprintf(oh->note, sizeof oh->note, "this leakhound was built without perl's headers "
                 "(LH_PERL_CORE): perl heap not decoded, native view only");
        return 1;
    }
    const lh_snapinfo_t *si = &hg->snaps[hg->cur];
    if (!hg->has_graph || si->mode != LH_CONTENTS_FULL || hg->sf.n_pages == 0) {
        snprintf(oh->note, sizeof oh->note, "snapshot %zu '%s' of this perl process has no "
                 "full contents", hg->cur + 1, si->label ? si->label : "");
        oh->needs_full = 1;
        return 1;
    }
    if (lh_objheap_read(oh, sym, &interp, 8) < 0 || !interp) {
        snprintf(oh->note, sizeof oh->note, "perl: PL_curinterp is not in the snapshot (or "
                 "the interpreter is gone): native view only");
        return 1;
    }
    pctx_t c = {oh, err, NULL, NULL, 0, 0, {0}, {0}, NULL, 0, NULL, LH_NODE_NONE};
    int rc = LH_ENOMEM;
    if (!(c.ibuf = malloc(L->sizeof_interp)) ||
        !(c.blk_mark = calloc(hg->n_blocks ? hg->n_blocks : 1, 1))) {
        goto out;
    }
    if (lh_objheap_read(oh, interp, c.ibuf, L->sizeof_interp) < 0) {
        snprintf(oh->note, sizeof oh->note, "perl: the interpreter struct at 0x%" PRIx64
                 " is not in the snapshot: native view only", interp);
        rc = 1;
        goto out;
    }
    if (!version_ok(&c)) {
        rc = 1;
        goto out;
    }
    own(&c, -1, interp);
    c.strtab = ivar(&c, L->i_strtab);
    if ((rc = walk_arenas(&c)) < 0) {
        goto out;
    }
    /* The shared string table's entries (shared_he: an HE and its HEK in one block) belong
     * to PL_strtab; claim them before any hash that uses the keys. */
    const psv_t *st = sv_at(&c, c.strtab);
    if ((rc = add_objects(&c)) < 0 || (rc = find_weak_avs(&c)) < 0) {
        goto out;
    }
    if (!(c.found = calloc(c.n_svs ? c.n_svs : 1, sizeof *c.found))) {
        rc = LH_ENOMEM;
        goto out;
    }
    if (st) {
        uint64_t max = rd64(&c, st->any + L->xpvhv_max);
        for (uint64_t b = 0; st->u && b <= max && b < MAX_ELEMS; b++) {
            for (uint64_t he = rd64(&c, st->u + b * 8), k = 0; he && k < 100000; k++) {
                if ((rc = lh_objheap_own(oh, st->id, he)) < 0) {
                    goto out;
                }
                he = rd64(&c, he + L->he_next);
            }
        }
    }
    for (size_t i = 0; i < c.n_svs; i++) {
        if (c.svs[i].addr == c.strtab) {
            continue; /* its values are refcounts, not SVs */
        }
        if ((rc = sv_edges(&c, &c.svs[i])) < 0) {
            goto out;
        }
    }
    /* Names: the symbol table from main::, then the lexicals (added by cv_pads). */
    const psv_t *def = sv_at(&c, ivar(&c, L->i_defstash));
    if (def) {
        lh_addrmap_put(&c.stashes_seen, def->addr, 1);
        if ((rc = lh_objheap_add_name(oh, def->id, LH_OBJNAME_GLOBAL, "%main::")) < 0 ||
            (rc = walk_stash(&c, def, "main", 0)) < 0) {
            goto out;
        }
    }
    /* Roots. */
    uint64_t base = ivar(&c, L->i_stack_base), sp = ivar(&c, L->i_stack_sp);
    if ((rc = lh_objheap_add_root(oh, LH_OBJROOT_SYMTAB, "the symbol table",
                                  ivar(&c, L->i_defstash))) < 0 ||
        (rc = lh_objheap_add_root(oh, LH_OBJROOT_MAIN, "the main program",
                                  ivar(&c, L->i_main_cv))) < 0 ||
        (sp > base && (rc = root_range(&c, LH_OBJROOT_STACK, "the Perl stack", base + 8,
                                       (int64_t)((sp - base) / 8))) < 0) ||
        (rc = root_range(&c, LH_OBJROOT_MORTAL, "mortals", ivar(&c, L->i_tmps_stack),
                         (int64_t)ivar(&c, L->i_tmps_ix) + 1)) < 0 ||
        (rc = interp_roots(&c)) < 0 || (rc = global_roots(&c)) < 0 ||
        (rc = held_roots(&c)) < 0) {
        goto out;
    }
    rc = 1;
out:
    if (rc == LH_ENOMEM) {
        lh_err_set(err, LH_ENOMEM, "out of memory decoding the perl heap");
    }
    free(c.ibuf);
    free(c.svs);
    lh_addrmap_fini(&c.weak_avs);
    lh_addrmap_fini(&c.stashes_seen);
    free(c.blk_mark);
    free(c.found);
    return rc;
}
