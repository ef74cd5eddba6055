/* leakhound - SPDX-License-Identifier: MIT
 *
 * snap_target.c: a process holding known blocks, for `leakhound snapshot -p`
 * (tests/e2e/run_snapshot.py). It allocates, frees some blocks so that tcache, fastbins and
 * bins are not empty, keeps the rest, prints what it holds (counts, usable sizes, a few
 * addresses) and glibc's own mallinfo2() right before it waits, then waits for a line on
 * standard input: "grow" allocates 250 more known blocks and reports again, "quit" exits.
 *
 * Known sets (usable size == requested size: n + 8 is a multiple of 16):
 *   small:  1000 x 1000 bytes, main arena, reachable from g_small
 *   list:   6000 nodes of 200 bytes, a linked list from g_list (more pointers in the heap
 *           than one record of the contents file holds)
 *   lost:   37 x 424 bytes, their only pointers dropped (unreachable)
 *   big:    10 x 300000 bytes, mmapped chunks, reachable from g_big
 *   thread: 500 x 2024 bytes allocated by a second thread (its own arena), from g_thread
 * plus 20 x 24 bytes held by a static array (separators between freed blocks).
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct node {
    struct node *next;
    char pad[192];
};

void *g_small[1250];
size_t g_n_small;
struct node *g_list;
void *g_big[10];
void *g_thread[500];
void *g_sep[20];
static pthread_barrier_t g_done;

static void *
worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 500; i++) {
        g_thread[i] = malloc(2024);
        memset(g_thread[i], 0x22, 2024);
    }
    /* Leave some of this thread's frees in its tcache and its arena's fastbins. */
    void *tmp[40];
    for (int i = 0; i < 40; i++) {
        tmp[i] = malloc(40);
    }
    for (int i = 0; i < 40; i++) {
        free(tmp[i]);
    }
    pthread_barrier_wait(&g_done);
    pthread_barrier_wait(&g_done); /* stays alive (its stack is a root) until exit */
    return NULL;
}

static void
report(const char *what)
{
    size_t small_bytes = 0, big_bytes = 0, thr_bytes = 0, list_n = 0, list_bytes = 0;
    for (size_t i = 0; i < g_n_small; i++) {
        small_bytes += malloc_usable_size(g_small[i]);
    }
    for (int i = 0; i < 10; i++) {
        big_bytes += malloc_usable_size(g_big[i]);
    }
    for (int i = 0; i < 500; i++) {
        thr_bytes += malloc_usable_size(g_thread[i]);
    }
    for (struct node *n = g_list; n; n = n->next) {
        list_n++;
        list_bytes += malloc_usable_size(n);
    }
    struct mallinfo2 mi = mallinfo2();
    printf("%s pid %d\n", what, (int)getpid());
    printf("small %zu %zu first %p\n", g_n_small, small_bytes, g_small[0]);
    printf("list %zu %zu head %p\n", list_n, list_bytes, (void *)g_list);
    printf("big 10 %zu first %p\n", big_bytes, g_big[0]);
    printf("thread 500 %zu first %p\n", thr_bytes, g_thread[0]);
    printf("mallinfo2 arena %zu uordblks %zu fordblks %zu hblks %zu hblkhd %zu\n", mi.arena,
           mi.uordblks, mi.fordblks, mi.hblks, mi.hblkhd);
    printf("ready\n");
    fflush(stdout);
}

int
main(void)
{
    pthread_barrier_init(&g_done, NULL, 2);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_barrier_wait(&g_done);

    for (g_n_small = 0; g_n_small < 1000; g_n_small++) {
        g_small[g_n_small] = malloc(1000);
        memset(g_small[g_n_small], 0x11, 1000);
    }
    for (int i = 0; i < 6000; i++) {
        struct node *n = malloc(sizeof *n); /* 200 bytes */
        n->next = g_list;
        g_list = n;
    }
    for (int i = 0; i < 37; i++) {
        void *p = malloc(424);
        memset(p, 0x33, 424);
        p = NULL; /* dropped */
    }
    for (int i = 0; i < 10; i++) {
        g_big[i] = malloc(300000);
    }
    /* Frees into tcache (7 per size), fastbins (the rest of the small ones) and the
     * unsorted/small bins (5000 bytes, beyond tcache's reach after 7). */
    void *tmp[60];
    for (int i = 0; i < 60; i++) {
        tmp[i] = malloc(24);
    }
    for (int i = 0; i < 60; i += 1) {
        free(tmp[i]);
    }
    void *mid[20];
    for (int i = 0; i < 20; i++) {
        mid[i] = malloc(5000);
        g_sep[i] = malloc(16); /* keeps the freed 5000s from merging */
    }
    for (int i = 0; i < 20; i++) {
        free(mid[i]);
    }
    report("phase1");
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "grow", 4) == 0) {
            for (int i = 0; i < 250; i++) {
                g_small[g_n_small++] = malloc(1000);
            }
            report("phase2");
        } else if (strncmp(line, "quit", 4) == 0) {
            break;
        }
    }
    pthread_barrier_wait(&g_done);
    pthread_join(t, NULL);
    return 0;
}
