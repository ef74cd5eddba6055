/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_unwind_table.c: the agent's unwind tables (agent/unwind_table.c) without LD_PRELOAD.
 * Exact rules for hand-written CFI (x86-64), then whole walks compared with libunwind's
 * through -O2 -fomit-frame-pointer code (utab_nofp.c): deep, on another thread, through a
 * dlopen'd library; a walk through a signal frame must give up (-1) rather than guess.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "unwind.h"
#include "unwind_table.h"
#include "utab_nofp.h"

#define MAXF 512

static int
add_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    lh_utab_add_module(info);
    return 0;
}

static int
setup(void **state)
{
    (void)state;
    if (lh_utab_init() != 0) {
        return -1;
    }
    dl_iterate_phdr(add_cb, NULL); /* what maps.c's scan does in the agent */
    return 0;
}

#if defined(__x86_64__)
/* Hand-written CFI with known rows. Offsets: push 1 byte, mov 3, sub 4, nop 1, leave 1. */
__asm__(".text\n"
        ".globl utab_asm_std\n"
        ".type utab_asm_std, @function\n"
        "utab_asm_std:\n"
        ".cfi_startproc\n"
        "push %rbp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        "mov %rsp, %rbp\n"
        ".cfi_def_cfa_register %rbp\n"
        "sub $0x20, %rsp\n"
        "nop\n"
        "leave\n"
        ".cfi_def_cfa %rsp, 8\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size utab_asm_std, .-utab_asm_std\n"
        /* remember/restore around a CFA expression, then an undefined return address */
        ".globl utab_asm_odd\n"
        ".type utab_asm_odd, @function\n"
        "utab_asm_odd:\n"
        ".cfi_startproc\n"
        "push %rbx\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_remember_state\n"
        ".cfi_escape 0x0f, 0x02, 0x77, 0x10\n" /* def_cfa_expression: DW_OP_breg7 16 */
        "nop\n"
        ".cfi_restore_state\n"
        "nop\n"
        ".cfi_undefined %rip\n"
        "nop\n"
        "pop %rbx\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size utab_asm_odd, .-utab_asm_odd\n"
        /* a signal frame: never walked by the table */
        ".globl utab_asm_sig\n"
        ".type utab_asm_sig, @function\n"
        "utab_asm_sig:\n"
        ".cfi_startproc\n"
        ".cfi_signal_frame\n"
        "nop\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size utab_asm_sig, .-utab_asm_sig\n"
        /* a realigned frame as GCC makes it (force_align_arg_pointer): CFA kept in r10,
         * then saved at FP - 8; the caller's FP saved at FP + 0 */
        ".globl utab_asm_drap\n"
        ".type utab_asm_drap, @function\n"
        "utab_asm_drap:\n"
        ".cfi_startproc\n"
        "lea 0x8(%rsp), %r10\n"
        ".cfi_def_cfa %r10, 0\n"
        "and $-16, %rsp\n"
        "pushq -0x8(%r10)\n"
        "push %rbp\n"
        ".cfi_escape 0x10, 0x06, 0x02, 0x76, 0x00\n" /* expression rbp: DW_OP_breg6 0 */
        "mov %rsp, %rbp\n"
        "push %r10\n"
        ".cfi_escape 0x0f, 0x03, 0x76, 0x78, 0x06\n" /* def_cfa_expression: breg6 -8; deref */
        ".globl utab_asm_drap_body\n"
        "utab_asm_drap_body:\n"
        "nop\n"
        "pop %r10\n"
        ".cfi_def_cfa %r10, 0\n"
        "pop %rbp\n"
        "lea -0x8(%r10), %rsp\n"
        ".cfi_def_cfa %rsp, 8\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size utab_asm_drap, .-utab_asm_drap\n"
        /* frames of 64 KiB and more (unbound's packet handlers: CFA = rsp + 65632); the
         * last one beyond what a rule holds (512 KiB). Offsets: push 1, sub/add imm32 7,
         * sub imm8 4, nop 1. */
        ".globl utab_asm_huge\n"
        ".type utab_asm_huge, @function\n"
        "utab_asm_huge:\n"
        ".cfi_startproc\n"
        "push %rbx\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbx, -16\n"
        "sub $0x10050, %rsp\n"
        ".cfi_def_cfa_offset 65632\n"
        "sub $0x6ffa8, %rsp\n"
        ".cfi_def_cfa_offset 524280\n"
        "sub $0x8, %rsp\n"
        ".cfi_def_cfa_offset 524288\n"
        "nop\n"
        "add $0x80000, %rsp\n"
        ".cfi_def_cfa_offset 8\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size utab_asm_huge, .-utab_asm_huge\n");
void utab_asm_huge(void);
void utab_asm_drap(void);
void utab_asm_drap_body(void);
void utab_asm_std(void);
void utab_asm_odd(void);
void utab_asm_sig(void);

static void
expect_rule(uintptr_t pc, int kind, int cfa_off, int fp_saved, int fp_off)
{
    lh_utab_rule_t r;
    assert_int_equal(lh_utab_lookup(pc, &r), 0);
    assert_int_equal(r.kind, kind);
    if (kind == LH_UTAB_CFA_SP || kind == LH_UTAB_CFA_FP) {
        assert_int_equal(r.cfa_off, cfa_off);
        assert_int_equal(r.ra_off, -8);
        assert_int_equal(r.fp_saved, fp_saved);
        assert_int_equal(r.fp_off, fp_off);
        assert_int_equal(r.cfa_deref, 0);
        assert_int_equal(r.fp_at_fp, 0);
    }
}

static void
test_rules(void **state)
{
    (void)state;
    uintptr_t f = (uintptr_t)&utab_asm_std;
    expect_rule(f + 0, LH_UTAB_CFA_SP, 8, 0, 0);
    expect_rule(f + 1, LH_UTAB_CFA_SP, 16, 1, -16);
    expect_rule(f + 3, LH_UTAB_CFA_SP, 16, 1, -16);
    expect_rule(f + 4, LH_UTAB_CFA_FP, 16, 1, -16);
    expect_rule(f + 9, LH_UTAB_CFA_FP, 16, 1, -16);
    expect_rule(f + 10, LH_UTAB_CFA_SP, 8, 1, -16);
    uintptr_t g = (uintptr_t)&utab_asm_odd;
    expect_rule(g + 0, LH_UTAB_CFA_SP, 8, 0, 0);
    expect_rule(g + 1, LH_UTAB_FALLBACK, 0, 0, 0);
    expect_rule(g + 2, LH_UTAB_CFA_SP, 16, 0, 0);
    expect_rule(g + 3, LH_UTAB_END, 0, 0, 0);
    expect_rule((uintptr_t)&utab_asm_sig, LH_UTAB_FALLBACK, 0, 0, 0);
    /* Realigned: CFA in r10 (another register) first, then the word at FP - 8. */
    expect_rule((uintptr_t)&utab_asm_drap + 5, LH_UTAB_FALLBACK, 0, 0, 0);
    lh_utab_rule_t d;
    assert_int_equal(lh_utab_lookup((uintptr_t)&utab_asm_drap_body, &d), 0);
    assert_int_equal(d.kind, LH_UTAB_CFA_FP);
    assert_int_equal(d.cfa_deref, 1);
    assert_int_equal(d.cfa_off, -8);
    assert_int_equal(d.ra_off, -8);
    assert_int_equal(d.fp_saved, 1);
    assert_int_equal(d.fp_at_fp, 1);
    assert_int_equal(d.fp_off, 0);
    uintptr_t h = (uintptr_t)&utab_asm_huge;
    expect_rule(h + 1, LH_UTAB_CFA_SP, 16, 0, 0);
    expect_rule(h + 8, LH_UTAB_CFA_SP, 65632, 0, 0);
    expect_rule(h + 15, LH_UTAB_CFA_SP, 524280, 0, 0);
    expect_rule(h + 19, LH_UTAB_FALLBACK, 0, 0, 0);
    expect_rule(h + 27, LH_UTAB_CFA_SP, 8, 0, 0);
    lh_utab_rule_t r;
    assert_int_equal(lh_utab_lookup(0x1000, &r), -1); /* no module there */
}
#else
static void
test_rules(void **state)
{
    (void)state;
    skip();
}
#endif

typedef struct cmp {
    uintptr_t stack_hi;
    int n;        /* the table's frames, or -1 */
    int m;        /* libunwind's, from the first common frame */
    int skip;     /* libunwind frames before it (its own) */
    int same;
    int slots_ok;
} cmp_t;

static uintptr_t
my_stack_hi(void)
{
    pthread_attr_t a;
    void *addr = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &a) != 0) {
        return 0;
    }
    pthread_attr_getstack(&a, &addr, &size);
    pthread_attr_destroy(&a);
    return (uintptr_t)addr + size;
}

/* Both unwinders from here. The table's first frame returns into this function, as does
 * libunwind's first frame after its own; from the next one on, the stacks must be equal. */
__attribute__((noinline)) static void
compare_cb(void *arg)
{
    cmp_t *c = arg;
    uint64_t a[MAXF], b[MAXF];
    uintptr_t slots[MAXF];
    int n = lh_utab_unwind(a, slots, MAXF, c->stack_hi);
    int m = lh_unwind_libunwind(b, MAXF);
    c->n = n;
    c->same = 0;
    if (n < 2) {
        return;
    }
    int j = 0;
    while (j < m && b[j] != a[1]) {
        j++;
    }
    c->skip = j;
    c->m = m - j + 1;
    c->same = j < m && n - 1 == m - j && memcmp(a + 1, b + j, (size_t)(n - 1) * 8) == 0;
    c->slots_ok = 1;
    for (int i = 1; i < n; i++) { /* slot 0 was in the walker's frame, gone by now */
        c->slots_ok &= *(const uint64_t *)slots[i] == a[i];
    }
}

static void
expect_same(const cmp_t *c, int min_frames)
{
#if defined(__x86_64__)
    assert_true(c->n >= min_frames);
    assert_in_range(c->skip, 1, 3);
    assert_int_equal(c->n, c->m);
    assert_true(c->same);
    assert_true(c->slots_ok);
#else
    (void)min_frames;
    assert_int_equal(c->n, -1); /* no walker: libunwind does it all */
#endif
}

static void
test_walk_deep(void **state)
{
    (void)state;
    static const int depths[] = {0, 1, 5, 60, 300};
    for (size_t i = 0; i < sizeof depths / sizeof *depths; i++) {
        cmp_t c = {.stack_hi = my_stack_hi()};
        utab_recurse(depths[i], compare_cb, &c);
        expect_same(&c, depths[i] + 3);
    }
}

static void *
thread_main(void *arg)
{
    cmp_t *c = arg;
    c->stack_hi = my_stack_hi();
    utab_recurse(100, compare_cb, c);
    return NULL;
}

static void
test_walk_thread(void **state)
{
    (void)state;
    pthread_t t;
    cmp_t c = {0};
    assert_int_equal(pthread_create(&t, NULL, thread_main, &c), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    expect_same(&c, 100);
}

static void
test_walk_dlopen(void **state)
{
    (void)state;
    void *h = dlopen(UTAB_LIB_PATH, RTLD_NOW);
    assert_non_null(h);
    utab_lib_fn_t fn = (utab_lib_fn_t)dlsym(h, "utab_lib_recurse");
    assert_non_null(fn);
    dl_iterate_phdr(add_cb, NULL); /* known modules are ignored, the new one added */
    cmp_t c = {.stack_hi = my_stack_hi()};
    fn(40, compare_cb, &c);
    expect_same(&c, 40);
    dlclose(h);
}

static cmp_t sig_cmp;

static void
on_signal(int sig)
{
    (void)sig;
    compare_cb(&sig_cmp);
}

static void
test_walk_signal(void **state)
{
    (void)state;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
    sig_cmp.stack_hi = my_stack_hi();
    sig_cmp.n = 0;
    raise(SIGUSR1);
    sigaction(SIGUSR1, &old, NULL);
    /* __restore_rt's FDE is a signal frame: the table hands the stack to libunwind. */
    assert_int_equal(sig_cmp.n, -1);
}

/* The single-FDE lookup (a module's first walks) against the compiled table, at every
 * address of this program's code (the hand-written CFI above included) and at a stride of
 * libc's: the same rule, or no row for both, everywhere; an FDE too long to read alone
 * (-2, the walk then compiles the table) must be rare. */
typedef struct text_range {
    const char *name_part; /* "" = the program itself */
    uintptr_t lo, hi;
} text_range_t;

static int
text_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    text_range_t *t = arg;
    int match = t->name_part[0] ? strstr(info->dlpi_name, t->name_part) != NULL
                                : info->dlpi_name[0] == '\0';
    for (int i = 0; match && i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            t->lo = info->dlpi_addr + ph->p_vaddr;
            t->hi = t->lo + ph->p_memsz;
            return 1;
        }
    }
    return 0;
}

static void
compare_fde_and_table(const char *name_part, uintptr_t stride, uint64_t *compared,
                      uint64_t *with_rule, uint64_t *too_long)
{
    text_range_t t = {name_part, 0, 0};
    dl_iterate_phdr(text_cb, &t);
    assert_true(t.hi > t.lo);
    for (uintptr_t pc = t.lo; pc < t.hi; pc += stride) {
        lh_utab_rule_t rf, rt;
        memset(&rf, 0, sizeof rf);
        memset(&rt, 0, sizeof rt);
        int f = lh_utab_lookup_fde(pc, &rf);
        if (f == -2) {
            (*too_long)++;
            continue;
        }
        int tr = lh_utab_lookup(pc, &rt);
        if (f != tr || memcmp(&rf, &rt, sizeof rf) != 0) {
            fail_msg("%s+0x%lx: one FDE gives %d kind %d cfa %d, the table %d kind %d cfa %d",
                     name_part[0] ? name_part : "program", (unsigned long)(pc - t.lo), f,
                     rf.kind, rf.cfa_off, tr, rt.kind, rt.cfa_off);
        }
        (*compared)++;
        *with_rule += f == 0;
    }
}

static void
test_fde_lookup(void **state)
{
    (void)state;
#if defined(__x86_64__)
    lh_utab_stats_t s0, s1;
    lh_utab_stats(&s0);
    uint64_t compared = 0, with_rule = 0, too_long = 0;
    compare_fde_and_table("", 1, &compared, &with_rule, &too_long);
    assert_int_equal(too_long, 0);
    assert_true(with_rule > 1000);
    compare_fde_and_table("libc.so", 13, &compared, &with_rule, &too_long);
    lh_utab_stats(&s1);
    print_message("fde lookups: %llu addresses compared, %llu with a rule, %llu FDEs too long\n",
                  (unsigned long long)compared, (unsigned long long)with_rule,
                  (unsigned long long)too_long);
    assert_true(with_rule > 50000);
    assert_true(too_long * 100 < compared);
    /* Every answer with a rule read an FDE; an address before a module's first FDE did
     * not; none compiled anything. */
    assert_in_range(s1.n_fde_lookups - s0.n_fde_lookups, with_rule + too_long,
                    compared + too_long);
#else
    skip();
#endif
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules),       cmocka_unit_test(test_walk_deep),
        cmocka_unit_test(test_walk_thread), cmocka_unit_test(test_walk_dlopen),
        cmocka_unit_test(test_walk_signal), cmocka_unit_test(test_fde_lookup),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
