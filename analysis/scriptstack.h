/* leakhound - SPDX-License-Identifier: MIT
 *
 * scriptstack.h: the stack a user reads when an allocation happened while a Perl or Python
 * interpreter ran script code (docs/FORMAT.md, "Script frames").
 *
 * A recorded stack of such an allocation has two parts: the whole native stack (the
 * interpreter's C frames included: Perl_safesysmalloc, pp_*, runops, _PyEval_...) and the
 * script frames (sub/function and file:line), innermost first. The displayed stack is
 *
 *     native frames from the innermost up to the innermost eval-loop frame (Perl_runops_*,
 *     _PyEval_EvalFrameDefault), without the interpreter's own frames; then the script
 *     frames, innermost first.
 *
 * So the C frames of an XS module or C extension, and of the C library they call, stay
 * visible under the script line that called them, while the interpreter's machinery is
 * hidden. With `native` set (the `--native` option) nothing is hidden: the script frames are
 * spliced in just inside the innermost eval-loop frame. When no eval-loop frame was
 * recorded (an allocation while perl compiles, a stack cut at the maximum depth), the
 * native part ends at the first interpreter frame.
 *
 * A frame is the interpreter's when it lies in its library or program (libperl*,
 * libpython*, an executable named perl* or python*), or, for interpreters linked into a
 * program (embedded perl), when its function carries the interpreter's API prefix (Perl_,
 * Perl, pp_, PerlIO, Py, _Py).
 *
 * An allocation with no script frame at all, made while the interpreter starts, compiles
 * before the first statement, or tears down, is displayed at the phase a script author
 * knows instead of the interpreter's allocator: the outermost interpreter entry point on
 * the native stack (perl_construct, perl_parse, perl_destruct; pymain_init,
 * Py_InitializeFromConfig, Py_FinalizeEx, ...) becomes a phase frame (lh_frame_t.phase)
 * whose file names the phase, "perl start-up, no script frame" (scriptstack.c lists them
 * all). It is
 * the site's location (report.h) and replaces the entry point's frame and those outside it
 * (main, _start); the frames inside it stay, as they tell one start-up site from another,
 * but for the interpreter's allocator wrappers innermost (Perl_safesysmalloc), which do not.
 * With `native` nothing is hidden: the phase frame is spliced in just inside the entry
 * point's frame.
 *
 * This is where every view gets script frames: lh_sym_stack (symbolize.h) calls it, and
 * reports, trees, flame graphs and exports take their frames from lh_sym_stack.
 */
#ifndef LH_SCRIPTSTACK_H
#define LH_SCRIPTSTACK_H

#include <stddef.h>

#include "stacks.h"
#include "symbolize.h"

/* Computes the tests below (and merge's) of f once, into f->sclass: the symbolizer does it
 * for each address it caches, so the frames of the 12,000 stacks of a python report are
 * not tested by name again in each stack (prefix tests of every frame were 4% of it). The
 * function, module and lang must not change afterwards. */
void lh_scriptstack_classify(lh_frame_t *f);

/* Whether f is an eval-loop frame (Perl_runops_*, _PyEval_EvalFrame*, PyEval_EvalFrame*):
 * without `native`, no frame outside the innermost one is displayed, so a caller may stop
 * symbolizing there. */
int lh_scriptstack_is_eval_loop(const lh_frame_t *f);

/* Whether f is one of the interpreter's allocator wrappers (Perl_safesys*, PyMem_*,
 * PyObject_Malloc and the like): never a site's location when another frame exists. */
int lh_scriptstack_is_interp_alloc(const lh_frame_t *f);

/* For native frames v[0..n) recorded without script frames: when they ran in an
 * interpreter phase without script code (see above), inserts the phase frame in place
 * just inside the entry point's frame (v has room for n + 1 frames) and returns how many
 * frames the displayed stack has without `native`: those inside the entry point, then the
 * phase (with `native` all n + 1 show). Returns 0, v untouched, when no interpreter entry
 * point is on the stack or an eval loop is (script code runs). */
size_t lh_scriptstack_phase(lh_frame_t *v, size_t n);

/* Whether f is a Perl frame in code a string eval compiled (file "(eval N)" or
 * "(re_eval N)"). When a site's location is one, lh_site_user_frame is the innermost Perl
 * frame outside it with a file of its own, and the views name the location by its sub:
 * "Shop::Request::new in (eval 7):57 (called from app.pl:12 in Shop::App::handle)"
 * (report.h), and sites are keyed without the eval's number (sitecanon.h). */
int lh_frame_is_perl_eval(const lh_frame_t *f);

/* The function of the frame that stands for one of perl's arenas (Perl_more_bodies,
 * Perl_more_sv): a slab for SV heads, bodies or hash entries made anywhere, taken by
 * whichever line first needed a new one. It is a phase frame (no file) and the site's
 * location: the report reads "at perl SV arena (...)", and the line below it is the one that
 * happened to fill the previous slab, not the owner of what the slab holds. */
#define LH_SCRIPTSTACK_PERL_ARENA "perl SV arena (room for new SVs, shared by all code)"

/* Builds the displayed stack from the native frames nat[0..n_nat) and the script frame ids
 * script[0..n_script) resolved in sf. Writes at most n_nat + n_script + 1 frames to out (the
 * caller's array of that size) and returns how many. Script frames get lang, function,
 * file and line, no module and ip 0; an id missing from sf becomes a frame with function
 * "?". An allocation by one of perl's arena allocators gets the arena frame
 * (LH_SCRIPTSTACK_PERL_ARENA) in place of that allocator's frame, or just outside it with
 * `native`. Strings stay owned by sf and by the symbolizer. Never fails. */
size_t lh_scriptstack_merge(const lh_frame_t *nat, size_t n_nat, const uint32_t *script,
                            size_t n_script, const lh_sframes_t *sf, int native,
                            lh_frame_t *out);

#endif /* LH_SCRIPTSTACK_H */
