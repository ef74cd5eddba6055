/* leakhound - SPDX-License-Identifier: MIT
 *
 * snapcontents.c: the .lhs of a snapshot taken from outside (see snapcontents.h).
 */
#include "snapcontents.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bound.h"
#include "cmd.h"
#include "filewriter.h"
#include "format.h"
#include "grow.h"

#define RED_ZONE 128
#define PTRS_PER_REC 4096

typedef struct reg {
    uint64_t lo, hi;
    uint8_t kind;
    const uint8_t *bytes; /* the copy of lo */
    char name[64];
    const char *path;     /* module path (data), or NULL: name is used */
} reg_t;

typedef struct regs {
    reg_t *r;
    size_t n, cap;
} regs_t;

static int
add(regs_t *rs, uint64_t lo, uint64_t hi, uint8_t kind, const lh_mapping_t *mp,
    const char *name, const char *path)
{
    if (hi <= lo) {
        return 0;
    }
    if (lh_grow(&rs->r, &rs->cap, rs->n, sizeof *rs->r, 256) < 0) {
        return LH_ENOMEM;
    }
    reg_t *r = &rs->r[rs->n++];
    r->lo = lo;
    r->hi = hi;
    r->kind = kind;
    r->bytes = mp->bytes + (lo - mp->lo);
    snprintf(r->name, sizeof r->name, "%s", name ? name : "");
    r->path = path;
    return 0;
}

static int
cmp_reg(const void *a, const void *b)
{
    const reg_t *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The stack and TLS roots of the threads (sorted, not overlapping). */
static int
thread_roots(const lh_memcopy_t *m, const lh_ptstop_t *th, const lh_glibc_layout_t *l,
             regs_t *sp)
{
    for (size_t i = 0; i < th->n; i++) {
        uint64_t rsp = th->threads[i].regs.rsp;
        const lh_mapping_t *mp = lh_memcopy_find(m, rsp);
        if (!mp || !mp->bytes) {
            continue;
        }
        uint64_t lo = rsp - RED_ZONE < mp->lo ? mp->lo : rsp - RED_ZONE;
        char nm[64];
        snprintf(nm, sizeof nm, "[stack:%d]", (int)th->threads[i].tid);
        if (add(sp, lo & ~7ull, mp->hi, LH_REGION_STACK, mp, nm, NULL) < 0) {
            return LH_ENOMEM;
        }
        /* The registers the stop read are part of the thread's stack root, as the agent
         * spills the capturing thread's onto its stack: written as a region of the same
         * name in the dead stack right below the red zone (the copy only: the target's
         * memory is not touched), so a pointer held only in a register keeps its block. */
        const struct user_regs_struct *ur = &th->threads[i].regs;
        uint64_t rlo = (lo & ~7ull) - sizeof *ur;
        if ((lo & ~7ull) >= mp->lo + sizeof *ur && rlo >= mp->lo) {
            if (add(sp, rlo, lo & ~7ull, LH_REGION_STACK, mp, nm, NULL) < 0) {
                return LH_ENOMEM;
            }
            sp->r[sp->n - 1].bytes = (const uint8_t *)ur;
        }
    }
    size_t n_stacks = sp->n;
    for (size_t i = 0; i < th->n; i++) {
        uint64_t tp = th->threads[i].regs.fs_base;
        if (!tp || l->tls_static_size < l->pthread_size) {
            continue;
        }
        uint64_t lo = tp + l->pthread_size - l->tls_static_size, hi = tp + l->pthread_size;
        int inside = 0;
        for (size_t k = 0; k < n_stacks && !inside; k++) {
            inside = tp >= sp->r[k].lo && tp < sp->r[k].hi;
        }
        const lh_mapping_t *mp = lh_memcopy_find(m, tp);
        if (inside || !mp || !mp->bytes) {
            continue;
        }
        lo = lo < mp->lo ? mp->lo : lo & ~7ull;
        hi = hi > mp->hi ? mp->hi : (hi + 7) & ~7ull;
        char nm[64];
        snprintf(nm, sizeof nm, "[tls:%d]", (int)th->threads[i].tid);
        if (add(sp, lo, hi, LH_REGION_TLS, mp, nm, NULL) < 0) {
            return LH_ENOMEM;
        }
    }
    lh_qsort(sp->r, sp->n, sizeof *sp->r, cmp_reg);
    size_t k = 0;
    for (size_t i = 0; i < sp->n; i++) {
        if (k && sp->r[i].lo < sp->r[k - 1].hi) {
            continue; /* overlaps the one before: keep that one */
        }
        sp->r[k++] = sp->r[i];
    }
    sp->n = k;
    return 0;
}

static int
build_regions(const lh_memcopy_t *m, const lh_ptstop_t *th, const lh_glibc_layout_t *l,
              regs_t *out)
{
    regs_t sp = {0};
    int rc = thread_roots(m, th, l, &sp);
    size_t s = 0;
    for (size_t i = 0; rc == 0 && i < m->n; i++) {
        const lh_mapping_t *mp = &m->maps[i];
        if (!mp->bytes) {
            continue;
        }
        uint8_t kind = 0;
        const char *path = NULL;
        if (mp->path[0] == '/') {
            kind = LH_REGION_DATA;
            path = mp->path;
        } else if (mp->path[0] == '\0' && i > 0 && m->maps[i - 1].hi == mp->lo &&
                   m->maps[i - 1].path[0] == '/' && m->maps[i - 1].bytes) {
            kind = LH_REGION_DATA; /* the module's bss */
            path = m->maps[i - 1].path;
        } else if (mp->path[0] == '\0' || strcmp(mp->path, "[heap]") == 0) {
            kind = LH_REGION_HEAP;
        }
        const char *name = path ? path : mp->path[0] ? mp->path : "[anon]";
        uint64_t at = mp->lo;
        while (s < sp.n && sp.r[s].hi <= mp->lo) {
            s++;
        }
        for (; s < sp.n && sp.r[s].lo < mp->hi; s++) {
            const reg_t *x = &sp.r[s];
            /* Below a stack root is the thread's dead stack: not written. */
            if (kind && x->kind != LH_REGION_STACK && (rc = add(out, at, x->lo, kind, mp, name,
                                                                path)) < 0) {
                break;
            }
            if ((rc = add(out, x->lo, x->hi, x->kind, mp, x->name, NULL)) < 0) {
                break;
            }
            out->r[out->n - 1].bytes = x->bytes; /* a register block is not in the copy */
            at = x->hi;
        }
        if (rc == 0 && kind && at < mp->hi) {
            rc = add(out, at, mp->hi, kind, mp, name, path);
        }
    }
    free(sp.r);
    return rc;
}

static const reg_t *
find_reg(const regs_t *rs, uint64_t a)
{
    size_t i = LH_UPPER(rs->r, rs->n, reg_t, hi, a); /* the first that ends after a */
    return i < rs->n && a >= rs->r[i].lo ? &rs->r[i] : NULL;
}

/* A pointer worth writing: into heap memory, or into a module (vtables, functions). */
static int
is_target(const regs_t *rs, const lh_memcopy_t *m, uint64_t v)
{
    if (v < 4096) {
        return 0;
    }
    const reg_t *r = find_reg(rs, v);
    if (r) {
        return r->kind == LH_REGION_HEAP;
    }
    const lh_mapping_t *mp = lh_memcopy_find(m, v);
    return mp && mp->path[0] == '/';
}

/* One PTRS record of the nb (address, value) pairs buffered. */
static void
flush_pointers(lh_fw_t *fw, const uint64_t *buf_a, const uint64_t *buf_v, size_t nb,
               lh_snapc_stats_t *st)
{
    lh_enc_t *e = lh_fw_rec_begin(fw, LH_SREC_PTRS, 10 + nb * 20);
    lh_enc_varint(e, nb);
    for (size_t j = 0; j < nb; j++) {
        lh_enc_varint(e, (buf_a[j] - fw->prev_addr) / 8);
        lh_enc_svarint(e, (int64_t)(buf_v[j] - fw->prev_val));
        fw->prev_addr = buf_a[j];
        fw->prev_val = buf_v[j];
    }
    lh_fw_rec_end(fw);
    st->ptrs += nb;
}

static void
write_pointers(lh_fw_t *fw, const regs_t *rs, const lh_memcopy_t *m, lh_snapc_stats_t *st,
               uint64_t **hdr_vals, size_t *n_hdr, size_t *cap_hdr)
{
    uint64_t buf_a[PTRS_PER_REC], buf_v[PTRS_PER_REC];
    size_t nb = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const reg_t *r = &rs->r[i];
        uint64_t nw = (r->hi - r->lo) / 8;
        for (uint64_t k = 0; k < nw; k++) {
            uint64_t v;
            memcpy(&v, r->bytes + 8 * k, 8);
            st->words++;
            if (!is_target(rs, m, v)) {
                continue;
            }
            buf_a[nb] = r->lo + 8 * k;
            buf_v[nb++] = v;
            const reg_t *t = find_reg(rs, v);
            if ((v & 15) == 8 && t && t->kind == LH_REGION_HEAP) {
                if (*n_hdr == *cap_hdr) {
                    size_t c = *cap_hdr ? 2 * *cap_hdr : 4096;
                    uint64_t *p = realloc(*hdr_vals, c * sizeof *p);
                    if (p) {
                        *hdr_vals = p;
                        *cap_hdr = c;
                    }
                }
                if (*n_hdr < *cap_hdr) {
                    (*hdr_vals)[(*n_hdr)++] = v;
                }
            }
            /* A full buffer is written and the scan goes on in the same region (a region
             * with more pointers than a record holds lost the rest before). */
            if (nb == PTRS_PER_REC) {
                flush_pointers(fw, buf_a, buf_v, nb, st);
                nb = 0;
            }
        }
    }
    if (nb) {
        flush_pointers(fw, buf_a, buf_v, nb, st);
    }
}

int
lh_snapc_write(const char *path, const lh_snapc_info_t *info, const lh_memcopy_t *m,
               const lh_ptstop_t *threads, const lh_glibc_layout_t *l, lh_snapc_stats_t *st,
               lh_err_t *err)
{
    memset(st, 0, sizeof *st);
    regs_t rs = {0};
    if (build_regions(m, threads, l, &rs) < 0) {
        free(rs.r);
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    uint8_t info_buf[512];
    lh_enc_t ie;
    lh_enc_init(&ie, info_buf, sizeof info_buf);
    uint8_t *rec = lh_enc_rec_begin(&ie, LH_SREC_INFO);
    lh_enc_varint(&ie, info->pid);
    lh_enc_varint(&ie, info->number);
    lh_enc_varint(&ie, info->ts_ns);
    lh_enc_str(&ie, info->label);
    lh_enc_varint(&ie, (uint64_t)info->mode);
    lh_enc_rec_end(&ie, rec);
    lh_fw_t fw;
    int rc = lh_fw_open(&fw, path, LH_SNAP_MAGIC, info_buf, (size_t)(ie.p - info_buf),
                        info->ts_ns, err);
    if (rc < 0) {
        free(rs.r);
        return rc;
    }
    for (size_t i = 0; i < rs.n; i++) {
        const reg_t *r = &rs.r[i];
        const char *nm = r->path ? r->path : r->name;
        lh_enc_t *e = lh_fw_rec_begin(&fw, LH_SREC_REGION, 40 + strlen(nm));
        lh_enc_varint(e, r->lo);
        lh_enc_varint(e, r->hi - r->lo);
        lh_enc_varint(e, r->kind);
        lh_enc_str(e, nm);
        lh_fw_rec_end(&fw);
        st->regions++;
    }
    if (info->mode == LH_CONTENTS_FULL) {
        long page = sysconf(_SC_PAGESIZE);
        for (size_t i = 0; i < rs.n; i++) {
            const reg_t *r = &rs.r[i];
            for (uint64_t a = r->lo; a < r->hi;) {
                uint64_t end = (a + (uint64_t)page) & ~((uint64_t)page - 1);
                if (end > r->hi) {
                    end = r->hi;
                }
                lh_enc_t *e = lh_fw_rec_begin(&fw, LH_SREC_BYTES, 16 + (size_t)page);
                lh_enc_varint(e, a);
                lh_enc_bytes(e, r->bytes + (a - r->lo), (size_t)(end - a));
                lh_fw_rec_end(&fw);
                st->bytes += end - a;
                st->words += (end - a) / 8;
                a = end;
            }
        }
    } else {
        uint64_t *hv = NULL;
        size_t n_hv = 0, cap_hv = 0;
        write_pointers(&fw, &rs, m, st, &hv, &n_hv, &cap_hv);
        /* WORDS: the 3 words below each distinct interior target that is 8 mod 16. */
        lh_qsort(hv, n_hv, sizeof *hv, lh_cli_cmp_u64);
        /* At most 40 targets (120 words) per record, so the count is one varint byte,
         * written before the words are known. */
        for (size_t i = 0; i < n_hv;) {
            lh_enc_t *e = lh_fw_rec_begin(&fw, LH_SREC_WORDS, 16 + 120 * 20);
            uint8_t *count_at = e->p;
            lh_enc_u8(e, 0);
            uint8_t n = 0;
            for (; i < n_hv && n + 3 <= 120; i++) {
                if (i && hv[i] == hv[i - 1]) {
                    continue;
                }
                for (int k = 1; k <= 3; k++) {
                    uint64_t a = hv[i] - 8 * (uint64_t)k;
                    int ok = 1;
                    uint64_t v = lh_memcopy_word(m, a, &ok);
                    if (ok) {
                        lh_enc_varint(e, a / 8);
                        lh_enc_varint(e, v);
                        n++;
                    }
                }
            }
            if (lh_enc_ok(e)) {
                count_at[0] = n;
            }
            lh_fw_rec_end(&fw);
        }
        free(hv);
    }
    lh_enc_t *e = lh_fw_rec_begin(&fw, LH_SREC_END, 64);
    lh_enc_varint(e, st->regions);
    lh_enc_varint(e, st->words);
    lh_enc_varint(e, st->ptrs);
    lh_enc_varint(e, st->bytes);
    lh_fw_rec_end(&fw);
    free(rs.r);
    return lh_fw_close(&fw, err);
}
