/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_scriptframes.c: script frames (format minor 1) end to end without an agent: the
 * records' encoders and decoders, the trace reader's tables, and the stack a user reads
 * (analysis/scriptstack.c) built from hand-made native frames.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dec.h"
#include "enc.h"
#include "report.h"
#include "scriptstack.h"
#include "trace.h"
#include "trace_builder.h"

/* ---- format: encode, then decode the payload ------------------------------------------ */

static lh_dec_t
one_record(const uint8_t *buf, size_t len, uint8_t want_type)
{
    lh_dec_t d, pl, rest;
    uint8_t type = 0;
    lh_dec_init(&d, buf, len);
    assert_int_equal(lh_dec_record(&d, &type, &pl), 1);
    assert_int_equal(type, want_type);
    assert_int_equal(lh_dec_record(&d, &type, &rest), 0); /* exactly one record */
    return pl;
}

static void
test_stack_with_script_roundtrip(void **state)
{
    (void)state;
    uint8_t buf[256];
    lh_enc_t e;
    const uint64_t ips[3] = {0x401000, 0x400ff0, 0x7f0000001234};
    const uint32_t script[4] = {7, 3, 300, 1};
    lh_enc_init(&e, buf, sizeof buf);
    lh_enc_rec_stack(&e, 42, 2, ips, 3, script, 4);
    assert_true(lh_enc_ok(&e));
    lh_dec_t pl = one_record(buf, (size_t)(e.p - buf), LH_REC_STACK);
    assert_int_equal(lh_dec_varint(&pl), 42);
    assert_int_equal(lh_dec_varint(&pl), 2);
    assert_int_equal(lh_dec_varint(&pl), 3);
    uint64_t ip = 0;
    for (int i = 0; i < 3; i++) {
        ip += (uint64_t)lh_dec_svarint(&pl);
        assert_int_equal(ip, ips[i]);
    }
    uint32_t got[8];
    uint32_t n = 99;
    assert_int_equal(lh_dec_stack_script(&pl, got, 8, &n), 0);
    assert_int_equal(n, 4);
    assert_memory_equal(got, script, sizeof script);

    /* Without script frames the record is the minor-0 record, byte for byte. */
    uint8_t old[256];
    lh_enc_t e0;
    lh_enc_init(&e0, old, sizeof old);
    lh_enc_rec_stack(&e0, 42, 2, ips, 3, NULL, 0);
    pl = one_record(old, (size_t)(e0.p - old), LH_REC_STACK);
    lh_dec_varint(&pl);
    lh_dec_varint(&pl);
    lh_dec_varint(&pl);
    for (int i = 0; i < 3; i++) {
        lh_dec_svarint(&pl);
    }
    assert_int_equal(lh_dec_stack_script(&pl, got, 8, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal((size_t)(e0.p - old) + 1 + 5, (size_t)(e.p - buf)); /* n, 7, 3, 300, 1 */

    /* More ids than the reader's room, and an id of 0, are malformed. */
    pl = one_record(buf, (size_t)(e.p - buf), LH_REC_STACK);
    for (int i = 0; i < 3 + 3; i++) {
        lh_dec_varint(&pl);
    }
    assert_int_equal(lh_dec_stack_script(&pl, got, 3, &n), -1);
    const uint32_t zero[1] = {0};
    lh_enc_init(&e, buf, sizeof buf);
    lh_enc_rec_stack(&e, 1, 0, ips, 1, zero, 1);
    pl = one_record(buf, (size_t)(e.p - buf), LH_REC_STACK);
    for (int i = 0; i < 4; i++) {
        lh_dec_varint(&pl);
    }
    assert_int_equal(lh_dec_stack_script(&pl, got, 8, &n), -1);
}

static void
test_sframe_roundtrip(void **state)
{
    (void)state;
    uint8_t buf[512];
    lh_enc_t e;
    lh_enc_init(&e, buf, sizeof buf);
    lh_enc_rec_sframe(&e, 300, LH_LANG_PERL, "MyApp::handle_request", 21, "lib/MyApp.pm", 12,
                      4711);
    assert_true(lh_enc_ok(&e));
    lh_dec_t pl = one_record(buf, (size_t)(e.p - buf), LH_REC_SFRAME);
    lh_sframe_rec_t r;
    assert_int_equal(lh_dec_sframe_rec(&pl, &r), 0);
    assert_int_equal(r.id, 300);
    assert_int_equal(r.lang, LH_LANG_PERL);
    assert_int_equal(r.func_len, 21);
    assert_memory_equal(r.func, "MyApp::handle_request", 21);
    assert_int_equal(r.file_len, 12);
    assert_memory_equal(r.file, "lib/MyApp.pm", 12);
    assert_int_equal(r.line, 4711);

    /* Every shorter payload is malformed. */
    size_t full = (size_t)(e.p - buf);
    for (size_t cut = 3; cut < full; cut++) {
        lh_dec_t d;
        lh_dec_init(&d, buf + 3, cut - 3); /* payload only, cut short */
        assert_int_equal(lh_dec_sframe_rec(&d, &r), -1);
    }
    /* Id 0 is malformed. */
    lh_enc_init(&e, buf, sizeof buf);
    lh_enc_rec_sframe(&e, 0, LH_LANG_PYTHON, "f", 1, "f.py", 4, 1);
    pl = one_record(buf, (size_t)(e.p - buf), LH_REC_SFRAME);
    assert_int_equal(lh_dec_sframe_rec(&pl, &r), -1);
}

static void
test_interp_roundtrip(void **state)
{
    (void)state;
    uint8_t buf[512];
    lh_enc_t e;
    lh_enc_init(&e, buf, sizeof buf);
    lh_enc_rec_interp(&e, 12345, LH_LANG_PYTHON, "3.14.0", LH_INTERP_UNSUPPORTED,
                      "python 3.14.0 is not known to this leakhound");
    lh_dec_t pl = one_record(buf, (size_t)(e.p - buf), LH_REC_INTERP);
    lh_interp_rec_t r;
    assert_int_equal(lh_dec_interp_rec(&pl, &r), 0);
    assert_int_equal(r.ts_delta, 12345);
    assert_int_equal(r.lang, LH_LANG_PYTHON);
    assert_int_equal(r.version_len, 6);
    assert_memory_equal(r.version, "3.14.0", 6);
    assert_int_equal(r.status, LH_INTERP_UNSUPPORTED);
    assert_int_equal(r.detail_len, strlen("python 3.14.0 is not known to this leakhound"));
}

/* ---- the trace reader ----------------------------------------------------------------- */

static void
test_trace_tables(void **state)
{
    (void)state;
    char dir[] = "/tmp/lh_test_sframes_XXXXXX";
    char path[256];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t.lht", dir);

    lh_tb_t *tb = lh_tb_new();
    const uint64_t ips[2] = {0x1000, 0x2000};
    const uint32_t script[3] = {2, 1, 5};
    lh_tb_frame_begin(tb, 1, 1000);
    lh_tb_interp(tb, 1000, LH_LANG_PERL, "5.36.0", LH_INTERP_RECORDED, "");
    lh_tb_interp(tb, 1001, LH_LANG_PYTHON, "3.99.0", LH_INTERP_UNSUPPORTED,
                 "python 3.99.0 is not known: recording native frames only");
    lh_tb_sframe(tb, 1, LH_LANG_PERL, "main", "app.pl", 30);
    lh_tb_sframe(tb, 2, LH_LANG_PERL, "MyApp::store", "lib/MyApp.pm", 12);
    lh_tb_script_stack(tb, 9, 0, ips, 2, script, 3);
    lh_tb_stack(tb, 10, 0, ips, 2); /* the same native frames, no script frames */
    lh_tb_alloc(tb, 1100, 0x5000, 64, 9, LH_AK_MALLOC);
    lh_tb_frame_end(tb, 0, 0);
    lh_tb_frame_begin(tb, 2, 1200);
    lh_tb_sframe(tb, 5, LH_LANG_PERL, "MyApp::handle_request", "lib/MyApp.pm", 40);
    lh_tb_frame_end(tb, 0, 0);
    lh_tb_write(tb, path, SIZE_MAX);
    lh_tb_free(tb);

    lh_trace_t *t = NULL;
    lh_err_t err = {{0}};
    lh_event_t ev;
    assert_int_equal(lh_trace_open(path, NULL, &t, &err), 0);
    while (lh_trace_next(t, &ev, &err) > 0) {
    }
    const lh_stacks_t *stacks = &lh_trace_parts(t)->stacks;
    const lh_stack_t *st = lh_stacks_get(stacks, 9);
    assert_non_null(st);
    assert_int_equal(st->n_ips, 2);
    assert_int_equal(st->n_script, 3);
    assert_int_equal(st->script[0], 2);
    assert_int_equal(st->script[2], 5);
    /* The SFRAME of id 5 came later, in another thread's frame: resolved at the end. */
    const lh_sframe_t *f = lh_sframes_get(st->sframes, 5);
    assert_non_null(f);
    assert_string_equal(f->function, "MyApp::handle_request");
    assert_string_equal(f->file, "lib/MyApp.pm");
    assert_int_equal(f->line, 40);
    assert_null(lh_sframes_get(st->sframes, 3));
    assert_int_equal(lh_stacks_get(stacks, 10)->n_script, 0);

    size_t n = 0;
    const lh_trace_interp_t *in = lh_trace_interps(t, &n);
    assert_int_equal(n, 2);
    assert_int_equal(in[0].lang, LH_LANG_PERL);
    assert_string_equal(in[0].version, "5.36.0");
    assert_int_equal(in[0].status, LH_INTERP_RECORDED);
    assert_int_equal(in[1].status, LH_INTERP_UNSUPPORTED);
    /* The unsupported interpreter's line is a warning of the trace. */
    const lh_warnings_t *w = &lh_trace_parts(t)->warnings;
    int found = 0;
    for (size_t i = 0; i < w->n; i++) {
        found |= strstr(w->msgs[i], "python 3.99.0 is not known") != NULL;
    }
    assert_true(found);
    lh_trace_close(t);
    unlink(path);
    rmdir(dir);
}

/* ---- the displayed stack -------------------------------------------------------------- */

/* A perl and an XS module of it, as the frames below name them. */
#define PERL_EXE "/usr/bin/perl"
#define XS_SO "/usr/lib/x86_64-linux-gnu/perl5/5.36/auto/My/XS/XS.so"

static lh_frame_t
nat(const char *fn, const char *module)
{
    lh_frame_t f;
    memset(&f, 0, sizeof f);
    f.function = fn;
    f.module = module;
    f.ip = 0x1000;
    return f;
}

static lh_sframes_t
perl_frames(lh_stacks_t *tab)
{
    *tab = (lh_stacks_t){0};
    assert_int_equal(lh_stacks_put_sframe(tab, 1, LH_LANG_PERL, "MyApp::store", 12,
                                          "lib/MyApp.pm", 12, 12), 0);
    assert_int_equal(lh_stacks_put_sframe(tab, 2, LH_LANG_PERL, "main", 4, "app.pl", 6, 30),
                     0);
    return tab->sframes;
}

static void
test_merge_hides_interpreter(void **state)
{
    (void)state;
    lh_stacks_t tab;
    perl_frames(&tab);
    const char *perl = "/usr/bin/perl";
    const lh_frame_t v[] = {
        nat("Perl_safesysmalloc", perl), nat("Perl_sv_grow", perl),
        nat("Perl_pp_concat", perl),     nat("Perl_runops_standard", perl),
        nat("perl_run", perl),           nat("main", perl),
        nat("__libc_start_main", "/lib/x86_64-linux-gnu/libc.so.6"),
    };
    const uint32_t script[2] = {1, 2};
    lh_frame_t out[16];
    size_t n = lh_scriptstack_merge(v, 7, script, 2, &tab.sframes, 0, out);
    assert_int_equal(n, 2);
    assert_string_equal(out[0].function, "MyApp::store");
    assert_string_equal(out[0].file, "lib/MyApp.pm");
    assert_int_equal(out[0].line, 12);
    assert_int_equal(out[0].lang, LH_LANG_PERL);
    assert_null(out[0].module);
    assert_string_equal(out[1].function, "main");

    /* --native: everything, the script frames spliced in inside the eval loop. */
    n = lh_scriptstack_merge(v, 7, script, 2, &tab.sframes, 1, out);
    assert_int_equal(n, 9);
    assert_string_equal(out[2].function, "Perl_pp_concat");
    assert_string_equal(out[3].function, "MyApp::store");
    assert_string_equal(out[4].function, "main");
    assert_int_equal(out[4].lang, LH_LANG_PERL);
    assert_string_equal(out[5].function, "Perl_runops_standard");
    assert_string_equal(out[8].function, "__libc_start_main");
    lh_stacks_fini(&tab);
}

/* Frames classified once (lh_scriptstack_classify, as the symbolizer caches them) merge
 * and test as unclassified ones do: interpreter, eval loop, arena, allocator and plain. */
static void
test_classified_frames(void **state)
{
    (void)state;
    lh_stacks_t tab;
    perl_frames(&tab);
    const char *perl = PERL_EXE, *xs = XS_SO;
    const lh_frame_t v[] = {
        nat("Perl_safesysmalloc", perl),  nat("Perl_more_sv", perl),
        nat("my_xs_helper", xs),          nat("Perl_pp_concat", perl),
        nat("Perl_runops_standard", perl), nat("perl_run", perl),
        nat("PyMem_Malloc", "/usr/bin/python3.11"),
        nat("main", "/usr/bin/app"),
    };
    enum { N = sizeof v / sizeof v[0] };
    lh_frame_t c[N];
    for (size_t i = 0; i < N; i++) {
        c[i] = v[i];
        lh_scriptstack_classify(&c[i]);
        assert_int_not_equal(c[i].sclass, 0);
        assert_int_equal(lh_scriptstack_is_eval_loop(&c[i]), lh_scriptstack_is_eval_loop(&v[i]));
        assert_int_equal(lh_scriptstack_is_interp_alloc(&c[i]),
                         lh_scriptstack_is_interp_alloc(&v[i]));
    }
    assert_true(lh_scriptstack_is_eval_loop(&c[4]));
    assert_true(lh_scriptstack_is_interp_alloc(&c[0]));
    assert_true(lh_scriptstack_is_interp_alloc(&c[6]));
    assert_false(lh_scriptstack_is_eval_loop(&c[3]));
    const uint32_t script[2] = {1, 2};
    for (int native = 0; native < 2; native++) {
        for (size_t from = 0; from < N; from++) { /* every innermost frame */
            lh_frame_t a[N + 4], b[N + 4];
            size_t na = lh_scriptstack_merge(v + from, N - from, script, 2, &tab.sframes,
                                             native, a);
            size_t nb = lh_scriptstack_merge(c + from, N - from, script, 2, &tab.sframes,
                                             native, b);
            assert_int_equal(na, nb);
            for (size_t k = 0; k < na; k++) {
                assert_ptr_equal(a[k].function, b[k].function);
                assert_int_equal(a[k].lang, b[k].lang);
                assert_int_equal(a[k].phase, b[k].phase);
            }
        }
    }
    /* the arena frame stands where Perl_more_sv is, the XS frame stays, the script's
     * frames replace the loop and what is outside it */
    lh_frame_t out[N + 4];
    size_t n = lh_scriptstack_merge(c, N, script, 2, &tab.sframes, 0, out);
    assert_int_equal(n, 4);
    assert_string_equal(out[0].function, LH_SCRIPTSTACK_PERL_ARENA);
    assert_string_equal(out[1].function, "my_xs_helper");
    assert_string_equal(out[2].function, "MyApp::store");
    lh_stacks_fini(&tab);
}

static void
test_merge_keeps_xs_and_libc(void **state)
{
    (void)state;
    lh_stacks_t tab;
    perl_frames(&tab);
    const char *perl = PERL_EXE, *xs = XS_SO;
    /* C library under an XS function under pp_entersub; then an XS that calls back into
     * perl's allocator (Perl_newSV inlined into it as S_ helpers). */
    const lh_frame_t v[] = {
        nat("strdup", "/lib/x86_64-linux-gnu/libc.so.6"), nat("my_xs_helper", xs),
        nat("XS_My__XS_make", xs),                          nat("Perl_pp_entersub", perl),
        nat("Perl_runops_standard", perl),                  nat("perl_run", perl),
    };
    const uint32_t script[2] = {1, 2};
    lh_frame_t out[16];
    size_t n = lh_scriptstack_merge(v, 6, script, 2, &tab.sframes, 0, out);
    assert_int_equal(n, 5);
    assert_string_equal(out[0].function, "strdup");
    assert_string_equal(out[1].function, "my_xs_helper");
    assert_string_equal(out[2].function, "XS_My__XS_make");
    assert_string_equal(out[3].function, "MyApp::store");
    assert_string_equal(out[4].function, "main");

    const lh_frame_t w[] = {
        nat("Perl_safesysmalloc", perl), nat("Perl_newSV_type", xs), nat("XS_My__XS_new", xs),
        nat("Perl_pp_entersub", perl),   nat("Perl_runops_standard", perl),
    };
    n = lh_scriptstack_merge(w, 5, script, 2, &tab.sframes, 0, out);
    assert_int_equal(n, 3);
    assert_string_equal(out[0].function, "XS_My__XS_new");
    assert_string_equal(out[1].function, "MyApp::store");

    /* No eval loop recorded (perl compiling, or the stack cut short): the native part
     * ends at the first interpreter frame. An id without its SFRAME shows as "?". */
    const lh_frame_t c[] = {
        nat("Perl_safesysmalloc", perl), nat("Perl_newSVOP", perl), nat("Perl_yyparse", perl),
    };
    const uint32_t lost[2] = {1, 77};
    n = lh_scriptstack_merge(c, 3, lost, 2, &tab.sframes, 0, out);
    assert_int_equal(n, 2);
    assert_string_equal(out[0].function, "MyApp::store");
    assert_string_equal(out[1].function, "?");
    lh_stacks_fini(&tab);
}

/* perl's arena allocators take a slab for SVs made anywhere: the arena frame stands in
 * for them (the site's location), with the Perl line that took the slab under it. */
static void
test_merge_arena(void **state)
{
    (void)state;
    lh_stacks_t tab;
    perl_frames(&tab);
    const char *perl = "/usr/bin/perl";
    const uint32_t script[2] = {1, 2};
    lh_frame_t out[16];
    const lh_frame_t v[] = {
        nat("Perl_safesysmalloc", perl), nat("Perl_more_bodies", perl),
        nat("Perl_hv_common", perl),     nat("Perl_pp_aassign", perl),
        nat("Perl_runops_standard", perl),
    };
    size_t n = lh_scriptstack_merge(v, 5, script, 2, &tab.sframes, 0, out);
    assert_int_equal(n, 3);
    assert_string_equal(out[0].function, LH_SCRIPTSTACK_PERL_ARENA);
    assert_int_equal(out[0].phase, 1);
    assert_null(out[0].file);
    assert_string_equal(out[1].function, "MyApp::store");
    assert_int_equal(lh_site_location(out, n), 0);
    /* --native: just outside the arena allocator's own frame. */
    n = lh_scriptstack_merge(v, 5, script, 2, &tab.sframes, 1, out);
    assert_int_equal(n, 8);
    assert_string_equal(out[1].function, "Perl_more_bodies");
    assert_string_equal(out[2].function, LH_SCRIPTSTACK_PERL_ARENA);
    assert_string_equal(out[5].function, "MyApp::store");
    /* No eval loop recorded (perl compiling): still the arena, before the script frames. */
    const lh_frame_t c[] = {
        nat("Perl_safesysmalloc", perl), nat("Perl_more_sv", perl), nat("Perl_newSVOP", perl),
        nat("Perl_yyparse", perl),
    };
    n = lh_scriptstack_merge(c, 4, script, 2, &tab.sframes, 0, out);
    assert_int_equal(n, 3);
    assert_string_equal(out[0].function, LH_SCRIPTSTACK_PERL_ARENA);
    assert_string_equal(out[1].function, "MyApp::store");
    /* Any other allocation stays at its Perl line. */
    const lh_frame_t w[] = {
        nat("Perl_safesysmalloc", perl), nat("Perl_sv_grow", perl),
        nat("Perl_runops_standard", perl),
    };
    n = lh_scriptstack_merge(w, 3, script, 2, &tab.sframes, 0, out);
    assert_int_equal(n, 2);
    assert_string_equal(out[0].function, "MyApp::store");
    assert_int_equal(lh_site_location(out, n), 0);
    lh_stacks_fini(&tab);
}

/* No script frame at all: the outermost interpreter entry point names the phase and is
 * the location, never the allocator wrapper. */
static void
test_phase_without_script(void **state)
{
    (void)state;
    const char *perl = "/usr/bin/perl";
    const char *py = "/usr/bin/python3.11";
    const lh_frame_t v[] = {
        nat("Perl_safesyscalloc", perl), nat("Perl_hv_ksplit", perl),
        nat("perl_construct", perl),     nat("main", perl),
        nat("_start", perl),
    };
    lh_frame_t out[16];
    memcpy(out, v, sizeof v);
    size_t n = lh_scriptstack_phase(out, 5);
    assert_int_equal(n, 3);
    assert_string_equal(out[1].function, "Perl_hv_ksplit");
    assert_string_equal(out[2].function, "perl_construct");
    assert_string_equal(out[2].file, "perl start-up, no script frame");
    assert_int_equal(out[2].phase, 1);
    assert_int_equal(out[2].lang, LH_LANG_NATIVE);
    assert_null(out[2].module);
    assert_int_equal(lh_site_location(out, n), 2);
    /* --native: all 6, the phase inside the entry point's own frame. */
    assert_string_equal(out[3].function, "perl_construct");
    assert_string_equal(out[3].module, perl);
    assert_string_equal(out[5].function, "_start");
    assert_int_equal(lh_site_location(out, 6), 2);

    /* Py_RunMain encloses Py_FinalizeEx: teardown, not run; pymain_init is outside
     * Py_InitializeFromConfig: the outermost names start-up. */
    const lh_frame_t end[] = {
        nat("PyObject_Malloc", py), nat("Py_FinalizeEx", py), nat("Py_RunMain", py),
        nat("Py_BytesMain", py),
    };
    memcpy(out, end, sizeof end);
    assert_int_equal(lh_scriptstack_phase(out, 4), 2);
    assert_string_equal(out[1].function, "Py_FinalizeEx");
    assert_string_equal(out[1].file, "python teardown, no script frame");
    const lh_frame_t start[] = {
        nat("PyObject_Malloc", py), nat("Py_InitializeFromConfig", py),
        nat("pymain_init", py),     nat("Py_BytesMain", py),
    };
    memcpy(out, start, sizeof start);
    assert_int_equal(lh_scriptstack_phase(out, 4), 3);
    assert_string_equal(out[2].function, "pymain_init");
    assert_string_equal(out[2].file, "python start-up, no script frame");

    /* An eval loop (script code runs) or no entry point: not a phase, v untouched. */
    const lh_frame_t loop[] = {
        nat("PyObject_Malloc", py), nat("_PyEval_EvalFrameDefault", py),
        nat("Py_RunMain", py),
    };
    memcpy(out, loop, sizeof loop);
    assert_int_equal(lh_scriptstack_phase(out, 3), 0);
    assert_string_equal(out[2].function, "Py_RunMain");
    memcpy(out, v, sizeof v);
    assert_int_equal(lh_scriptstack_phase(out, 2), 0);
    /* Without a phase the allocator wrapper is still not the location. */
    assert_int_equal(lh_site_location(loop, 3), 1);
    assert_int_equal(lh_site_location(v, 2), 1);
}

static lh_frame_t
pyf(const char *fn, const char *file, uint32_t line)
{
    lh_frame_t f;
    memset(&f, 0, sizeof f);
    f.function = fn;
    f.file = file;
    f.line = line;
    f.lang = LH_LANG_PYTHON;
    return f;
}

/* The user's own frame of a site (report.h): the innermost Python frame in a file that is
 * not the stdlib of any prefix, an installed package, nor frozen code. */
static void
test_user_frame(void **state)
{
    (void)state;
    const lh_frame_t v[] = {
        nat("scanstring_unicode", "/usr/lib/python3.11/lib-dynload/_json.so"),
        pyf("json.decoder.JSONDecoder.raw_decode", "/usr/lib/python3.11/json/decoder.py", 353),
        pyf("flask.app.Flask.dispatch", "/srv/venv/lib/python3.12/site-packages/flask/app.py", 9),
        pyf("yaml.load", "/usr/lib/python3/dist-packages/yaml/__init__.py", 81),
        pyf("json.loads", "/root/.pyenv/versions/3.13.0/lib64/python3.13/json/__init__.py", 346),
        pyf("_frozen_importlib._load", "<frozen importlib._bootstrap>", 690),
        pyf("util.parse", "/srv/app/lib/python_utils/util.py", 12), /* not a pythonX.Y dir */
        pyf("app.handle", "app.py", 7),
    };
    assert_int_equal(lh_site_user_frame(v, 8), 6);
    assert_int_equal(lh_site_user_frame(v, 6), -1);     /* only library code */
    assert_int_equal(lh_site_user_frame(v + 7, 1), 0);  /* the location itself */
    assert_int_equal(lh_site_user_frame(v, 0), -1);
    /* a native frame with a file is never the user's frame here (Python only) */
    lh_frame_t c = nat("main", "/srv/app/server");
    c.file = "server.c";
    assert_int_equal(lh_site_user_frame(&c, 1), -1);
    assert_int_equal(lh_site_location(v, 8), 1); /* the location is unchanged */
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stack_with_script_roundtrip),
        cmocka_unit_test(test_sframe_roundtrip),
        cmocka_unit_test(test_interp_roundtrip),
        cmocka_unit_test(test_trace_tables),
        cmocka_unit_test(test_merge_hides_interpreter),
        cmocka_unit_test(test_merge_keeps_xs_and_libc),
        cmocka_unit_test(test_merge_arena),
        cmocka_unit_test(test_phase_without_script),
        cmocka_unit_test(test_user_frame),
        cmocka_unit_test(test_classified_frames),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
