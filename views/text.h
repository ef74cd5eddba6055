/* leakhound - SPDX-License-Identifier: MIT
 *
 * text.h: the leak report as text for a terminal: a summary, then the top sites by leaked
 * bytes with Valgrind-style stacks ("at f (file.c:42)", "by main (main.c:7)").
 *
 * Renders a lh_report_t; computes nothing but formatting (units, relative paths).
 */
#ifndef LH_VIEW_TEXT_H
#define LH_VIEW_TEXT_H

#include <stdio.h>

#include "err.h"
#include "report.h"

typedef struct lh_text_opts {
    const char *cwd; /* source paths under this directory are shown relative to it; NULL */
} lh_text_opts_t;

/* Writes the report to out. opts may be NULL. Returns 0, or LH_EIO when writing failed. */
int lh_view_text(FILE *out, const lh_report_t *rep, const lh_text_opts_t *opts, lh_err_t *err);

/* Building blocks shared with the other text views (timeline.c). */
/* Prints s with control characters replaced by '?'. */
void lh_text_clean(FILE *out, const char *s);
/* Prints s as one shell word: as it is when plain, else single-quoted, control characters
 * shown as '?' (\n and \t as such when escapes), never sent to a terminal. */
void lh_text_shell_word(FILE *out, const char *s, int escapes);
/* path relative to cwd when it lies under it (cwd may be NULL). */
const char *lh_text_rel_path(const char *path, const char *cwd);
/* Where frame f is, as the views show it after the function: "file.c:42" (relative to
 * cwd), "in libfoo.so" (the module's base name) or "" (nothing known), in buf. */
const char *lh_text_frame_where(const lh_frame_t *f, const char *cwd, char *buf, size_t len);
/* The site's location, "file.c:42" (or the function, module+offset, address), no newline. */
void lh_text_location(FILE *out, const lh_site_t *site, const char *cwd);
/* " (called from app.py:7 in __main__.handle)": the user's own frame of a site located
 * in a library (lh_site_user_frame), printed beside the location; nothing when the
 * location is the user's code or no frame is. */
void lh_text_user_frame(FILE *out, const lh_site_t *site, const char *cwd);
/* The site's frames, at most max (0: all), or why there are none. */
void lh_text_stack(FILE *out, const lh_site_t *site, size_t max, const char *cwd);
/* How many frames from i on are C++ standard library templates inlined into their caller
 * (files under include/c++/): a run of two or more prints as its outermost frame. */
size_t lh_text_cxx_lib_run(const lh_site_t *site, size_t i);
/* "[inlined]", or with folded > 0 "[inlined; N more inlined frames of the C++ library
 * inside it]", or "" for a frame that is not inlined; in buf. */
const char *lh_text_inline_note(char *buf, size_t len, const lh_frame_t *f, size_t folded);

/* Formats bytes in binary units ("1023 B", "1.5 KiB", "12.0 MiB") into buf. Returns buf. */
const char *lh_text_human_bytes(char *buf, size_t len, uint64_t bytes);

/* "12.5 B", "1.2 KiB": a fractional byte rate, into buf. Returns buf. */
const char *lh_text_rate_bytes(char *buf, size_t len, double bytes);
/* A growing site's figures in g as report --growth prints them, no newline: "+96 B per
 * mark (+1.00 blocks), grows in 399 of 399 intervals; 0 B -> 37.4 KiB; growing (z 8.03)". */
void lh_text_growth(FILE *out, const lh_growth_site_t *s, const lh_growth_t *g);

/* A signal's name, "SIGTERM" ("signal 99" for a number the C library does not name), in
 * buf. Returns buf. */
const char *lh_text_signal_name(char *buf, size_t len, uint64_t sig);

/* What took snapshot trigger t (LH_SNAP_*): "api", "signal", "period", "growth", "exit";
 * other for a value it does not know. */
const char *lh_text_trigger_name(int t, const char *other);

/* The end of every view: flushes out. Returns 0, or LH_EIO with "error writing WHAT" when
 * anything written to out was lost (a full disk, a closed pipe). */
int lh_view_flush(FILE *out, const char *what, lh_err_t *err);

#endif /* LH_VIEW_TEXT_H */
