/* leakhound - SPDX-License-Identifier: MIT
 *
 * unwind_table.h: unwinding at frame-pointer cost on code without frame pointers.
 *
 * Each module's .eh_frame (found through its PT_GNU_EH_FRAME header) is compiled once,
 * lazily, into a sorted table of address ranges and rules, in the manner of the Linux
 * kernel's ORC tables: for each range, the canonical frame address (CFA) is SP or FP plus
 * an offset, the return address is at CFA plus an offset, and the caller's frame pointer
 * is either unchanged or saved at CFA plus an offset. A walk then costs a binary search
 * and two or three loads per frame. Until a module has had a few dozen lookups (and a
 * quarter of its FDEs' worth), each one reads the one FDE it needs, found through
 * .eh_frame_hdr's search table, and the table is not compiled: a sampled run, which walks
 * a few hundred stacks, never pays for the whole of libc's .eh_frame.
 *
 * What the table cannot express (signal frames, DW_CFA expressions, a CFA computed from any
 * other register or more than 512 KiB from SP or FP, code outside every FDE, a module
 * whose table could not be compiled)
 * makes the walk return -1: the caller falls back to libunwind for that stack, and counts
 * it.
 *
 * Memory comes from lh_sys_map only (never the host's heap); no agent lock is taken; the
 * loader is never entered (modules are announced by maps.c's scan, which runs outside any
 * agent lock). A table is never unmapped, so a walker racing with a dlclose reads stale
 * rules at worst, never unmapped memory. x86-64 only: elsewhere every walk returns -1.
 */
#ifndef LH_UNWIND_TABLE_H
#define LH_UNWIND_TABLE_H

#include <link.h>
#include <stdint.h>

/* Row kinds (the low two bits of a rule). */
enum {
    LH_UTAB_FALLBACK = 0, /* not expressible: ask libunwind */
    LH_UTAB_CFA_SP = 1,
    LH_UTAB_CFA_FP = 2,
    LH_UTAB_END = 3, /* the return address is undefined: the outermost frame (_start) */
};

/* A decoded rule, for tests and for the walker. Offsets are in bytes. */
typedef struct lh_utab_rule {
    int kind;       /* LH_UTAB_* */
    int cfa_off;    /* CFA = (SP or FP) + cfa_off */
    int ra_off;     /* return address at CFA + ra_off */
    int fp_saved;   /* caller's FP at CFA + fp_off (FP + fp_off: fp_at_fp); else unchanged */
    int fp_off;
    int cfa_deref;  /* the CFA is the word at (SP or FP) + cfa_off (realigned frames) */
    int fp_at_fp;
} lh_utab_rule_t;

/* Counters since start (relaxed atomics): stacks walked by the table, stacks handed to
 * libunwind and why, modules compiled and their rows. */
typedef struct lh_utab_stats {
    uint64_t n_walks;      /* stacks fully walked by the table */
    uint64_t n_fallbacks;  /* stacks the table could not walk (libunwind did) */
    uint64_t n_modules;    /* modules compiled */
    uint64_t n_rows;       /* rows in all compiled tables */
    uint64_t n_failed;     /* modules whose .eh_frame could not be compiled */
    uint64_t n_fde_lookups; /* rules read from one FDE, the module not compiled yet */
    uint64_t n_checked;    /* walks compared with libunwind (LEAKHOUND_UNWIND_VERIFY) */
    uint64_t n_mismatches; /* ... that gave a different stack */
} lh_utab_stats_t;

/* Reserves the module index. Returns 0 or -1. Call once at init (mmap only). */
int lh_utab_init(void);

/* Announces a loaded module (from a dl_iterate_phdr callback: the caller runs it outside
 * any agent lock). Cheap: the table itself is compiled on first use. Modules already known
 * at the same base are ignored. AS-safe (mmap only); serialised by the caller (maps.c's
 * scan lock). */
void lh_utab_add_module(const struct dl_phdr_info *info);

/* The module at load bias base was unloaded: walks no longer use its table. Serialised
 * with lh_utab_add_module by the caller. */
void lh_utab_remove_module(uintptr_t base);

/* Walks the stack from the caller's frame: ips[i] is the i-th return address (ips[0]
 * returns into the caller of lh_utab_unwind), slots[i] (when slots is not NULL) the stack
 * address it was read from. Every load lies in [the walker's own frame, stack_hi). Returns
 * the number of frames (the walk ends at a frame whose return address is undefined or 0,
 * or at max), or -1 when some frame is beyond the table (the caller must use libunwind for
 * this stack). May compile a module's table on first use (mmap, no lock, no malloc).
 * AS-safe. */
int lh_utab_unwind(uint64_t *ips, uintptr_t *slots, int max, uintptr_t stack_hi);

/* The rule covering pc (an absolute address; for a return address pass ra - 1), compiling
 * the module's table if needed. Returns 0, or -1 when no module or table covers pc.
 * AS-safe. For tests and diagnostics. */
int lh_utab_lookup(uintptr_t pc, lh_utab_rule_t *out);

/* The same rule from the one FDE that covers pc, without compiling the module's table
 * (what a walk does for a module's first lookups). Returns 0, -1 when no row covers pc
 * (as lh_utab_lookup), or -2 when the FDE is too long to be read alone (the walk then
 * compiles the table). AS-safe. For tests. */
int lh_utab_lookup_fde(uintptr_t pc, lh_utab_rule_t *out);

/* Sums the counters (relaxed: exact once the threads are quiet). AS-safe. */
void lh_utab_stats(lh_utab_stats_t *out);
/* Counts a stack the table walked (walked = 1) or handed to libunwind (0). AS-safe. */
void lh_utab_note(int walked);
/* Counts a walk compared with libunwind, and whether the stacks differed. AS-safe. */
void lh_utab_note_check(int mismatch);

#endif /* LH_UNWIND_TABLE_H */
