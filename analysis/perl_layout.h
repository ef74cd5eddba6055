/* leakhound - SPDX-License-Identifier: MIT
 *
 * perl_layout.h: the struct offsets, sizes and flag values of the perl the analyzer was
 * built against, for decoding a perl heap offline (objheap_perl.c, issue 12).
 *
 * They are never typed in by hand: perl_layout.c is compiled against the perl CORE headers
 * found at build time (cmake: LH_PERL_CORE, default /usr/lib/x86_64-linux-gnu/perl/5.36/CORE)
 * and fills this table with offsetof/sizeof and the headers' own constants; without the
 * headers, perl_layout_none.c provides a table with has_layout = 0 and the decoder says so
 * in one line. The decoder checks at run time that the snapshot's perl is the same version
 * and build (threads, multiplicity, pointer size) before using a single offset.
 *
 * Field names: <struct>_<field>, offsets in bytes from the start of the struct (for bodies:
 * from SvANY, as perl's own macros read them). Immutable, thread-safe.
 */
#ifndef LH_PERL_LAYOUT_H
#define LH_PERL_LAYOUT_H

#include <stdint.h>

/* X-macro: every value of the table, in one list shared by the generator TU and the
 * decoder. */
#define LH_PERL_LAYOUT_FIELDS(X)                                                             \
    X(sizeof_sv) X(sv_any) X(sv_refcnt) X(sv_flags) X(sv_u)                                  \
    X(svtypemask) X(t_null) X(t_iv) X(t_nv) X(t_pv) X(t_invlist) X(t_pviv) X(t_pvnv)           \
    X(t_pvmg) X(t_regexp) X(t_pvgv) X(t_pvlv) X(t_pvav) X(t_pvhv) X(t_pvcv) X(t_pvfm)          \
    X(t_pvio) X(t_last)                                                                      \
    X(f_rok) X(f_weakref) X(f_object) X(f_ook) X(f_pok) X(f_ppok) X(f_iscow) X(f_av_real)    \
    X(f_gv_gp) X(f_rmg) X(f_gmg) X(f_smg) X(f_utf8) X(f_iok) X(f_nok) X(f_fake)              \
    X(xpv_stash) X(xpv_magic) X(xpv_cur) X(xpv_lenfield)                                          \
    X(xpvmg_iv) X(xpvmg_nv)                                                                  \
    X(body_pv) X(body_pviv) X(body_pvnv) X(body_pvmg) X(body_invlist) X(body_regexp)         \
    X(body_pvgv) X(body_pvlv) X(body_pvav) X(body_pvhv) X(body_pvhv_aux) X(body_pvcv)        \
    X(body_pvfm) X(body_pvio)                                                                \
    X(xpvav_fill) X(xpvav_max) X(xpvav_alloc)                                                \
    X(xpvhv_keys) X(xpvhv_max) X(xpvhv_aux) X(hvaux_name) X(hvaux_name_count)                \
    X(hvaux_backrefs) X(hvaux_mro)                                                           \
    X(he_next) X(he_hek) X(he_val) X(sizeof_he) X(hek_hash) X(hek_len) X(hek_key)            \
    X(xpvgv_namehek) X(xpvgv_stash) X(xpvlv_targ)                                            \
    X(gp_sv) X(gp_io) X(gp_cv) X(gp_hv) X(gp_av) X(gp_form) X(gp_egv) X(gp_refcnt)           \
    X(sizeof_gp)                                                                             \
    X(xpvcv_stash) X(xpvcv_root) X(xpvcv_gv) X(xpvcv_file) X(xpvcv_padlist)                  \
    X(xpvcv_outside) X(xpvcv_flags) X(xpvcv_depth)                                           \
    X(cvf_isxsub) X(cvf_weakoutside) X(cvf_clone) X(cvf_cloned) X(cvf_anon) X(cvf_named)     \
    X(cvf_lexical)                                                                           \
    X(padlist_max) X(padlist_arr) X(padnl_fill) X(padnl_alloc) X(padname_pv)                 \
    X(padname_ourstash) X(padname_len) X(padname_flags) X(padname_outer)                     \
    X(mg_moremagic) X(mg_type) X(mg_flags) X(mg_obj) X(mg_ptr) X(mg_len) X(mgf_refcounted)   \
    X(sizeof_magic)                                                                          \
    X(xpvio_ofp) X(xpvio_ifp)                                                                \
    X(opslab_next) X(opslab_head) X(opslab_freed) X(opslab_slots) X(opslot_op)              \
    X(opslot_offset)                                                                         \
    X(i_stack_sp) X(i_stack_base) X(i_tmps_stack) X(i_tmps_ix) X(i_strtab) X(i_defstash)     \
    X(i_curstack) X(i_mainstack) X(i_sv_arenaroot) X(i_sv_count) X(i_main_cv)               \
    X(i_patchlevel) X(sizeof_interp)                                       \
    X(revision) X(version) X(subversion) X(has_threads) X(has_multiplicity) X(ptrsize)       \
    X(ivsize) X(nvsize)

/* A member of perl's interpreter struct (intrpvar.h), by its PL_ name: the SVs the
 * interpreter holds are named after the member that holds them. */
typedef struct lh_perl_ifield {
    uint32_t off;      /* offset in the interpreter struct */
    uint32_t size;     /* bytes (an array member: all its elements) */
    const char *name;  /* "PL_warnhook" */
} lh_perl_ifield_t;

typedef struct lh_perl_layout {
    int has_layout;     /* 0: built without perl headers (nothing below is valid) */
    const char *core;   /* the CORE directory the table was compiled from */
#define LH_PERL_LAYOUT_MEMBER(n) uint32_t n;
    LH_PERL_LAYOUT_FIELDS(LH_PERL_LAYOUT_MEMBER)
#undef LH_PERL_LAYOUT_MEMBER
    const lh_perl_ifield_t *ifields; /* every member of the interpreter struct, in order */
    uint32_t n_ifields;
} lh_perl_layout_t;

extern const lh_perl_layout_t lh_perl_layout;

#endif /* LH_PERL_LAYOUT_H */
