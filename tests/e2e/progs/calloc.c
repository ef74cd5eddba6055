/* leakhound - SPDX-License-Identifier: MIT
 *
 * calloc.c (e2e): calloc(7, 24) three times, never freed: 3 blocks of 168 bytes (504).
 * A second calloc site is freed. Also checks that the memory really is zeroed.
 */
#include <stdlib.h>

static void *g_keep[3];

int
main(void)
{
    for (int i = 0; i < 3; i++) {
        unsigned char *p = calloc(7, 24); /* LEAK: calloc_leak */
        if (p == NULL) {
            return 1;
        }
        for (int j = 0; j < 7 * 24; j++) {
            if (p[j] != 0) {
                return 1;
            }
        }
        g_keep[i] = p;
    }
    for (int i = 0; i < 50; i++) {
        void *q = calloc((size_t)i + 1, 16); /* SITE: calloc_freed */
        free(q);
    }
    g_keep[0] = g_keep[1] = g_keep[2] = NULL;
    return 0;
}
