/* leakhound - SPDX-License-Identifier: MIT
 *
 * unwind_nofp_lib.c (e2e): a library without frame pointers, dlopen'd by unwind_nofp.
 */
#include <stdlib.h>

#include "unwind_nofp.h"

volatile int unwind_lib_sink;
static void *volatile escape; /* so the compiler cannot drop the malloc/free pair */

__attribute__((visibility("default"))) int unwind_lib_recurse(int depth, void (*cb)(void));

__attribute__((noinline, visibility("default"))) int
unwind_lib_recurse(int depth, void (*cb)(void))
{
    volatile char pad[200];
    pad[0] = (char)depth;
    if (depth <= 0) {
        cb();
        return pad[0];
    }
    int r = unwind_lib_recurse(depth - 1, cb);
    void *p = malloc(40);
    escape = p;
    unwind_lib_sink += p != NULL;
    free(escape);
    return r + pad[0];
}
