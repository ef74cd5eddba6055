/* leakhound - SPDX-License-Identifier: MIT
 *
 * reallocarray.c (e2e): reallocarray(NULL, 10, 12) leaks 120 bytes; a second
 * reallocarray grows a block to 30 x 12 = 360 bytes, which leaks too.
 */
#include <stdlib.h>

static void *g_keep[2];

int
main(void)
{
    g_keep[0] = reallocarray(NULL, 10, 12); /* LEAK: reallocarray_new */
    void *p = malloc(8); /* LEAK: reallocarray_seed */
    g_keep[1] = reallocarray(p, 30, 12); /* SITE: reallocarray_grow */
    if (g_keep[0] == NULL || g_keep[1] == NULL) {
        return 1;
    }
    g_keep[0] = g_keep[1] = NULL;
    return 0;
}
