/* leakhound - SPDX-License-Identifier: MIT
 *
 * config.c: LEAKHOUND_* environment variables, read once at init (getenv does not
 * allocate). In a setuid/setgid process (AT_SECURE) nothing from the environment is
 * trusted, so the agent stays off: a path chosen by the invoking user must never be
 * written with the privileges of the program.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "config.h"
#include "format.h"
#include "sys.h"

/* Where the settings come from: the environment (LD_PRELOAD) or the variables the attach
 * command passed (lh_config_parse). */
static const char *
env_get(const char *name)
{
    return getenv(name);
}

static const char *(*get)(const char *name) = env_get;

static long
env_long(const char *name, long def, long lo, long hi)
{
    const char *s = get(name);
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

/* The value of variable name among names[0..n) (its index, the enum's value), def when it
 * is unset or empty; an unknown value is logged ("unknown NAME 'VALUE', using DEFAULT")
 * and gives def. */
static int
env_choice(const char *name, const char *const *names, int n, int def)
{
    const char *v = get(name);
    char head[96] = "unknown ", tail[64] = "', using ";
    if (!v || !*v) {
        return def;
    }
    for (int i = 0; i < n; i++) {
        if (strcmp(v, names[i]) == 0) {
            return i;
        }
    }
    size_t k = lh_sys_strlcpy(head + 8, name, sizeof head - 10) + 8;
    lh_sys_strlcpy(head + k, " '", sizeof head - k);
    lh_sys_strlcpy(tail + 9, names[def], sizeof tail - 9);
    lh_sys_log(head, v, tail);
    return def;
}

/* "USR2", "SIGUSR2", "12", or "none"/"0". Unset means SIGUSR2: a snapshot on demand without
 * code changes (a program that installs its own SIGUSR2 handler later simply replaces ours). */
static int
parse_signal(const char *s)
{
    static const struct {
        const char *name;
        int sig;
    } names[] = {{"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"HUP", SIGHUP},   {"PWR", SIGPWR},
                 {"URG", SIGURG},   {"WINCH", SIGWINCH}, {"PROF", SIGPROF}, {"VTALRM", SIGVTALRM}};
    if (!s) {
        return SIGUSR2;
    }
    if (!*s || strcmp(s, "none") == 0 || strcmp(s, "0") == 0) {
        return 0;
    }
    if (strncmp(s, "SIG", 3) == 0) {
        s += 3;
    }
    if (*s >= '0' && *s <= '9') {
        int v = 0;
        for (; *s >= '0' && *s <= '9' && v < 1000; s++) {
            v = v * 10 + (*s - '0');
        }
        if (!*s && v > 0 && v < NSIG && v != SIGKILL && v != SIGSTOP) {
            return v;
        }
    } else {
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            if (strcmp(s, names[i].name) == 0) {
                return names[i].sig;
            }
        }
        if (strncmp(s, "RTMIN+", 6) == 0 && s[6] >= '0' && s[6] <= '9') {
            int v = SIGRTMIN + (s[6] - '0');
            return v <= SIGRTMAX ? v : 0;
        }
    }
    lh_sys_log("ignoring unknown LEAKHOUND_SNAPSHOT_SIGNAL ", s, "");
    return 0;
}

/* "524288", "512K", "1M", "2G" -> bytes; 0 on error. */
static uint64_t
parse_size(const char *s)
{
    uint64_t v = 0;
    if (!s || !*s) {
        return 0;
    }
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > (1ull << 50)) {
            return 0;
        }
        v = v * 10 + (uint64_t)(*s - '0');
    }
    switch (*s) {
    case 'k': case 'K': v <<= 10; s++; break;
    case 'm': case 'M': v <<= 20; s++; break;
    case 'g': case 'G': v <<= 30; s++; break;
    default: break;
    }
    if (*s == 'B' || *s == 'b') {
        s++;
    }
    return *s ? 0 : v;
}

static void load(lh_config_t *cfg);

int
lh_config_load(lh_config_t *cfg)
{
    if (getauxval(AT_SECURE)) {
        lh_sys_log("setuid/setgid program: not tracing (the environment is not trusted)", "",
                   "");
        return -1;
    }
    get = env_get;
    load(cfg);
    return 0;
}

/* The attach command's variables, one NAME=VALUE per line, copied here (no allocation). */
static char vars_buf[8192];

static const char *
vars_get(const char *name)
{
    size_t n = strlen(name);
    for (const char *p = vars_buf; *p; p += strlen(p) + 1) {
        if (strncmp(p, name, n) == 0 && p[n] == '=') {
            return p + n + 1;
        }
    }
    return NULL;
}

int
lh_config_parse(lh_config_t *cfg, const char *vars)
{
    size_t n = strlen(vars);
    if (n + 2 > sizeof vars_buf) {
        lh_sys_log("attach settings too long; not tracing", "", "");
        return -1;
    }
    memcpy(vars_buf, vars, n);
    vars_buf[n] = vars_buf[n + 1] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (vars_buf[i] == '\n') {
            vars_buf[i] = '\0';
        }
    }
    get = vars_get;
    load(cfg);
    get = env_get;
    return 0;
}

static void
load(lh_config_t *cfg)
{
    const char *out = get("LEAKHOUND_OUTPUT");
    lh_sys_strlcpy(cfg->output, out && *out ? out : "leakhound.%e.%p.lht", sizeof cfg->output);
    cfg->depth = (int)env_long("LEAKHOUND_DEPTH", 64, 1, LH_MAX_DEPTH);
    cfg->flush_ms = (int)env_long("LEAKHOUND_FLUSH_MS", 100, 1, 60000);
    cfg->buffer_bytes = (size_t)env_long("LEAKHOUND_BUFFER_KB", 64, 4, 16384) * 1024;
    cfg->rss_ms = (int)env_long("LEAKHOUND_RSS_MS", 100, 0, 3600000);
    cfg->snapshot_every_ms = (int)env_long("LEAKHOUND_SNAPSHOT_EVERY_MS", 0, 0, 86400000);
    cfg->snapshot_growth = (uint64_t)env_long("LEAKHOUND_SNAPSHOT_ON_GROWTH", 0, 0, 1L << 50);
    cfg->snapshot_at_exit = (int)env_long("LEAKHOUND_SNAPSHOT_AT_EXIT", 1, 0, 1);
    cfg->snapshot_signal = parse_signal(get("LEAKHOUND_SNAPSHOT_SIGNAL"));
    const char *sr = get("LEAKHOUND_SAMPLE_RATE");
    cfg->sample_rate = parse_size(sr);
    if (sr && *sr && strcmp(sr, "0") != 0 && !cfg->sample_rate) {
        lh_sys_log("ignoring bad LEAKHOUND_SAMPLE_RATE '", sr, "'");
    }
    cfg->snapshot_delta = (int)env_long("LEAKHOUND_SNAPSHOT_DELTA", 1, 0, 1);
    cfg->snapshot_wp = (int)env_long("LEAKHOUND_SNAPSHOT_WP", 1, 0, 1);
    cfg->test_snapwp_verify = (int)env_long("LEAKHOUND_TEST_SNAPWP_VERIFY", 0, 0, 1);
    cfg->test_child_delay_ms =
        (int)env_long("LEAKHOUND_TEST_SNAPSHOT_CHILD_DELAY_MS", 0, 0, 60000);
    cfg->test_reg_hold_ms = (int)env_long("LEAKHOUND_TEST_REG_HOLD_MS", 0, 0, 999);
    cfg->test_child_maps = (int)env_long("LEAKHOUND_TEST_SNAPSHOT_CHILD_MAPS", 0, 0, 1);
    const char *sc = get("LEAKHOUND_SNAPSHOT_CONTENTS");
    static const char *const contents[] = {"none", "pointers", "full"}; /* lh_contents_mode */
    cfg->snapshot_contents_set = sc && *sc;
    cfg->snapshot_contents =
        env_choice("LEAKHOUND_SNAPSHOT_CONTENTS", contents, 3, LH_CONTENTS_POINTERS);
    const char *clk = get("LEAKHOUND_CLOCK");
    cfg->clock = -1;
    if (clk && strcmp(clk, "monotonic") == 0) {
        cfg->clock = 0;
    } else if (clk && strcmp(clk, "counter") == 0) {
        cfg->clock = 1;
    }
    const char *ix = get("LEAKHOUND_INDEX");
    lh_sys_strlcpy(cfg->index, ix && ix[0] == '/' ? ix : "", sizeof cfg->index);
    /* Every getenv before the setenv calls below: bash replaces getenv and setenv with its
     * own, and its getenv no longer sees the process environment once setenv ran. */
    const char *uv = get("LEAKHOUND_UNWIND_VERIFY");
    const char *fe = get("LEAKHOUND_FOLLOW_EXEC");
    cfg->follow_exec = LH_FOLLOW_MAIN;
    if (fe && (strcmp(fe, "0") == 0 || strcmp(fe, "none") == 0)) {
        cfg->follow_exec = LH_FOLLOW_NONE;
    } else if (fe && *fe && strcmp(fe, "main") != 0) {
        cfg->follow_exec = LH_FOLLOW_ALL;
    }
    /* Not for an attach (settings from lh_config_parse): its process execs nothing of
     * ours, and its environment is not ours to change. */
    if (cfg->follow_exec != LH_FOLLOW_NONE && get == env_get) {
        /* The first traced process of the line names itself; what it starts (fork+exec,
         * posix_spawn) inherits the name and knows it is not on the line. An exec keeps the
         * pid, so the real program behind a wrapper matches. */
        const char *mp = get("LEAKHOUND_MAIN_PID");
        char num[24];
        num[lh_sys_fmt_u64(num, (uint64_t)getpid())] = '\0';
        if (mp && mp[0] == '~' && strlen(mp) >= strlen(num)) {
            /* `leakhound run` left room for the pid (cli/cmd_run.c): written in place, in
             * the string the kernel copied to the stack, so the environment array stays
             * the kernel's. putenv would replace it with an array malloc'd before
             * recording starts, no block of the trace: a program that stores heap
             * pointers in environ[] (nginx's setproctitle moves the strings to the heap)
             * would have them ignored, and the blocks would look lost. */
            memcpy((char *)(uintptr_t)mp, num, strlen(num) + 1);
        } else if (!mp || !*mp) {
            /* putenv of our own static string, not setenv: setenv keeps its strings in a
             * tsearch tree rooted in libc, and a root node malloc'd here, before recording
             * starts, is no block of the trace: the nodes the program's own setenv calls
             * add to that tree would look lost (issue 11: git). */
            static char main_pid_env[48] = "LEAKHOUND_MAIN_PID=";
            size_t k = strlen(main_pid_env);
            lh_sys_strlcpy(main_pid_env + k, num, sizeof main_pid_env - k);
            putenv(main_pid_env); /* constructor: nothing is recorded yet */
        } else if (strcmp(mp, num) != 0) {
            cfg->not_main = 1;
            cfg->is_descendant = cfg->follow_exec == LH_FOLLOW_MAIN;
        }
    }
    /* This program image, told apart from the other images of the same pid (an exec keeps
     * it); fork children keep their parent's. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    cfg->image_id = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    static const char *const unwinders[] = {"libunwind", "fp", "table"}; /* lh_unwind_kind */
    cfg->unwind = env_choice("LEAKHOUND_UNWIND", unwinders, 3, LH_UNWIND_TABLE);
    /* Every stack the table walks is also unwound by libunwind and compared (tests and
     * bench: the mismatch count goes into the END record). */
    cfg->unwind_verify = uv && *uv && strcmp(uv, "0") != 0 && cfg->unwind == LH_UNWIND_TABLE;
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
