/* leakhound - SPDX-License-Identifier: MIT
 *
 * scriptstack.c: native and script frames merged into the stack a user reads (see
 * scriptstack.h).
 */
#include "scriptstack.h"

#include <string.h>

/* A byte loop: most names differ from the prefix in their first bytes, and strncmp with
 * strlen cost 3x as much on a python report (callgrind). */
static int
starts_with(const char *s, const char *prefix)
{
    if (!s) {
        return 0;
    }
    while (*prefix) {
        if (*s++ != *prefix++) {
            return 0;
        }
    }
    return 1;
}

static const char *
base_name(const char *path)
{
    if (!path) {
        return NULL;
    }
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

/* lh_frame_t.sclass bits. */
#define SC_KNOWN 1u
#define SC_EVAL_LOOP 2u
#define SC_INTERP 4u
#define SC_ARENA 8u
#define SC_INTERP_ALLOC 16u

static int
compute_interp(const lh_frame_t *f)
{
    if (f->lang != LH_LANG_NATIVE) {
        return 0;
    }
    const char *b = base_name(f->module);
    if (starts_with(b, "libperl") || starts_with(b, "libpython") || starts_with(b, "perl") ||
        starts_with(b, "python")) {
        return 1;
    }
    /* An interpreter linked into another program (embedded perl, a static python): its
     * functions carry the interpreter's prefixes. XS_* and the module's own functions do
     * not. */
    const char *fn = f->function;
    return starts_with(fn, "Perl_") || starts_with(fn, "Perl") || starts_with(fn, "pp_") ||
           starts_with(fn, "S_") || starts_with(fn, "Py") || starts_with(fn, "_Py");
}

static int
compute_eval_loop(const lh_frame_t *f)
{
    const char *fn = f->function;
    return f->lang == LH_LANG_NATIVE &&
           (starts_with(fn, "Perl_runops_") || starts_with(fn, "_PyEval_EvalFrame") ||
            starts_with(fn, "PyEval_EvalFrame"));
}

static lh_frame_t
script_frame(const lh_sframes_t *sf, uint32_t id)
{
    lh_frame_t f;
    memset(&f, 0, sizeof f);
    const lh_sframe_t *x = lh_sframes_get(sf, id);
    if (x) {
        f.function = x->function;
        f.file = x->file[0] ? x->file : NULL;
        f.line = x->line;
        f.lang = (int)x->lang;
    } else {
        f.function = "?"; /* the SFRAME record was lost (a truncated trace) */
        f.lang = LH_LANG_PERL;
    }
    return f;
}

static int
compute_interp_alloc(const lh_frame_t *f)
{
    const char *fn = f->function;
    return f->lang == LH_LANG_NATIVE &&
           (starts_with(fn, "Perl_safesys") || starts_with(fn, "PyMem_") ||
            starts_with(fn, "_PyMem_") || starts_with(fn, "PyObject_Malloc") ||
            starts_with(fn, "PyObject_Calloc") || starts_with(fn, "PyObject_Realloc") ||
            starts_with(fn, "_PyObject_Malloc") || starts_with(fn, "_PyObject_Calloc") ||
            starts_with(fn, "_PyObject_Realloc") || starts_with(fn, "pymalloc_"));
}

/* The interpreter entry points a program calls around the phases that run no script code,
 * and how the phase reads. A "weak" entry encloses others (Py_RunMain calls Py_FinalizeEx)
 * and names the phase only when none of the others is on the stack. */
typedef struct phase_entry {
    const char *function;
    const char *phase;
    int weak;
} phase_entry_t;

#define PERL_START "perl start-up, no script frame"
#define PERL_COMPILE "perl compilation, no script frame"
#define PERL_RUN "perl run, no script frame"
#define PERL_END "perl teardown, no script frame"
#define PY_START "python start-up, no script frame"
#define PY_RUN "python run, no script frame"
#define PY_END "python teardown, no script frame"

static const phase_entry_t phase_entries[] = {
    {"perl_alloc", PERL_START, 0},
    {"perl_construct", PERL_START, 0},
    {"perl_parse", PERL_COMPILE, 0},
    {"perl_run", PERL_RUN, 1},
    {"perl_destruct", PERL_END, 0},
    {"perl_free", PERL_END, 0},
    {"pymain_init", PY_START, 0},
    {"Py_PreInitialize", PY_START, 0},
    {"Py_PreInitializeFromArgs", PY_START, 0},
    {"Py_PreInitializeFromBytesArgs", PY_START, 0},
    {"Py_InitializeFromConfig", PY_START, 0},
    {"Py_InitializeEx", PY_START, 0},
    {"Py_Initialize", PY_START, 0},
    {"_Py_InitializeMain", PY_START, 0},
    {"Py_RunMain", PY_RUN, 1},
    {"pymain_run_python", PY_RUN, 1},
    {"Py_FinalizeEx", PY_END, 0},
    {"Py_Finalize", PY_END, 0},
    {"pymain_free", PY_END, 0},
};

static const phase_entry_t *
phase_entry(const lh_frame_t *f)
{
    if (f->lang != LH_LANG_NATIVE || !f->function) {
        return NULL;
    }
    for (size_t i = 0; i < sizeof phase_entries / sizeof *phase_entries; i++) {
        if (strcmp(f->function, phase_entries[i].function) == 0) {
            return &phase_entries[i];
        }
    }
    return NULL;
}

size_t
lh_scriptstack_phase(lh_frame_t *v, size_t n)
{
    size_t at = n, weak = n;
    const phase_entry_t *e = NULL, *e_weak = NULL;
    for (size_t i = 0; i < n; i++) {
        if (lh_scriptstack_is_eval_loop(&v[i])) {
            return 0; /* script code runs; its frames were not recorded */
        }
        const phase_entry_t *x = phase_entry(&v[i]);
        if (x && x->weak) {
            weak = i;
            e_weak = x;
        } else if (x) {
            at = i;
            e = x;
        }
    }
    if (!e) {
        at = weak;
        e = e_weak;
    }
    if (!e) {
        return 0;
    }
    memmove(v + at + 1, v + at, (n - at) * sizeof *v);
    memset(&v[at], 0, sizeof v[at]);
    v[at].function = e->function;
    v[at].file = e->phase;
    v[at].phase = 1;
    return at + 1;
}

/* Perl's arena allocators: they take a slab for many SV heads or bodies (or hash entries)
 * when the free list is empty, so the Perl line on their stack only happened to need the
 * first of them; the slab holds SVs made anywhere and is never given back before teardown.
 * Read as a leak of that line it sends a Perl developer to code that does not leak (a
 * Plack server's growing arenas were at Plack/Util.pm:162, a line that keeps nothing). */
static int
compute_arena(const lh_frame_t *f)
{
    const char *fn = f->function;
    /* "Pe" or "S_" first: four calls of strcmp for every frame of every stack were 2% of a
     * python report (callgrind). */
    return f->lang == LH_LANG_NATIVE && fn &&
           ((fn[0] == 'P' && fn[1] == 'e') || (fn[0] == 'S' && fn[1] == '_')) &&
           (strcmp(fn, "Perl_more_bodies") == 0 || strcmp(fn, "Perl_more_sv") == 0 ||
            strcmp(fn, "S_more_sv") == 0 || strcmp(fn, "S_more_he") == 0);
}

void
lh_scriptstack_classify(lh_frame_t *f)
{
    f->sclass = SC_KNOWN | (compute_eval_loop(f) ? SC_EVAL_LOOP : 0) |
                (compute_interp(f) ? SC_INTERP : 0) | (compute_arena(f) ? SC_ARENA : 0) |
                (compute_interp_alloc(f) ? SC_INTERP_ALLOC : 0);
}

int
lh_scriptstack_is_eval_loop(const lh_frame_t *f)
{
    return f->sclass ? (f->sclass & SC_EVAL_LOOP) != 0 : compute_eval_loop(f);
}

int
lh_scriptstack_is_interp_alloc(const lh_frame_t *f)
{
    return f->sclass ? (f->sclass & SC_INTERP_ALLOC) != 0 : compute_interp_alloc(f);
}

static int
is_interp(const lh_frame_t *f)
{
    return f->sclass ? (f->sclass & SC_INTERP) != 0 : compute_interp(f);
}

static int
is_arena(const lh_frame_t *f)
{
    return f->sclass ? (f->sclass & SC_ARENA) != 0 : compute_arena(f);
}

static lh_frame_t
arena_frame(void)
{
    lh_frame_t f;
    memset(&f, 0, sizeof f);
    f.function = LH_SCRIPTSTACK_PERL_ARENA;
    f.phase = 1;
    return f;
}

size_t
lh_scriptstack_merge(const lh_frame_t *nat, size_t n_nat, const uint32_t *script,
                     size_t n_script, const lh_sframes_t *sf, int native, lh_frame_t *out)
{
    size_t cut = n_nat;
    for (size_t i = 0; i < n_nat; i++) {
        if (lh_scriptstack_is_eval_loop(&nat[i])) {
            cut = i;
            break;
        }
    }
    /* The arena allocator sits inside the eval loop, or anywhere when none was recorded
     * (perl compiling a require'd file or a BEGIN block). */
    size_t arena = n_nat;
    for (size_t i = 0; i < cut && arena == n_nat; i++) {
        arena = is_arena(&nat[i]) ? i : n_nat;
    }
    if (cut == n_nat) {
        for (size_t i = 0; i < n_nat; i++) {
            if (is_interp(&nat[i])) {
                cut = i;
                break;
            }
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < cut; i++) {
        if (native || !is_interp(&nat[i])) {
            out[k++] = nat[i];
        }
        if (i == arena) {
            out[k++] = arena_frame();
        }
    }
    if (arena >= cut && arena < n_nat) {
        out[k++] = arena_frame(); /* its C frames (--native) come after the script's */
    }
    for (size_t i = 0; i < n_script; i++) {
        out[k++] = script_frame(sf, script[i]);
    }
    if (native) {
        for (size_t i = cut; i < n_nat; i++) {
            out[k++] = nat[i];
        }
    }
    return k;
}

int
lh_frame_is_perl_eval(const lh_frame_t *f)
{
    return f->lang == LH_LANG_PERL && !f->phase && f->file &&
           (starts_with(f->file, "(eval ") || starts_with(f->file, "(re_eval "));
}
