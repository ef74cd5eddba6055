/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_args.c: the CLI's shared value parsers (cli/args.c): durations, sizes, signals,
 * bounded numbers, "--name VALUE".
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cmd.h"

static uint64_t
dur(const char *s)
{
    uint64_t ns = 12345;
    assert_int_equal(lh_parse_duration_ns(s, &ns), 0);
    return ns;
}

static void
bad_dur(const char *s)
{
    uint64_t ns = 12345;
    assert_int_equal(lh_parse_duration_ns(s, &ns), LH_EINVAL);
    assert_int_equal(ns, 12345);
}

static void
test_duration(void **state)
{
    (void)state;
    assert_int_equal(dur("10s"), 10000000000ull);
    assert_int_equal(dur("500ms"), 500000000ull);
    assert_int_equal(dur("1.5s"), 1500000000ull);
    assert_int_equal(dur("0.25ms"), 250000ull);
    assert_int_equal(dur("250us"), 250000ull);
    assert_int_equal(dur("7ns"), 7ull);
    assert_int_equal(dur("2m"), 120000000000ull);
    assert_int_equal(dur("2min"), 120000000000ull);
    assert_int_equal(dur("1h"), 3600000000000ull);
    assert_int_equal(dur("0"), 0);
    assert_int_equal(dur("0ms"), 0);
    bad_dur("10");      /* a bare number other than 0 needs a unit */
    bad_dur("");
    bad_dur("s");
    bad_dur("-1s");
    bad_dur("1.s");
    bad_dur(".5s");
    bad_dur("10 s");
    bad_dur("10sec");
    bad_dur("1e3ms");
    bad_dur("99999999999999999999s");
    bad_dur("9999999999h"); /* overflows 64 bits of ns */
    bad_dur(NULL);
}

static uint64_t
size(const char *s)
{
    uint64_t b = 12345;
    assert_int_equal(lh_parse_size_bytes(s, &b), 0);
    return b;
}

static void
bad_size(const char *s)
{
    uint64_t b = 12345;
    assert_int_equal(lh_parse_size_bytes(s, &b), LH_EINVAL);
    assert_int_equal(b, 12345);
}

static void
test_size(void **state)
{
    (void)state;
    assert_int_equal(size("4096"), 4096);
    assert_int_equal(size("4096B"), 4096);
    assert_int_equal(size("512K"), 512 * 1024);
    assert_int_equal(size("512k"), 512 * 1024);
    assert_int_equal(size("64M"), 64ull << 20);
    assert_int_equal(size("64MB"), 64ull << 20);
    assert_int_equal(size("64MiB"), 64ull << 20);
    assert_int_equal(size("1.5G"), 3ull << 29);
    assert_int_equal(size("2T"), 2ull << 40);
    assert_int_equal(size("0"), 0);
    bad_size("1.5");  /* a fraction of a byte */
    bad_size("12Q");
    bad_size("M");
    bad_size("");
    bad_size("-1K");
    bad_size("64 M");
    bad_size("64Mi");
    bad_size("64MiBs");
    bad_size("99999999999T");
    bad_size(NULL);
}

static void
test_signal(void **state)
{
    (void)state;
    assert_int_equal(lh_parse_signal("USR2"), SIGUSR2);
    assert_int_equal(lh_parse_signal("SIGUSR1"), SIGUSR1);
    assert_int_equal(lh_parse_signal("sigusr1"), SIGUSR1);
    assert_int_equal(lh_parse_signal("hup"), SIGHUP);
    assert_int_equal(lh_parse_signal("12"), 12);
    assert_int_equal(lh_parse_signal("RTMIN+2"), SIGRTMIN + 2);
    assert_int_equal(lh_parse_signal("none"), 0);
    assert_int_equal(lh_parse_signal("0"), 0);
    assert_int_equal(lh_parse_signal("KILL"), LH_EINVAL);
    assert_int_equal(lh_parse_signal("SIGSTOP"), LH_EINVAL);
    assert_int_equal(lh_parse_signal("9"), LH_EINVAL);
    assert_int_equal(lh_parse_signal("FOO"), LH_EINVAL);
    assert_int_equal(lh_parse_signal("999"), LH_EINVAL);
    assert_int_equal(lh_parse_signal("RTMIN+99"), LH_EINVAL);
    assert_int_equal(lh_parse_signal(""), LH_EINVAL);
    assert_int_equal(lh_parse_signal(NULL), LH_EINVAL);
}

static void
test_opt_value(void **state)
{
    (void)state;
    char *argv[] = {"leaks", "--to=done", "--from", "start", "--top", "--tops", NULL};
    int argc = 6, missing = 0, i = 1;
    assert_string_equal(lh_cli_opt_value(argc, argv, &i, "--to", &missing), "done");
    i = 2;
    assert_string_equal(lh_cli_opt_value(argc, argv, &i, "--from", &missing), "start");
    assert_int_equal(i, 3);
    i = 5;
    assert_null(lh_cli_opt_value(argc, argv, &i, "--top", &missing)); /* --tops */
    assert_int_equal(missing, 0);
    i = 4;
    assert_string_equal(lh_cli_opt_value(argc, argv, &i, "--top", &missing), "--tops");
    argc = 5;
    i = 4;
    assert_null(lh_cli_opt_value(argc, argv, &i, "--top", &missing));
    assert_int_equal(missing, 1);

    unsigned long v;
    lh_err_t err;
    assert_int_equal(lh_cli_parse_uint("--skip", "3", 0, 10, &v, &err), 0);
    assert_int_equal(v, 3);
    assert_int_equal(lh_cli_parse_uint("--skip", "11", 0, 10, &v, &err), LH_EINVAL);
    assert_non_null(strstr(err.msg, "--skip"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duration),
        cmocka_unit_test(test_size),
        cmocka_unit_test(test_signal),
        cmocka_unit_test(test_opt_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
