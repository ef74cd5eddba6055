/* leakhound - SPDX-License-Identifier: MIT
 *
 * rss_agent.c (e2e, the report's RSS line): allocates and frees one 32-byte block from
 * each of 2^17 different call stacks (a path of 17 left/right calls), so its heap stays
 * empty while the agent's table of stacks grows by tens of MiB in the same process. The
 * RSS the report compares with the heap is the program's: the agent's own memory is not
 * "memory outside malloc". Pauses let the ticker sample RSS before and after.
 */
#include <stdlib.h>
#include <time.h>

#define LEVELS 17

static volatile unsigned sink;

static void walk(unsigned path, int level);

__attribute__((noinline)) static void
left(unsigned path, int level)
{
    walk(path, level + 1);
    sink++;
}

__attribute__((noinline)) static void
right(unsigned path, int level)
{
    walk(path, level + 1);
    sink += 2;
}

__attribute__((noinline)) static void
walk(unsigned path, int level)
{
    if (level == LEVELS) {
        char *p = malloc(32); /* SITE: rss_leaf */
        if (p) {
            p[0] = (char)path;
            sink += (unsigned char)p[0];
        }
        free(p);
        return;
    }
    if (path & (1u << level)) {
        right(path, level);
    } else {
        left(path, level);
    }
}

static void
pause_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

int
main(void)
{
    pause_ms(300);
    for (unsigned path = 0; path < (1u << LEVELS); path++) {
        walk(path, 0);
    }
    pause_ms(300);
    return 0;
}
