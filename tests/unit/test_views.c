/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_views.c: the text and JSON renderers on a hand-made report.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json.h"
#include "text.h"

static char *argv_[] = {"./server", "--port", "80 80", NULL};
static lh_trace_info_t info;
static lh_trace_end_t end;
static lh_trace_stats_t stats;
static lh_replay_totals_t totals;
static lh_frame_t frames[3];
static lh_site_t sites[2];
static lh_report_t rep;

static int
setup(void **state)
{
    (void)state;
    info.pid = 77;
    info.exe = "/work/app/server";
    info.argv = argv_;
    info.argc = 3;
    end.present = 1;
    end.kind = LH_EXIT_NORMAL;
    stats.n_events = 1234;
    totals.n_allocs = 100;
    totals.n_frees = 90;
    totals.n_reallocs = 5;
    totals.peak_bytes = 1536;
    totals.heap_bytes = 3 * 1024 * 1024;
    totals.heap_blocks = 10;
    frames[0] = (lh_frame_t){"emitter_on", "/work/app/emitter.c", 42, "/work/app/server",
                             0x401000, 0x1000, 1, 0, 0, 0};
    frames[1] = (lh_frame_t){"main", "/work/app/server.c", 120, "/work/app/server", 0x402000,
                             0x2000, 0, 0, 0, 0};
    frames[2] = (lh_frame_t){"__libc_start_call_main", NULL, 0, "/lib/libc.so.6", 0x7f0001,
                             0x1234, 0, 0, 0, 0};
    sites[0].stack_id = 3;
    sites[0].stats = (lh_stack_stats_t){4, 3 * 1024 * 1024, 0, 4, 3 * 1024 * 1024};
    sites[0].has_stack = 1;
    sites[0].frames = frames;
    sites[0].n_frames = 3;
    sites[0].location = 0;
    sites[1].stack_id = 0;
    sites[1].stats = (lh_stack_stats_t){1, 16, 0, 1, 16};
    sites[1].location = -1;
    rep.trace_path = "t.lht";
    rep.info = &info;
    rep.end = &end;
    rep.stats = &stats;
    rep.totals = &totals;
    rep.duration_s = 2.5;
    rep.peak_time_s = 1.25;
    rep.n_leak_sites = 2;
    rep.sites = sites;
    rep.n_sites = 2;
    return 0;
}

static char *
render(int json, const char *cwd)
{
    char *buf = NULL;
    size_t len = 0;
    lh_err_t err;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    if (json) {
        assert_int_equal(lh_view_json(f, &rep, &err), 0);
    } else {
        lh_text_opts_t opts = {cwd};
        assert_int_equal(lh_view_text(f, &rep, &opts, &err), 0);
    }
    fclose(f);
    return buf;
}

static void
test_text(void **state)
{
    (void)state;
    char *s = render(0, "/work/app");
    assert_non_null(strstr(s, "/work/app/server"));
    assert_non_null(strstr(s, "./server --port '80 80'"));
    assert_non_null(strstr(s, "pid:           77"));
    assert_non_null(strstr(s, "1.5 KiB (1536 bytes) at 1.250 s"));
    assert_non_null(strstr(s, "clean exit (status 0)"));
    assert_non_null(strstr(s, "#1: 3.0 MiB (3145728 bytes) leaked in 4 blocks"));
    assert_non_null(strstr(s, "    at emitter_on (emitter.c:42) [inlined]\n"));
    assert_non_null(strstr(s, "    by main (server.c:120)\n"));
    assert_non_null(strstr(s, "    by __libc_start_call_main (in libc.so.6)\n"));
    assert_non_null(strstr(s, "#2: 16 B (16 bytes) leaked in 1 block, 1 allocation [site 0]\n"));
    assert_non_null(strstr(s, "[site 3]\n    at emitter_on")); /* the id `log --site` takes */
    assert_non_null(strstr(s, "(no stack recorded: allocated before leakhound started"));
    free(s);

    end.present = 0;
    s = render(0, NULL);
    assert_non_null(strstr(s, "no trailer: the process did not exit cleanly (killed?); data "
                              "up to the last flush"));
    assert_non_null(strstr(s, "(/work/app/emitter.c:42)")); /* no cwd: paths as recorded */
    free(s);
    end.present = 1;

    end.kind = LH_EXIT_SIGNAL;
    end.status = 15;
    s = render(0, NULL);
    assert_non_null(strstr(s, "  exit:          terminated by SIGTERM (signal 15; the trace "
                              "ended as at exit)\n"));
    free(s);
    end.status = 99; /* a number the C library does not name */
    s = render(0, NULL);
    assert_non_null(strstr(s, "terminated by signal 99 (signal 99;"));
    free(s);
    end.kind = LH_EXIT_NORMAL;
    end.status = 0;
}

/* A run of C++ library templates inlined between operator new and the program's line is
 * one line, its outermost call, and counts as one against the frame limit. */
static void
test_text_cxx_fold(void **state)
{
    (void)state;
    lh_frame_t f[6] = {
        {"operator new(unsigned long)", NULL, 0, "/lib/libstdc++.so.6", 0x7f1000, 0x100, 0, 0, 0,
         0},
        {"std::__new_allocator<Node>::allocate", "/usr/include/c++/12/bits/new_allocator.h", 137,
         "/app/cyc", 0x401010, 0x1010, 1, 0, 0, 0},
        {"std::__shared_count<Node>", "/usr/include/c++/12/bits/shared_ptr_base.h", 969,
         "/app/cyc", 0x401010, 0x1010, 1, 0, 0, 0},
        {"std::make_shared<Node>()", "/usr/include/c++/12/bits/shared_ptr.h", 1010, "/app/cyc",
         0x401010, 0x1010, 1, 0, 0, 0},
        {"handle(int)", "/app/cyc.cpp", 10, "/app/cyc", 0x401010, 0x1010, 0, 0, 0, 0},
        {"main", "/app/cyc.cpp", 18, "/app/cyc", 0x401100, 0x1100, 0, 0, 0, 0},
    };
    lh_site_t site = {0};
    site.stack_id = 9;
    site.has_stack = 1;
    site.frames = f;
    site.n_frames = 6;
    site.location = 4;
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_non_null(out);
    lh_text_stack(out, &site, 3, "/app");
    fclose(out);
    assert_string_equal(buf, "    at operator new(unsigned long) (in libstdc++.so.6)\n"
                             "    by std::make_shared<Node>() (/usr/include/c++/12/bits/"
                             "shared_ptr.h:1010) [inlined; 2 more inlined frames of the C++ "
                             "library inside it]\n"
                             "    by handle(int) (cyc.cpp:10)\n"
                             "    ... 1 more frame\n");
    free(buf);
    /* One library inline alone is printed as it is. */
    site.frames = f + 3;
    site.n_frames = 3;
    buf = NULL;
    out = open_memstream(&buf, &len);
    assert_non_null(out);
    lh_text_stack(out, &site, 0, "/app");
    fclose(out);
    assert_non_null(strstr(buf, "    at std::make_shared<Node>() (/usr/include/c++/12/bits/"
                                "shared_ptr.h:1010) [inlined]\n    by handle(int)"));
    free(buf);
}

static void
test_json(void **state)
{
    (void)state;
    char *s = render(1, NULL);
    assert_non_null(strstr(s, "\"program\": \"/work/app/server\""));
    assert_non_null(strstr(s, "\"argv\": [\"./server\", \"--port\", \"80 80\"]"));
    assert_non_null(strstr(s, "\"pid\": 77"));
    assert_non_null(strstr(s, "\"duration_s\": 2.500000"));
    assert_non_null(strstr(s, "\"total_events\": 1234"));
    assert_non_null(strstr(s, "\"total_allocations\": 100"));
    assert_non_null(strstr(s, "\"total_frees\": 90"));
    assert_non_null(strstr(s, "\"total_reallocs\": 5"));
    assert_non_null(strstr(s, "\"peak_bytes\": 1536"));
    assert_non_null(strstr(s, "\"peak_time_s\": 1.250000"));
    assert_non_null(strstr(s, "\"leaked_bytes\": 3145728"));
    assert_non_null(strstr(s, "\"leaked_blocks\": 10"));
    assert_non_null(strstr(s, "\"clean_exit\": true"));
    assert_non_null(strstr(s, "\"exit_kind\": \"exit\""));
    assert_non_null(strstr(s, "\"sites\": ["));
    assert_non_null(strstr(s, "\"allocations\": 4"));
    assert_non_null(strstr(s, "\"allocated_bytes\": 3145728"));
    assert_non_null(strstr(s, "{\"function\": \"emitter_on\", \"file\": \"/work/app/emitter.c\", "
                              "\"line\": 42, \"module\": \"/work/app/server\", \"inlined\": true"));
    assert_non_null(strstr(s, "{\"function\": \"__libc_start_call_main\", \"file\": null, "
                              "\"line\": 0"));
    assert_non_null(strstr(s, "\"frames\": []"));
    free(s);

    end.present = 0;
    s = render(1, NULL);
    assert_non_null(strstr(s, "\"clean_exit\": false"));
    assert_non_null(strstr(s, "\"exit_kind\": \"none\""));
    free(s);
    end.present = 1;
    end.kind = LH_EXIT_UNDERSCORE;
    s = render(1, NULL);
    assert_non_null(strstr(s, "\"exit_kind\": \"_exit\""));
    assert_non_null(strstr(s, "\"clean_exit\": false"));
    assert_null(strstr(s, "exit_signal"));
    free(s);
    end.kind = LH_EXIT_SIGNAL;
    end.status = 2;
    s = render(1, NULL);
    assert_non_null(strstr(s, "\"clean_exit\": false, \"exit_kind\": \"signal\", "
                              "\"exit_signal\": \"SIGINT\", \"exit_status\": 2"));
    free(s);
    end.kind = LH_EXIT_NORMAL;
    end.status = 0;
}

static void
expect_json_string(const char *in, size_t len, const char *want)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    lh_json_string(f, in, len);
    fclose(f);
    assert_string_equal(buf, want);
    free(buf);
}

static void
test_json_escaping(void **state)
{
    (void)state;
    expect_json_string("plain", 5, "\"plain\"");
    expect_json_string("a\"b\\c", 5, "\"a\\\"b\\\\c\"");
    expect_json_string("\n\t\r\b\f\x01\x1f", 7, "\"\\n\\t\\r\\b\\f\\u0001\\u001f\"");
    expect_json_string("nul\0x", 5, "\"nul\\u0000x\"");
    expect_json_string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xb6", 14,
                       "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xb6\"");
    expect_json_string("\xff", 1, "\"\\ufffd\"");
    expect_json_string("\xc3", 1, "\"\\ufffd\"");           /* cut sequence */
    expect_json_string("\xc0\xaf", 2, "\"\\ufffd\\ufffd\"");  /* overlong '/' */
    expect_json_string("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\""); /* surrogate */
    expect_json_string("\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* > U+10FFFF */
}

static void
test_human_bytes(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(lh_text_human_bytes(b, sizeof b, 0), "0 B");
    assert_string_equal(lh_text_human_bytes(b, sizeof b, 1023), "1023 B");
    assert_string_equal(lh_text_human_bytes(b, sizeof b, 1024), "1.0 KiB");
    assert_string_equal(lh_text_human_bytes(b, sizeof b, 1536), "1.5 KiB");
    assert_string_equal(lh_text_human_bytes(b, sizeof b, 5ull << 30), "5.0 GiB");
    assert_string_equal(lh_text_human_bytes(b, sizeof b, UINT64_MAX), "16.0 EiB");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_text_cxx_fold),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_json_escaping),
        cmocka_unit_test(test_human_bytes),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
