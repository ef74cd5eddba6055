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

int
lh_unwind_libunwind_slots(uint64_t *ips, uintptr_t *slots, int max)
{
    unw_context_t ctx;
    unw_cursor_t cur;
    int n = 0;
    int after_signal = 0;
    if (unw_getcontext(&ctx) != 0 || unw_init_local(&cur, &ctx) != 0) {
        return 0;
    }
    while (n < max) {
        unw_word_t ip, sp;
        if (unw_get_reg(&cur, UNW_REG_IP, &ip) != 0 || ip == 0) {
            break;
        }
        unw_get_reg(&cur, UNW_REG_SP, &sp);
        ips[n] = ip;
#if defined(__x86_64__)
        /* The caller's SP is the callee's CFA; the return address sits just below it.
         * Not for the frame a signal interrupted: its address comes from the signal
         * context, and the word below its SP is whatever was there (unknown: 0). */
        slots[n] = n && !after_signal ? (uintptr_t)sp - 8 : 0;
#else
        slots[n] = 0;
#endif
        n++;
        after_signal = unw_is_signal_frame(&cur) > 0;
        if (unw_step(&cur) <= 0) {
            break;
        }
    }
    return n;
}

void
lh_unwind_init(void)
{
    uint64_t ips[8];
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    (void)lh_unwind_libunwind(ips, 8);
}
