/* leakhound - SPDX-License-Identifier: MIT
 *
 * roots_stripped.c (e2e): the globals of a stripped program, as Debian ships its
 * servers (lighttpd, without its -dbgsym package). Built stripped (-s), with bind-now
 * RELRO (-z now: .data starts the writable page, where the linker's labels data_start
 * and __data_start sit) and -rdynamic (one global exported, so named without debug
 * information). Three blocks, each held by one pointer only: in a static of .bss
 * (111 bytes), in a static of .data (222), in the exported g_stripped_exported (999).
 * All three are still reachable at exit, as Valgrind says; the two statics have no name
 * left, so their root is the program's data, not a label the linker put at its start.
 */
#include <stdlib.h>
#include <string.h>

/* used: the stores must stay, although nothing in the program reads them back */
static char *bss_cache __attribute__((used));
static struct {
    int n;
    char *p;
} data_cache __attribute__((used)) = {1, NULL};
char *g_stripped_exported;

int
main(void)
{
    bss_cache = malloc(111);
    data_cache.p = malloc(222);
    g_stripped_exported = malloc(999);
    if (!bss_cache || !data_cache.p || !g_stripped_exported) {
        return 1;
    }
    memset(bss_cache, 1, 111);
    memset(data_cache.p, 2, 222);
    memset(g_stripped_exported, 3, 999);
    return data_cache.n - 1;
}
