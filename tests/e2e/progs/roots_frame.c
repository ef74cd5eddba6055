/* leakhound - SPDX-License-Identifier: MIT
 *
 * roots_frame.c (e2e, issue 11): frame_block() allocates 555 bytes, leaves 256 copies of
 * the only pointer in its own frame and returns without freeing: the block is lost. main
 * then calls lh_snapshot("returned") from a frame above that dead stack: the agent's own
 * frames reuse it, but the capturing thread is scanned from main's stack pointer, so the
 * block is definitely lost there. A block main itself holds in a local (kept_block, 666
 * bytes) is reachable. On x86-64 a block whose only pointer is in a callee-saved register
 * (rbx) at the call is reachable too (reg_block, 777 bytes; memory holds it xor'ed with a
 * mask); at exit, rbx long cleared, it is lost.
 */
#define LH_WEAK_API
#include <leakhound.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void
frame_block(void)
{
    void *volatile copies[256];
    void *p = malloc(555); /* SITE: frame_block */
    memset(p, 3, 555);
    for (int i = 0; i < 256; i++) {
        copies[i] = p;
    }
    (void)copies;
}

__attribute__((noinline)) static void *
kept_block(void)
{
    return malloc(666); /* SITE: kept_block */
}

#define MASK ((uintptr_t)0x5a5a5a5a5a5a5a5aull)

__attribute__((noinline)) static uintptr_t
reg_block(void)
{
    uintptr_t p = (uintptr_t)malloc(777); /* SITE: reg_block */
    memset((void *)p, 5, 777);
    return p ^ MASK;
}

static const char returned[] = "returned";

static void
snapshot_with_rbx(uintptr_t masked)
{
#if defined(__x86_64__)
    /* rbx = the pointer, only while lh_snapshot runs; every caller-saved register is
     * declared clobbered, so the compiler keeps nothing there across the call. */
    __asm__ volatile("mov %[m], %%rbx\n\t"
                     "xor %[k], %%rbx\n\t"
                     "lea %[label], %%rdi\n\t"
                     "call lh_snapshot@PLT\n\t"
                     "xor %%ebx, %%ebx\n\t"
                     :
                     : [m] "r"(masked), [k] "r"(MASK), [label] "m"(returned)
                     : "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11",
                       "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6",
                       "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",
                       "xmm15");
#else
    (void)masked;
    lh_snapshot(returned);
#endif
}

int
main(void)
{
    void *volatile kept = kept_block();
    memset(kept, 4, 666);
    volatile uintptr_t masked = reg_block();
    frame_block();
    if (lh_snapshot) {
        snapshot_with_rbx(masked);
    }
    free(kept);
    return 0;
}
