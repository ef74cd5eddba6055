/* leakhound - SPDX-License-Identifier: MIT
 *
 * suppress.c: LeakSanitizer-style suppression rules and the default list.
 */
#include "suppress.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dupstr.h"
#include "grow.h"

/* The default list. Each entry was seen at exit in programs that free everything they
 * allocate themselves (a C program using stdio, setlocale, getpwnam, localtime and a thread;
 * a C++ program using iostreams and exceptions; perl; python3), under the agent on Debian
 * 12 (glibc 2.36, libstdc++ 12). Patterns name the runtime's own allocating functions, not
 * the paths to them, so a user's leak in a dlopen'd library's constructor stays visible. */
static const char *const default_rules[] = {
    /* stdio: the buffers of stdout, stderr and FILEs that are never closed */
    "_IO_file_doallocate",
    /* the dynamic loader: link maps, search paths, dependency lists, TLS and the dtv */
    "_dl_new_object",
    "_dl_map_object",
    "_dl_find_object_update",
    "_dl_allocate_tls",
    "_dl_resize_dtv",
    "_dl_update_slotinfo",
    "_dl_add_to_slotinfo",
    "_dl_init_paths",
    "_dl_important_hwcaps",
    "_dlerror_run",
    "add_to_global_resize",
    "fillin_rpath",
    "decompose_rpath",
    /* locale, message catalogs and character set conversion */
    "setlocale",
    "_nl_find_locale",
    "_nl_load_locale",
    "_nl_load_domain",
    "_nl_find_domain",
    "_nl_expand_alias",
    "_nl_make_l10nflist",
    "set_binding_values",
    "__gconv_",
    "__wcsmbs_load_conv",
    /* time zones (localtime, tzset) */
    "__tzfile_read",
    "__tzstring",
    "tzset_internal",
    /* NSS: getpwnam and friends keep their module list and a static result buffer */
    "__nss_",
    "nss_database",
    "^getpwnam$",
    "^getpwuid$",
    "^getgrnam$",
    "^getgrgid$",
    "^gethostbyname",
    "^getservbyname$",
    "^getprotobyname$",
    /* atexit / thread-local destructor lists */
    "__new_exitfn",
    "__cxa_thread_atexit_impl",
    /* the C++ runtime: the emergency exception pool, per-thread exception globals */
    "(anonymous namespace)::pool::pool",
    "__cxa_get_globals",
};

void
lh_supp_fini(lh_supp_t *s)
{
    LH_FREE_EACH2(s->rules, s->n, lh_supp_rule_t, pattern, origin);
    memset(s, 0, sizeof *s);
}

static int
add_rule(lh_supp_t *s, const char *pat, size_t len, const char *origin, lh_err_t *err)
{
    if (lh_grow(&s->rules, &s->cap, s->n, sizeof *s->rules, 32) < 0) {
        return lh_err_set(err, LH_ENOMEM, "out of memory reading suppressions");
    }
    lh_supp_rule_t *r = &s->rules[s->n];
    memset(r, 0, sizeof *r);
    r->pattern = strndup(pat, len);
    r->origin = strdup(origin);
    if (!r->pattern || !r->origin) {
        free(r->pattern);
        free(r->origin);
        return lh_err_set(err, LH_ENOMEM, "out of memory reading suppressions");
    }
    s->n++;
    return 0;
}

int
lh_supp_add_defaults(lh_supp_t *s, lh_err_t *err)
{
    for (size_t i = 0; i < sizeof default_rules / sizeof default_rules[0]; i++) {
        int rc = add_rule(s, default_rules[i], strlen(default_rules[i]), "default", err);
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}

static int
is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

int
lh_supp_parse(lh_supp_t *s, const char *text, size_t len, const char *origin, lh_err_t *err)
{
    size_t pos = 0, line = 0;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        size_t a = pos, b = end;
        line++;
        pos = end + 1;
        while (a < b && is_space(text[a])) {
            a++;
        }
        while (b > a && is_space(text[b - 1])) {
            b--;
        }
        if (a == b || text[a] == '#') {
            continue;
        }
        if (b - a < 5 || memcmp(text + a, "leak:", 5) != 0) {
            const char *colon = memchr(text + a, ':', b - a);
            if (colon) {
                return lh_err_set(err, LH_EINVAL, "%s:%zu: suppression type '%.*s' is not "
                                  "supported (only leak:PATTERN)", origin, line,
                                  (int)(colon - (text + a)), text + a);
            }
            return lh_err_set(err, LH_EINVAL, "%s:%zu: expected leak:PATTERN, got '%.*s'",
                              origin, line, (int)(b - a > 60 ? 60 : b - a), text + a);
        }
        a += 5;
        while (a < b && is_space(text[a])) {
            a++;
        }
        if (a == b) {
            return lh_err_set(err, LH_EINVAL, "%s:%zu: empty pattern after leak:", origin,
                              line);
        }
        char where[256];
        snprintf(where, sizeof where, "%s:%zu", origin, line);
        int rc = add_rule(s, text + a, b - a, where, err);
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}

int
lh_supp_load(lh_supp_t *s, const char *path, lh_err_t *err)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc;
    if (!f) {
        return lh_err_set(err, errno == ENOENT ? LH_ENOENT : LH_EIO,
                          "suppressions %s: %s", path, strerror(errno));
    }
    for (;;) {
        if (len == cap) {
            if (cap >= (64u << 20)) {
                rc = lh_err_set(err, LH_ENOMEM, "suppressions %s: larger than 64 MiB", path);
                goto done;
            }
            if (lh_grow(&buf, &cap, len, 1, 4096) < 0) {
                rc = lh_err_set(err, LH_ENOMEM, "out of memory reading %s", path);
                goto done;
            }
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0) {
            break;
        }
    }
    if (ferror(f)) {
        rc = lh_err_set(err, LH_EIO, "suppressions %s: read error", path);
        goto done;
    }
    rc = lh_supp_parse(s, buf, len, path, err);
done:
    free(buf);
    fclose(f);
    return rc;
}

/* Glob match of pat[0..pn) against the whole of str, '*' being the only wildcard. The
 * classic linear scan with one backtracking point (the last star). */
static int
glob_match(const char *pat, size_t pn, const char *str)
{
    size_t p = 0, star = (size_t)-1, mark = 0;
    const char *s = str;
    while (*s) {
        if (p < pn && pat[p] == '*') {
            star = p++;
            mark = (size_t)(s - str);
        } else if (p < pn && pat[p] == *s) {
            p++;
            s++;
        } else if (star != (size_t)-1) {
            p = star + 1;
            s = str + ++mark;
        } else {
            return 0;
        }
    }
    while (p < pn && pat[p] == '*') {
        p++;
    }
    return p == pn;
}

int
lh_supp_pattern_match(const char *pattern, const char *str)
{
    char buf[512];
    size_t n = strlen(pattern), k = 0;
    int anchored_start = 0, anchored_end = 0;
    if (!str || !*str) {
        return 0;
    }
    if (n && pattern[0] == '^') {
        anchored_start = 1;
        pattern++;
        n--;
    }
    if (n && pattern[n - 1] == '$') {
        anchored_end = 1;
        n--;
    }
    if (n + 2 >= sizeof buf) {
        return 0; /* absurdly long patterns match nothing */
    }
    if (!anchored_start) {
        buf[k++] = '*';
    }
    memcpy(buf + k, pattern, n);
    k += n;
    if (!anchored_end) {
        buf[k++] = '*';
    }
    return glob_match(buf, k, str);
}

static int
rule_matches_frame(const char *pat, const lh_frame_t *f)
{
    return lh_supp_pattern_match(pat, f->function) || lh_supp_pattern_match(pat, f->module) ||
           lh_supp_pattern_match(pat, f->file);
}

long
lh_supp_match(const lh_supp_t *s, const lh_frame_t *frames, size_t n)
{
    if (!s) {
        return -1;
    }
    for (size_t r = 0; r < s->n; r++) {
        for (size_t i = 0; i < n; i++) {
            if (rule_matches_frame(s->rules[r].pattern, &frames[i])) {
                return (long)r;
            }
        }
    }
    return -1;
}

void
lh_supp_count(lh_supp_t *s, long i, uint64_t blocks, uint64_t bytes)
{
    if (s && i >= 0 && (size_t)i < s->n) {
        s->rules[i].n_sites++;
        s->rules[i].n_blocks += blocks;
        s->rules[i].n_bytes += bytes;
    }
}

void
lh_report_suppress(lh_report_t *rep, lh_supp_t *s, size_t top)
{
    size_t k = 0;
    for (size_t i = 0; i < rep->n_sites; i++) {
        lh_site_t *site = &rep->sites[i];
        long r = lh_supp_match(s, site->frames, site->n_frames);
        if (r >= 0) {
            lh_supp_count(s, r, site->stats.live_blocks, site->stats.live_bytes);
            rep->n_suppressed_sites++;
            rep->suppressed_bytes += site->stats.live_bytes;
            rep->suppressed_blocks += site->stats.live_blocks;
            rep->n_growing -= site->growth != NULL;
            lh_site_fini(site);
            continue;
        }
        rep->sites[k++] = *site;
    }
    rep->n_leak_sites -= rep->n_suppressed_sites;
    if (!rep->n_growing) {
        rep->growth = NULL; /* what grew is suppressed: the order is the one without growth */
    }
    for (size_t i = top && top < k ? top : k; i < k; i++) {
        lh_site_fini(&rep->sites[i]);
    }
    rep->n_sites = top && top < k ? top : k;
}
