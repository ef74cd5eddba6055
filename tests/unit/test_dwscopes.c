/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_dwscopes.c: the per-CU scope index (analysis/dwscopes.c) against libdw's own walk
 * (dwarf_getscopes, then dwarf_getscopes_die for the concrete chain, as the symbolizer did
 * before the index), address by address, over every compile unit of real optimized
 * binaries: this test program and the leakhound CLI (built -O2 -g: much inlining).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "dwscopes.h"

/* Nested inlining in this file, so that the test program itself has inline chains. */
static volatile int sink;

static inline __attribute__((always_inline)) void
level3(int x)
{
    sink = x * 3;
}

static inline __attribute__((always_inline)) void
level2(int x)
{
    level3(x + 1);
    sink += 2;
}

static __attribute__((noinline)) void
level1(int x)
{
    level2(x);
    sink += 1;
}

typedef struct tally {
    size_t compared, mismatched, inline_chains, deepest, noindex_cus, cus;
} tally_t;

static int
is_function(int tag)
{
    return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
           tag == DW_TAG_entry_point;
}

/* libdw's answer: function DIE offsets, innermost first, up to the first real function. */
static int
reference(Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Off *offs, int cap)
{
    Dwarf_Die *scopes = NULL, *chain = NULL;
    int n = dwarf_getscopes(cudie, pc, &scopes);
    if (n <= 0) {
        free(scopes);
        return 0;
    }
    int nc = dwarf_getscopes_die(&scopes[0], &chain);
    Dwarf_Die *v = nc > 0 ? chain : scopes;
    int nv = nc > 0 ? nc : n, k = 0;
    for (int i = 0; i < nv && k < cap; i++) {
        int tag = dwarf_tag(&v[i]);
        if (!is_function(tag)) {
            continue;
        }
        offs[k++] = dwarf_dieoffset(&v[i]);
        if (tag != DW_TAG_inlined_subroutine) {
            break;
        }
    }
    free(scopes);
    free(chain);
    return k;
}

static void
compare_cu(lh_dwscopes_t *ix, Dwarf_Die *cudie, size_t cap, tally_t *t)
{
    Dwarf_Addr base, lo, hi;
    int cu_noindex = 0;
    size_t in_cu = 0;
    for (ptrdiff_t off = 0; (off = dwarf_ranges(cudie, off, &base, &lo, &hi)) > 0;) {
        /* Every address of small CUs; a stride in large ones: the reference walks the
         * whole CU per address, which is what made the index worth having. */
        Dwarf_Addr step = (hi - lo) / cap + 1;
        for (Dwarf_Addr pc = lo; pc < hi && in_cu < cap; pc += step, in_cu++) {
            Dwarf_Die *got = NULL;
            int n = lh_dwscopes_at(ix, cudie, pc, &got);
            assert_true(n >= 0 || n == LH_DWSCOPES_NOINDEX);
            if (n == LH_DWSCOPES_NOINDEX) {
                cu_noindex = 1;
                free(got);
                break;
            }
            Dwarf_Off want[64];
            int nw = reference(cudie, pc, want, 64);
            int same = n == nw;
            for (int i = 0; same && i < n; i++) {
                same = dwarf_dieoffset(&got[i]) == want[i];
            }
            if (!same && t->mismatched < 5) {
                print_message("mismatch at pc 0x%llx: index %d DIEs, libdw %d\n",
                              (unsigned long long)pc, n, nw);
            }
            t->mismatched += !same;
            t->compared++;
            t->inline_chains += nw > 1;
            if ((size_t)nw > t->deepest) {
                t->deepest = (size_t)nw;
            }
            free(got);
        }
        if (cu_noindex) {
            break;
        }
    }
    t->noindex_cus += cu_noindex;
    t->cus++;
}

static void
compare_file(const char *path, size_t cap, tally_t *t)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    Dwarf *dbg = dwarf_begin(fd, DWARF_C_READ);
    assert_non_null(dbg);
    lh_dwscopes_t *ix = lh_dwscopes_new();
    assert_non_null(ix);
    Dwarf_Off off = 0, next;
    size_t hsize;
    while (dwarf_nextcu(dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cudie;
        if (dwarf_offdie(dbg, off + hsize, &cudie)) {
            compare_cu(ix, &cudie, cap, t);
        }
        off = next;
    }
    lh_dwscopes_free(ix);
    dwarf_end(dbg);
    close(fd);
    print_message("%s: %zu CUs (%zu not indexable), %zu addresses, %zu in inline chains "
                  "(deepest %zu), %zu mismatches\n",
                  path, t->cus, t->noindex_cus, t->compared, t->inline_chains, t->deepest,
                  t->mismatched);
}

static void
test_self(void **state)
{
    (void)state;
    level1(1);
    tally_t t = {0};
    compare_file("/proc/self/exe", 3000, &t);
    assert_true(t.compared > 1000);
    assert_int_equal(t.mismatched, 0);
    assert_true(t.deepest >= 3); /* level3 in level2 in level1 */
}

static void
test_leakhound(void **state)
{
    (void)state;
    tally_t t = {0};
    compare_file(LH_TEST_CLI, 1000, &t);
    assert_true(t.cus > 50);
    assert_true(t.compared > 30000);
    assert_true(t.inline_chains > 1000);
    assert_int_equal(t.mismatched, 0);
    /* The index answers for (nearly) every CU; the fallback is for malformed ranges. */
    assert_true(t.noindex_cus * 20 < t.cus);
}

/* gcc-built code with deep inlining: a CPython from pyenv (built -O3 -g), where present. */
static void
test_libpython(void **state)
{
    (void)state;
    char path[4096];
    const char *home = getenv("HOME");
    snprintf(path, sizeof path, "%s/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0",
             home ? home : "/root");
    if (access(path, R_OK) != 0) {
        skip();
    }
    tally_t t = {0};
    compare_file(path, 100, &t);
    assert_true(t.compared > 10000);
    assert_true(t.inline_chains > 1000);
    assert_int_equal(t.mismatched, 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_self),
        cmocka_unit_test(test_leakhound),
        cmocka_unit_test(test_libpython),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
