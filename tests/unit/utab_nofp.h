/* leakhound - SPDX-License-Identifier: MIT
 *
 * utab_nofp.h: the recursion test_unwind_table unwinds through (utab_nofp.c, utab_lib.c).
 */
#ifndef LH_UTAB_NOFP_H
#define LH_UTAB_NOFP_H

typedef void (*utab_cb_t)(void *arg);

/* Recurses depth frames deep through several frame shapes, then calls cb(arg). */
int utab_recurse(int depth, utab_cb_t cb, void *arg);

/* In utab_lib.so (dlopen'd): the same through the library's own frames. */
typedef int (*utab_lib_fn_t)(int depth, utab_cb_t cb, void *arg);

#endif
