/* leakhound - SPDX-License-Identifier: MIT
 *
 * peer_profiles.c (e2e, run_peer2.py): the behaviours the heap profilers' own test suites
 * check (heaptrack's, memray's, Valgrind massif's), one per mode (argv[1]), so that the
 * same binary gives the peer tool's answer and leakhound's. Each mode allocates from
 * functions of its own (noinline) so that each site is one line of this file. The answers
 * are in run_peer2.py.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Where results go so that the compiler keeps every allocation. */
volatile uintptr_t g_sink;

#define NOINLINE __attribute__((noinline))

/* -- temporary: freed by the thread's next call to the allocator, or not ------------------ */

NOINLINE static void
tmp_single(void)
{
    void *p = malloc(64); /* temporary: freed at once */
    g_sink = (uintptr_t)p;
    free(p);
}

NOINLINE static void
tmp_pair(void)
{
    void *a = malloc(32); /* not temporary: b was made after it */
    void *b = malloc(48); /* not temporary: a was freed before it */
    g_sink = (uintptr_t)a ^ (uintptr_t)b;
    free(a);
    free(b);
}

NOINLINE static void *
tmp_kept(void)
{
    return malloc(24); /* not temporary: freed after other calls */
}

NOINLINE static void
tmp_in_thread_one(void)
{
    char *p = malloc(100); /* temporary, in its thread, whatever main does meanwhile */
    p[0] = 1;
    g_sink = (uintptr_t)p;
    free(p);
}

static void *
tmp_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < 50; i++) {
        tmp_in_thread_one();
    }
    return NULL;
}

static int
temporary(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, tmp_thread, NULL) != 0) {
        return 1;
    }
    void *kept[10];
    for (int i = 0; i < 100; i++) {
        tmp_single();
    }
    for (int i = 0; i < 10; i++) {
        tmp_pair();
        kept[i] = tmp_kept();
    }
    for (int i = 0; i < 10; i++) {
        free(kept[i]);
    }
    return pthread_join(t, NULL) != 0;
}

/* -- peak: the heap's high-water mark and the stacks live there ---------------------------- */

NOINLINE static void *
peak_main_block(void)
{
    return calloc(3000, 100); /* 300000 bytes, live at the peak */
}

NOINLINE static void *
peak_thread_block(void)
{
    return malloc(200000); /* grows to 400000 in peak_grow: live at the peak */
}

NOINLINE static void *
peak_grow(void *p)
{
    return realloc(p, 400000);
}

NOINLINE static void *
peak_after(void)
{
    return malloc(350000); /* after the peak: 650000 live, less than 700000 */
}

NOINLINE static void *
peak_left(void)
{
    return malloc(10); /* the one block left at exit */
}

static void *
peak_thread(void *arg)
{
    char *p = peak_grow(peak_thread_block());
    if (p) {
        memset(p, 1, 400000);
    }
    free(p);
    return arg;
}

static int
peak(void)
{
    pthread_t t;
    char *a = peak_main_block();
    if (pthread_create(&t, NULL, peak_thread, NULL) != 0 || pthread_join(t, NULL) != 0) {
        return 1;
    }
    char *c = peak_after();
    g_sink = (uintptr_t)a ^ (uintptr_t)c;
    free(a);
    free(c);
    g_sink = (uintptr_t)peak_left();
    return 0;
}

/* -- allocations: calls to the allocator per site, whatever their size or fate ----------- */

NOINLINE static void
calls_churn(void)
{
    void *p = malloc(16); /* 1000 calls, each freed */
    g_sink = (uintptr_t)p;
    free(p);
}

NOINLINE static void *
calls_kept(void)
{
    return calloc(10, 100); /* 10 calls, kept to the end */
}

NOINLINE static void *
calls_grow(void *p, size_t n)
{
    return realloc(p, n); /* 5 calls: the first is realloc(NULL, n) */
}

static int
allocations(void)
{
    void *kept[10], *g = NULL;
    for (int i = 0; i < 1000; i++) {
        calls_churn();
    }
    for (int i = 0; i < 10; i++) {
        kept[i] = calls_kept();
    }
    for (int i = 1; i <= 5; i++) {
        g = calls_grow(g, (size_t)i * 1000);
    }
    for (int i = 0; i < 10; i++) {
        free(kept[i]);
    }
    free(g);
    return 0;
}

int
main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "temporary") == 0) {
        return temporary();
    }
    if (strcmp(mode, "peak") == 0) {
        return peak();
    }
    if (strcmp(mode, "allocations") == 0) {
        return allocations();
    }
    return 2;
}
