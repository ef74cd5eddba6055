/* leakhound - SPDX-License-Identifier: MIT
 *
 * perl_layout.h: where the Perl frame reader (perl.c) finds things in a perl interpreter's
 * memory: offsets, sizes and constants taken from the perl CORE headers found at build
 * time (perl_layout.c is the only file compiled against them), so perl.c itself never
 * includes perl.h and never guesses an offset.
 *
 * The layout is valid only for the perl it was taken from: perl.c compares version,
 * PL_interp_size and the binary-compatibility options (PL_bincompat_options) of the
 * running perl with the ones recorded here before reading anything.
 */
#ifndef LH_PERL_LAYOUT_H
#define LH_PERL_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct lh_perl_layout {
    int available;      /* 0: built without perl headers; nothing below is set */
    unsigned revision, version, subversion; /* 5, 36, 0 */
    unsigned interp_size;                    /* sizeof(struct interpreter) */
    const char *bincompat; /* the build's binary-compatibility options, space separated */

    /* struct interpreter (threads + multiplicity: every PL_x is my_perl->Ix) */
    size_t i_curcop, i_curstackinfo, i_phase, i_curinterp_phase_size, i_statusvalue;
    size_t i_scopestack_ix; /* 0 once perl_destruct left perl_construct's scope */
    size_t i_compiling;     /* PL_compiling: the COP of code being compiled */
    /* struct stackinfo */
    size_t si_cxstack, si_prev, si_cxix, si_cxmax;
    /* PERL_CONTEXT */
    size_t ctx_size, ctx_type, ctx_u16, ctx_oldcop, ctx_sub_cv, ctx_eval_cv;
    unsigned cxt_mask, cxt_sub, cxt_format, cxt_eval, ctx_op_type_shift, op_require;
    /* COP (ithreads: cop_file is a char *) */
    size_t cop_line, cop_file, cop_seq;
    /* SV head and bodies */
    size_t sv_any, sv_flags, sv_u;
    unsigned svt_mask, svt_pvcv, svt_pvgv, svt_pvhv;
    uint32_t svf_ook;
    size_t xcv_stash, xcv_gv_u, xcv_flags, xcv_flags_size;
    uint32_t cvf_named, cvf_lexical;
    size_t xgv_namehek, xgv_stash;
    size_t xhv_aux_name_u, xhv_aux_name_count;
    size_t hek_len, hek_key;
    unsigned phase_run, phase_end, phase_destruct;
} lh_perl_layout_t;

/* Defined in perl_layout.c. */
extern const lh_perl_layout_t lh_perl_layout;

#endif /* LH_PERL_LAYOUT_H */
