/* leakhound - SPDX-License-Identifier: MIT
 *
 * unwind.c: frame-pointer and libunwind stack capture (see unwind.h).
 */
#include "unwind.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

__attribute__((noinline)) int
lh_unwind_fp(uint64_t *ips, uintptr_t *fps, int max, uintptr_t hi)
{
    uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
    uintptr_t lo = fp; /* every frame of interest lies between here and the stack's top */
    int n = 0;
    /* A frame record is {saved fp, return address} at fp, on x86-64 and aarch64 alike. */
    while (n < max) {
        if (fp < lo || fp > hi - 2 * sizeof(uintptr_t) || (fp & (sizeof(uintptr_t) - 1))) {
            break;
        }
        const uintptr_t *frame = (const uintptr_t *)fp;
        uintptr_t next = frame[0];
        uintptr_t ret = frame[1];
        if (ret < 4096) {
            break;
        }
        if (fps) {
            fps[n] = fp;
        }
        ips[n++] = ret;
        if (next <= fp) {
            break; /* frames must move towards the stack's top */
        }
        fp = next;
    }
    return n;
}

int
lh_unwind_libunwind(uint64_t *ips, int max)
{
    int n = unw_backtrace((void **)ips, max);
    return n < 0 ? 0 : n;
}

void
lh_unwind_init(void)
{
    uint64_t ips[8];
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    (void)lh_unwind_libunwind(ips, 8);
}
