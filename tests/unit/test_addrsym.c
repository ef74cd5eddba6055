/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_addrsym.c: the indexed symbol lookup (analysis/addrsym.c) against libdw's own
 * dwfl_module_addrinfo, address by address: around the start and end of every symbol
 * (a sample of them in big tables) and at pseudo-random addresses across each module's
 * range, over real modules with many symbols of every kind: libc (with its separate debug
 * symbols when libc6-dbg is installed: locals, sizeless assembly labels, aliases), the
 * leakhound CLI, libdw and libstdc++, each opened at a non-zero load bias as the
 * symbolizer opens them. The answer (name pointer, offset, size, value) must be libdw's.
 */
#include <elfutils/libdwfl.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "addrsym.h"

static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

typedef struct tally {
    size_t compared, mismatched, found;
} tally_t;

static void
compare(lh_addrsym_t *ix, Dwfl_Module *mod, GElf_Addr addr, tally_t *t)
{
    GElf_Off o1 = 0, o2 = 0;
    GElf_Sym s1, s2;
    memset(&s1, 0, sizeof s1);
    memset(&s2, 0, sizeof s2);
    const char *n1 = dwfl_module_addrinfo(mod, addr, &o1, &s1, NULL, NULL, NULL);
    const char *n2 = lh_addrsym_info(ix, mod, addr, &o2, &s2);
    t->compared++;
    t->found += n1 != NULL;
    if (n1 != n2 || (n1 && (o1 != o2 || s1.st_size != s2.st_size ||
                            s1.st_value != s2.st_value || s1.st_info != s2.st_info))) {
        if (t->mismatched++ < 10) {
            fprintf(stderr, "0x%llx: libdw %s+%llu, index %s+%llu\n", (unsigned long long)addr,
                    n1 ? n1 : "(none)", (unsigned long long)o1, n2 ? n2 : "(none)",
                    (unsigned long long)o2);
        }
    }
}

/* Compares every address class of the module file path at load bias base. Returns the
 * number of symbols in its table. */
static int
check_module(const char *path, tally_t *t)
{
    const GElf_Addr base = 0x7f1234560000ull;
    Dwfl *dwfl = dwfl_begin(&callbacks);
    assert_non_null(dwfl);
    dwfl_report_begin(dwfl);
    Dwfl_Module *mod = dwfl_report_elf(dwfl, "m", path, -1, base, true);
    dwfl_report_end(dwfl, NULL, NULL);
    if (!mod) {
        dwfl_end(dwfl);
        return 0;
    }
    lh_addrsym_t *ix = lh_addrsym_new(mod);
    assert_non_null(ix);
    int n = dwfl_module_getsymtab(mod);
    Dwarf_Addr lo = 0, hi = 0;
    dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
    /* at most about 1500 symbols' edges: libdw's own lookup reads the whole table */
    int step = n > 1500 ? n / 1500 : 1;
    for (int i = 1; i < n; i += step) {
        GElf_Sym sym;
        GElf_Addr v;
        if (!dwfl_module_getsym_info(mod, i, &sym, &v, NULL, NULL, NULL)) {
            continue;
        }
        compare(ix, mod, v - 1, t);
        compare(ix, mod, v, t);
        if (sym.st_size > 1) {
            compare(ix, mod, v + sym.st_size / 2, t);
            compare(ix, mod, v + sym.st_size - 1, t);
        }
        compare(ix, mod, v + sym.st_size, t);
    }
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 1500 && hi > lo; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        compare(ix, mod, lo + x % (hi - lo + 64), t);
    }
    compare(ix, mod, lo, t);
    compare(ix, mod, 0, t);
    lh_addrsym_free(ix);
    dwfl_end(dwfl);
    return n;
}

/* The path of the loaded module whose file name starts with prefix. */
typedef struct find_lib {
    const char *prefix;
    char path[4096];
} find_lib_t;

static int
find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    find_lib_t *f = data;
    const char *b = strrchr(info->dlpi_name, '/');
    if (b && strncmp(b + 1, f->prefix, strlen(f->prefix)) == 0) {
        snprintf(f->path, sizeof f->path, "%s", info->dlpi_name);
        return 1;
    }
    return 0;
}

static void
check_loaded(const char *prefix)
{
    find_lib_t f = {prefix, ""};
    dl_iterate_phdr(find_cb, &f);
    if (!f.path[0]) {
        fprintf(stderr, "%s: not loaded, skipped\n", prefix);
        return;
    }
    tally_t t = {0, 0, 0};
    int n = check_module(f.path, &t);
    fprintf(stderr, "%s: %d symbols, %zu addresses compared (%zu in a symbol), %zu differ\n",
            f.path, n, t.compared, t.found, t.mismatched);
    assert_true(t.compared > 1000);
    assert_int_equal(t.mismatched, 0);
}

static void
test_libc(void **state)
{
    (void)state;
    check_loaded("libc.so");
}

static void
test_libdw(void **state)
{
    (void)state;
    check_loaded("libdw");
}

static void
test_libstdcxx(void **state)
{
    (void)state;
    check_loaded("libstdc++");
}

static void
test_cli(void **state)
{
    (void)state;
    tally_t t = {0, 0, 0};
    int n = check_module(LH_TEST_CLI, &t);
    fprintf(stderr, "%s: %d symbols, %zu compared (%zu in a symbol), %zu differ\n",
            LH_TEST_CLI, n, t.compared, t.found, t.mismatched);
    assert_true(n > 100);
    assert_true(t.found > 1000);
    assert_int_equal(t.mismatched, 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_libc),
        cmocka_unit_test(test_libdw),
        cmocka_unit_test(test_libstdcxx),
        cmocka_unit_test(test_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
