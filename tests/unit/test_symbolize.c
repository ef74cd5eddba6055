/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_symbolize.c: the symbolizer against this very test program: module records made
 * with dl_iterate_phdr, return addresses taken with __builtin_return_address.
 */
#include <elf.h>
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

#include "report.h"
#include "symbolize.h"

/* ---------------------------------------------------------------------------------------
 * Known code: each function returns the return address of a call it makes on a known line.
 * ------------------------------------------------------------------------------------- */

void *lh_test_known_function(void);
void *lh_test_outer_function(void);

static int known_line, inline_line, outer_line;

static __attribute__((noinline)) void *
return_address(void)
{
    void *ra = __builtin_return_address(0);
    __asm__ volatile("" : : "r"(ra) : "memory");
    return ra;
}

__attribute__((noinline)) void *
lh_test_known_function(void)
{
    known_line = __LINE__ + 1;
    void *ra = return_address();
    __asm__ volatile("" : : "r"(ra) : "memory"); /* no tail call */
    return ra;
}

static inline __attribute__((always_inline)) void *
inlined_helper(void)
{
    inline_line = __LINE__ + 1;
    void *ra = return_address();
    __asm__ volatile("" : : "r"(ra) : "memory");
    return ra;
}

__attribute__((noinline)) void *
lh_test_outer_function(void)
{
    outer_line = __LINE__ + 1;
    void *ra = inlined_helper();
    __asm__ volatile("" : : "r"(ra) : "memory");
    return ra;
}

/* ---------------------------------------------------------------------------------------
 * Module records of this process
 * ------------------------------------------------------------------------------------- */

static lh_modules_t mods;
static char exe_path[4096];

static int
add_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    lh_segment_t segs[32];
    size_t n = 0;
    for (int i = 0; i < info->dlpi_phnum && n < 32; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD) {
            segs[n++] = (lh_segment_t){ph->p_vaddr, ph->p_memsz, ph->p_flags};
        }
    }
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    /* The main program has an empty name: the symbolizer falls back to exe_path. A wrong
     * build id on it must produce a warning but still symbolize. */
    static const uint8_t wrong_id[] = {1, 2, 3, 4, 5, 6, 7, 8};
    int is_main = name[0] == '\0';
    lh_modules_add(&mods, name, strlen(name), info->dlpi_addr, is_main ? wrong_id : NULL,
                   is_main ? sizeof wrong_id : 0, segs, n, 0);
    return 0;
}

static int
setup(void **state)
{
    (void)state;
    ssize_t n = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
    if (n <= 0) {
        return -1;
    }
    exe_path[n] = '\0';
    mods = (lh_modules_t){0};
    dl_iterate_phdr(add_module, NULL);
    /* A library whose file is gone, at an address nothing else uses. */
    lh_segment_t seg = {0, 0x10000, 5};
    lh_modules_add(&mods, "/nonexistent/libgone.so", 23, 0x100000000000ull, NULL, 0, &seg, 1, 0);
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    lh_modules_fini(&mods);
    return 0;
}

static lh_symbolizer_t *
new_sym(void)
{
    lh_symbolizer_t *s = NULL;
    lh_err_t err;
    lh_sym_opts_t opts = {.exe_path = exe_path};
    assert_int_equal(lh_sym_new(&mods, &opts, &s, &err), 0);
    return s;
}

static int
ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static void
test_known_function(void **state)
{
    (void)state;
    lh_symbolizer_t *s = new_sym();
    lh_err_t err;
    const lh_frame_t *f;
    uint64_t ip = (uint64_t)(uintptr_t)lh_test_known_function();
    int n = lh_sym_ip(s, ip, 0, &f, &err);
    assert_int_equal(n, 1);
    assert_non_null(f[0].function);
    assert_string_equal(f[0].function, "lh_test_known_function");
    assert_non_null(f[0].file);
    assert_true(ends_with(f[0].file, "test_symbolize.c"));
    assert_int_equal(f[0].line, known_line);
    assert_false(f[0].inlined);
    assert_non_null(f[0].module);
    assert_true(f[0].ip == ip);

    /* Cached: the same frames again. */
    const lh_frame_t *f2;
    assert_int_equal(lh_sym_ip(s, ip, 0, &f2, &err), 1);
    assert_ptr_equal(f, f2);

    /* The wrong build id recorded for the main program is reported once. */
    const lh_warnings_t *w = lh_sym_warnings(s);
    int found = 0;
    for (size_t i = 0; i < w->n; i++) {
        found += strstr(w->msgs[i], "build-id") != NULL;
    }
    assert_int_equal(found, 1);
    lh_sym_free(s);
}

static void
test_inlined(void **state)
{
    (void)state;
    lh_symbolizer_t *s = new_sym();
    lh_err_t err;
    const lh_frame_t *f;
    uint64_t ip = (uint64_t)(uintptr_t)lh_test_outer_function();
    int n = lh_sym_ip(s, ip, 0, &f, &err);
    assert_int_equal(n, 2);
    assert_string_equal(f[0].function, "inlined_helper");
    assert_true(f[0].inlined);
    assert_int_equal(f[0].line, inline_line);
    assert_string_equal(f[1].function, "lh_test_outer_function");
    assert_false(f[1].inlined);
    assert_non_null(f[1].file);
    assert_true(ends_with(f[1].file, "test_symbolize.c"));
    assert_int_equal(f[1].line, outer_line);
    lh_sym_free(s);
}

static void
test_libc_symbol(void **state)
{
    (void)state;
    lh_symbolizer_t *s = new_sym();
    lh_err_t err;
    const lh_frame_t *f;
    /* An address inside libc's getpid (not malloc: ASan replaces that one): a symbol from
     * the ELF tables at least. */
    uint64_t ip = (uint64_t)(uintptr_t)&getpid + 4;
    int n = lh_sym_ip(s, ip, 0, &f, &err);
    assert_true(n >= 1);
    assert_non_null(f[n - 1].module);
    assert_true(lh_frame_is_runtime(&f[n - 1]));
    assert_non_null(f[n - 1].function);
    lh_sym_free(s);
}

static void
test_unknown_addresses(void **state)
{
    (void)state;
    lh_symbolizer_t *s = new_sym();
    lh_err_t err;
    const lh_frame_t *f;
    /* In no module. */
    int n = lh_sym_ip(s, 0x10, 0, &f, &err);
    assert_int_equal(n, 1);
    assert_null(f[0].module);
    assert_null(f[0].function);
    assert_null(f[0].file);
    assert_int_equal(f[0].line, 0);
    assert_int_equal(f[0].offset, 0x10);
    /* In a module whose file is missing: module+offset and a warning. */
    n = lh_sym_ip(s, 0x100000000123ull, 0, &f, &err);
    assert_int_equal(n, 1);
    assert_string_equal(f[0].module, "/nonexistent/libgone.so");
    assert_int_equal(f[0].offset, 0x123);
    assert_null(f[0].function);
    const lh_warnings_t *w = lh_sym_warnings(s);
    int found = 0;
    for (size_t i = 0; i < w->n; i++) {
        found += strstr(w->msgs[i], "libgone.so") != NULL;
    }
    assert_int_equal(found, 1);
    /* Zero and the highest address do not crash either. */
    assert_int_equal(lh_sym_ip(s, 0, 0, &f, &err), 1);
    assert_int_equal(lh_sym_ip(s, UINT64_MAX, 0, &f, &err), 1);
    lh_sym_free(s);
}

static void
test_stack_and_site(void **state)
{
    (void)state;
    lh_symbolizer_t *s = new_sym();
    lh_err_t err;
    lh_frame_t *frames;
    size_t n;
    uint64_t ips[3];
    ips[0] = (uint64_t)(uintptr_t)&getpid + 4;              /* libc: not the site */
    ips[1] = (uint64_t)(uintptr_t)lh_test_outer_function(); /* 2 frames */
    ips[2] = 0x10;
    lh_stack_t st = {.ips = ips, .n_ips = 3, .epoch = 0};
    assert_int_equal(lh_sym_stack(s, &st, &frames, &n, &err), 0);
    assert_true(n >= 4);
    long loc = lh_site_location(frames, n);
    assert_true(loc >= 1);
    assert_string_equal(frames[loc].function, "inlined_helper");
    free(frames);
    lh_sym_free(s);
}

/* A frame without a function is shown by its module's name: a Perl XS module by its path
 * under auto/ (they are all XS.so), anything else by its file name. */
static void
test_module_label(void **state)
{
    (void)state;
    assert_string_equal(lh_sym_module_label("/usr/lib/x86_64-linux-gnu/perl5/5.36/auto/JSON/XS/"
                                            "XS.so"), "JSON/XS/XS.so");
    assert_string_equal(lh_sym_module_label("/usr/lib/x86_64-linux-gnu/perl/5.36.0/auto/Storable/"
                                            "Storable.so"), "Storable/Storable.so");
    assert_string_equal(lh_sym_module_label("/usr/lib/x86_64-linux-gnu/libc.so.6"), "libc.so.6");
    assert_string_equal(lh_sym_module_label("/opt/auto/libfoo.so"), "libfoo.so"); /* no package */
    assert_string_equal(lh_sym_module_label("/srv/auto/app/auto/List/Util/Util.so"),
                        "List/Util/Util.so"); /* the last auto/: perl's */
    assert_string_equal(lh_sym_module_label("XS.so"), "XS.so");
}

static void
test_site_rules(void **state)
{
    (void)state;
    lh_frame_t f[4] = {0};
    f[0].module = "/usr/lib/x86_64-linux-gnu/libc.so.6";
    f[0].file = "malloc.c";
    f[1].module = "/opt/app/libleakhound.so";
    f[2].module = "/opt/app/libfoo.so"; /* no source */
    f[3].module = "/opt/app/app";
    f[3].file = "app.c";
    assert_true(lh_frame_is_runtime(&f[0]));
    assert_false(lh_frame_is_runtime(&f[3]));
    assert_true(lh_frame_is_agent(&f[1]));
    assert_false(lh_frame_is_agent(&f[2]));
    assert_int_equal(lh_site_location(f, 4), 3);
    /* none with source outside libc: the first frame outside the runtime (a program or
     * library without debug information calling malloc or strdup) */
    assert_int_equal(lh_site_location(f, 3), 1);
    f[1].module = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
    assert_int_equal(lh_site_location(f, 3), 2); /* libfoo.so, past libc and libstdc++ */
    assert_int_equal(lh_site_location(f, 2), 0); /* only the runtime: its first frame */
    f[1].module = "/opt/app/libleakhound.so";
    assert_int_equal(lh_site_location(f, 0), -1);
    /* A C++ standard header inlined into the program is not the site either. */
    f[2].file = "/usr/include/c++/12/bits/stl_vector.h";
    f[2].module = "/opt/app/app";
    assert_int_equal(lh_site_location(f, 4), 3);
    f[2].module = NULL;
    assert_false(lh_frame_is_agent(&f[2]));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_function),
        cmocka_unit_test(test_inlined),
        cmocka_unit_test(test_libc_symbol),
        cmocka_unit_test(test_unknown_addresses),
        cmocka_unit_test(test_stack_and_site),
        cmocka_unit_test(test_site_rules),
        cmocka_unit_test(test_module_label),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
