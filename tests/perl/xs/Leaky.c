/* leakhound - SPDX-License-Identifier: MIT
 *
 * Leaky.c: a tiny XS module for the Perl tests (tests/perl): Leaky::grab(N) mallocs N bytes
 * from C and keeps them forever, so a report must show this file's C frames under the Perl
 * line that called grab.
 */
#include <EXTERN.h>
#include <perl.h>
#include <XSUB.h>

#include <stdlib.h>
#include <string.h>

static void **kept;
static size_t n_kept, cap_kept;

__attribute__((noinline)) static void *
leaky_keep(size_t n)
{
    if (n_kept == cap_kept) {
        cap_kept = cap_kept ? cap_kept * 2 : 64;
        kept = realloc(kept, cap_kept * sizeof *kept);
    }
    void *p = malloc(n); /* @xs_malloc */
    memset(p, 0x5a, n);
    kept[n_kept++] = p;
    return p;
}

XS_INTERNAL(XS_Leaky_grab)
{
    dXSARGS;
    if (items != 1) {
        croak_xs_usage(cv, "size");
    }
    leaky_keep((size_t)SvUV(ST(0))); /* @xs_call */
    XSRETURN_EMPTY;
}

XS_EXTERNAL(boot_Leaky);
XS_EXTERNAL(boot_Leaky)
{
    dVAR;
    dXSBOOTARGSAPIVERCHK;
    newXS("Leaky::grab", XS_Leaky_grab, __FILE__);
    Perl_xs_boot_epilog(aTHX_ ax);
}
