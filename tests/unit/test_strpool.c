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
    assert_string_equal(lh_strpool_demangled(&p, "malloc"), "malloc");
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
