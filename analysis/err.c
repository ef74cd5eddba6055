/* leakhound - SPDX-License-Identifier: MIT
 *
 * err.c: error messages and warning lists.
 */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dupstr.h"
#include "grow.h"

static void
one_line(char *s)
{
    for (; *s; s++) {
        if (*s == '\n' || *s == '\r') {
            *s = ' ';
        }
    }
}

int
lh_err_set(lh_err_t *err, int code, const char *fmt, ...)
{
    va_list ap;
    if (!err) {
        return code;
    }
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    one_line(err->msg);
    return code;
}

const char *
lh_err_str(int code)
{
    switch (code) {
    case LH_OK:
        return "success";
    case LH_EIO:
        return "input/output error";
    case LH_EFORMAT:
        return "malformed trace";
    case LH_EVERSION:
        return "unsupported trace format version";
    case LH_ETRUNC:
        return "truncated trace";
    case LH_ENOMEM:
        return "out of memory";
    case LH_EINVAL:
        return "invalid argument";
    case LH_ENOENT:
        return "no such file";
    default:
        return "unknown error";
    }
}

void
lh_warnings_init(lh_warnings_t *w)
{
    *w = (lh_warnings_t){0};
}

void
lh_warnings_fini(lh_warnings_t *w)
{
    lh_strv_free(w->msgs, w->n);
    lh_warnings_init(w);
}

int
lh_warn(lh_warnings_t *w, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    one_line(buf);
    for (size_t i = 0; i < w->n; i++) {
        if (strcmp(w->msgs[i], buf) == 0) {
            return 0;
        }
    }
    if (lh_grow(&w->msgs, &w->cap, w->n, sizeof *w->msgs, 8) < 0) {
        return LH_ENOMEM;
    }
    char *s = strdup(buf);
    if (!s) {
        return LH_ENOMEM;
    }
    w->msgs[w->n++] = s;
    return 0;
}
