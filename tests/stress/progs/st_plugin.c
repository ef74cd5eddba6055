/* leakhound - SPDX-License-Identifier: MIT
 * st_plugin.c: the library st_dlopen loads and unloads in a loop. */
#include <stdlib.h>

__attribute__((noinline)) void st_plugin_alloc(void **out, int round);

void
st_plugin_alloc(void **out, int round)
{
    out[0] = malloc(32 + (size_t)(round % 7));
    out[1] = calloc(4, 100);
    out[2] = malloc(1000);
}
