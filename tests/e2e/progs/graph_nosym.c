/* leakhound - SPDX-License-Identifier: MIT
 *
 * graph_nosym.c (e2e.graph.nosym): a program built as distributions ship one, without debug
 * information and stripped (no -g, linked -s): its frames have no file, no line and no name
 * but what the symbolizer makes up. Five strdup'ed copies are dropped (definitely lost,
 * 5 x 12 B), three kept in g_keep (still reachable, 3 x 12 B). A site is located at the
 * program's call, not at strdup in libc, and the shell groups its blocks by that location,
 * not under "?".
 */
#include <stdlib.h>
#include <string.h>

static char *g_keep[3];

int
main(void)
{
    for (int i = 0; i < 8; i++) {
        char *s = strdup("hello world");
        if (i < 3) {
            g_keep[i] = s;
        }
    }
    return 0;
}
