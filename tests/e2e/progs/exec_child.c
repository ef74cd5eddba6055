/* leakhound - SPDX-License-Identifier: MIT
 *
 * exec_child.c (e2e): started by exec_parent. Leaks 3 blocks of 48 bytes, prints
 * "exec_child: preload=yes" or "=no" (whether libleakhound is in its LD_PRELOAD) and
 * exits with status 3.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *g_keep[3];

int
main(void)
{
    for (int i = 0; i < 3; i++) {
        g_keep[i] = malloc(48); /* LEAK: exec_child */
    }
    const char *preload = getenv("LD_PRELOAD");
    const char *msg = (preload != NULL && strstr(preload, "libleakhound") != NULL)
                          ? "exec_child: preload=yes\n"
                          : "exec_child: preload=no\n";
    ssize_t rc = write(1, msg, strlen(msg));
    (void)rc;
    memset(g_keep, 0, sizeof(g_keep));
    return 3;
}
