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

static int
is_interp(const lh_frame_t *f)
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

int
lh_scriptstack_is_eval_loop(const lh_frame_t *f)
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
