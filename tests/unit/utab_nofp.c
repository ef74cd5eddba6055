/* leakhound - SPDX-License-Identifier: MIT
 *
 * utab_nofp.c: code for test_unwind_table, built -O2 -fomit-frame-pointer as distributions
 * build it: recursion through frames of different shapes (SP-based CFA, a large frame, a
 * dynamic alloca that makes the compiler keep a frame pointer and base the CFA on it), then
 * a callback at the bottom that unwinds.
 */
#include <alloca.h>
#include <string.h>

#include "utab_nofp.h"

volatile int utab_sink;

__attribute__((noinline)) static int
shape_big(int depth, utab_cb_t cb, void *arg)
{
    volatile char big[6000];
    big[0] = (char)depth;
    big[5999] = (char)depth;
    int r = utab_recurse(depth - 1, cb, arg);
    return r + big[0] + big[5999];
}

__attribute__((noinline)) static int
shape_alloca(int depth, utab_cb_t cb, void *arg)
{
    /* cppcheck-suppress allocaCalled ; a dynamic frame is the point: its CFA is FP-based */
    char *buf = alloca(16 + (size_t)(depth & 7) * 24);
    memset(buf, depth, 16);
    utab_sink += buf[3];
    int r = utab_recurse(depth - 1, cb, arg);
    return r + buf[5];
}

__attribute__((noinline)) int
utab_recurse(int depth, utab_cb_t cb, void *arg)
{
    if (depth <= 0) {
        cb(arg);
        return utab_sink;
    }
    int r;
    switch (depth % 3) {
    case 0: r = shape_big(depth, cb, arg); break;
    case 1: r = shape_alloca(depth, cb, arg); break;
    default: r = utab_recurse(depth - 1, cb, arg); break;
    }
    utab_sink += r; /* not a tail call */
    return r + 1;
}
