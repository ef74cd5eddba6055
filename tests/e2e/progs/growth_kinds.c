/* leakhound - SPDX-License-Identifier: MIT
 *
 * growth_kinds.c (e2e, issue 10): one site for each shape the growth model tells apart, so
 * that every view can be asked the same question about the same trace.
 *
 * `growth_kinds marks`: 200 iterations, each starting with lh_mark("iter"):
 *   - gk_leak:   48 bytes kept every iteration (steady growth: a leak);
 *   - gk_string: one string created before the loop and appended to (realloc, +32 bytes)
 *                every iteration at gk_append: one growing object at the creating line;
 *   - gk_step:   32 KiB made once, in iteration 50, and kept (a one-time step);
 *   - gk_thread: a 16 KiB buffer made by each of 4 threads, started in iterations 10..13
 *                (per-thread buffers);
 *   - gk_cache:  an LRU cache bounded at 100 entries of 256 bytes: one entry added per
 *                iteration, the oldest evicted once it is full (it fills over the first
 *                half and stays full: saturated);
 *   - gk_peak:   64 KiB kept in each of the iterations 120..139, all freed in 140 (a
 *                transient peak).
 *   After the loop the step, the thread buffers and the cache are freed; the leak (200
 *   blocks, 9600 bytes) and the string (1 block, 16 + 200 x 32 = 6416 bytes) are not.
 * `growth_kinds survivors`: the same 200 iterations without lh_mark and without the frees
 *   after the loop (a server stopped as it ran): report --growth slices the run by its
 *   allocations; the leak grows, the cache (its newest 100 entries live) does not.
 * `growth_kinds teardown`: 100 iterations keeping 48 bytes each (gk_leak), lh_snapshot
 *   ("tick") every 10 iterations; then a teardown that frees the leak in 3 parts, with a
 *   snapshot after each (periodic snapshots taken during teardown).
 * `growth_kinds once`: 30 iterations keeping 48 bytes each, one lh_snapshot("mid") after
 *   the 10th, then exit with all 30 kept: a single snapshot taken while running (the exit
 *   snapshot is the only end of an interval).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define LH_WEAK_API
#include <leakhound.h>

#define ITERS 200
#define CACHE_MAX 100

typedef struct node {
    struct node *next;
    char pad[40];
} node_t; /* 48 bytes */

static node_t *g_leak;
static char *g_string;
static size_t g_string_len;
static char *g_step;
static char *g_thread_buf[4];
static char *g_cache[CACHE_MAX];
static char *g_peak[20];

static void
keep_leak(void)
{
    node_t *n = malloc(sizeof *n); /* LEAK: gk_leak */
    if (!n) {
        abort();
    }
    memset(n, 0, sizeof *n);
    n->next = g_leak;
    g_leak = n;
}

static void
append(void)
{
    char *s = realloc(g_string, g_string_len + 32); /* SITE: gk_append */
    if (!s) {
        abort();
    }
    memset(s + g_string_len, 'x', 32);
    g_string = s;
    g_string_len += 32;
}

static void *
thread_main(void *arg)
{
    char *b = malloc(16384); /* SITE: gk_thread */
    if (!b) {
        abort();
    }
    memset(b, 1, 64);
    g_thread_buf[(size_t)arg] = b;
    return NULL;
}

static void
cache_put(int i)
{
    int slot = i % CACHE_MAX;
    free(g_cache[slot]); /* evict the oldest once full */
    g_cache[slot] = malloc(256); /* SITE: gk_cache */
    if (!g_cache[slot]) {
        abort();
    }
    memset(g_cache[slot], i, 16);
}

static void
run_marks(int marks)
{
    g_string = malloc(16); /* LEAK: gk_string */
    if (!g_string) {
        abort();
    }
    memset(g_string, 'a', 16);
    g_string_len = 16;
    for (int i = 0; i < ITERS; i++) {
        if (marks) {
            lh_mark("iter");
        }
        keep_leak();
        append();
        if (i == 50) {
            g_step = malloc(32768); /* SITE: gk_step */
            if (!g_step) {
                abort();
            }
            memset(g_step, 2, 64);
        }
        if (i >= 10 && i < 14) {
            pthread_t t;
            if (pthread_create(&t, NULL, thread_main, (void *)(size_t)(i - 10)) != 0) {
                abort();
            }
            pthread_join(t, NULL);
        }
        cache_put(i); /* from iteration 100 on, full: one evicted, one added */
        if (i >= 120 && i < 140) {
            g_peak[i - 120] = malloc(65536); /* SITE: gk_peak */
            if (!g_peak[i - 120]) {
                abort();
            }
            memset(g_peak[i - 120], 3, 64);
        }
        if (i == 140) {
            for (int k = 0; k < 20; k++) {
                free(g_peak[k]);
                g_peak[k] = NULL;
            }
        }
    }
    if (!marks) {
        return;
    }
    free(g_step);
    for (int k = 0; k < 4; k++) {
        free(g_thread_buf[k]);
    }
    for (int k = 0; k < CACHE_MAX; k++) {
        free(g_cache[k]);
    }
}

static void
run_teardown(void)
{
    for (int i = 0; i < 100; i++) {
        keep_leak();
        if (i % 10 == 9) {
            lh_snapshot("tick");
        }
    }
    /* teardown: free the list in 3 parts, a periodic snapshot after each */
    for (int part = 0; part < 3; part++) {
        for (int k = 0; k < 34 && g_leak; k++) {
            node_t *n = g_leak->next;
            free(g_leak);
            g_leak = n;
        }
        lh_snapshot("tick");
    }
}

static void
run_once(void)
{
    for (int i = 0; i < 30; i++) {
        keep_leak();
        if (i == 9) {
            lh_snapshot("mid");
        }
    }
}

int
main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "teardown") == 0) {
        run_teardown();
    } else if (argc > 1 && strcmp(argv[1], "once") == 0) {
        run_once();
    } else if (argc > 1 && strcmp(argv[1], "survivors") == 0) {
        run_marks(0);
    } else {
        run_marks(1);
    }
    return 0;
}
