/* leakhound - SPDX-License-Identifier: MIT
 *
 * boundary.c: the exit entry (exit and __libc_start_main interposed; see boundary.h).
 */
#include "boundary.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent.h"
#include "sys.h"

static uintptr_t exit_sp;
static atomic_int exit_tid;

uintptr_t
lh_boundary_exit_sp(void)
{
    int tid = atomic_load(&exit_tid);
    return tid && tid == (int)lh_sys_gettid() ? exit_sp : 0;
}

/* Called by the assembly of exit below with the address of the registers it pushed. The
 * first thread to exit wins (the others race to the same end). */
__attribute__((used, visibility("hidden"), noreturn)) LH_REALIGN void lh_boundary_exit(int status,
                                                                                   uintptr_t sp);

void
lh_boundary_exit(int status, uintptr_t sp)
{
    int expect = 0;
    if (atomic_compare_exchange_strong(&exit_tid, &expect, (int)lh_sys_gettid())) {
        exit_sp = sp;
    }
    void (*real)(int) = (void (*)(int))dlsym(RTLD_NEXT, "exit");
    if (real) {
        real(status);
    }
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

#if defined(__x86_64__)
__asm__(LH_ASM_SAVED_REGS_ENTRY("exit")
        "  call lh_boundary_exit\n"
        "  ud2\n"
        ".cfi_endproc\n"
        ".size exit, .-exit\n");
#elif defined(__aarch64__)
__asm__(LH_ASM_SAVED_REGS_ENTRY("exit")
        "  bl lh_boundary_exit\n"
        "  brk #0\n"
        ".cfi_endproc\n"
        ".size exit, .-exit\n");
#endif

/* -------------------------------------------------------------------------------------
 * main's return: __libc_start_main calls exit inside libc, where exit is not ours; so
 * main is called through main_wrapper, whose return calls our exit with the program's
 * stack pointer above main's dead frame.
 * ----------------------------------------------------------------------------------- */
typedef int (*main_fn)(int, char **, char **);
typedef int (*start_fn)(main_fn, int, char **, void (*)(void), void (*)(void),
                        void (*)(void), void *);

static main_fn real_main;

int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void *stack_end);

static int
main_wrapper(int argc, char **argv, char **envp)
{
    exit(real_main(argc, argv, envp));
}

LH_ENTRY int
__libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                  void (*rtld_fini)(void), void *stack_end)
{
    start_fn real = (start_fn)dlsym(RTLD_NEXT, "__libc_start_main");
    if (!real) {
        syscall(SYS_exit_group, 127);
    }
    real_main = main;
    return real(main_wrapper, argc, argv, init, fini, rtld_fini, stack_end);
}
