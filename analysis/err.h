/* leakhound - SPDX-License-Identifier: MIT
 *
 * err.h: error codes and the caller-provided error message buffer of the analyzer.
 *
 * Every analysis, view and CLI function that can fail returns an int: 0 (or a positive
 * count where documented) on success, one of the negative LH_E* codes on failure. The
 * detail for the user goes into a lh_err_t the caller passes in: one line, naming the file
 * and the problem, e.g. "trace.lht: truncated at offset 81234 (frame 17 incomplete); 10482
 * events before it". Libraries never print and never exit; cli/main.c turns errors into
 * exit codes.
 */
#ifndef LH_ERR_H
#define LH_ERR_H

#include <stddef.h>

enum lh_errcode {
    LH_OK = 0,
    LH_EIO = -1,      /* read/write error from the OS */
    LH_EFORMAT = -2,  /* malformed input (bad magic, checksum, record) */
    LH_EVERSION = -3, /* unsupported (newer) major format version */
    LH_ETRUNC = -4,   /* input ends in the middle of a structure */
    LH_ENOMEM = -5,   /* allocation failed, or a limit against hostile input was hit */
    LH_EINVAL = -6,   /* bad argument or usage */
    LH_ENOENT = -7,   /* file not found */
};

typedef struct lh_err {
    char msg[512];
} lh_err_t;

/* Formats a one-line message into err (truncated to fit; err may be NULL) and returns
 * code, so callers write `return lh_err_set(err, LH_EINVAL, "...", ...);`. Newlines in the
 * formatted text are replaced by spaces so the message stays on one line. */
int lh_err_set(lh_err_t *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A short static description of a code ("truncated input"), for when no message was set. */
const char *lh_err_str(int code);

/* ---------------------------------------------------------------------------------------
 * Warnings: non-fatal problems an analysis step found (a missing trailer, a module file
 * that changed since the run). Collected in a list the caller owns and prints; code deep
 * inside the analyzer never prints. Identical messages are kept once.
 * ------------------------------------------------------------------------------------- */
typedef struct lh_warnings {
    char **msgs;
    size_t n;
    size_t cap;
} lh_warnings_t;

void lh_warnings_init(lh_warnings_t *w);
void lh_warnings_fini(lh_warnings_t *w);
/* Adds one formatted line (deduplicated). Returns 0, or LH_ENOMEM (the warning is lost). */
int lh_warn(lh_warnings_t *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* qsort that accepts an empty array: qsort(NULL, 0, ...) is undefined behaviour (its base
 * must not be NULL, UBSan checks it), and empty lists are common here. */
#include <stdlib.h>
static inline void
lh_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1) {
        qsort(base, n, size, cmp);
    }
}

#endif /* LH_ERR_H */
