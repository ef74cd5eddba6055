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

/* Formats bytes in binary units ("1023 B", "1.5 KiB", "12.0 MiB") into buf. Returns buf. */
const char *lh_text_human_bytes(char *buf, size_t len, uint64_t bytes);

#endif /* LH_VIEW_TEXT_H */
