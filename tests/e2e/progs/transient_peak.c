/* leakhound - SPDX-License-Identifier: MIT
 *
 * transient_peak.c (e2e): a large transient peak that returns to baseline, late in the run
 * (so its least-squares slope alone is positive), next to a small steady growth. 300
 * requests, each starting with lh_mark("request"), then lh_mark("done"):
 *   - every request appends a 32-byte session record, freed at exit: grows 32 B/mark;
 *   - requests 200..249 each allocate 1 MiB and keep it; request 250 frees all 50 (a 50 MiB
 *     peak, gone again).
 * Expected: report --growth lists the session line as growing (+32 B per mark) and not the
 * peak; leaks lists no block of the peak.
 */
#include <stdlib.h>
#include <string.h>

#define LH_WEAK_API
#include <leakhound.h>

typedef struct session {
    struct session *next;
    char id[24];
} session_t; /* 32 bytes */

static session_t *g_sessions;
static char *g_cache[50];

static void
open_session(int i)
{
    session_t *s = malloc(sizeof(*s)); /* SITE: peak_steady */
    if (s == NULL) {
        abort();
    }
    memset(s, 0, sizeof(*s));
    s->id[0] = (char)i;
    s->next = g_sessions;
    g_sessions = s;
}

static void
warm_cache(int slot)
{
    g_cache[slot] = malloc(1 << 20); /* SITE: peak_transient */
    if (g_cache[slot] == NULL) {
        abort();
    }
    memset(g_cache[slot], 0, 4096);
}

int
main(void)
{
    for (int i = 0; i < 300; i++) {
        if (lh_mark) {
            lh_mark("request");
        }
        if (i >= 200 && i < 250) {
            warm_cache(i - 200);
        }
        if (i == 250) {
            for (int k = 0; k < 50; k++) {
                free(g_cache[k]);
            }
        }
        open_session(i);
    }
    if (lh_mark) {
        lh_mark("done");
    }
    while (g_sessions != NULL) {
        session_t *next = g_sessions->next;
        free(g_sessions);
        g_sessions = next;
    }
    return 0;
}
