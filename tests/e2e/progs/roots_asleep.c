/* leakhound - SPDX-License-Identifier: MIT
 *
 * roots_asleep.c (e2e, issue 11): a pool thread asleep in read(2) whose stack still holds,
 * below its stack pointer, the address of a block it allocated and dropped. The worker
 * allocates asleep_stale_block (1111 bytes) 4 KiB down its stack (under deep()), keeps
 * only a masked copy, returns up, allocates asleep_live_block (2222 bytes) into a local of
 * its own frame and sleeps in read(2). main waits until /proc says the worker is in read,
 * takes the snapshot "asleep" and calls exit(0) with the worker still asleep.
 *
 * As Valgrind and LeakSanitizer scan another thread's stack from its stack pointer up:
 * asleep_stale_block is definitely lost (its address is only in dead frames: the worker's
 * returned calls and the allocator's), asleep_live_block reachable from the worker's stack.
 */
#define LH_WEAK_API
#include <leakhound.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MASK ((uintptr_t)0x6b6b6b6b6b6b6b6bull)

static int pipe_fds[2];
static atomic_int worker_tid;
static volatile uintptr_t handed; /* masked: not a pointer */

__attribute__((noinline)) static uintptr_t
asleep_stale_block(void)
{
    uintptr_t p = (uintptr_t)malloc(1111); /* SITE: asleep_stale_block */
    memset((void *)p, 7, 1111);
    return p ^ MASK;
}

/* Two frames of 2 KiB each between the worker and the allocation. */
__attribute__((noinline)) static uintptr_t
deep(int depth)
{
    volatile char pad[2048];
    pad[0] = (char)depth;
    pad[2047] = pad[0];
    if (depth > 0) {
        return deep(depth - 1);
    }
    return asleep_stale_block();
}

__attribute__((noinline)) static void *
asleep_live_block(void)
{
    void *p = malloc(2222); /* SITE: asleep_live_block */
    memset(p, 8, 2222);
    return p;
}

static void *
worker(void *arg)
{
    (void)arg;
    handed = deep(1);
    void *volatile mine = asleep_live_block();
    atomic_store(&worker_tid, (int)syscall(SYS_gettid));
    char byte;
    while (read(pipe_fds[0], &byte, 1) < 0) {
    }
    (void)mine;
    return NULL;
}

/* Whether thread tid is in read(2) now, as /proc/self/task/TID/syscall says. */
static int
in_read(int tid)
{
    char path[64], text[256], want[32];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
    snprintf(want, sizeof want, "%d ", (int)SYS_read);
    FILE *f = fopen(path, "r");
    if (!f) {
        return 0;
    }
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return strncmp(text, want, strlen(want)) == 0;
}

int
main(void)
{
    if (pipe(pipe_fds) != 0) {
        return 1;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0) {
        return 1;
    }
    int tid;
    while ((tid = atomic_load(&worker_tid)) == 0) {
        sched_yield();
    }
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 10000 && !in_read(tid); i++) {
        nanosleep(&ms, NULL);
    }
    handed = 0;
    if (lh_snapshot) {
        lh_snapshot("asleep");
    }
    exit(0); /* the worker still in read(2) */
}
