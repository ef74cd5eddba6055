/* leakhound - SPDX-License-Identifier: MIT
 *
 * perl_layout.c: fills lh_perl_layout from the perl CORE headers found at build time
 * (perl_layout.h). This is the only file compiled against perl's headers; it holds no code,
 * only offsetof/sizeof and the headers' constants, so the analyzer never runs perl and never
 * guesses an offset. Built only when cmake finds the headers (else perl_layout_none.c).
 */
#include <stddef.h>

/* The op slabs' structs (op.h) are declared for perl's own sources only; their layout is
 * what the decoder needs to find the slabs of a sub's op tree. */
#define PERL_CORE
#include "EXTERN.h"
#include "perl.h"

#include "perl_layout.h"

#if defined(PERL_REVISION) && !defined(MULTIPLICITY)
#error "perl_layout.c expects a perl built with multiplicity (the interpreter struct)"
#endif

#define OFF(type, field) ((uint32_t)offsetof(type, field))
/* Bodies that perl allocates without their unused leading fields (sv.c bodies_by_type). */
#define BODY_FROM_CUR(type) ((uint32_t)(sizeof(type) - offsetof(type, xpv_cur)))
/* The interpreter's members are perl's PL_x names, Ix in the struct (intrpvar.h). */
#define INTERP(x) .i_##x = OFF(PerlInterpreter, I##x)

/* Every member of the interpreter struct, from the header that declares them (perl.h
 * includes intrpvar.h the same way to lay the struct out), so an SV the interpreter holds
 * is named by its member: PL_warnhook, PL_regex_padav, PL_sv_consts. */
#define PERLVAR(prefix, var, type) {OFF(PerlInterpreter, I##var), sizeof(type), "PL_" #var},
#define PERLVARA(prefix, var, n, type)                                                      \
    {OFF(PerlInterpreter, I##var), (uint32_t)sizeof(type) * (n), "PL_" #var},
#define PERLVARI(prefix, var, type, init) PERLVAR(prefix, var, type)
#define PERLVARIC(prefix, var, type, init) PERLVAR(prefix, var, type)
/* the header's warning pragmas cannot stand inside an initializer */
#undef GCC_DIAG_IGNORE
#undef GCC_DIAG_RESTORE
#define GCC_DIAG_IGNORE(x)
#define GCC_DIAG_RESTORE
static const lh_perl_ifield_t ifields[] = {
#include "intrpvar.h"
};
#undef PERLVAR
#undef PERLVARA
#undef PERLVARI
#undef PERLVARIC

const lh_perl_layout_t lh_perl_layout = {
    .has_layout = 1,
    .core = LH_PERL_CORE_DIR,
    .sizeof_sv = sizeof(SV),
    .sv_any = OFF(SV, sv_any), .sv_refcnt = OFF(SV, sv_refcnt),
    .sv_flags = OFF(SV, sv_flags), .sv_u = OFF(SV, sv_u),
    .svtypemask = SVTYPEMASK,
    .t_null = SVt_NULL, .t_iv = SVt_IV, .t_nv = SVt_NV, .t_pv = SVt_PV,
    .t_invlist = SVt_INVLIST, .t_pviv = SVt_PVIV, .t_pvnv = SVt_PVNV, .t_pvmg = SVt_PVMG,
    .t_regexp = SVt_REGEXP, .t_pvgv = SVt_PVGV, .t_pvlv = SVt_PVLV, .t_pvav = SVt_PVAV,
    .t_pvhv = SVt_PVHV, .t_pvcv = SVt_PVCV, .t_pvfm = SVt_PVFM, .t_pvio = SVt_PVIO,
    .t_last = SVt_LAST,
    .f_rok = SVf_ROK, .f_weakref = SVprv_WEAKREF, .f_object = SVs_OBJECT, .f_ook = SVf_OOK,
    .f_pok = SVf_POK, .f_ppok = SVp_POK, .f_iscow = SVf_IsCOW, .f_av_real = SVpav_REAL,
    .f_gv_gp = SVpgv_GP, .f_rmg = SVs_RMG, .f_gmg = SVs_GMG, .f_smg = SVs_SMG,
    .f_utf8 = SVf_UTF8, .f_iok = SVf_IOK, .f_nok = SVf_NOK, .f_fake = SVf_FAKE,
    .xpv_stash = OFF(XPVMG, xmg_stash),
    .xpv_magic = OFF(XPVMG, xmg_u.xmg_magic),
    .xpv_cur = OFF(XPV, xpv_cur),
    .xpv_lenfield = OFF(XPV, xpv_len_u.xpvlenu_len),
    .xpvmg_iv = OFF(XPVMG, xiv_u.xivu_iv),
    .xpvmg_nv = OFF(XPVMG, xnv_u.xnv_nv),
    .body_pv = BODY_FROM_CUR(XPV), .body_pviv = BODY_FROM_CUR(XPVIV),
    .body_pvnv = BODY_FROM_CUR(XPVNV), .body_invlist = BODY_FROM_CUR(XINVLIST),
    .body_pvmg = sizeof(XPVMG), .body_regexp = sizeof(regexp), .body_pvgv = sizeof(XPVGV),
    .body_pvlv = sizeof(XPVLV), .body_pvav = sizeof(XPVAV), .body_pvhv = sizeof(XPVHV),
    .body_pvhv_aux = sizeof(struct xpvhv_with_aux), .body_pvcv = sizeof(XPVCV),
    .body_pvfm = sizeof(XPVFM), .body_pvio = sizeof(XPVIO),
    .xpvav_fill = OFF(XPVAV, xav_fill), .xpvav_max = OFF(XPVAV, xav_max),
    .xpvav_alloc = OFF(XPVAV, xav_alloc),
    .xpvhv_keys = OFF(XPVHV, xhv_keys), .xpvhv_max = OFF(XPVHV, xhv_max),
    .xpvhv_aux = OFF(struct xpvhv_with_aux, xhv_aux),
    .hvaux_name = OFF(struct xpvhv_aux, xhv_name_u.xhvnameu_name),
    .hvaux_name_count = OFF(struct xpvhv_aux, xhv_name_count),
    .hvaux_backrefs = OFF(struct xpvhv_aux, xhv_backreferences),
    .hvaux_mro = OFF(struct xpvhv_aux, xhv_mro_meta),
    .he_next = OFF(HE, hent_next), .he_hek = OFF(HE, hent_hek),
    .he_val = OFF(HE, he_valu.hent_val), .sizeof_he = sizeof(HE),
    .hek_hash = OFF(HEK, hek_hash), .hek_len = OFF(HEK, hek_len), .hek_key = OFF(HEK, hek_key),
    .xpvgv_namehek = OFF(XPVGV, xiv_u.xivu_namehek),
    .xpvgv_stash = OFF(XPVGV, xnv_u.xgv_stash),
    .xpvlv_targ = OFF(XPVLV, xlv_targ),
    .gp_sv = OFF(GP, gp_sv), .gp_io = OFF(GP, gp_io), .gp_cv = OFF(GP, gp_cv),
    .gp_hv = OFF(GP, gp_hv), .gp_av = OFF(GP, gp_av), .gp_form = OFF(GP, gp_form),
    .gp_egv = OFF(GP, gp_egv), .gp_refcnt = OFF(GP, gp_refcnt), .sizeof_gp = sizeof(GP),
    .xpvcv_stash = OFF(XPVCV, xcv_stash),
    .xpvcv_root = OFF(XPVCV, xcv_root_u.xcv_root),
    .xpvcv_gv = OFF(XPVCV, xcv_gv_u.xcv_gv),
    .xpvcv_file = OFF(XPVCV, xcv_file),
    .xpvcv_padlist = OFF(XPVCV, xcv_padlist_u.xcv_padlist),
    .xpvcv_outside = OFF(XPVCV, xcv_outside),
    .xpvcv_flags = OFF(XPVCV, xcv_flags),
    .xpvcv_depth = OFF(XPVCV, xcv_depth),
    .cvf_isxsub = CVf_ISXSUB, .cvf_weakoutside = CVf_WEAKOUTSIDE, .cvf_clone = CVf_CLONE,
    .cvf_cloned = CVf_CLONED, .cvf_anon = CVf_ANON, .cvf_named = CVf_NAMED,
    .cvf_lexical = CVf_LEXICAL,
    .padlist_max = OFF(PADLIST, xpadl_max),
    .padlist_arr = OFF(PADLIST, xpadl_arr.xpadlarr_alloc),
    .padnl_fill = OFF(PADNAMELIST, xpadnl_fill),
    .padnl_alloc = OFF(PADNAMELIST, xpadnl_alloc),
    .padname_pv = OFF(PADNAME, xpadn_pv), .padname_ourstash = OFF(PADNAME, xpadn_ourstash),
    .padname_len = OFF(PADNAME, xpadn_len), .padname_flags = OFF(PADNAME, xpadn_flags),
    .padname_outer = PADNAMEt_OUTER,
    .mg_moremagic = OFF(MAGIC, mg_moremagic), .mg_type = OFF(MAGIC, mg_type),
    .mg_flags = OFF(MAGIC, mg_flags), .mg_obj = OFF(MAGIC, mg_obj),
    .mg_ptr = OFF(MAGIC, mg_ptr), .mg_len = OFF(MAGIC, mg_len),
    .mgf_refcounted = MGf_REFCOUNTED, .sizeof_magic = sizeof(MAGIC),
    .xpvio_ofp = OFF(XPVIO, xio_ofp),
    .xpvio_ifp = OFF(SV, sv_u.svu_fp),
    .opslab_next = OFF(OPSLAB, opslab_next), .opslab_head = OFF(OPSLAB, opslab_head),
    .opslab_freed = OFF(OPSLAB, opslab_freed), .opslab_slots = OFF(OPSLAB, opslab_slots),
    .opslot_op = OFF(OPSLOT, opslot_op), .opslot_offset = OFF(OPSLOT, opslot_offset),
    INTERP(stack_sp), INTERP(stack_base), INTERP(tmps_stack), INTERP(tmps_ix),
    INTERP(strtab), INTERP(defstash), INTERP(curstack), INTERP(mainstack),
    INTERP(sv_arenaroot), INTERP(sv_count), INTERP(main_cv), INTERP(patchlevel),
    .sizeof_interp = sizeof(PerlInterpreter),
    .revision = PERL_REVISION, .version = PERL_VERSION, .subversion = PERL_SUBVERSION,
#ifdef USE_ITHREADS
    .has_threads = 1,
#endif
    .has_multiplicity = 1,
    .ptrsize = PTRSIZE, .ivsize = IVSIZE, .nvsize = NVSIZE,
    .ifields = ifields, .n_ifields = sizeof ifields / sizeof ifields[0],
};
