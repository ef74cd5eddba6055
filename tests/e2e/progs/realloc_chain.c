/* leakhound - SPDX-License-Identifier: MIT
 *
 * realloc_chain.c (e2e): one block grown by realloc three times, from four different
 * lines. A block keeps its identity through realloc (issue 10): the leak is one object at
 * the line that created it, the malloc: 1 block of 5000 bytes, grown by realloc at the
 * three other lines, none of which leaks on its own. realloc(NULL, 48), which is a malloc,
 * leaks 1 block of 48 bytes. Three reallocs of a live block in total.
 */
#include <stdlib.h>
#include <string.h>

static char *g_final;
static char *g_from_null;

static char *
grow(char *p, size_t size)
{
    char *q = realloc(p, size); /* SITE: chain_grow */
    if (q == NULL) {
        abort();
    }
    return q;
}

int
main(void)
{
    char *p = malloc(16); /* LEAK: chain_malloc */
    if (p == NULL) {
        return 1;
    }
    strcpy(p, "chain");
    p = realloc(p, 100); /* SITE: chain_r1 */
    if (p == NULL) {
        return 1;
    }
    p = grow(p, 1000);
    p = realloc(p, 5000); /* SITE: chain_final */
    if (p == NULL || strcmp(p, "chain") != 0) {
        return 1;
    }
    g_final = p;
    g_from_null = realloc(NULL, 48); /* LEAK: realloc_null */
    g_final = NULL;
    g_from_null = NULL;
    return 0;
}
