/* leakhound - SPDX-License-Identifier: MIT
 *
 * underscore_exit.c (e2e): leaks 4 blocks of 77 bytes (308) and leaves with _exit(0),
 * so no atexit handler or destructor runs. The trace must still hold the blocks.
 */
#include <stdlib.h>
#include <unistd.h>

static void *g_keep[4];

int
main(void)
{
    for (int i = 0; i < 4; i++) {
        g_keep[i] = malloc(77); /* LEAK: before_exit */
    }
    for (int i = 0; i < 100; i++) {
        free(malloc(32)); /* SITE: churn_before_exit */
    }
    _exit(0);
}
