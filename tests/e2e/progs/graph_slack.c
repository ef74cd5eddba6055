/* leakhound - SPDX-License-Identifier: MIT
 *
 * graph_slack.c (e2e.graph.slack): a pointer left in a chunk's slack must not keep a lost
 * block alive. A 24-byte block holds, at +16, a pointer into a 2 KiB buffer, and is freed;
 * the 17-byte string malloc then returns in the same chunk (glibc's tcache) overwrites
 * bytes 0-16 only, so the word at +16 is the old pointer with its low byte zeroed: still
 * inside the buffer, but 7 of its 8 bytes lie beyond the 17 asked for. The buffer's only
 * real pointer is then dropped: definitely lost (2048 B in 1 block, as Valgrind says),
 * not possibly lost through the slack. The string stays reachable from g_name.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static char *g_name;
static char *g_buffer;

int
main(void)
{
    g_buffer = malloc(2048); /* SITE: slack_buffer */
    memset(g_buffer, 0, 2048);
    void **old = malloc(24);
    old[0] = old[1] = NULL;
    old[2] = g_buffer + 0x200; /* low byte zeroed: still in [+0x100, +0x200] */
    free(old);
    g_name = malloc(17); /* SITE: slack_name */
    memcpy(g_name, "0123456789abcdef", 17);
    g_buffer = NULL;
    return 0;
}
