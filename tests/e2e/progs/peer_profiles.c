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
#include <sys/mman.h>
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

/* -- lifecycle: blocks made before main and after it returned --------------------------- */

static void *g_ctor_kept;   /* freed by the atexit handler */
static pthread_key_t g_key; /* its destructor runs as the thread ends */
static int g_lifecycle;     /* the mode is lifecycle */

/* glibc passes the constructors main's arguments */
__attribute__((constructor)) static void
life_ctor(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "lifecycle") != 0) {
        return;
    }
    g_ctor_kept = malloc(111);   /* freed at exit by life_atexit */
    g_sink = (uintptr_t)malloc(222); /* lost before main starts */
}

NOINLINE static void
life_atexit(void)
{
    if (!g_lifecycle) {
        return;
    }
    g_sink = (uintptr_t)malloc(333); /* lost in an atexit handler */
    free(g_ctor_kept);
}

__attribute__((destructor)) static void
life_dtor(void)
{
    if (g_lifecycle) {
        g_sink = (uintptr_t)malloc(444); /* lost in a destructor, after the atexit handlers */
    }
}

static void
life_key_dtor(void *v)
{
    free(v);
    g_sink = (uintptr_t)malloc(555); /* lost in a thread-specific data destructor */
}

static void *
life_thread(void *arg)
{
    pthread_setspecific(g_key, malloc(66)); /* freed by life_key_dtor */
    return arg;
}

static int
lifecycle(void)
{
    pthread_t t;
    g_lifecycle = 1;
    if (atexit(life_atexit) != 0 || pthread_key_create(&g_key, life_key_dtor) != 0 ||
        pthread_create(&t, NULL, life_thread, NULL) != 0 || pthread_join(t, NULL) != 0) {
        return 1;
    }
    static void *kept;
    kept = malloc(777); /* reachable from a global at exit */
    g_sink = (uintptr_t)&kept;
    g_sink = 0;
    return 0;
}

/* -- mapped: a block whose only pointer lies in memory the program mapped itself ----------- */

static char *g_mapped; /* points inside the mapping, not at a block */

static int
mapped(void)
{
    void **m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        return 1;
    }
    m[4096 + 5] = malloc(999); /* reachable from the mapping, as Valgrind has it */
    g_mapped = (char *)m + 1;
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
    if (strcmp(mode, "lifecycle") == 0) {
        return lifecycle();
    }
    if (strcmp(mode, "mapped") == 0) {
        return mapped();
    }
    return 2;
}
