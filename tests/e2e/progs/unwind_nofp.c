/* leakhound - SPDX-License-Identifier: MIT
 *
 * unwind_nofp.c (e2e, built -O2 -fomit-frame-pointer as distributions build): allocations
 * for the unwind table to walk and to be checked against libunwind
 * (LEAKHOUND_UNWIND_VERIFY): recursion 1 to 200 frames deep through frames of several
 * shapes (SP-based CFA, a 6 KB frame, alloca with an FP-based CFA), on four threads, inside
 * a library loaded with dlopen (unwind_nofp_lib.so, also without frame pointers), under a
 * frame of over 64 KiB (CFA = SP + 70000 and more, as unbound's packet handlers with their
 * 64 KiB buffers), and in a signal handler (whose frames the table leaves to libunwind).
 * Frees everything it allocates.
 *
 * Usage: unwind_nofp DIR_OF_LIB
 */
#include <alloca.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind_nofp.h"

static volatile int sink;
/* So the compiler cannot drop a malloc/free pair. Per thread: shared, another thread could
 * store its block between this thread's store and free, and both would free it (glibc then
 * aborted at thread exit, "double free or corruption (fasttop)", in 1 run of ~150 under the
 * agent, whose slower malloc widens the window). */
static __thread void *volatile escape;

__attribute__((noinline)) static void
bottom(void)
{
    void *p = malloc(24 + (size_t)(sink & 31));
    escape = p;
    sink += p != NULL;
    free(escape);
}

static int rec(int depth);

__attribute__((noinline)) static int
shape_big(int depth)
{
    volatile char big[6000];
    big[0] = (char)depth;
    big[5999] = (char)depth;
    return rec(depth - 1) + big[0] + big[5999];
}

__attribute__((noinline)) static int
shape_alloca(int depth)
{
    /* cppcheck-suppress allocaCalled ; a dynamic frame is the point: its CFA is FP-based */
    char *buf = alloca(16 + (size_t)(depth & 7) * 24);
    memset(buf, depth, 16);
    sink += buf[3];
    return rec(depth - 1) + buf[5];
}

__attribute__((noinline)) static int
rec(int depth)
{
    if (depth <= 0) {
        bottom();
        return sink;
    }
    int r;
    switch (depth % 3) {
    case 0: r = shape_big(depth); break;
    case 1: r = shape_alloca(depth); break;
    default: r = rec(depth - 1); break;
    }
    sink += r; /* not a tail call */
    return r + 1;
}

/* A frame of over 64 KiB: its CFA offset did not fit the table's rule, and each of its
 * stacks went to libunwind. */
__attribute__((noinline)) static int
shape_huge(int i)
{
    volatile char huge[70000];
    huge[0] = (char)i;
    huge[69999] = (char)i;
    bottom();
    return huge[0] + huge[69999];
}

static void
work(int seed)
{
    for (int i = 0; i < 400; i++) {
        rec((i * 7 + seed) % 200 + 1);
    }
}

static void *
thread_main(void *arg)
{
    work((int)(long)arg);
    return NULL;
}

static void
on_signal(int sig)
{
    (void)sig;
    bottom(); /* malloc in a handler: the walk meets __restore_rt's signal frame */
}

static void
lib_cb(void)
{
    bottom();
}

int
main(int argc, char **argv)
{
    work(0);
    pthread_t t[4];
    for (long i = 0; i < 4; i++) {
        if (pthread_create(&t[i], NULL, thread_main, (void *)(i + 1)) != 0) {
            return 1;
        }
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
    }
    for (int i = 0; i < 100; i++) {
        sink += shape_huge(i);
    }
    signal(SIGUSR1, on_signal);
    for (int i = 0; i < 50; i++) {
        raise(SIGUSR1);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/unwind_nofp_lib.so", argc > 1 ? argv[1] : ".");
    void *h = dlopen(path, RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    unwind_lib_fn_t fn = (unwind_lib_fn_t)dlsym(h, "unwind_lib_recurse");
    if (!fn) {
        return 1;
    }
    for (int i = 0; i < 300; i++) {
        fn(i % 60, lib_cb);
    }
    dlclose(h);
    printf("done %d\n", sink != 0);
    return 0;
}
