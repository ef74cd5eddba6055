/* leakhound - SPDX-License-Identifier: MIT
 *
 * unwind_nofp.h (e2e): the entry point of unwind_nofp_lib.so.
 */
#ifndef LH_E2E_UNWIND_NOFP_H
#define LH_E2E_UNWIND_NOFP_H

/* Recurses depth frames deep, calls cb at the bottom and allocates on the way back. */
typedef int (*unwind_lib_fn_t)(int depth, void (*cb)(void));

#endif
