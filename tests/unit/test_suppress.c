/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_suppress.c: LeakSanitizer-style suppression rules: parsing, the pattern rule
 * (substring, ^, $, *), matching frames by function, module and file, the default list.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "suppress.h"

static void
test_pattern(void **state)
{
    (void)state;
    assert_true(lh_supp_pattern_match("foo", "foo"));
    assert_true(lh_supp_pattern_match("foo", "xfooy"));         /* substring */
    assert_true(lh_supp_pattern_match("^foo", "foobar"));
    assert_false(lh_supp_pattern_match("^foo", "xfoo"));
    assert_true(lh_supp_pattern_match("bar$", "foobar"));
    assert_false(lh_supp_pattern_match("bar$", "barx"));
    assert_true(lh_supp_pattern_match("^foo$", "foo"));
    assert_false(lh_supp_pattern_match("^foo$", "foo2"));
    assert_true(lh_supp_pattern_match("lib*.so", "/usr/lib/libfoo.so.1"));
    assert_true(lh_supp_pattern_match("^a*b*c$", "aXXbYYc"));
    assert_false(lh_supp_pattern_match("^a*b*c$", "aXXcYYb"));
    assert_true(lh_supp_pattern_match("^*$", "anything"));
    assert_true(lh_supp_pattern_match("a*a*a*b", "aaaaaaaaaaaaaaab"));
    assert_false(lh_supp_pattern_match("a*a*a*b", "aaaaaaaaaaaaaaaa"));
    assert_false(lh_supp_pattern_match("foo", NULL));
    assert_false(lh_supp_pattern_match("foo", ""));
}

static void
test_parse(void **state)
{
    (void)state;
    lh_supp_t s;
    lh_err_t err = {{0}};
    const char text[] = "# comment\n\n  leak:parse_config  \r\nleak:libfoo.so\n\tleak: ^x$\n";
    s = (lh_supp_t){0};
    assert_int_equal(lh_supp_parse(&s, text, strlen(text), "s.supp", &err), 0);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.rules[0].pattern, "parse_config");
    assert_string_equal(s.rules[0].origin, "s.supp:3");
    assert_string_equal(s.rules[1].pattern, "libfoo.so");
    assert_string_equal(s.rules[2].pattern, "^x$");
    const char bad[] = "leak:ok\nrace:foo\n";
    assert_int_equal(lh_supp_parse(&s, bad, strlen(bad), "b.supp", &err), LH_EINVAL);
    assert_non_null(strstr(err.msg, "b.supp:2"));
    const char bad2[] = "nonsense\n";
    assert_int_equal(lh_supp_parse(&s, bad2, strlen(bad2), "c.supp", &err), LH_EINVAL);
    const char bad3[] = "leak:\n";
    assert_int_equal(lh_supp_parse(&s, bad3, strlen(bad3), "d.supp", &err), LH_EINVAL);
    lh_supp_fini(&s);
}

static void
test_match_frames(void **state)
{
    (void)state;
    lh_supp_t s;
    lh_err_t err = {{0}};
    const char text[] = "leak:^helper$\nleak:libbar.so\nleak:src/cache*.c\n";
    lh_frame_t frames[3];
    memset(frames, 0, sizeof frames);
    frames[0].function = "malloc_wrapper";
    frames[0].module = "/usr/lib/libother.so.2";
    frames[1].function = "helper2";
    frames[1].file = "/home/u/src/main.c";
    frames[2].function = "main";
    s = (lh_supp_t){0};
    assert_int_equal(lh_supp_parse(&s, text, strlen(text), "t", &err), 0);
    assert_int_equal(lh_supp_match(&s, frames, 3), -1);
    frames[1].function = "helper";
    assert_int_equal(lh_supp_match(&s, frames, 3), 0);  /* by function */
    frames[1].function = "helper2";
    frames[0].module = "/opt/x/libbar.so.1";
    assert_int_equal(lh_supp_match(&s, frames, 3), 1);  /* by module */
    frames[0].module = NULL;
    frames[2].file = "/home/u/src/cache_lru.c";
    assert_int_equal(lh_supp_match(&s, frames, 3), 2);  /* by file */
    assert_int_equal(lh_supp_match(NULL, frames, 3), -1);
    lh_supp_count(&s, 2, 3, 300);
    assert_int_equal(s.rules[2].n_sites, 1);
    assert_int_equal(s.rules[2].n_bytes, 300);
    lh_supp_fini(&s);
}

static void
test_defaults(void **state)
{
    (void)state;
    lh_supp_t s;
    lh_err_t err = {{0}};
    lh_frame_t f[2];
    memset(f, 0, sizeof f);
    s = (lh_supp_t){0};
    assert_int_equal(lh_supp_add_defaults(&s, &err), 0);
    assert_true(s.n > 10);
    f[0].function = "__GI__IO_file_doallocate"; /* stdio buffer, by its asm label */
    f[1].function = "main";
    assert_true(lh_supp_match(&s, f, 2) >= 0);
    f[0].function = "_IO_file_doallocate"; /* and by its source name (symbolize.c) */
    assert_true(lh_supp_match(&s, f, 2) >= 0);
    f[0].function = "__GI_setlocale";
    assert_true(lh_supp_match(&s, f, 2) >= 0);
    f[0].function = "getpwnam";
    assert_true(lh_supp_match(&s, f, 2) >= 0);
    f[0].function = "my_getpwnam_cache"; /* anchored: a user's function is not hidden */
    assert_int_equal(lh_supp_match(&s, f, 2), -1);
    f[0].function = "parse_request";
    assert_int_equal(lh_supp_match(&s, f, 2), -1);
    lh_supp_fini(&s);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pattern),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_match_frames),
        cmocka_unit_test(test_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
