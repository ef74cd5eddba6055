/* leakhound - SPDX-License-Identifier: MIT
 *
 * unwind_table.c: .eh_frame compiled into sorted rule tables, and the walk over them (see
 * unwind_table.h).
 *
 * A compiled table is two parallel arrays: pcs[i] (offset of the row's first address from
 * the module's executable range start, sorted) and rules[i] (a packed lh_utab_rule_t). A
 * row covers [pcs[i], pcs[i+1]). Rows come from running each FDE's call-frame program (the
 * CIE's initial instructions, then the FDE's) with a tracker of only the three registers a
 * walk needs: SP, FP and the return address column. Any rule for those three that is not
 * "register + offset" / "saved at CFA + offset" / "same value" / "undefined" makes the row a
 * FALLBACK row, and so does a CIE of a signal frame ('S' augmentation). Gaps between FDEs
 * get FALLBACK rows too, so an address outside every FDE is never unwound by a neighbour's
 * rule. Equal neighbours are merged.
 *
 * References for the encoding: the System V x86-64 psABI (DWARF register numbers), DWARF 4
 * section 6.4 (call frame instructions), LSB "Exception Frames" (.eh_frame and
 * .eh_frame_hdr layout, pointer encodings).
 */
#include "unwind_table.h"

#include <elf.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "sys.h"

#define MAX_MODS 4096
#define INDEX_ARENA (4u << 20)
#define REMEMBER_DEPTH 8
#define BLOCK_SHIFT 8 /* 256-byte blocks: a few rows each, one load to find them */
#define CACHE_BITS 12

#if defined(__x86_64__)
#define REG_FP 6
#define REG_SP 7
#define REG_RA 16
#define HAVE_WALKER 1
#else
/* Other architectures compile (the code is portable) but never walk: lh_utab_unwind
 * returns -1 and the caller uses libunwind. */
#define REG_FP 29
#define REG_SP 31
#define REG_RA 30
#define HAVE_WALKER 0
#endif

enum { MOD_NEW = 0, MOD_COMPILING = 1, MOD_READY = 2, MOD_FAILED = 3 };

typedef struct utab_mod {
    uintptr_t base;   /* load bias */
    uintptr_t lo, hi; /* executable range, absolute */
    uintptr_t eh_hdr; /* absolute address of .eh_frame_hdr, 0 = none */
    _Atomic int state;
    const uint32_t *pcs;
    const uint32_t *rules;
    uint32_t n_rows;
    /* Lookups answered from one FDE each while the table is not compiled (fde_rule). */
    atomic_uint n_direct;
    /* Fast lookup (as ORC's): blk[b] = number of rows starting at or before block b's
     * first byte (blocks of BLOCK bytes from lo); the row for an address in block b is
     * among rows [blk[b] - 1, blk[b + 1]). */
    const uint32_t *blk;
} utab_mod_t;

/* Published, sorted by lo, replaced (never modified) when modules come and go. Old copies
 * stay mapped: a walker may still be reading one. */
typedef struct utab_index {
    uint32_t n;
    uint32_t mod[];
} utab_index_t;

static utab_mod_t *mods;
static uint32_t n_mods;
static _Atomic(utab_index_t *) index_cur;
static uint8_t *index_arena;
static size_t index_used;

static atomic_ullong st_modules, st_rows, st_failed, st_fde;

/* Per-stack counters are bumped on every allocation that unwinds: sharded by thread, so
 * threads do not fight over one cache line. */
#define SHARDS 16
typedef struct shard {
    atomic_ullong walks, fallbacks, checked, mismatches;
    char pad[64 - 4 * sizeof(atomic_ullong)];
} shard_t;
static shard_t shards[SHARDS] __attribute__((aligned(64)));
static __thread uint8_t my_shard_anchor __attribute__((tls_model("initial-exec")));

/* ---------------------------------------------------------------------------------------
 * The rule cache: return address -> rule, direct-mapped, shared by all threads. Return
 * addresses repeat (loops, recursion), so most frames of a walk cost one load here instead
 * of a module search and a table search. An entry is one 64-bit word, so racing threads
 * never see a torn one: the return address's bits 12-46 as the tag, above a 29-bit form
 * of the rule (kind 2 | fp_saved 1 | fp_off/8 7 | deref 1 | fp_at_fp 1 | cfa_off/8 17)
 * for the common rules whose return address is at CFA - 8 (every x86-64 frame); others
 * are not cached, nor are addresses above user space's 47 bits (the vsyscall page). The
 * index mixes the address's low and high bits, so (index, tag) recover the whole address.
 * Emptied when a module is unloaded (its addresses may be reused by another).
 * ------------------------------------------------------------------------------------- */
#define RC_SIZE (1u << CACHE_BITS)
#define RC_MAX_IP (1ull << 47)
static _Atomic uint64_t rcache[RC_SIZE];

static inline uint32_t
rc_index(uintptr_t ip)
{
    return (uint32_t)((ip ^ (ip >> CACHE_BITS)) & (RC_SIZE - 1));
}

static shard_t *
my_shard(void)
{
    return &shards[((uintptr_t)&my_shard_anchor >> 12) % SHARDS];
}

/* ---------------------------------------------------------------------------------------
 * Packed rules: kind 2 bits | fp_saved 1 | fp_off/8 signed 7 | ra_off/8 signed 3 |
 * deref 1 | fp_at_fp 1 | cfa_off/8 signed 17. Offsets that are not multiples of 8 or out
 * of range are FALLBACK. cfa_off reaches +-512 KiB: a frame with a 64 KiB buffer on the
 * stack (unbound's packet handlers: CFA = rsp + 65632) is a table row, not a fallback.
 * ------------------------------------------------------------------------------------- */
static int
fits(int64_t v, int bits)
{
    if (v % 8 != 0) {
        return 0;
    }
    int64_t q = v / 8;
    return q >= -(1ll << (bits - 1)) && q < (1ll << (bits - 1));
}

static uint32_t
field(int64_t v, int bits, int shift)
{
    return ((uint32_t)(v / 8) & ((1u << bits) - 1)) << shift;
}

static int
unfield(uint32_t r, int bits, int shift)
{
    int32_t v = (int32_t)((r >> shift) & ((1u << bits) - 1));
    if (v & (1 << (bits - 1))) {
        v -= 1 << bits;
    }
    return v * 8;
}

/* Bit 13: the CFA is the word at (SP or FP) + cfa_off, not that address itself (GCC's
 * stack realignment, "DRAP": force_align_arg_pointer, -mstackrealign, over-aligned locals).
 * Bit 14: the caller's FP is saved at FP + fp_off (the current FP), not CFA + fp_off. */
#define R_DEREF (1u << 13)
#define R_FP_AT_FP (1u << 14)

static uint32_t
pack(int kind, int64_t cfa_off, int64_t ra_off, int fp_saved, int64_t fp_off, int deref,
     int fp_at_fp)
{
    if (kind == LH_UTAB_FALLBACK || kind == LH_UTAB_END) {
        return (uint32_t)kind;
    }
    if (!fits(cfa_off, 17) || !fits(ra_off, 3) || (fp_saved && !fits(fp_off, 7))) {
        return LH_UTAB_FALLBACK;
    }
    return (uint32_t)kind | (fp_saved ? 4u : 0u) | (fp_saved ? field(fp_off, 7, 3) : 0) |
           field(ra_off, 3, 10) | (deref ? R_DEREF : 0) |
           (fp_saved && fp_at_fp ? R_FP_AT_FP : 0) | field(cfa_off, 17, 15);
}

static void
unpack(uint32_t r, lh_utab_rule_t *out)
{
    out->kind = (int)(r & 3);
    out->fp_saved = (r >> 2) & 1;
    out->fp_off = out->fp_saved ? unfield(r, 7, 3) : 0;
    out->ra_off = unfield(r, 3, 10);
    out->cfa_off = unfield(r, 17, 15);
    out->cfa_deref = (r & R_DEREF) != 0;
    out->fp_at_fp = (r & R_FP_AT_FP) != 0;
}

/* ---------------------------------------------------------------------------------------
 * Reading .eh_frame: bounded cursor over memory the loader mapped.
 * ------------------------------------------------------------------------------------- */
typedef struct cur {
    const uint8_t *p;
    const uint8_t *end;
    int bad;
} cur_t;

/* An LEB128 number, sign-extended when is_signed (rd_uleb, rd_sleb). */
static uint64_t
rd_leb(cur_t *c, int is_signed)
{
    uint64_t v = 0;
    int shift = 0;
    while (c->p < c->end) {
        uint8_t b = *c->p++;
        if (shift < 64) {
            v |= (uint64_t)(b & 0x7f) << shift;
        }
        shift += 7;
        if (!(b & 0x80)) {
            if (is_signed && shift < 64 && (b & 0x40)) {
                v |= ~0ull << shift;
            }
            return v;
        }
    }
    c->bad = 1;
    return 0;
}

static uint64_t
rd_uleb(cur_t *c)
{
    return rd_leb(c, 0);
}

static int64_t
rd_sleb(cur_t *c)
{
    return (int64_t)rd_leb(c, 1);
}

/* A DWARF expression block (its length, then its operations) at c, which moves past it:
 * in e the block after its first operation op0 and that one's signed operand k (a
 * DW_OP_breg's offset). Returns -1 when the block overruns c. */
static int
rd_expr(cur_t *c, cur_t *e, uint8_t *op0, int64_t *k)
{
    uint64_t len = rd_uleb(c);
    if (len > (uint64_t)(c->end - c->p)) {
        return -1;
    }
    *e = (cur_t){c->p, c->p + len, 0};
    *op0 = e->p < e->end ? *e->p++ : 0;
    *k = rd_sleb(e);
    c->p += len;
    return 0;
}

static uint64_t
rd_fixed(cur_t *c, size_t n)
{
    if ((size_t)(c->end - c->p) < n) {
        c->bad = 1;
        c->p = c->end;
        return 0;
    }
    uint64_t v = 0;
    memcpy(&v, c->p, n); /* little-endian hosts only: x86-64 and aarch64 */
    c->p += n;
    return v;
}

/* DW_EH_PE_* pointer encodings. datarel is relative to .eh_frame_hdr (the only place it is
 * used here); textrel and funcrel do not occur in .eh_frame on Linux and are refused. */
static uint64_t
rd_encoded(cur_t *c, uint8_t enc, uintptr_t datarel)
{
    if (enc == 0xff) {
        return 0; /* DW_EH_PE_omit */
    }
    uintptr_t here = (uintptr_t)c->p;
    uint64_t v;
    switch (enc & 0x0f) {
    case 0x00: v = rd_fixed(c, sizeof(uintptr_t)); break;
    case 0x01: v = rd_uleb(c); break;
    case 0x02: v = rd_fixed(c, 2); break;
    case 0x03: v = rd_fixed(c, 4); break;
    case 0x04: v = rd_fixed(c, 8); break;
    case 0x09: v = (uint64_t)rd_sleb(c); break;
    case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_fixed(c, 2); break;
    case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_fixed(c, 4); break;
    case 0x0c: v = rd_fixed(c, 8); break;
    default: c->bad = 1; return 0;
    }
    switch (enc & 0x70) {
    case 0x00: break;
    case 0x10: v += here; break;    /* pcrel */
    case 0x30: v += datarel; break; /* datarel */
    default: c->bad = 1; return 0;
    }
    if (enc & 0x80) {
        c->bad = 1; /* indirect: never used for code addresses */
        return 0;
    }
    return v;
}

/* ---------------------------------------------------------------------------------------
 * The call-frame program, tracking SP, FP and RA only.
 * ------------------------------------------------------------------------------------- */
enum { R_SAME = 0, R_OFFSET = 1, R_UNDEF = 2, R_OTHER = 3, R_AT_FP = 4 /* at FP + off */ };

typedef struct reg_rule {
    uint8_t how;
    int64_t off;
} reg_rule_t;

typedef struct cfa_state {
    uint64_t cfa_reg;
    int64_t cfa_off;
    int cfa_expr;  /* an expression this tracker cannot express */
    int cfa_deref; /* CFA = *(cfa_reg + cfa_off) */
    reg_rule_t fp, ra, sp;
} cfa_state_t;

typedef struct cie {
    uint64_t code_align;
    int64_t data_align;
    uint64_t ra_reg;
    uint8_t fde_enc;
    int has_z;
    int is_signal;
    const uint8_t *insns;
    const uint8_t *insns_end;
} cie_t;

typedef struct builder {
    uint32_t *pcs;
    uint32_t *rules;
    uint32_t n;
    uint32_t max;
    uintptr_t lo, hi;
} builder_t;

static void
push_row(builder_t *b, uintptr_t pc, uint32_t rule)
{
    if (pc < b->lo || pc > b->hi) {
        return;
    }
    uint32_t off = (uint32_t)(pc - b->lo);
    if (b->n && b->pcs[b->n - 1] > off) {
        return; /* overlapping FDEs: keep the first one's rows */
    }
    if (b->n && b->pcs[b->n - 1] == off) {
        b->n--; /* a later rule at the same address replaces the earlier */
    }
    if (b->n && b->rules[b->n - 1] == rule) {
        return;
    }
    if (b->n >= b->max) {
        return;
    }
    b->pcs[b->n] = off;
    b->rules[b->n] = rule;
    b->n++;
}

static uint32_t
state_rule(const cfa_state_t *s, const cie_t *cie)
{
    if (cie->is_signal || s->cfa_expr || s->sp.how != R_SAME) {
        return LH_UTAB_FALLBACK;
    }
    if (s->ra.how == R_UNDEF) {
        return LH_UTAB_END;
    }
    if (s->ra.how != R_OFFSET ||
        (s->fp.how != R_SAME && s->fp.how != R_OFFSET && s->fp.how != R_AT_FP)) {
        return LH_UTAB_FALLBACK;
    }
    int kind;
    if (s->cfa_reg == REG_SP) {
        kind = LH_UTAB_CFA_SP;
    } else if (s->cfa_reg == REG_FP) {
        kind = LH_UTAB_CFA_FP;
    } else {
        return LH_UTAB_FALLBACK;
    }
    return pack(kind, s->cfa_off, s->ra.off, s->fp.how != R_SAME, s->fp.off, s->cfa_deref,
                s->fp.how == R_AT_FP);
}

static reg_rule_t *
tracked(cfa_state_t *s, uint64_t reg)
{
    if (reg == REG_FP) {
        return &s->fp;
    }
    if (reg == REG_RA) {
        return &s->ra;
    }
    if (reg == REG_SP) {
        return &s->sp;
    }
    return NULL;
}

static void
set_rule(cfa_state_t *s, uint64_t reg, uint8_t how, int64_t off)
{
    reg_rule_t *r = tracked(s, reg);
    if (r) {
        r->how = how;
        r->off = off;
    }
}

/* Runs instructions [p, end). With b == NULL (the CIE's initial instructions) no rows are
 * emitted; init is the state restored by DW_CFA_restore. Returns 0, or -1 for an
 * instruction this tracker does not know (the caller makes the whole FDE a FALLBACK). */
static int
run_program(const uint8_t *p, const uint8_t *end, const cie_t *cie, cfa_state_t *s,
            const cfa_state_t *init, builder_t *b, uintptr_t *loc, uintptr_t datarel)
{
    cfa_state_t stack[REMEMBER_DEPTH];
    int depth = 0;
    cur_t c = {p, end, 0};
    while (c.p < c.end && !c.bad) {
        uint8_t op = *c.p++;
        uint64_t reg;
        uint64_t delta = 0;
        int advance = 0;
        switch (op >> 6) {
        case 1:
            delta = (uint64_t)(op & 0x3f) * cie->code_align;
            advance = 1;
            break;
        case 2:
            reg = op & 0x3f;
            set_rule(s, reg, R_OFFSET, (int64_t)rd_uleb(&c) * cie->data_align);
            continue;
        case 3: {
            reg = op & 0x3f;
            reg_rule_t *r = tracked(s, reg);
            const reg_rule_t *r0 = tracked((cfa_state_t *)init, reg);
            if (r) {
                *r = *r0;
            }
            continue;
        }
        default:
            break;
        }
        if (!advance) {
            switch (op) {
            case 0x00: /* nop */
                break;
            case 0x01: { /* set_loc */
                uint64_t to = rd_encoded(&c, cie->fde_enc, datarel);
                if (to < *loc) {
                    return -1;
                }
                delta = to - *loc;
                advance = 1;
                break;
            }
            case 0x02: delta = rd_fixed(&c, 1) * cie->code_align; advance = 1; break;
            case 0x03: delta = rd_fixed(&c, 2) * cie->code_align; advance = 1; break;
            case 0x04: delta = rd_fixed(&c, 4) * cie->code_align; advance = 1; break;
            case 0x05: /* offset_extended */
                reg = rd_uleb(&c);
                set_rule(s, reg, R_OFFSET, (int64_t)rd_uleb(&c) * cie->data_align);
                break;
            case 0x06: { /* restore_extended */
                reg = rd_uleb(&c);
                reg_rule_t *r = tracked(s, reg);
                if (r) {
                    *r = *tracked((cfa_state_t *)init, reg);
                }
                break;
            }
            case 0x07: set_rule(s, rd_uleb(&c), R_UNDEF, 0); break;
            case 0x08: set_rule(s, rd_uleb(&c), R_SAME, 0); break;
            case 0x09: /* register: the value lives in another register */
                reg = rd_uleb(&c);
                (void)rd_uleb(&c);
                set_rule(s, reg, R_OTHER, 0);
                break;
            case 0x0a: /* remember_state */
                if (depth >= REMEMBER_DEPTH) {
                    return -1;
                }
                stack[depth++] = *s;
                break;
            case 0x0b: /* restore_state: the CFA rule is restored too, as GCC and libgcc
                        * do (DWARF 5 clarified it) */
                if (depth == 0) {
                    return -1;
                }
                *s = stack[--depth];
                break;
            case 0x0c: /* def_cfa */
                s->cfa_reg = rd_uleb(&c);
                s->cfa_off = (int64_t)rd_uleb(&c);
                s->cfa_expr = 0;
                s->cfa_deref = 0;
                break;
            case 0x0d: s->cfa_reg = rd_uleb(&c); break;
            case 0x0e: s->cfa_off = (int64_t)rd_uleb(&c); break;
            case 0x0f: { /* def_cfa_expression */
                /* GCC's realigned frames: DW_OP_breg<SP|FP> k; DW_OP_deref. */
                cur_t e;
                uint8_t op0;
                int64_t k;
                if (rd_expr(&c, &e, &op0, &k) < 0) {
                    return -1;
                }
                if ((op0 == 0x70 + REG_FP || op0 == 0x70 + REG_SP) && !e.bad &&
                    e.end - e.p == 1 && *e.p == 0x06) {
                    s->cfa_reg = (uint64_t)(op0 - 0x70);
                    s->cfa_off = k;
                    s->cfa_deref = 1;
                    s->cfa_expr = 0;
                } else {
                    s->cfa_expr = 1;
                }
                break;
            }
            case 0x10:   /* expression */
            case 0x16: { /* val_expression */
                reg = rd_uleb(&c);
                /* The FP saved at FP + k (realigned frames): DW_OP_breg<FP> k alone. */
                cur_t e;
                uint8_t op0;
                int64_t k;
                if (rd_expr(&c, &e, &op0, &k) < 0) {
                    return -1;
                }
                if (op == 0x10 && reg == REG_FP && op0 == 0x70 + REG_FP && !e.bad &&
                    e.p == e.end) {
                    set_rule(s, reg, R_AT_FP, k);
                } else {
                    set_rule(s, reg, R_OTHER, 0);
                }
                break;
            }
            case 0x11: /* offset_extended_sf */
                reg = rd_uleb(&c);
                set_rule(s, reg, R_OFFSET, rd_sleb(&c) * cie->data_align);
                break;
            case 0x12: /* def_cfa_sf */
                s->cfa_reg = rd_uleb(&c);
                s->cfa_off = rd_sleb(&c) * cie->data_align;
                s->cfa_expr = 0;
                s->cfa_deref = 0;
                break;
            case 0x13: s->cfa_off = rd_sleb(&c) * cie->data_align; break;
            case 0x14: /* val_offset: the register's value is CFA + n, not saved there */
            case 0x15:
                reg = rd_uleb(&c);
                if (op == 0x14) {
                    (void)rd_uleb(&c);
                } else {
                    (void)rd_sleb(&c);
                }
                set_rule(s, reg, R_OTHER, 0);
                break;
            case 0x2e: (void)rd_uleb(&c); break; /* GNU_args_size: no effect on unwinding */
            case 0x2f: /* GNU_negative_offset_extended */
                reg = rd_uleb(&c);
                set_rule(s, reg, R_OFFSET, -(int64_t)rd_uleb(&c) * cie->data_align);
                break;
            default:
                return -1;
            }
        }
        if (advance) {
            if (b) {
                push_row(b, *loc, state_rule(s, cie));
            }
            *loc += delta;
        }
    }
    return c.bad ? -1 : 0;
}

/* Parses the CIE at p (its length field). Returns 0 or -1. */
static int
parse_cie(const uint8_t *p, cie_t *cie)
{
    cur_t c = {p, p + 4, 0};
    uint64_t len = rd_fixed(&c, 4);
    if (len == 0xffffffffu) {
        c.end = c.p + 8;
        len = rd_fixed(&c, 8);
    }
    if (len == 0 || len > (64u << 20)) {
        return -1;
    }
    c.end = c.p + len;
    if (rd_fixed(&c, 4) != 0) { /* CIE id in .eh_frame */
        return -1;
    }
    uint8_t version = (uint8_t)rd_fixed(&c, 1);
    if (version != 1 && version != 3 && version != 4) {
        return -1;
    }
    const char *aug = (const char *)c.p;
    while (c.p < c.end && *c.p) {
        c.p++;
    }
    if (c.p >= c.end) {
        return -1;
    }
    c.p++;
    if (version == 4) {
        (void)rd_fixed(&c, 2); /* address size, segment size */
    }
    cie->code_align = rd_uleb(&c);
    cie->data_align = rd_sleb(&c);
    cie->ra_reg = version == 1 ? rd_fixed(&c, 1) : rd_uleb(&c);
    cie->fde_enc = 0; /* absptr */
    cie->has_z = 0;
    cie->is_signal = 0;
    if (aug[0] == 'z') {
        cie->has_z = 1;
        uint64_t alen = rd_uleb(&c);
        if (alen > (uint64_t)(c.end - c.p)) {
            return -1;
        }
        const uint8_t *aend = c.p + alen;
        cur_t a = {c.p, aend, 0};
        for (const char *q = aug + 1; *q && !a.bad; q++) {
            if (*q == 'R') {
                cie->fde_enc = (uint8_t)rd_fixed(&a, 1);
            } else if (*q == 'L') {
                (void)rd_fixed(&a, 1);
            } else if (*q == 'P') {
                uint8_t enc = (uint8_t)rd_fixed(&a, 1);
                /* the personality pointer may be indirect: skip it by its size */
                (void)rd_encoded(&a, (uint8_t)(enc & 0x0f), 0);
            } else if (*q == 'S') {
                cie->is_signal = 1;
            } else {
                break; /* 'B', 'G', ...: the 'z' length lets us skip the rest */
            }
        }
        if (a.bad) {
            return -1;
        }
        c.p = aend;
    } else if (aug[0] != '\0') {
        return -1; /* pre-'z' augmentations ("eh"): not on any current toolchain */
    }
    if (c.bad || cie->ra_reg != REG_RA || cie->code_align == 0) {
        return -1;
    }
    cie->insns = c.p;
    cie->insns_end = c.end;
    return 0;
}

/* Runs one FDE into b. Returns 0, or -1 when it could not be decoded (the caller covers
 * its range with a FALLBACK row if it knows the range). */
typedef struct cie_cache {
    const uint8_t *at;
    int ok; /* 1 parsed, -1 parsed but its instructions are beyond the tracker, 0 bad */
    cie_t cie;
    cfa_state_t init;
} cie_cache_t;

static int
compile_fde(builder_t *b, cie_cache_t *cc, const uint8_t *fde, uintptr_t datarel,
            uintptr_t *pc_end_out)
{
    cur_t c = {fde, fde + 4, 0};
    uint64_t len = rd_fixed(&c, 4);
    if (len == 0xffffffffu) {
        return -1; /* 64-bit DWARF in .eh_frame: not produced on Linux */
    }
    c.end = c.p + len;
    const uint8_t *id_at = c.p;
    uint32_t cie_ptr = (uint32_t)rd_fixed(&c, 4);
    if (cie_ptr == 0 || (uintptr_t)cie_ptr > (uintptr_t)id_at) {
        return -1;
    }
    /* Most FDEs of a module share one or two CIEs: the last one parsed is kept, with the
     * state its initial instructions leave. */
    const uint8_t *cie_at = id_at - cie_ptr;
    if (cc->at != cie_at) {
        cc->at = cie_at;
        cc->ok = 0;
        if (parse_cie(cie_at, &cc->cie) == 0) {
            cfa_state_t init = {0};
            uintptr_t loc0 = 0;
            cc->ok = run_program(cc->cie.insns, cc->cie.insns_end, &cc->cie, &init, &init,
                                 NULL, &loc0, datarel) == 0
                         ? 1
                         : -1;
            cc->init = init;
        }
    }
    if (!cc->ok) {
        return -1;
    }
    const cie_t cie = cc->cie;
    uintptr_t pc_begin = (uintptr_t)rd_encoded(&c, cie.fde_enc, datarel);
    uintptr_t pc_range = (uintptr_t)rd_encoded(&c, (uint8_t)(cie.fde_enc & 0x0f), datarel);
    if (cie.has_z) {
        uint64_t alen = rd_uleb(&c);
        if (alen > (uint64_t)(c.end - c.p)) {
            return -1;
        }
        c.p += alen;
    }
    if (c.bad) {
        return -1;
    }
    *pc_end_out = pc_begin + pc_range;
    if (cc->ok < 0) { /* the CIE's own instructions are beyond the tracker */
        push_row(b, pc_begin, LH_UTAB_FALLBACK);
        push_row(b, pc_begin + pc_range, LH_UTAB_FALLBACK);
        return 0;
    }
    const cfa_state_t init = cc->init;
    cfa_state_t s = init;
    uintptr_t loc = pc_begin;
    /* Rows go into a scratch builder first: a program that fails half-way must leave no
     * rows behind, only one FALLBACK row over its whole range. */
    uint32_t n0 = b->n;
    uint32_t last_pc = n0 ? b->pcs[n0 - 1] : 0;
    uint32_t last_rule = n0 ? b->rules[n0 - 1] : 0;
    if (run_program(c.p, c.end, &cie, &s, &init, b, &loc, datarel) != 0 || loc > *pc_end_out) {
        b->n = n0;
        if (n0) {
            b->pcs[n0 - 1] = last_pc;
            b->rules[n0 - 1] = last_rule;
        }
        push_row(b, pc_begin, LH_UTAB_FALLBACK);
    } else if (loc < *pc_end_out) {
        push_row(b, loc, state_rule(&s, &cie));
    }
    push_row(b, pc_begin + pc_range, LH_UTAB_FALLBACK);
    return 0;
}

/* The .eh_frame_hdr's binary-search table: *count (initial location, FDE address) pairs
 * as datarel sdata4, which every Linux linker writes. NULL for other encodings: no table,
 * libunwind does it. */
static const int32_t *
hdr_table(const utab_mod_t *m, uint64_t *count)
{
    const uint8_t *hdr = (const uint8_t *)m->eh_hdr;
    if (!hdr || hdr[0] != 1) {
        return NULL;
    }
    cur_t c = {hdr + 4, hdr + 64, 0};
    (void)rd_encoded(&c, hdr[1], (uintptr_t)hdr); /* eh_frame_ptr: not needed */
    *count = rd_encoded(&c, hdr[2], (uintptr_t)hdr);
    if (c.bad || hdr[3] != 0x3b || *count == 0 || *count > (16u << 20)) {
        return NULL;
    }
    return (const int32_t *)c.p;
}

static int
compile(utab_mod_t *m)
{
    const uint8_t *hdr = (const uint8_t *)m->eh_hdr;
    uint64_t count = 0;
    const int32_t *tab = hdr_table(m, &count);
    if (!tab) {
        return -1;
    }
    uint64_t bound = 2 * count + 2;
    for (uint64_t i = 0; i < count; i++) {
        const uint8_t *fde = hdr + tab[2 * i + 1];
        uint32_t len;
        memcpy(&len, fde, 4);
        bound += len == 0xffffffffu ? 0 : len;
    }
    if (bound > (64u << 20)) {
        return -1;
    }
    builder_t b = {0};
    b.max = (uint32_t)bound;
    b.lo = m->lo;
    b.hi = m->hi;
    b.pcs = lh_sys_map((size_t)bound * 4);
    b.rules = lh_sys_map((size_t)bound * 4);
    if (!b.pcs || !b.rules) {
        if (b.pcs) {
            lh_sys_unmap(b.pcs, (size_t)bound * 4);
        }
        if (b.rules) {
            lh_sys_unmap(b.rules, (size_t)bound * 4);
        }
        return -1;
    }
    cie_cache_t cc = {0};
    for (uint64_t i = 0; i < count; i++) {
        uintptr_t pc_end = 0;
        uintptr_t start = (uintptr_t)hdr + (uintptr_t)(intptr_t)tab[2 * i];
        if (compile_fde(&b, &cc, hdr + tab[2 * i + 1], (uintptr_t)hdr, &pc_end) != 0) {
            /* Undecodable FDE: its start is known from the search table, its end is not;
             * a FALLBACK row from its start until the next FDE's rows is exact. */
            push_row(&b, start, LH_UTAB_FALLBACK);
        }
    }
    /* The pages past b.n were never touched: they cost address space, not memory. */
    size_t n_blk = ((m->hi - m->lo) >> BLOCK_SHIFT) + 2;
    uint32_t *blk = lh_sys_map(n_blk * 4);
    if (!blk) {
        lh_sys_unmap(b.pcs, (size_t)bound * 4);
        lh_sys_unmap(b.rules, (size_t)bound * 4);
        return -1;
    }
    uint32_t r = 0;
    for (size_t k = 0; k < n_blk; k++) {
        uint64_t start = (uint64_t)k << BLOCK_SHIFT;
        while (r < b.n && b.pcs[r] <= start) {
            r++;
        }
        blk[k] = r;
    }
    m->blk = blk;
    m->pcs = b.pcs;
    m->rules = b.rules;
    m->n_rows = b.n;
    atomic_fetch_add_explicit(&st_modules, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&st_rows, b.n, memory_order_relaxed);
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Modules.
 * ------------------------------------------------------------------------------------- */
int
lh_utab_init(void)
{
    if (mods) {
        return 0;
    }
    mods = lh_sys_map(sizeof(utab_mod_t) * MAX_MODS);
    index_arena = lh_sys_map(INDEX_ARENA);
    return mods && index_arena ? 0 : -1;
}

static utab_index_t *
index_alloc(uint32_t n)
{
    size_t need = (sizeof(utab_index_t) + (size_t)n * sizeof(uint32_t) + 15) & ~(size_t)15;
    if (!index_arena || index_used + need > INDEX_ARENA) {
        return NULL;
    }
    utab_index_t *ix = (utab_index_t *)(index_arena + index_used);
    index_used += need;
    ix->n = 0;
    return ix;
}

/* Publishes the index of live modules: old, minus drop, plus add (both optional). */
static void
republish(const utab_mod_t *drop, uint32_t add)
{
    utab_index_t *old = atomic_load_explicit(&index_cur, memory_order_relaxed);
    uint32_t n_old = old ? old->n : 0;
    utab_index_t *ix = index_alloc(n_old + 1);
    if (!ix) {
        return;
    }
    uint32_t n = 0;
    int added = add == UINT32_MAX;
    for (uint32_t i = 0; i < n_old; i++) {
        const utab_mod_t *m = &mods[old->mod[i]];
        if (m == drop) {
            continue;
        }
        if (!added && mods[add].lo < m->lo) {
            ix->mod[n++] = add;
            added = 1;
        }
        ix->mod[n++] = old->mod[i];
    }
    if (!added) {
        ix->mod[n++] = add;
    }
    ix->n = n;
    atomic_store_explicit(&index_cur, ix, memory_order_release);
}

void
lh_utab_add_module(const struct dl_phdr_info *info)
{
    if (!mods || n_mods >= MAX_MODS) {
        return;
    }
    uintptr_t lo = UINTPTR_MAX, hi = 0, hdr = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            uintptr_t a = info->dlpi_addr + ph->p_vaddr;
            if (a < lo) {
                lo = a;
            }
            if (a + ph->p_memsz > hi) {
                hi = a + ph->p_memsz;
            }
        } else if (ph->p_type == PT_GNU_EH_FRAME) {
            hdr = info->dlpi_addr + ph->p_vaddr;
        }
    }
    if (hi <= lo || hi - lo > UINT32_MAX) {
        return;
    }
    utab_index_t *cur = atomic_load_explicit(&index_cur, memory_order_relaxed);
    for (uint32_t i = 0; cur && i < cur->n; i++) {
        if (mods[cur->mod[i]].base == info->dlpi_addr && mods[cur->mod[i]].lo == lo) {
            return;
        }
    }
    utab_mod_t *m = &mods[n_mods];
    m->base = info->dlpi_addr;
    m->lo = lo;
    m->hi = hi;
    m->eh_hdr = hdr;
    atomic_store_explicit(&m->state, hdr ? MOD_NEW : MOD_FAILED, memory_order_relaxed);
    republish(NULL, n_mods++);
}

void
lh_utab_remove_module(uintptr_t base)
{
    utab_index_t *cur = atomic_load_explicit(&index_cur, memory_order_relaxed);
    for (uint32_t i = 0; cur && i < cur->n; i++) {
        if (mods[cur->mod[i]].base == base) {
            republish(&mods[cur->mod[i]], UINT32_MAX);
            for (uint32_t k = 0; k < RC_SIZE; k++) {
                atomic_store_explicit(&rcache[k], 0, memory_order_relaxed);
            }
            return;
        }
    }
}

static utab_mod_t *
find_mod(uintptr_t pc)
{
    const utab_index_t *ix = atomic_load_explicit(&index_cur, memory_order_acquire);
    if (!ix) {
        return NULL;
    }
    uint32_t lo = 0, hi = ix->n;
    while (lo < hi) { /* first module with lo > pc */
        uint32_t mid = (lo + hi) / 2;
        if (mods[ix->mod[mid]].lo <= pc) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == 0) {
        return NULL;
    }
    utab_mod_t *m = &mods[ix->mod[lo - 1]];
    return pc < m->hi ? m : NULL;
}

/* The module's table, compiling it on first use. NULL when it has none (yet). */
static int
ready(utab_mod_t *m)
{
    int st = atomic_load_explicit(&m->state, memory_order_acquire);
    if (st == MOD_READY) {
        return 1;
    }
    if (st != MOD_NEW) {
        return 0; /* failed, or another thread is compiling it: libunwind meanwhile */
    }
    int expect = MOD_NEW;
    if (!atomic_compare_exchange_strong(&m->state, &expect, MOD_COMPILING)) {
        return 0;
    }
    if (compile(m) != 0) {
        atomic_fetch_add_explicit(&st_failed, 1, memory_order_relaxed);
        atomic_store_explicit(&m->state, MOD_FAILED, memory_order_release);
        return 0;
    }
    atomic_store_explicit(&m->state, MOD_READY, memory_order_release);
    return 1;
}

/* The rule at pc from the one FDE that covers it, without the module's table: the FDE is
 * found by a binary search of the .eh_frame_hdr table and compiled alone, into rows on the
 * stack, by the code compile() runs on every FDE, so the rule is the table's (the unit test
 * compares the two at every address of the test program and a stride of libc's).
 * Returns 0 (*rule set), 1 when no row covers pc (before the module's first FDE), or -1
 * when this cannot answer (no search table; an FDE of more than FDE_ROWS rows, which
 * would overflow the builder): the caller compiles the table. */
#define FDE_ROWS 64

/* The rule of the builder's rows at module offset off: 0, or 1 when no row covers it. */
static int
row_at(const builder_t *b, uint32_t off, uint32_t *rule)
{
    uint32_t k = 0;
    while (k < b->n && b->pcs[k] <= off) {
        k++;
    }
    if (k == 0) {
        return 1;
    }
    *rule = b->rules[k - 1];
    return 0;
}

/* An FDE of more than FDE_ROWS rows (python's _PyEval_EvalFrameDefault: its calls push and
 * pop), compiled again into rows of agent memory, one thread at a time. Without this, one
 * such frame in a sampled stack compiled its module's whole table: 9,810 FDEs of
 * /usr/bin/python3.11, 15.4M instructions, 2.9% of a sampled bench/alloc.py run. Returns
 * -1 when the rows do not fit either, or another thread is using them: the caller compiles
 * the table, as before. */
#define FDE_ROWS_BIG 8192
static atomic_flag big_busy = ATOMIC_FLAG_INIT;
static uint32_t *big_rows; /* FDE_ROWS_BIG pcs, then as many rules; lh_sys_map'd once */

static int
big_fde_rule(const utab_mod_t *m, const uint8_t *fde, uintptr_t pc, uint32_t *rule)
{
    if (atomic_flag_test_and_set_explicit(&big_busy, memory_order_acquire)) {
        return -1;
    }
    int rc = -1;
    if (!big_rows) {
        big_rows = lh_sys_map(2 * FDE_ROWS_BIG * sizeof *big_rows);
    }
    if (big_rows) {
        builder_t b = {big_rows, big_rows + FDE_ROWS_BIG, 0, FDE_ROWS_BIG, m->lo, m->hi};
        cie_cache_t cc = {0};
        uintptr_t pc_end = 0;
        if (compile_fde(&b, &cc, fde, m->eh_hdr, &pc_end) != 0) {
            *rule = LH_UTAB_FALLBACK;
            rc = 0;
        } else if (b.n < FDE_ROWS_BIG) {
            rc = row_at(&b, (uint32_t)(pc - m->lo), rule);
        }
    }
    atomic_flag_clear_explicit(&big_busy, memory_order_release);
    return rc;
}

static int
fde_rule(const utab_mod_t *m, uintptr_t pc, uint32_t *rule)
{
    uint64_t count = 0;
    const int32_t *tab = hdr_table(m, &count);
    if (!tab) {
        return -1;
    }
    uintptr_t hdr = m->eh_hdr;
    uint64_t lo = 0, hi = count;
    while (lo < hi) { /* first FDE starting after pc */
        uint64_t mid = (lo + hi) / 2;
        if (hdr + (uintptr_t)(intptr_t)tab[2 * mid] <= pc) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == 0) {
        return 1;
    }
    atomic_fetch_add_explicit(&st_fde, 1, memory_order_relaxed);
    uint32_t pcs[FDE_ROWS], rules[FDE_ROWS];
    builder_t b = {pcs, rules, 0, FDE_ROWS, m->lo, m->hi};
    const uint8_t *fde = (const uint8_t *)hdr + tab[2 * (lo - 1) + 1];
    cie_cache_t cc = {0};
    uintptr_t pc_end = 0;
    if (compile_fde(&b, &cc, fde, hdr, &pc_end) != 0) {
        *rule = LH_UTAB_FALLBACK; /* as compile(): FALLBACK up to the next FDE */
        return 0;
    }
    if (b.n >= FDE_ROWS) {
        return big_fde_rule(m, fde, pc, rule); /* push_row may have dropped rows */
    }
    return row_at(&b, (uint32_t)(pc - m->lo), rule);
}

/* The row of the compiled table covering pc (the table must be ready). */
static int
table_rule(const utab_mod_t *m, uintptr_t pc, uint32_t *rule)
{
    uint32_t off = (uint32_t)(pc - m->lo);
    uint32_t b = off >> BLOCK_SHIFT;
    uint32_t lo = m->blk[b], hi = m->blk[b + 1];
    while (lo < hi) { /* first row starting after off */
        uint32_t mid = (lo + hi) / 2;
        if (m->pcs[mid] <= off) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == 0) {
        return -1;
    }
    *rule = m->rules[lo - 1];
    return 0;
}

/* The walker's lookup (after its rule cache). A module's first lookups read one FDE each:
 * a sampled run walks a few hundred stacks, and compiling libc's thousands of FDEs for them
 * was 6.6M instructions, more than the sampled hooks of a 200k-pair churn. Past
 * DIRECT_MIN lookups and a quarter of the module's FDEs, the table is compiled (what the
 * single-FDE lookups cost by then is of the order of compiling it: no worse than twice
 * the old cost, and a full-mode run gets its table after its first few stacks). */
#define DIRECT_MIN 64
static int
rule_at(utab_mod_t *m, uintptr_t pc, uint32_t *rule)
{
    int st = atomic_load_explicit(&m->state, memory_order_acquire);
    if (st != MOD_READY) {
        if (st == MOD_FAILED) {
            return -1;
        }
        uint64_t count = 0;
        unsigned n = atomic_fetch_add_explicit(&m->n_direct, 1, memory_order_relaxed);
        if (st == MOD_COMPILING || n < DIRECT_MIN ||
            (hdr_table(m, &count) && n < count / 4)) {
            int rc = fde_rule(m, pc, rule);
            if (rc >= 0) {
                return rc == 0 ? 0 : -1;
            }
        }
        if (!ready(m)) {
            return -1;
        }
    }
    return table_rule(m, pc, rule);
}

int
lh_utab_lookup(uintptr_t pc, lh_utab_rule_t *out)
{
    utab_mod_t *m = find_mod(pc);
    uint32_t r;
    if (!m || !ready(m) || table_rule(m, pc, &r) != 0) {
        return -1;
    }
    unpack(r, out);
    return 0;
}

int
lh_utab_lookup_fde(uintptr_t pc, lh_utab_rule_t *out)
{
    utab_mod_t *m = find_mod(pc);
    uint32_t r;
    if (!m) {
        return -1;
    }
    int rc = fde_rule(m, pc, &r);
    if (rc != 0) {
        return rc == 1 ? -1 : -2;
    }
    unpack(r, out);
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * The walk.
 * ------------------------------------------------------------------------------------- */
/* A frame the rule cache did not answer: its module (*mp, kept from the last frame when
 * ip is still inside it), its rule in the cache's 29-bit form in *r, and the cache filled.
 * Returns 0, 1 for the outermost frame (END), or -1 (libunwind does this stack). Out of
 * line, so the walk's loop keeps its registers (inlined, the lookup cost deep_nofp 3
 * instructions more per frame of every walk). */
__attribute__((noinline)) static int
miss_rule(utab_mod_t **mp, uintptr_t ip, _Atomic uint64_t *ce, uint32_t *r)
{
    uintptr_t pc = ip - 1; /* inside the call, not after it */
    utab_mod_t *m = *mp;
    if (!m || pc < m->lo || pc >= m->hi) {
        m = find_mod(pc);
        if (!m) {
            return -1;
        }
        *mp = m;
    }
    uint32_t full;
    if (rule_at(m, pc, &full) != 0) {
        return -1;
    }
    int kind = (int)(full & 3);
    if (kind == LH_UTAB_END) {
        return 1;
    }
    if (kind == LH_UTAB_FALLBACK || ((int32_t)(full << 19) >> 29) != -1) {
        return -1; /* return address elsewhere than CFA - 8: not on x86-64 */
    }
    *r = (full & 0x3ff) | (full >> 13) << 10; /* ra_off (bits 10-12) dropped */
    if (ip < RC_MAX_IP) {
        atomic_store_explicit(ce, (uint64_t)(ip >> CACHE_BITS) << 29 | *r, memory_order_relaxed);
    }
    return 0;
}

__attribute__((noinline)) int
lh_utab_unwind(uint64_t *ips, uintptr_t *slots, int max, uintptr_t stack_hi)
{
#if HAVE_WALKER
    /* This function keeps a frame pointer (the agent is built with one), so its own
     * frame record gives the caller's state: the return address above the saved FP, the
     * caller's SP just above that. */
    const uintptr_t *f0 = (const uintptr_t *)__builtin_frame_address(0);
    uintptr_t lo = (uintptr_t)f0;
    uintptr_t ip = f0[1];
    uintptr_t slot = (uintptr_t)&f0[1];
    uintptr_t sp = (uintptr_t)&f0[2];
    uintptr_t fp = f0[0];
    utab_mod_t *m = NULL;
    int n = 0;
    if (stack_hi < lo + 16) {
        return -1;
    }
    while (n < max) {
        ips[n] = ip;
        if (slots) {
            slots[n] = slot;
        }
        n++;
        _Atomic uint64_t *ce = &rcache[rc_index(ip)];
        uint64_t e = atomic_load_explicit(ce, memory_order_relaxed);
        uint32_t r; /* the 29-bit form: cfa_off/8 in bits 12-28, ra at CFA - 8 */
        if (e >> 29 == ip >> CACHE_BITS && ip < RC_MAX_IP && e) {
            r = (uint32_t)e & 0x1fffffffu;
        } else {
            int rc = miss_rule(&m, ip, ce, &r);
            if (rc != 0) {
                return rc > 0 ? n : -1;
            }
        }
        /* The 29-bit form: kind 0-1, fp_saved 2, fp_off/8 3-9, deref 10, fp_at_fp 11,
         * cfa_off/8 12-28; signed fields by arithmetic shifts. */
        uintptr_t cfa = ((r & 3) == LH_UTAB_CFA_SP ? sp : fp) +
                        (uintptr_t)(intptr_t)(((int32_t)(r << 3) >> 15) * 8);
        if (r & (R_DEREF >> 3)) { /* a realigned frame: the CFA was saved on the stack */
            if (cfa - sp > stack_hi - 8 - sp || (cfa & 7)) {
                return -1;
            }
            cfa = *(const uintptr_t *)cfa;
        }
        uintptr_t ra_at = cfa - 8;
        /* sp <= ra_at <= stack_hi - 8 (so the walk moves up the stack and stays on it,
         * as sp >= lo), aligned: one unsigned comparison for the range. */
        if (ra_at - sp > stack_hi - 8 - sp || (ra_at & 7)) {
            return -1;
        }
        if (r & 4) {
            uintptr_t fp_at = ((r & (R_FP_AT_FP >> 3)) ? fp : cfa) +
                              (uintptr_t)(intptr_t)(((int32_t)(r << 22) >> 25) * 8);
            if (fp_at < lo || fp_at > stack_hi - 8 || (fp_at & 7)) {
                return -1;
            }
            fp = *(const uintptr_t *)fp_at;
        }
        ip = *(const uintptr_t *)ra_at;
        slot = ra_at;
        sp = cfa;
        if (ip == 0) {
            return n; /* the outermost frame of a thread whose entry saved no address */
        }
    }
    return n;
#else
    (void)ips;
    (void)slots;
    (void)max;
    (void)stack_hi;
    return -1;
#endif
}

void
lh_utab_stats(lh_utab_stats_t *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < SHARDS; i++) {
        out->n_walks += atomic_load_explicit(&shards[i].walks, memory_order_relaxed);
        out->n_fallbacks += atomic_load_explicit(&shards[i].fallbacks, memory_order_relaxed);
        out->n_checked += atomic_load_explicit(&shards[i].checked, memory_order_relaxed);
        out->n_mismatches += atomic_load_explicit(&shards[i].mismatches, memory_order_relaxed);
    }
    out->n_modules = atomic_load_explicit(&st_modules, memory_order_relaxed);
    out->n_rows = atomic_load_explicit(&st_rows, memory_order_relaxed);
    out->n_failed = atomic_load_explicit(&st_failed, memory_order_relaxed);
    out->n_fde_lookups = atomic_load_explicit(&st_fde, memory_order_relaxed);
}

void
lh_utab_note(int walked)
{
    shard_t *sh = my_shard();
    atomic_fetch_add_explicit(walked ? &sh->walks : &sh->fallbacks, 1, memory_order_relaxed);
}

void
lh_utab_note_check(int mismatch)
{
    shard_t *sh = my_shard();
    atomic_fetch_add_explicit(&sh->checked, 1, memory_order_relaxed);
    if (mismatch) {
        atomic_fetch_add_explicit(&sh->mismatches, 1, memory_order_relaxed);
    }
}
