/* leakhound - SPDX-License-Identifier: MIT
 *
 * suppress.h: leak suppressions in LeakSanitizer's syntax, and the matcher.
 *
 * A suppression file holds one rule a line, `leak:PATTERN`; blank lines and lines starting
 * with `#` are ignored, as is space around the rule. A stack is suppressed when any of its
 * frames matches a rule: the pattern is compared with the frame's function name
 * (demangled), the full path of its module and the full path of its source file. As in
 * LeakSanitizer, a pattern matches anywhere inside the name (a substring) unless it is
 * anchored with `^` (start) or `$` (end), and `*` matches any run of characters:
 *
 *     leak:libfoo.so          every stack through libfoo.so (any version, any directory)
 *     leak:^parse_config$     frames of exactly that function
 *     leak:src/cache*.c       files under any src/ whose name starts with cache
 *
 * The built-in default list (lh_supp_add_defaults) hides one-time allocations that the C
 * library, the dynamic loader and the C++ runtime make for themselves and never free
 * (stdio buffers, link maps, locale data, NSS caches, the C++ emergency exception pool):
 * what real programs that free everything still show at exit.
 *
 * Each rule counts what it suppressed (lh_supp_count), for the summary. Not thread-safe.
 */
#ifndef LH_SUPPRESS_H
#define LH_SUPPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "report.h"
#include "symbolize.h"

typedef struct lh_supp_rule {
    char *pattern;    /* without the "leak:" prefix, NUL-terminated */
    char *origin;     /* "FILE:LINE", or "default" */
    uint64_t n_sites; /* what lh_supp_count() recorded */
    uint64_t n_blocks;
    uint64_t n_bytes;
} lh_supp_rule_t;

typedef struct lh_supp {
    lh_supp_rule_t *rules;
    size_t n;
    size_t cap;
} lh_supp_t;

/* A zeroed set is empty; lh_supp_fini frees one and leaves it so. */
void lh_supp_fini(lh_supp_t *s);

/* Adds the built-in default rules. Returns 0 or LH_ENOMEM. */
int lh_supp_add_defaults(lh_supp_t *s, lh_err_t *err);

/* Parses suppression text (len bytes, need not be NUL-terminated); origin names it in
 * messages and in the rules' origin ("FILE:LINE"). Returns 0, LH_EINVAL for a line that is
 * not a comment and not `leak:PATTERN` (message names origin and line), or LH_ENOMEM. */
int lh_supp_parse(lh_supp_t *s, const char *text, size_t len, const char *origin,
                  lh_err_t *err);

/* Reads and parses a suppression file. Returns 0, LH_ENOENT, LH_EIO, LH_EINVAL, LH_ENOMEM. */
int lh_supp_load(lh_supp_t *s, const char *path, lh_err_t *err);

/* The index of the first rule matching one of the n frames, or -1 (also when s is NULL or
 * has no rules). */
long lh_supp_match(const lh_supp_t *s, const lh_frame_t *frames, size_t n);

/* Adds a suppressed site's blocks and bytes to rule i's counters. */
void lh_supp_count(lh_supp_t *s, long i, uint64_t blocks, uint64_t bytes);

/* Removes from rep (built with every site: top 0) the sites a rule of s matches, counting
 * them in the rules and in rep->n_suppressed_sites, suppressed_bytes and suppressed_blocks,
 * and lowering rep->n_leak_sites; then keeps the first top sites (0: all). */
void lh_report_suppress(lh_report_t *rep, lh_supp_t *s, size_t top);

/* The pattern rule: does pattern (LeakSanitizer syntax: ^, $, *) match str? NULL or empty
 * str never matches. */
int lh_supp_pattern_match(const char *pattern, const char *str);

#endif /* LH_SUPPRESS_H */
