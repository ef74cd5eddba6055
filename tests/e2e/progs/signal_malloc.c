/* leakhound - SPDX-License-Identifier: MIT
 *
 * signal_malloc.c (e2e): signal handlers that call malloc (not AS-safe, but common).
 * Phase 1: raise(SIGUSR1) five times from outside malloc; the handler leaks a 64-byte
 * block each time: 5 blocks, 320 bytes. Phase 2: a thread sends SIGUSR2 to the main
 * thread 300 times while it churns malloc/free; that handler mallocs and frees. Nothing
 * may deadlock or crash, and phase 2 must not add leaks to the program's own lines.
 *
 * The handler's size (1000 bytes) is one no churn line uses, and main frees one such block
 * before the sender starts: glibc then serves the handler from its own tcache bin, which
 * the interrupted malloc/free never touches. With a size the main loop shares, a handler
 * that lands inside glibc's malloc corrupts the heap by itself: run bare, with no agent,
 * the program crashed 50 times in 1,500 runs. What the test is about is the agent: a
 * handler landing inside one of its hooks.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HANDLER_SIZE 1000 /* above every main_churn size, within glibc's tcache */

static void *g_blocks[5];
static volatile sig_atomic_t g_n_blocks;
static atomic_int g_n_usr2;
static atomic_int g_sender_done;
static pthread_t g_main_thread;

static void
on_usr1(int sig)
{
    (void)sig;
    if (g_n_blocks < 5) {
        g_blocks[g_n_blocks] = malloc(64); /* LEAK: in_handler */
        g_n_blocks++;
    }
}

static void
on_usr2(int sig)
{
    (void)sig;
    void *p = malloc(HANDLER_SIZE); /* SITE: handler_churn */
    free(p);
    atomic_fetch_add(&g_n_usr2, 1);
}

static void *
sender(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 200000}; /* 0.2 ms */
    for (int i = 0; i < 300; i++) {
        pthread_kill(g_main_thread, SIGUSR2);
        nanosleep(&ts, NULL);
    }
    atomic_store(&g_sender_done, 1);
    return NULL;
}

static int
install(int sig, void (*fn)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = fn;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return sigaction(sig, &sa, NULL);
}

int
main(void)
{
    if (install(SIGUSR1, on_usr1) != 0 || install(SIGUSR2, on_usr2) != 0) {
        return 1;
    }
    for (int i = 0; i < 5; i++) {
        raise(SIGUSR1);
    }
    if (g_n_blocks != 5) {
        return 1;
    }

    g_main_thread = pthread_self();
    free(malloc(HANDLER_SIZE)); /* SITE: handler_bin */
    pthread_t tid;
    if (pthread_create(&tid, NULL, sender, NULL) != 0) {
        return 1;
    }
    while (!atomic_load(&g_sender_done)) {
        for (int i = 0; i < 100; i++) { /* 8..800 bytes: below HANDLER_SIZE's bin */
            free(malloc((size_t)(8 + i * 8))); /* SITE: main_churn */
        }
    }
    pthread_join(tid, NULL);
    memset(g_blocks, 0, sizeof(g_blocks));
    return atomic_load(&g_n_usr2) > 0 ? 0 : 1;
}
