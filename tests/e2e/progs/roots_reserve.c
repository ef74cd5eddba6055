/* leakhound - SPDX-License-Identifier: MIT
 *
 * roots_reserve.c (e2e): a reservation of 1 TiB (MAP_NORESERVE, readable and writable, as
 * allocators and runtimes reserve address space) of which three pages were ever written.
 * The only pointer to the 607-byte block lies in one of them, at the middle of the
 * reservation; the 608-byte block has none. The snapshot "reserved" and the one at exit
 * must find the first reachable from "[mmap 0x...]" and the second definitely lost: the
 * snapshot reads the pages the program touched, not a terabyte of page flags.
 */
#define LH_WEAK_API
#include <leakhound.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PAGE 4096

static void *volatile g_sink;

__attribute__((noinline)) static void *
block(size_t n)
{
    void *p = malloc(n); /* SITE: reserve_block */
    memset(p, 7, n);
    return p;
}

int
main(void)
{
    size_t size = (size_t)1 << 40;
    char *r = mmap(NULL, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED) {
        return 77; /* no address space for it here */
    }
    r[0] = 1;
    r[size - 1] = 1;
    void *held = block(607);
    memcpy(r + size / 2 + 3 * PAGE + 64, &held, sizeof held);
    held = NULL;
    g_sink = block(608);
    g_sink = NULL;
    lh_snapshot("reserved");
    return 0;
}
