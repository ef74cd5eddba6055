/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_shell.c: the shell's command parser: commands, quoting, comments, addresses, @N.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shell.h"

static void
test_split_and_quotes(void **state)
{
    (void)state;
    lh_shell_line_t l;
    lh_err_t err;
    assert_int_equal(lh_shell_parse("largest 5 --retained; show @1;;  ", &l, &err), 0);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.cmds[0].argc, 3);
    assert_string_equal(l.cmds[0].argv[2], "--retained");
    assert_null(l.cmds[0].argv[3]);
    assert_string_equal(l.cmds[1].argv[1], "@1");
    lh_shell_line_fini(&l);

    assert_int_equal(lh_shell_parse("use 'my label; with spaces' ; diff \"a \\\"b\\\"\" c\\ d",
                                    &l, &err), 0);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.cmds[0].argv[1], "my label; with spaces");
    assert_string_equal(l.cmds[1].argv[1], "a \"b\"");
    assert_string_equal(l.cmds[1].argv[2], "c d");
    lh_shell_line_fini(&l);

    assert_int_equal(lh_shell_parse("use ''", &l, &err), 0);
    assert_int_equal(l.cmds[0].argc, 2);
    assert_string_equal(l.cmds[0].argv[1], "");
    lh_shell_line_fini(&l);

    assert_int_equal(lh_shell_parse("   # only a comment", &l, &err), 0);
    assert_int_equal(l.n, 0);
    lh_shell_line_fini(&l);
    assert_int_equal(lh_shell_parse("roots 3 # the top three", &l, &err), 0);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.cmds[0].argc, 2);
    lh_shell_line_fini(&l);
    assert_int_equal(lh_shell_parse("", &l, &err), 0);
    assert_int_equal(l.n, 0);
    lh_shell_line_fini(&l);
}

static void
test_bad_lines(void **state)
{
    (void)state;
    lh_shell_line_t l;
    lh_err_t err;
    assert_int_equal(lh_shell_parse("use 'open", &l, &err), LH_EINVAL);
    assert_non_null(strstr(err.msg, "unterminated single quote"));
    lh_shell_line_fini(&l);
    assert_int_equal(lh_shell_parse("use \"open", &l, &err), LH_EINVAL);
    lh_shell_line_fini(&l);
    assert_int_equal(lh_shell_parse("show 0x10\\", &l, &err), LH_EINVAL);
    lh_shell_line_fini(&l);
    char many[1024] = "x";
    for (int i = 0; i < 80; i++) {
        strcat(many, " w");
    }
    assert_int_equal(lh_shell_parse(many, &l, &err), LH_EINVAL);
    lh_shell_line_fini(&l);
}

static void
test_addresses(void **state)
{
    (void)state;
    uint32_t rows[3] = {7, LH_NODE_NONE, 9};
    uint64_t a;
    uint32_t n;
    lh_err_t err;
    assert_int_equal(lh_shell_parse_addr("0x55d0c0a012a0", rows, 3, &a, &n, &err), 0);
    assert_int_equal(a, 0x55d0c0a012a0ull);
    assert_int_equal(n, LH_NODE_NONE);
    assert_int_equal(lh_shell_parse_addr("0XFFFFFFFFFFFFFFFF", rows, 3, &a, &n, &err), 0);
    assert_int_equal(a, UINT64_MAX);
    assert_int_equal(lh_shell_parse_addr("@1", rows, 3, &a, &n, &err), 0);
    assert_int_equal(n, 7);
    assert_int_equal(lh_shell_parse_addr("@3", rows, 3, &a, &n, &err), 0);
    assert_int_equal(n, 9);
    assert_int_equal(lh_shell_parse_addr("@2", rows, 3, &a, &n, &err), LH_EINVAL);
    assert_int_equal(lh_shell_parse_addr("@4", rows, 3, &a, &n, &err), LH_EINVAL);
    assert_non_null(strstr(err.msg, "has 3 rows"));
    assert_int_equal(lh_shell_parse_addr("@0", rows, 3, &a, &n, &err), LH_EINVAL);
    assert_int_equal(lh_shell_parse_addr("@", rows, 3, &a, &n, &err), LH_EINVAL);
    assert_int_equal(lh_shell_parse_addr("@1x", rows, 3, &a, &n, &err), LH_EINVAL);
    assert_int_equal(lh_shell_parse_addr("@1", rows, 0, &a, &n, &err), LH_EINVAL);
    assert_non_null(strstr(err.msg, "no listing yet"));
    assert_int_equal(lh_shell_parse_addr("0x", rows, 3, &a, &n, &err), LH_EINVAL);
    assert_int_equal(lh_shell_parse_addr("0xzz", rows, 3, &a, &n, &err), LH_EINVAL);
    assert_int_equal(lh_shell_parse_addr("0x10000000000000000", rows, 3, &a, &n, &err),
                     LH_EINVAL);
    assert_int_equal(lh_shell_parse_addr("1234", rows, 3, &a, &n, &err), LH_EINVAL);
    assert_int_equal(lh_shell_parse_addr("", rows, 3, &a, &n, &err), LH_EINVAL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_and_quotes),
        cmocka_unit_test(test_bad_lines),
        cmocka_unit_test(test_addresses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
