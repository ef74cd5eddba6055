/* leakhound - SPDX-License-Identifier: MIT
 *
 * config.c: LEAKHOUND_* environment variables, read once at init (getenv does not
 * allocate). In a setuid/setgid process (AT_SECURE) nothing from the environment is
 * trusted, so the agent stays off: a path chosen by the invoking user must never be
 * written with the privileges of the program.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "agent.h"
#include "format.h"
#include "sys.h"

static long
env_long(const char *name, long def, long lo, long hi)
{
    const char *s = getenv(name);
    if (!s || !*s) {
        return def;
    }
    long v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > hi) {
            lh_sys_log("ignoring bad value of ", name, "");
            return def;
        }
        v = v * 10 + (*s - '0');
    }
    if (v < lo || v > hi) {
        lh_sys_log("value out of range, ignoring ", name, "");
        return def;
    }
    return v;
}

int
lh_config_load(lh_config_t *cfg)
{
    if (getauxval(AT_SECURE)) {
        lh_sys_log("setuid/setgid program: not tracing (the environment is not trusted)", "",
                   "");
        return -1;
    }
    const char *out = getenv("LEAKHOUND_OUTPUT");
    lh_sys_strlcpy(cfg->output, out && *out ? out : "leakhound.%e.%p.lht", sizeof cfg->output);
    cfg->depth = (int)env_long("LEAKHOUND_DEPTH", 64, 1, LH_MAX_DEPTH);
    cfg->flush_ms = (int)env_long("LEAKHOUND_FLUSH_MS", 100, 1, 60000);
    cfg->buffer_bytes = (size_t)env_long("LEAKHOUND_BUFFER_KB", 64, 4, 16384) * 1024;
    const char *fe = getenv("LEAKHOUND_FOLLOW_EXEC");
    cfg->follow_exec = fe && *fe && strcmp(fe, "0") != 0;
    const char *uw = getenv("LEAKHOUND_UNWIND");
    cfg->unwind = LH_UNWIND_LIBUNWIND;
    if (uw && strcmp(uw, "fp") == 0) {
        cfg->unwind = LH_UNWIND_FP;
    } else if (uw && *uw && strcmp(uw, "libunwind") != 0) {
        lh_sys_log("unknown LEAKHOUND_UNWIND '", uw, "', using libunwind");
    }
    return 0;
}

void
lh_config_expand(const lh_config_t *cfg, pid_t pid, const char *prog, char *out, size_t len)
{
    size_t n = 0;
    char num[21];
    for (const char *p = cfg->output; *p && n + 1 < len; p++) {
        const char *ins = NULL;
        size_t ins_len = 0;
        if (p[0] == '%' && p[1] == 'p') {
            ins_len = lh_sys_fmt_u64(num, (uint64_t)pid);
            ins = num;
            p++;
        } else if (p[0] == '%' && p[1] == 'e') {
            ins = prog;
            ins_len = strlen(prog);
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            ins = "%";
            ins_len = 1;
            p++;
        }
        if (ins) {
            for (size_t i = 0; i < ins_len && n + 1 < len; i++) {
                out[n++] = ins[i];
            }
        } else {
            out[n++] = *p;
        }
    }
    out[n] = '\0';
}
