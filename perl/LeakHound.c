/* leakhound - SPDX-License-Identifier: MIT
 *
 * LeakHound.c: the XS half of the LeakHound Perl module (LeakHound.pm): LeakHound::mark,
 * LeakHound::snapshot and LeakHound::tag call the agent's public API (include/leakhound.h)
 * when the process runs under leakhound, and do nothing otherwise.
 *
 * The agent is found with dlsym(RTLD_DEFAULT) when the module boots, so this module links
 * against nothing of leakhound and loads in any perl process, preloaded or not. Written
 * as plain C against the perl headers (no xsubpp): four small functions.
 */
#include <EXTERN.h>
#include <perl.h>
#include <XSUB.h>

#include <dlfcn.h>

typedef void (*lh_label_fn)(const char *label);
typedef void (*lh_tag_fn)(void *ptr, const char *type);

static lh_label_fn mark_fn, snapshot_fn;

/* LeakHound::_mark(LABEL) */
XS_INTERNAL(XS_LeakHound__mark)
{
    dXSARGS;
    if (items != 1) {
        croak_xs_usage(cv, "label");
    }
    if (mark_fn) {
        mark_fn(SvPV_nolen(ST(0)));
    }
    XSRETURN_EMPTY;
}

/* LeakHound::_snapshot(LABEL) */
XS_INTERNAL(XS_LeakHound__snapshot)
{
    dXSARGS;
    if (items != 1) {
        croak_xs_usage(cv, "label");
    }
    if (snapshot_fn) {
        snapshot_fn(SvPV_nolen(ST(0)));
    }
    XSRETURN_EMPTY;
}

/* LeakHound::_active(): true when the agent is in this process. */
XS_INTERNAL(XS_LeakHound__active)
{
    dXSARGS;
    PERL_UNUSED_VAR(items);
    ST(0) = mark_fn ? &PL_sv_yes : &PL_sv_no;
    XSRETURN(1);
}

XS_EXTERNAL(boot_LeakHound);
XS_EXTERNAL(boot_LeakHound)
{
    dVAR;
    dXSBOOTARGSAPIVERCHK;
    newXS("LeakHound::_mark", XS_LeakHound__mark, __FILE__);
    newXS("LeakHound::_snapshot", XS_LeakHound__snapshot, __FILE__);
    newXS("LeakHound::_active", XS_LeakHound__active, __FILE__);
    mark_fn = (lh_label_fn)dlsym(RTLD_DEFAULT, "lh_mark");
    snapshot_fn = (lh_label_fn)dlsym(RTLD_DEFAULT, "lh_snapshot");
    Perl_xs_boot_epilog(aTHX_ ax);
}
