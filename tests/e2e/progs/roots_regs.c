/* leakhound - SPDX-License-Identifier: MIT
 *
 * roots_regs.c (e2e, issue 11): the registers of a thread other than the one taking the
 * snapshot are not read (docs/FORMAT.md, "Roots"); this program shows the exact
 * consequence. A worker allocates 1234 bytes (regs_block), keeps the pointer only in a
 * callee-saved register (rbx; memory holds it xor'ed with a mask, and the worker's dead
 * stack is zeroed) and blocks in read(2) on a pipe nobody writes to, issued with the
 * syscall instruction itself so that no wrapper spills rbx. It also keeps a block of 4321
 * bytes (regs_stack_block) in a local of its stack. Once the worker is about to block,
 * main takes the snapshot "blocked" and calls exit(0) with the worker still blocked.
 *
 * leakhound: regs_block definitely lost in both snapshots (only the kernel holds rbx of a
 * thread in a system call, saved on its kernel stack), regs_stack_block reachable from the
 * worker's stack. Valgrind, which keeps every thread's registers itself, says
 * regs_block is still reachable. x86-64 only (the register is named in assembly).
 *
 * `roots_regs wait` (for `leakhound snapshot -p`, which stops every thread and reads its
 * registers): says "ready" once the worker is about to block, then waits for a line on
 * standard input; there regs_block is reachable from the worker's stack root.
 */
#define LH_WEAK_API
#include <leakhound.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MASK ((uintptr_t)0x3c3c3c3c3c3c3c3cull)

static int pipe_fds[2];
static atomic_int about_to_block;

__attribute__((noinline)) static uintptr_t
regs_block(void)
{
    uintptr_t p = (uintptr_t)malloc(1234); /* SITE: regs_block */
    memset((void *)p, 7, 1234);
    return p ^ MASK;
}

__attribute__((noinline)) static void *
regs_stack_block(void)
{
    return malloc(4321); /* SITE: regs_stack_block */
}

/* Zeroes the stack below the worker's frame, where regs_block and malloc left copies of
 * the pointer (another thread's stack is scanned whole: no stack pointer of it is known). */
__attribute__((noinline)) static void
scrub(void)
{
    volatile unsigned char dead[32768];
    for (size_t i = 0; i < sizeof dead; i++) {
        dead[i] = 0;
    }
}

static void *
worker(void *arg)
{
    (void)arg;
    void *volatile kept = regs_stack_block();
    memset(kept, 8, 4321);
    volatile uintptr_t masked = regs_block();
    scrub();
#if defined(__x86_64__)
    char byte;
    long rc;
    /* rbx = the pointer; then read(pipe_fds[0], &byte, 1) blocks with rbx held by the
     * kernel only. Every other register the compiler could use is declared clobbered. */
    __asm__ volatile("mov %[m], %%rbx\n\t"
                     "xor %[k], %%rbx\n\t"
                     "movl $1, %[flag]\n\t"
                     "mfence\n\t"
                     "mov %[nr], %%eax\n\t"
                     "syscall\n\t"
                     "xor %%ebx, %%ebx\n\t"
                     : "=a"(rc), [flag] "=m"(about_to_block)
                     : [m] "r"(masked), [k] "r"(MASK), [nr] "i"(SYS_read),
                       "D"((long)pipe_fds[0]), "S"(&byte), "d"(1L)
                     : "rbx", "rcx", "r11", "memory", "cc");
    (void)rc;
#endif
    return NULL;
}

int
main(int argc, char **argv)
{
    pthread_t t;
    if (pipe(pipe_fds) != 0 || pthread_create(&t, NULL, worker, NULL) != 0) {
        return 1;
    }
    while (!atomic_load(&about_to_block)) {
        sched_yield();
    }
    if (argc > 1 && strcmp(argv[1], "wait") == 0) {
        /* For `leakhound snapshot -p` (run_snapshot.py): say so, wait for a line. */
        char line[64];
        write(1, "ready\n", 6);
        ssize_t n = read(0, line, sizeof line);
        (void)n;
        exit(0);
    }
    if (lh_snapshot) {
        lh_snapshot("blocked");
    }
    exit(0); /* the worker is still in read(2), rbx holding the pointer */
}
