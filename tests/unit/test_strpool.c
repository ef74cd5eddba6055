/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_strpool.c: the symbolizers' string pool (strpool.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "strpool.h"

/* Copies are NUL-terminated and stay where they are while the pool grows, a string longer
 * than a chunk included. */
static void
test_add(void **state)
{
    (void)state;
    lh_strpool_t p = {0};
    const char *a = lh_strpool_add(&p, "main.c:12", 6);
    assert_string_equal(a, "main.c");
    size_t big = 100000;
    char *s = malloc(big);
    assert_non_null(s);
    memset(s, 'x', big);
    const char *b = lh_strpool_add(&p, s, big);
    assert_int_equal(strlen(b), big);
    const char *c = NULL;
    for (int i = 0; i < 20000; i++) { /* several chunks of 64 KiB */
        c = lh_strpool_add(&p, "abcdefgh", 8);
    }
    assert_string_equal(c, "abcdefgh");
    assert_string_equal(a, "main.c");
    assert_int_equal(memcmp(b, s, big), 0);
    assert_string_equal(lh_strpool_add(&p, "", 0), "");
    free(s);
    lh_strpool_fini(&p);
    assert_null(p.head);
}

static void
test_demangled(void **state)
{
    (void)state;
    lh_strpool_t p = {0};
    assert_string_equal(lh_strpool_demangled(&p, "_Z3fooi"), "foo(int)");
    assert_string_equal(lh_strpool_demangled(&p, "_ZN2ns5Cache3getEv"), "ns::Cache::get()");
    /* a function template: its return type left out */
    assert_string_equal(lh_strpool_demangled(&p, "_ZSt11make_sharedI7SessionJEESt10shared_ptrIN"
                                                 "St9enable_ifIXntsrSt8is_arrayIT_E5valueES4_E4"
                                                 "typeEEDpOT0_"),
                        "std::make_shared<Session>()");
    assert_string_equal(lh_strpool_demangled(&p, "_Z3maxIiET_S0_S0_"), "max<int>(int, int)");
    /* the return type is a class template's member, the name an operator */
    assert_string_equal(lh_strpool_demangled(&p, "_ZN9__gnu_cxxmiIPiSt6vectorIiSaIiEEEENS_17__"
                                                 "normal_iteratorIT_T0_E15difference_typeERKS8_"
                                                 "SB_"),
                        "__gnu_cxx::operator-<int*, std::vector<int, std::allocator<int> > >("
                        "__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> >"
                        " > const&, __gnu_cxx::__normal_iterator<int*, std::vector<int, std::"
                        "allocator<int> > > const&)");
    /* no return type: names with spaces of their own stay whole */
    assert_string_equal(lh_strpool_demangled(&p, "_Znwm"), "operator new(unsigned long)");
    assert_string_equal(lh_strpool_demangled(&p, "_ZNK3FoocvbEv"), "Foo::operator bool() const");
    assert_string_equal(lh_strpool_demangled(&p, "_ZN12_GLOBAL__N_13fooEv"),
                        "(anonymous namespace)::foo()");
    /* operator< does not pair its brackets: left as demangled, return type and all */
    assert_string_equal(lh_strpool_demangled(&p, "_ZltIiEbRK3FooIT_ES4_"),
                        "bool operator< <int>(Foo<int> const&, Foo<int> const&)");
    assert_string_equal(lh_strpool_demangled(&p, "malloc"), "malloc");
    /* a landmark's name (symbolize.c's stripped functions): no parameters either */
    assert_string_equal(lh_strpool_demangled_name(&p, "_ZStplIcSt11char_traitsIcESaIcEENSt7__"
                                                      "cxx1112basic_stringIT_T0_T1_EEPKS5_RKS8_"),
                        "std::operator+<char, std::char_traits<char>, std::allocator<char> >");
    assert_string_equal(lh_strpool_demangled_name(&p, "_ZN2ns5Cache3getEv"), "ns::Cache::get");
    assert_string_equal(lh_strpool_demangled_name(&p, "_ZN2ns5CacheD2Ev"), "ns::Cache::~Cache");
    assert_string_equal(lh_strpool_demangled_name(&p, "PyInit_ext"), "PyInit_ext");
    assert_string_equal(lh_strpool_demangled_name(&p, "_ZN2ns5countE"), "ns::count"); /* data */
    assert_null(lh_strpool_demangled_name(&p, NULL));
    assert_string_equal(lh_strpool_demangled(&p, "_Znot a name"), "_Znot a name");
    assert_null(lh_strpool_demangled(&p, NULL));
    lh_strpool_fini(&p);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add),
        cmocka_unit_test(test_demangled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
