/* leakhound - SPDX-License-Identifier: MIT
 *
 * preload.c: the LD_PRELOAD front-end's process life cycle: the constructor that reads the
 * configuration and starts the recorder, the exit handler that ends the trace, the
 * signal handlers (stopsig.h), and which programs the target executes are traced (agent.h
 * lh_follow: by default its own exec chain, so a wrapper is seen through).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "config.h"
#include "format.h"
#include "output.h"
#include "recorder.h"
#include "shims.h"
#include "stopsig.h"
#include "ticker.h"

/* Takes this library out of LD_PRELOAD in place (no allocation), so programs the target
 * executes are not traced unless --follow-exec asked for it. */
static void
strip_preload(void)
{
    extern char **environ;
    for (char **ep = environ; ep && *ep; ep++) {
        if (strncmp(*ep, "LD_PRELOAD=", 11) != 0) {
            continue;
        }
        char *s = *ep + 11;
        char *w = s;
        char *p = s;
        while (*p) {
            while (*p == ':' || *p == ' ') {
                p++;
            }
            char *tok = p;
            while (*p && *p != ':' && *p != ' ') {
                p++;
            }
            size_t len = (size_t)(p - tok);
            if (!len) {
                continue;
            }
            const char *base = tok;
            for (char *c = tok; c < p; c++) {
                if (*c == '/') {
                    base = c + 1;
                }
            }
            if ((size_t)(p - base) == strlen("libleakhound.so") &&
                memcmp(base, "libleakhound.so", (size_t)(p - base)) == 0) {
                continue;
            }
            if (w != s) {
                *w++ = ':';
            }
            memmove(w, tok, len);
            w += len;
        }
        *w = '\0';
    }
}

/* exit() runs on_exit/atexit handlers in reverse order of registration. Ours is registered
 * in the constructor, before __libc_start_main registers the loader's destructor pass, so it
 * runs after every ELF destructor and C++ static destructor of the program (and after our
 * own destructor): the last frees are recorded, and the exit status is known. */
static int on_exit_registered;

LH_REALIGN static void
at_exit(int status, void *arg)
{
    (void)arg;
    lh_g.exit_status = status;
    lh_g.have_exit_status = 1;
    lh_recorder_finish(LH_EXIT_NORMAL, status);
    lh_recorder_exit_status(LH_EXIT_NORMAL, status);
}

__attribute__((constructor)) LH_REALIGN static void
lh_ctor(void)
{
    if (atomic_load(&lh_g.state) == LH_ST_UNINIT) {
        lh_shims_resolve();
    }
    if (atomic_load(&lh_g.state) != LH_ST_RESOLVED) {
        return;
    }
    lh_tls.guard = 1;
    if (lh_config_load(&lh_g.cfg) != 0) {
        goto off;
    }
    if (lh_g.cfg.is_descendant) {
        /* Started by the traced program (a shell's command, a worker it spawned): not on
         * the traced line, and neither is anything it starts. */
        strip_preload();
        lh_output_index_untraced();
        goto off;
    }
    if (lh_recorder_init() != 0) {
        goto off; /* said why */
    }
    lh_shims_sampling();
    on_exit_registered = on_exit(at_exit, NULL) == 0;
    if (lh_g.cfg.follow_exec == LH_FOLLOW_NONE) {
        strip_preload();
    }
    lh_recorder_begin();
    lh_recorder_lsan_supp();
    /* After the ticker started (it blocks every signal): the stop signals and the snapshot
     * signal, where the program has no disposition of its own (stopsig.h). */
    lh_stopsig_install(lh_shims_real_sigaction(), lh_g.cfg.snapshot_signal);
    lh_guard_leave();
    return;
off:
    atomic_store(&lh_g.state, LH_ST_STOPPED);
    lh_tls.guard = 0;
}

__attribute__((destructor)) LH_REALIGN static void
lh_dtor(void)
{
    if (!on_exit_registered) {
        lh_recorder_finish(LH_EXIT_NORMAL, 0);
    }
}
