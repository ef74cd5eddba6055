/* leakhound - SPDX-License-Identifier: MIT
 *
 * api.c: the public API of include/leakhound.h, as implemented by the agent. A program
 * that declares these weak finds them only when the agent is preloaded.
 */
#include "../include/leakhound.h"

#include "agent.h"
#include "record.h"
#include "format.h"
#include "snapshot.h"

#define LH_EXPORT LH_ENTRY

static void
label_record(uint8_t type, const char *label, int trigger)
{
    if (!lh_recording() || lh_tls.guard) {
        return;
    }
    lh_rec_t r;
    lh_tls.guard = 1;
    if (lh_rec_begin(&r, 0) == 0) {
        lh_rec_label(&r, type, label, trigger);
        lh_rec_end(&r);
    }
    lh_guard_leave();
}

LH_EXPORT void
lh_mark(const char *label)
{
    label_record(LH_REC_MARK, label, 0);
}

/* The snapshot's capturing thread is scanned from the program's stack pointer at its call
 * into the agent, never from inside the agent: the frames the agent runs in reuse stack
 * that the program's returned functions left pointers in (issue 11). lh_snapshot is a few
 * instructions of assembly that push the callee-saved registers (where the program may
 * hold its only pointer to a block) right below the return address and pass their address
 * to snapshot_at: scanning from there up sees the registers and the program's live frames,
 * and nothing the agent wrote. */
__attribute__((used, visibility("hidden"))) LH_REALIGN void lh_api_snapshot_at(const char *label,
                                                                              uintptr_t sp);

void
lh_api_snapshot_at(const char *label, uintptr_t sp)
{
    if (!lh_recording() || lh_tls.guard) {
        return;
    }
    lh_tls.guard = 1;
    lh_snapshot_take_at(label ? label : "", LH_SNAP_API, 1, sp);
    lh_guard_leave();
}

#if defined(__x86_64__)
__asm__(LH_ASM_SAVED_REGS_ENTRY("lh_snapshot")
        "  call lh_api_snapshot_at\n"
        "  lea -40(%rbp), %rsp\n"
        "  pop %r15\n"
        "  pop %r14\n"
        "  pop %r13\n"
        "  pop %r12\n"
        "  pop %rbx\n"
        "  pop %rbp\n"
        ".cfi_def_cfa %rsp, 8\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size lh_snapshot, .-lh_snapshot\n");
#elif defined(__aarch64__)
__asm__(LH_ASM_SAVED_REGS_ENTRY("lh_snapshot")
        "  bl lh_api_snapshot_at\n"
        "  ldp x19, x20, [sp, #16]\n"
        "  ldp x21, x22, [sp, #32]\n"
        "  ldp x23, x24, [sp, #48]\n"
        "  ldp x25, x26, [sp, #64]\n"
        "  ldp x27, x28, [sp, #80]\n"
        "  ldp x29, x30, [sp], #96\n"
        ".cfi_def_cfa_offset 0\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size lh_snapshot, .-lh_snapshot\n");
#else
LH_EXPORT void
lh_snapshot(const char *label)
{
    lh_api_snapshot_at(label, 0); /* scanned from inside the agent, as before */
}
#endif

LH_EXPORT void
lh_tag(void *ptr, const char *type)
{
    if (!ptr || !lh_recording() || lh_tls.guard) {
        return;
    }
    lh_rec_t r;
    lh_tls.guard = 1;
    if (lh_rec_begin(&r, 0) == 0) {
        lh_rec_tag(&r, ptr, type);
        lh_rec_end(&r);
    }
    lh_guard_leave();
}

LH_EXPORT const char *
lh_agent_version(void)
{
    return LH_AGENT_VERSION;
}
