/* leakhound - SPDX-License-Identifier: MIT
 *
 * roots_mmap.c (e2e): memory the program maps itself is a root, as Valgrind has it. The
 * only pointer to each block, by marker:
 *   mmap_private   (601 B) in an anonymous private mapping: reachable, from "[mmap ...]"
 *   mmap_shared    (602 B) in an anonymous shared mapping: reachable
 *   mmap_moved     (603 B) in a mapping mremap moved (MREMAP_FIXED) over another the
 *                  program had mapped without write access: reachable
 *   mmap_noaccess  (604 B) in a mapping made PROT_NONE afterwards: definitely lost (no
 *                  tool reads it)
 *   mmap_unmapped  (605 B) in a mapping unmapped since: definitely lost
 *   mmap_stack     (606 B) a local of a thread running on a stack the program mapped
 *                  (pthread_attr_setstack): reachable, from that thread's stack
 * The program takes the snapshot "mapped" (and Valgrind its leak check, vg_check.h) while
 * the thread waits, then ends with the mappings in place.
 */
#define LH_WEAK_API
#include <leakhound.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "threadwait.h"
#include "vg_check.h"

#define PAGE 4096
#define STACK (256 * 1024)

static void **g_private, **g_shared, **g_moved;

__attribute__((noinline)) static void *
block(size_t n)
{
    void *p = malloc(n); /* SITE: mmap_block */
    memset(p, 7, n);
    return p;
}

static void **
anon(int prot, int flags)
{
    void *p = mmap(NULL, PAGE, prot, flags | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void *
on_mapped_stack(void *arg)
{
    (void)arg;
    void *volatile mine = block(606);
    tw_hold();
    free(mine);
    return NULL;
}

int
main(void)
{
    g_private = anon(PROT_READ | PROT_WRITE, MAP_PRIVATE);
    g_shared = anon(PROT_READ | PROT_WRITE, MAP_SHARED);
    void **src = anon(PROT_READ | PROT_WRITE, MAP_PRIVATE);
    void **dst = mmap(NULL, 2 * PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void **closed = anon(PROT_READ | PROT_WRITE, MAP_PRIVATE);
    void **gone = anon(PROT_READ | PROT_WRITE, MAP_PRIVATE);
    void *stack = mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!g_private || !g_shared || !src || dst == MAP_FAILED || !closed || !gone ||
        stack == MAP_FAILED) {
        return 1;
    }
    g_private[10] = block(601);
    g_shared[20] = block(602);
    src[30] = block(603);
    g_moved = mremap(src, PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
    closed[40] = block(604);
    gone[50] = block(605);
    if (g_moved == MAP_FAILED || mprotect(closed, PAGE, PROT_NONE) != 0 ||
        munmap(gone, PAGE) != 0) {
        return 1;
    }
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setstack(&attr, stack, STACK);
    if (pthread_create(&t, &attr, on_mapped_stack, NULL) != 0) {
        return 1;
    }
    tw_wait_ready();
    lh_snapshot("mapped");
    vg_leak_check();
    tw_release();
    pthread_join(t, NULL);
    return 0;
}
