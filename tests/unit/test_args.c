/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_args.c: the CLI's shared value parsers (cli/args.c): durations, sizes, signals,
 * bounded numbers; and the argument layer (cli/opts.c): option tables, booleans, the trace
 * argument and the common messages.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cmd.h"
#include "opts.h"

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

/* Every command's duration and size options: one check, one message with the range in
 * the largest exact unit. */
static void
test_value_range(void **state)
{
    (void)state;
    lh_err_t err = {{0}};
    uint64_t v = 7;
    assert_int_equal(lh_cli_value("watch", "--interval", "1.5s", 0, 1, 604800000000000ull, &v,
                                  &err), 0);
    assert_int_equal(v, 1500000000ull);
    assert_int_equal(lh_cli_value("watch", "--interval", "0", 0, 1, 604800000000000ull, &v,
                                  &err), LH_EINVAL);
    assert_string_equal(err.msg, "watch: --interval: expected a duration from 1ns to 168h "
                                 "(such as 500ms, 10s or 1.5m), got '0'");
    assert_int_equal(lh_cli_value("run", "--x", "2d", 0, 0, 86400000000000ull, &v, &err),
                     LH_EINVAL);
    assert_string_equal(err.msg, "run: --x: expected a duration of at most 24h (such as 500ms, "
                                 "10s or 1.5m), got '2d'");
    assert_int_equal(lh_cli_value("attach", "--duration", "0s", 0, 1, UINT64_MAX, &v, &err),
                     LH_EINVAL);
    assert_string_equal(err.msg, "attach: --duration: expected a duration of at least 1ns "
                                 "(such as 500ms, 10s or 1.5m), got '0s'");
    assert_int_equal(lh_cli_value("report", "--threshold", "1e3", 0, 0, UINT64_MAX, &v, &err),
                     LH_EINVAL);
    assert_string_equal(err.msg, "report: --threshold: expected a duration (such as 500ms, 10s "
                                 "or 1.5m), got '1e3'");
    assert_int_equal(lh_cli_value("run", "--sample-rate", "1.5K", 1, 0, 1ull << 40, &v, &err), 0);
    assert_int_equal(v, 1536);
    assert_int_equal(lh_cli_value("run", "--snapshot-on-growth", "2048T", 1, 0, 1ull << 50, &v,
                                  &err), LH_EINVAL);
    assert_string_equal(err.msg, "run: --snapshot-on-growth: expected a size of at most 1024T "
                                 "(such as 512K, 64M or 1G), got '2048T'");
    assert_int_equal(lh_cli_value("x", "--y", "1000", 1, 1, 1536, &v, &err), 0);
    assert_int_equal(lh_cli_value("x", "--y", "0", 1, 1, 1536, &v, &err), LH_EINVAL);
    assert_string_equal(err.msg, "x: --y: expected a size from 1 to 1536 (such as 512K, 64M or "
                                 "1G), got '0'");
    char out[24];
    assert_int_equal(lh_cli_env_ms("run", "--rss-interval", "1.5s", 3600000, out, sizeof out,
                                   &err), 0);
    assert_string_equal(out, "1500");
    assert_int_equal(lh_cli_env_ms("run", "--rss-interval", "500us", 3600000, out, sizeof out,
                                   &err), LH_EINVAL);
    assert_string_equal(err.msg, "run: --rss-interval 500us: the agent counts in milliseconds; "
                                 "use at least 1ms (or 0 for off)");
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
    const char *to = NULL, *from = NULL;
    unsigned long top = 7;
    int use = -1, flag = 0;
    const lh_opt_t opts[] = {
        {"--to", NULL, LH_OPT_STR, &to, 0, 0, NULL},
        {"--from", NULL, LH_OPT_STR, &from, 0, 0, NULL},
        {"--top", "-n", LH_OPT_UINT, &top, 0, 10, NULL},
        {"--use", NULL, LH_OPT_CHOICE, &use, 0, 0, "marks|snapshots"},
        {"--snapshot-at-exit", NULL, LH_OPT_BOOL, &flag, 0, 0, NULL},
    };
    size_t n = sizeof opts / sizeof opts[0];
    char *argv[] = {"leaks", "--to=done", "--from", "start", "--tops", "--top", NULL};
    lh_err_t err = {{0}};
    int i = 1;
    assert_int_equal(lh_opt_parse("leaks", opts, n, 6, argv, &i, &err), 1);
    assert_string_equal(to, "done");
    i = 2;
    assert_int_equal(lh_opt_parse("leaks", opts, n, 6, argv, &i, &err), 1);
    assert_string_equal(from, "start");
    assert_int_equal(i, 3);
    i = 4; /* --tops is not --top */
    assert_int_equal(lh_opt_parse("leaks", opts, n, 6, argv, &i, &err), 0);
    i = 5; /* --top at the end: no value */
    assert_int_equal(lh_opt_parse("leaks", opts, n, 6, argv, &i, &err), LH_EINVAL);
    assert_string_equal(err.msg, "leaks: option '--top' needs a value");

    char *nums[] = {"leaks", "-n", "3", "--top=11", "--use", "snap", "--use=m", "--use", "x"};
    i = 1;
    assert_int_equal(lh_opt_parse("leaks", opts, n, 9, nums, &i, &err), 1);
    assert_int_equal(top, 3);
    i = 3;
    assert_int_equal(lh_opt_parse("leaks", opts, n, 9, nums, &i, &err), LH_EINVAL);
    assert_string_equal(err.msg, "leaks: --top: expected a number from 0 to 10, got '11'");
    i = 4; /* a unique prefix names the choice */
    assert_int_equal(lh_opt_parse("leaks", opts, n, 9, nums, &i, &err), 1);
    assert_int_equal(use, 1);
    i = 6;
    assert_int_equal(lh_opt_parse("leaks", opts, n, 9, nums, &i, &err), 1);
    assert_int_equal(use, 0);
    i = 7;
    assert_int_equal(lh_opt_parse("leaks", opts, n, 9, nums, &i, &err), LH_EINVAL);
    assert_string_equal(err.msg, "leaks: --use: expected marks or snapshots, got 'x'");

    /* Booleans: bare, =on|off, a separate on|off, --no-; a following word that is not
     * on or off (the program to run) is left alone. */
    char *b[] = {"run", "--snapshot-at-exit", "true", "--snapshot-at-exit=off",
                 "--snapshot-at-exit", "on", "--no-snapshot-at-exit", "--snapshot-at-exit=maybe"};
    i = 1;
    assert_int_equal(lh_opt_parse("run", opts, n, 8, b, &i, &err), 1);
    assert_int_equal(flag, 1);
    assert_int_equal(i, 1);
    i = 3;
    assert_int_equal(lh_opt_parse("run", opts, n, 8, b, &i, &err), 1);
    assert_int_equal(flag, 0);
    i = 4;
    assert_int_equal(lh_opt_parse("run", opts, n, 8, b, &i, &err), 1);
    assert_int_equal(flag, 1);
    assert_int_equal(i, 5);
    i = 6;
    assert_int_equal(lh_opt_parse("run", opts, n, 8, b, &i, &err), 1);
    assert_int_equal(flag, 0);
    i = 7;
    assert_int_equal(lh_opt_parse("run", opts, n, 8, b, &i, &err), LH_EINVAL);
    assert_string_equal(err.msg, "run: --snapshot-at-exit: expected on or off, got 'maybe'");
    /* --no-NAME takes no value; --no-NAMEx is not NAME's negation */
    char *neg[] = {"run", "--no-snapshot-at-exit=on", "--no-snapshot-at-exitx"};
    i = 1;
    assert_int_equal(lh_opt_parse("run", opts, n, 3, neg, &i, &err), LH_EINVAL);
    assert_string_equal(err.msg, "run: --no-snapshot-at-exit takes no value");
    i = 2;
    assert_int_equal(lh_opt_parse("run", opts, n, 3, neg, &i, &err), 0);

    unsigned long v;
    assert_int_equal(lh_cli_parse_uint("--skip", "3", 0, 10, &v, &err), 0);
    assert_int_equal(v, 3);
    assert_int_equal(lh_cli_parse_uint("--skip", "11", 0, 10, &v, &err), LH_EINVAL);
    assert_non_null(strstr(err.msg, "--skip"));
    /* the shell's counts too ("largest 10") */
    assert_int_equal(lh_cli_parse_uint("largest", "0", 1, 100, &v, &err), LH_EINVAL);
    assert_int_equal(lh_cli_parse_uint("largest", "-3", 1, 100, &v, &err), LH_EINVAL);
    assert_int_equal(lh_cli_parse_uint("largest", "7x", 1, 100, &v, &err), LH_EINVAL);
    assert_string_equal(err.msg, "largest: expected a number from 1 to 100, got '7x'");
}

/* The common layer: the trace, --format, --salvage, suppressions, and its messages. */
static void
test_args_parse(void **state)
{
    (void)state;
    int top_down = 0;
    const lh_opt_t opts[] = {{"--top-down", NULL, LH_OPT_BOOL, &top_down, 0, 0, NULL}};
    const lh_cmd_spec_t spec = {"tree", "usage\n", LH_ARGS_FORMAT, opts, 1};
    const lh_cmd_spec_t plot = {"plot", "usage\n", 0, NULL, 0};
    lh_err_t err = {{0}};
    lh_trace_args_t a = {0};
    char *ok[] = {"tree", "--format=json", "t.lht", "--salvage", "--suppressions", "s.supp",
                  "--default-suppressions", "--top-down", "-q"};
    assert_int_equal(lh_args_parse(&spec, 9, ok, &a, &err), 0);
    assert_string_equal(a.path, "t.lht");
    assert_true(a.json && a.salvage && a.default_supp && a.quiet && top_down);
    assert_int_equal(a.supp_files.n, 1);
    assert_string_equal(a.supp_files.v[0], "s.supp");

    char *two[] = {"tree", "a.lht", "b.lht"};
    memset(&a, 0, sizeof a);
    assert_int_equal(lh_args_parse(&spec, 3, two, &a, &err), LH_EINVAL);
    assert_string_equal(err.msg, "tree: one trace at a time (got 'a.lht' and 'b.lht')");
    char *none[] = {"tree", "--salvage"};
    memset(&a, 0, sizeof a);
    assert_int_equal(lh_args_parse(&spec, 2, none, &a, &err), LH_EINVAL);
    assert_non_null(strstr(err.msg, "tree: which trace?"));
    char *bad[] = {"tree", "t.lht", "--bogus"};
    memset(&a, 0, sizeof a);
    assert_int_equal(lh_args_parse(&spec, 3, bad, &a, &err), LH_EINVAL);
    assert_string_equal(err.msg, "tree: unknown option '--bogus' (see leakhound help tree)");
    char *fmt[] = {"tree", "t.lht", "--format", "xml"};
    memset(&a, 0, sizeof a);
    assert_int_equal(lh_args_parse(&spec, 4, fmt, &a, &err), LH_EINVAL);
    assert_string_equal(err.msg, "tree: --format: expected text or json, got 'xml'");
    /* a command without text or json output refuses --format, by name */
    memset(&a, 0, sizeof a);
    fmt[0] = "plot";
    assert_int_equal(lh_args_parse(&plot, 4, fmt, &a, &err), LH_EINVAL);
    assert_non_null(strstr(err.msg, "plot: --format:"));
    /* after --, a name starting with '-' is the trace */
    char *dash[] = {"tree", "--", "-odd.lht"};
    memset(&a, 0, sizeof a);
    assert_int_equal(lh_args_parse(&spec, 3, dash, &a, &err), 0);
    assert_string_equal(a.path, "-odd.lht");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duration),
        cmocka_unit_test(test_size),
        cmocka_unit_test(test_value_range),
        cmocka_unit_test(test_signal),
        cmocka_unit_test(test_opt_value),
        cmocka_unit_test(test_args_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
