/* leakhound - SPDX-License-Identifier: MIT
 *
 * clean.c (e2e): frees everything it allocates, through every entry point. The report
 * must say 0 bytes and 0 blocks leaked, over at least 2000 allocations and frees. Uses
 * no stdio (whose buffers glibc never frees).
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

int
main(void)
{
    void *ring[64] = {0};
    for (int i = 0; i < 2000; i++) {
        int slot = (i * 37) % 64;
        free(ring[slot]);
        ring[slot] = malloc((size_t)(1 + (i * 13) % 700));
    }
    for (int i = 0; i < 64; i++) {
        free(ring[i]);
    }
    char *s = calloc(10, 10);
    s = realloc(s, 1000);
    s = realloc(s, 10);
    free(s);
    void *a = NULL;
    if (posix_memalign(&a, 256, 1000) != 0) {
        return 1;
    }
    free(a);
    free(aligned_alloc(64, 128));
    free(memalign(16, 40));
    free(valloc(10));
    char *d = strdup("leakhound");
    free(d);
    free(NULL);
    return 0;
}
