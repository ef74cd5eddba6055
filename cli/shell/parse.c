/* leakhound - SPDX-License-Identifier: MIT
 *
 * parse.c: the shell's command lines: commands, words, quotes, addresses and @N.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

void
lh_shell_line_fini(lh_shell_line_t *l)
{
    free(l->cmds);
    free(l->buf);
    memset(l, 0, sizeof *l);
}

static int
end_word(lh_shell_cmd_t *c, char **w, char **wp, lh_err_t *err)
{
    if (!*w) {
        return 0;
    }
    if (c->argc >= LH_SHELL_MAX_WORDS) {
        return lh_err_set(err, LH_EINVAL, "too many words in one command (at most %d)",
                          LH_SHELL_MAX_WORDS);
    }
    *(*wp)++ = '\0';
    c->argv[c->argc++] = *w;
    c->argv[c->argc] = NULL;
    *w = NULL;
    return 0;
}

int
lh_shell_parse(const char *line, lh_shell_line_t *out, lh_err_t *err)
{
    size_t len = strlen(line);
    size_t max_cmds = 1;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < len; i++) {
        max_cmds += line[i] == ';';
    }
    out->buf = malloc(len * 2 + 2); /* every character plus a NUL per word at most */
    out->cmds = calloc(max_cmds, sizeof *out->cmds);
    if (!out->buf || !out->cmds) {
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    char *wp = out->buf;
    char *w = NULL;  /* the word being built, or NULL between words */
    char quote = 0;
    lh_shell_cmd_t *c = &out->cmds[0];
    int rc;
    for (const char *p = line;; p++) {
        char ch = *p;
        if (quote) {
            if (!ch) {
                return lh_err_set(err, LH_EINVAL, "unterminated %s quote",
                                  quote == '\'' ? "single" : "double");
            }
            if (ch == quote) {
                quote = 0;
            } else if (quote == '"' && ch == '\\' && (p[1] == '"' || p[1] == '\\')) {
                *wp++ = *++p;
            } else {
                *wp++ = ch;
            }
            continue;
        }
        if (!ch || ch == ';' || ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
            if ((rc = end_word(c, &w, &wp, err)) < 0) {
                return rc;
            }
            if (!ch || ch == ';') {
                if (c->argc) {
                    out->n++;
                    c = &out->cmds[out->n];
                }
                if (!ch) {
                    break;
                }
            }
            continue;
        }
        if (!w) {
            if (ch == '#') {
                /* A comment: to the end of the line. */
                if (c->argc) {
                    out->n++;
                }
                break;
            }
            w = wp;
        }
        if (ch == '\'' || ch == '"') {
            quote = ch;
        } else if (ch == '\\') {
            if (!p[1]) {
                return lh_err_set(err, LH_EINVAL, "trailing backslash");
            }
            *wp++ = *++p;
        } else {
            *wp++ = ch;
        }
    }
    return 0;
}

int
lh_shell_parse_addr(const char *s, const uint32_t *rows, size_t n_rows, uint64_t *addr,
                    uint32_t *node, lh_err_t *err)
{
    char *end = NULL;
    *addr = 0;
    *node = LH_NODE_NONE;
    if (s[0] == '@') {
        errno = 0;
        unsigned long k = (s[1] >= '0' && s[1] <= '9') ? strtoul(s + 1, &end, 10) : 0;
        if (!end || *end || errno || k == 0) {
            return lh_err_set(err, LH_EINVAL, "malformed row reference '%s' (expected @1, @2, "
                              "...)", s);
        }
        if (n_rows == 0) {
            return lh_err_set(err, LH_EINVAL, "%s: no listing yet (run largest, roots, elems, "
                              "... first)", s);
        }
        if (k > n_rows) {
            return lh_err_set(err, LH_EINVAL, "%s: the last listing has %zu row%s", s, n_rows,
                              n_rows == 1 ? "" : "s");
        }
        if (rows[k - 1] == LH_NODE_NONE) {
            return lh_err_set(err, LH_EINVAL, "%s: that row names no block", s);
        }
        *node = rows[k - 1];
        return 0;
    }
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && s[2]) {
        const char *p = s + 2;
        uint64_t v = 0;
        size_t nd = 0;
        for (; *p; p++, nd++) {
            int d = *p >= '0' && *p <= '9'   ? *p - '0'
                  : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
                  : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10
                                           : -1;
            if (d < 0 || nd >= 16) {
                return lh_err_set(err, LH_EINVAL, "malformed address '%s' (expected 0x and at "
                                  "most 16 hex digits, or @N)", s);
            }
            v = v << 4 | (uint64_t)d;
        }
        *addr = v;
        return 0;
    }
    return lh_err_set(err, LH_EINVAL, "malformed address '%s' (expected 0x... or @N)", s);
}
