/* leakhound - SPDX-License-Identifier: MIT
 *
 * perl_layout.c: the perl interpreter's layout, from the perl CORE headers found at build
 * time (see perl_layout.h). Built with perl's own compiler flags (ExtUtils::Embed ccopts)
 * so that the structures are laid out as in the perl that uses them; built without them,
 * available = 0 and the agent records perl natively, saying why.
 *
 * Only offsetof, sizeof and constants are taken: nothing here refers to a perl symbol, so
 * the agent neither links against libperl nor needs it at run time.
 */
#include "perl_layout.h"

#ifdef LH_HAVE_PERL_CORE

#include <EXTERN.h>
#include <perl.h>

#ifndef LH_PERL_BINCOMPAT
#error "LH_PERL_BINCOMPAT (perl -MConfig -e 'print join q( ), Config::bincompat_options()') is needed"
#endif

#if !defined(USE_ITHREADS) || !defined(MULTIPLICITY)
#error "the perl frame reader is written for perls with ithreads and multiplicity"
#endif

#define FIELD_SIZE(type, member) sizeof(((type *)0)->member)

const lh_perl_layout_t lh_perl_layout = {
    .available = 1,
    .revision = PERL_REVISION,
    .version = PERL_VERSION,
    .subversion = PERL_SUBVERSION,
    .interp_size = sizeof(struct interpreter),
    .bincompat = LH_PERL_BINCOMPAT,

    .i_curcop = offsetof(struct interpreter, Icurcop),
    .i_compiling = offsetof(struct interpreter, Icompiling),
    .i_curstackinfo = offsetof(struct interpreter, Icurstackinfo),
    .i_phase = offsetof(struct interpreter, Iphase),
    .i_curinterp_phase_size = FIELD_SIZE(struct interpreter, Iphase),
    .i_statusvalue = offsetof(struct interpreter, Istatusvalue),
    .i_scopestack_ix = offsetof(struct interpreter, Iscopestack_ix),

    .si_cxstack = offsetof(struct stackinfo, si_cxstack),
    .si_prev = offsetof(struct stackinfo, si_prev),
    .si_cxix = offsetof(struct stackinfo, si_cxix),
    .si_cxmax = offsetof(struct stackinfo, si_cxmax),

    .ctx_size = sizeof(PERL_CONTEXT),
    .ctx_type = offsetof(PERL_CONTEXT, cx_type),
    .ctx_u16 = offsetof(PERL_CONTEXT, blk_u16),
    .ctx_oldcop = offsetof(PERL_CONTEXT, blk_oldcop),
    .ctx_sub_cv = offsetof(PERL_CONTEXT, blk_sub.cv),
    .ctx_eval_cv = offsetof(PERL_CONTEXT, blk_eval.cv),
    .cxt_mask = CXTYPEMASK,
    .cxt_sub = CXt_SUB,
    .cxt_format = CXt_FORMAT,
    .cxt_eval = CXt_EVAL,
    .ctx_op_type_shift = 7, /* CxOLD_OP_TYPE(cx): blk_u16 >> 7 (cop.h) */
    .op_require = OP_REQUIRE,

    .cop_line = offsetof(COP, cop_line),
    .cop_file = offsetof(COP, cop_file),
    .cop_seq = offsetof(COP, cop_seq),

    .sv_any = offsetof(SV, sv_any),
    .sv_flags = offsetof(SV, sv_flags),
    .sv_u = offsetof(SV, sv_u),
    .svt_mask = SVTYPEMASK,
    .svt_pvcv = SVt_PVCV,
    .svt_pvgv = SVt_PVGV,
    .svt_pvhv = SVt_PVHV,
    .svf_ook = SVf_OOK,
    .xcv_stash = offsetof(XPVCV, xcv_stash),
    .xcv_gv_u = offsetof(XPVCV, xcv_gv_u),
    .xcv_flags = offsetof(XPVCV, xcv_flags),
    .xcv_flags_size = FIELD_SIZE(XPVCV, xcv_flags),
    .cvf_named = CVf_NAMED,
    .cvf_lexical = CVf_LEXICAL,
    .xgv_namehek = offsetof(XPVGV, xiv_u.xivu_namehek),
    .xgv_stash = offsetof(XPVGV, xnv_u.xgv_stash),
    .xhv_aux_name_u = offsetof(struct xpvhv_with_aux, xhv_aux.xhv_name_u),
    .xhv_aux_name_count = offsetof(struct xpvhv_with_aux, xhv_aux.xhv_name_count),
    .hek_len = offsetof(HEK, hek_len),
    .hek_key = offsetof(HEK, hek_key),
    .phase_run = PERL_PHASE_RUN,
    .phase_end = PERL_PHASE_END,
    .phase_destruct = PERL_PHASE_DESTRUCT,
};

#else

const lh_perl_layout_t lh_perl_layout = {.available = 0};

#endif
