/* leakhound - SPDX-License-Identifier: MIT
 *
 * roots_hidden.c (e2e, issue 11): a thread the agent never sees start, as jemalloc starts
 * its background threads: with libc's own pthread_create, found with dlsym in libc's handle
 * (past any interposition), and never calling malloc. main allocates two blocks and hands
 * them over masked; the thread keeps the only pointers, one in a local of its stack
 * (hidden_stack_block, 2222 bytes), one in a __thread variable (hidden_tls_block, 3333
 * bytes), and blocks in read(2). main takes the snapshot "hidden" and calls exit(0).
 *
 * Both blocks are reachable, from that thread's stack and TLS, found in glibc's own thread
 * list (docs/FORMAT.md, "Roots"); Valgrind says still reachable too.
 */
#define LH_WEAK_API
#include <leakhound.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MASK ((uintptr_t)0x6b6b6b6b6b6b6b6bull)

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static int pipe_fds[2];
static atomic_int ready;
static volatile uintptr_t handed_stack, handed_tls;
static __thread void *volatile tls_slot;

__attribute__((noinline)) static uintptr_t
hidden_stack_block(void)
{
    uintptr_t p = (uintptr_t)malloc(2222); /* SITE: hidden_stack_block */
    memset((void *)p, 9, 2222);
    return p ^ MASK;
}

__attribute__((noinline)) static uintptr_t
hidden_tls_block(void)
{
    uintptr_t p = (uintptr_t)malloc(3333); /* SITE: hidden_tls_block */
    memset((void *)p, 10, 3333);
    return p ^ MASK;
}

static void *
hidden(void *arg)
{
    (void)arg;
    void *volatile mine = (void *)(handed_stack ^ MASK);
    tls_slot = (void *)(handed_tls ^ MASK);
    atomic_store(&ready, 1);
    char byte;
    while (read(pipe_fds[0], &byte, 1) < 0) {
    }
    (void)mine;
    return NULL;
}

int
main(void)
{
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    create_fn create = libc ? (create_fn)dlsym(libc, "pthread_create") : NULL;
    if (!create || pipe(pipe_fds) != 0) {
        return 1;
    }
    handed_stack = hidden_stack_block();
    handed_tls = hidden_tls_block();
    pthread_t t;
    if (create(&t, NULL, hidden, NULL) != 0) {
        return 1;
    }
    while (!atomic_load(&ready)) {
        sched_yield();
    }
    handed_stack = handed_tls = 0;
    if (lh_snapshot) {
        lh_snapshot("hidden");
    }
    exit(0); /* the thread still in read(2) */
}
