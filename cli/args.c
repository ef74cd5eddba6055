/* leakhound - SPDX-License-Identifier: MIT
 *
 * args.c: option value parsing shared by the subcommands: numbers, durations ("500ms"),
 * sizes ("64M") and signals ("USR2"). Options themselves: opts.c.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

int
lh_cli_parse_uint(const char *opt, const char *s, unsigned long lo, unsigned long hi,
                  unsigned long *out, lh_err_t *err)
{
    char *end = NULL;
    errno = 0;
    unsigned long v = (s && *s >= '0' && *s <= '9') ? strtoul(s, &end, 10) : 0;
    if (!s || !end || *end || errno || v < lo || v > hi) {
        return lh_err_set(err, LH_EINVAL, "%s: expected a number from %lu to %lu, got '%s'", opt,
                          lo, hi, s ? s : "");
    }
    *out = v;
    return 0;
}

int
lh_cli_value(const char *cmd, const char *opt, const char *v, int size, uint64_t lo, uint64_t hi,
             uint64_t *out, lh_err_t *err)
{
    static const char *const sfx[2][6] = {{"h", "m", "s", "ms", "us", "ns"},
                                          {"T", "G", "M", "K", "", ""}};
    static const uint64_t mult[2][6] = {
        {3600000000000, 60000000000, 1000000000, 1000000, 1000, 1},
        {1ull << 40, 1ull << 30, 1ull << 20, 1ull << 10, 1, 1}};
    const uint64_t end[2] = {lo, hi};
    char t[2][32], range[80] = "";
    if ((size ? lh_parse_size_bytes(v, out) : lh_parse_duration_ns(v, out)) == 0 &&
        *out >= lo && *out <= hi) {
        return 0;
    }
    for (int k = 0; k < 2; k++) { /* in the largest unit that divides it: "24h", "1T", "1536" */
        int u = 0;
        while (end[k] % mult[size][u]) {
            u++;
        }
        snprintf(t[k], sizeof t[k], "%llu%s", (unsigned long long)(end[k] / mult[size][u]),
                 end[k] ? sfx[size][u] : "");
    }
    if (lo || hi != UINT64_MAX) {
        snprintf(range, sizeof range, hi == UINT64_MAX ? " of at least %s" : lo ? " from %s to %s"
                 : " of at most %.0s%s", t[0], t[1]);
    }
    return lh_err_set(err, LH_EINVAL, "%s: %s: expected a %s%s (such as %s), got '%s'", cmd, opt,
                      size ? "size" : "duration", range,
                      size ? "512K, 64M or 1G" : "500ms, 10s or 1.5m", v);
}

int
lh_cli_env_ms(const char *cmd, const char *opt, const char *v, uint64_t max_ms, char *out,
              size_t len, lh_err_t *err)
{
    uint64_t ns;
    if (lh_cli_value(cmd, opt, v, 0, 0, max_ms * 1000000, &ns, err) < 0) {
        return LH_EINVAL;
    }
    if (ns && ns < 1000000) {
        return lh_err_set(err, LH_EINVAL, "%s: %s %s: the agent counts in milliseconds; use at "
                          "least 1ms (or 0 for off)", cmd, opt, v);
    }
    snprintf(out, len, "%llu", (unsigned long long)(ns / 1000000));
    return 0;
}

int
lh_cli_env_bytes(const char *cmd, const char *opt, const char *v, uint64_t max, char *out,
                 size_t len, lh_err_t *err)
{
    uint64_t bytes;
    if (lh_cli_value(cmd, opt, v, 1, 0, max, &bytes, err) < 0) {
        return LH_EINVAL;
    }
    snprintf(out, len, "%llu", (unsigned long long)bytes);
    return 0;
}

int
lh_record_check(const char *cmd, lh_record_opts_t *r, lh_err_t *err)
{
    unsigned long depth;
    r->n_env = 0;
    if (r->depth) {
        if (lh_cli_parse_uint("--depth", r->depth, 1, 256, &depth, err) < 0) {
            return LH_EINVAL;
        }
        r->env_name[r->n_env] = "LEAKHOUND_DEPTH";
        snprintf(r->env_value[r->n_env++], sizeof r->env_value[0], "%lu", depth);
    }
    if (r->unwind) {
        if (strcmp(r->unwind, "table") != 0 && strcmp(r->unwind, "libunwind") != 0 &&
            strcmp(r->unwind, "fp") != 0) {
            return lh_err_set(err, LH_EINVAL, "%s: unknown unwinder '%s' (table, libunwind or "
                              "fp)", cmd, r->unwind);
        }
        r->env_name[r->n_env] = "LEAKHOUND_UNWIND";
        snprintf(r->env_value[r->n_env++], sizeof r->env_value[0], "%s", r->unwind);
    }
    if (r->sample_rate) {
        r->env_name[r->n_env] = "LEAKHOUND_SAMPLE_RATE";
        if (lh_cli_env_bytes(cmd, "--sample-rate", r->sample_rate, 1ull << 40,
                             r->env_value[r->n_env++], sizeof r->env_value[0], err) < 0) {
            return LH_EINVAL;
        }
    }
    if (r->snap_every) {
        r->env_name[r->n_env] = "LEAKHOUND_SNAPSHOT_EVERY_MS";
        if (lh_cli_env_ms(cmd, "--snapshot-every", r->snap_every, 86400000,
                          r->env_value[r->n_env++], sizeof r->env_value[0], err) < 0) {
            return LH_EINVAL;
        }
    }
    return 0;
}

volatile sig_atomic_t lh_cli_stop;

static void
on_stop_signal(int sig)
{
    (void)sig;
    lh_cli_stop = 1;
}

void
lh_cli_stop_catch(struct sigaction old[2])
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    lh_cli_stop = 0;
    sigaction(SIGINT, &sa, &old[0]);
    sigaction(SIGTERM, &sa, &old[1]);
}

void
lh_cli_stop_restore(const struct sigaction old[2])
{
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGTERM, &old[1], NULL);
}

int
lh_cli_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int
lh_cli_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

const void *
lh_cli_find_named(const void *rows, size_t n, size_t size, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        const char *const *row = (const void *)((const char *)rows + i * size);
        if (strcmp(*row, name) == 0) {
            return row;
        }
    }
    return NULL;
}

/* Parses "<digits>[.<digits>]" at s into an integer part and a fraction num/den; returns
 * the end, or NULL. */
static const char *
scaled_number(const char *s, uint64_t *intpart, uint64_t *frac_num, uint64_t *frac_den)
{
    const char *p = s;
    uint64_t v = 0, num = 0, den = 1;
    if (*p < '0' || *p > '9') {
        return NULL;
    }
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - 9) / 10) {
            return NULL;
        }
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9') {
            return NULL;
        }
        for (; *p >= '0' && *p <= '9'; p++) {
            if (den < 1000000000000ull) { /* 12 decimals are plenty */
                num = num * 10 + (uint64_t)(*p - '0');
                den *= 10;
            }
        }
    }
    *intpart = v;
    *frac_num = num;
    *frac_den = den;
    return p;
}

/* v + num/den, times mult, into *out; 0 or -1 on overflow. */
static int
scale(uint64_t v, uint64_t num, uint64_t den, uint64_t mult, uint64_t *out)
{
    if (mult && v > UINT64_MAX / mult) {
        return -1;
    }
    unsigned __int128 f = (unsigned __int128)num * mult / den;
    unsigned __int128 r = (unsigned __int128)v * mult + f;
    if (r > UINT64_MAX) {
        return -1;
    }
    *out = (uint64_t)r;
    return 0;
}

int
lh_parse_duration_ns(const char *s, uint64_t *ns)
{
    static const struct {
        const char *unit;
        uint64_t ns;
    } units[] = {{"ns", 1},         {"us", 1000},        {"ms", 1000000},
                 {"s", 1000000000}, {"m", 60000000000},   {"min", 60000000000},
                 {"h", 3600000000000}};
    uint64_t v, num, den;
    const char *p = s ? scaled_number(s, &v, &num, &den) : NULL;
    if (!p) {
        return LH_EINVAL;
    }
    if (!*p) {
        /* A bare number: only 0 needs no unit. */
        if (v || num) {
            return LH_EINVAL;
        }
        *ns = 0;
        return 0;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(p, units[i].unit) == 0) {
            return scale(v, num, den, units[i].ns, ns) < 0 ? LH_EINVAL : 0;
        }
    }
    return LH_EINVAL;
}

int
lh_parse_size_bytes(const char *s, uint64_t *bytes)
{
    uint64_t v, num, den, mult = 1;
    const char *p = s ? scaled_number(s, &v, &num, &den) : NULL;
    if (!p) {
        return LH_EINVAL;
    }
    static const char units[] = "bkmgt"; /* bytes, then powers of 1024 */
    const char *u = *p ? strchr(units, tolower((unsigned char)*p)) : units;
    if (!u) {
        return LH_EINVAL;
    }
    mult = 1ull << (10 * (u - units));
    if (*p && *p != 'b' && *p != 'B') {
        p++;
        /* "K", "KB", "KiB" (all binary) */
        if (strcmp(p, "iB") == 0 || strcmp(p, "B") == 0 || strcmp(p, "b") == 0) {
            p += strlen(p);
        }
    } else if (*p) {
        p++;
    }
    if (*p) {
        return LH_EINVAL;
    }
    uint64_t out;
    if (scale(v, num, den, mult, &out) < 0 || (mult == 1 && num)) {
        return LH_EINVAL; /* a fraction of a byte */
    }
    *bytes = out;
    return 0;
}

int
lh_parse_signal(const char *s)
{
    static const struct {
        const char *name;
        int sig;
    } names[] = {{"HUP", SIGHUP},   {"INT", SIGINT},       {"QUIT", SIGQUIT},   {"ILL", SIGILL},
                 {"TRAP", SIGTRAP}, {"ABRT", SIGABRT},     {"BUS", SIGBUS},     {"FPE", SIGFPE},
                 {"USR1", SIGUSR1}, {"SEGV", SIGSEGV},     {"USR2", SIGUSR2},   {"PIPE", SIGPIPE},
                 {"ALRM", SIGALRM}, {"TERM", SIGTERM},     {"CHLD", SIGCHLD},   {"CONT", SIGCONT},
                 {"TSTP", SIGTSTP}, {"TTIN", SIGTTIN},     {"TTOU", SIGTTOU},   {"URG", SIGURG},
                 {"XCPU", SIGXCPU}, {"XFSZ", SIGXFSZ},     {"VTALRM", SIGVTALRM},
                 {"PROF", SIGPROF}, {"WINCH", SIGWINCH},   {"IO", SIGIO},       {"PWR", SIGPWR},
                 {"SYS", SIGSYS},   {"KILL", SIGKILL},     {"STOP", SIGSTOP}};
    char up[32];
    size_t n = s ? strlen(s) : 0;
    int sig = -1;
    if (!n || n >= sizeof up) {
        return LH_EINVAL;
    }
    if (strcmp(s, "none") == 0 || strcmp(s, "0") == 0) {
        return 0;
    }
    for (size_t i = 0; i <= n; i++) {
        up[i] = (char)toupper((unsigned char)s[i]);
    }
    const char *p = strncmp(up, "SIG", 3) == 0 ? up + 3 : up;
    if (*p >= '0' && *p <= '9') {
        char *end;
        long v = strtol(p, &end, 10);
        sig = !*end && v > 0 && v < NSIG ? (int)v : -1;
    } else if (strncmp(p, "RTMIN+", 6) == 0 && p[6] >= '0' && p[6] <= '9') {
        char *end;
        long v = strtol(p + 6, &end, 10);
        /* v <= SIGRTMAX - SIGRTMIN, not SIGRTMIN + v <= SIGRTMAX: strtol saturates at
         * LONG_MAX and the sum would overflow (to glibc's internal signal 33). */
        sig = !*end && v <= SIGRTMAX - SIGRTMIN ? (int)(SIGRTMIN + v) : -1;
    } else if (strcmp(p, "RTMIN") == 0) {
        sig = SIGRTMIN;
    } else {
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            if (strcmp(p, names[i].name) == 0) {
                sig = names[i].sig;
            }
        }
    }
    if (sig < 0 || sig == SIGKILL || sig == SIGSTOP) {
        return LH_EINVAL;
    }
    return sig;
}
