/* leakhound - SPDX-License-Identifier: MIT
 *
 * memalign.c (e2e): the aligned allocators, each leaking one block of a known size:
 * posix_memalign 100, aligned_alloc 256, memalign 72, valloc 300 bytes, and pvalloc 5000,
 * which glibc rounds up to whole pages: 8192 bytes, the block's size (LeakSanitizer says
 * 8192 too). Each is also checked for its alignment, and a freed posix_memalign block must
 * not show as a leak.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static void *g_keep[5];

static int
is_aligned(const void *p, size_t align)
{
    return p != NULL && ((uintptr_t)p % align) == 0;
}

int
main(void)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, 100) != 0) { /* LEAK: posix_memalign */
        return 1;
    }
    g_keep[0] = p;
    g_keep[1] = aligned_alloc(128, 256); /* LEAK: aligned_alloc */
    g_keep[2] = memalign(32, 72); /* LEAK: memalign */
    g_keep[3] = valloc(300); /* LEAK: valloc */
    g_keep[4] = pvalloc(5000); /* LEAK: pvalloc */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (!is_aligned(g_keep[0], 64) || !is_aligned(g_keep[1], 128) ||
        !is_aligned(g_keep[2], 32) || !is_aligned(g_keep[3], page) ||
        !is_aligned(g_keep[4], page) || malloc_usable_size(g_keep[4]) < 8192) {
        return 1;
    }
    for (int i = 0; i < 20; i++) {
        void *q = NULL;
        if (posix_memalign(&q, 4096, 64) != 0) { /* SITE: posix_memalign_freed */
            return 1;
        }
        free(q);
    }
    for (int i = 0; i < 5; i++) {
        g_keep[i] = NULL;
    }
    return 0;
}
