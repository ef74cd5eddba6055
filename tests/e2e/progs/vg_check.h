/* leakhound - SPDX-License-Identifier: MIT
 *
 * vg_check.h (e2e, issue 11): vg_leak_check() asks Valgrind for a leak check (a client
 * request: a few no-op instructions natively) where the program takes a leakhound
 * snapshot, so that the same binary gives both answers at the same moment. Without
 * Valgrind's headers it does nothing, and VG_CHECK_BUILT is 0.
 */
#ifndef VG_CHECK_H
#define VG_CHECK_H

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define VG_CHECK_BUILT 1
#endif
#endif
#ifndef VG_CHECK_BUILT
#define VG_CHECK_BUILT 0
#endif

static inline void
vg_leak_check(void)
{
#if VG_CHECK_BUILT
    VALGRIND_DO_LEAK_CHECK;
#endif
}

#endif /* VG_CHECK_H */
