/* leakhound - SPDX-License-Identifier: MIT
 *
 * utab_lib.c: a library test_unwind_table dlopens (built -O2 -fomit-frame-pointer), so a
 * stack runs through a module loaded after the start.
 */
#include "utab_nofp.h"

volatile int utab_lib_sink;

__attribute__((visibility("default"))) int utab_lib_recurse(int depth, utab_cb_t cb, void *arg);

__attribute__((noinline, visibility("default"))) int
utab_lib_recurse(int depth, utab_cb_t cb, void *arg)
{
    volatile char pad[200];
    pad[0] = (char)depth;
    if (depth <= 0) {
        cb(arg);
        return pad[0];
    }
    int r = utab_lib_recurse(depth - 1, cb, arg);
    utab_lib_sink += r;
    return r + pad[0];
}
