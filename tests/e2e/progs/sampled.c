/* leakhound - SPDX-License-Identifier: MIT
 *
 * sampled.c (e2e): known totals for sampling mode. 200,000 allocations of 1,000 bytes, all
 * freed, then 4,000 blocks of 4,096 bytes leaked: exact figures the sampled report must
 * estimate (run with --sample-rate 8K). calloc and realloc have their own fast paths in
 * sampling mode: 50,000 callocs and 50,000 blocks grown by realloc, all freed, then 1,000
 * blocks of 8 KiB leaked from each.
 */
#include <stdlib.h>
#include <string.h>

static void *volatile g_sink;
static void *g_kept[4000];
static void *g_kept_calloc[1000];
static void *g_kept_realloc[1000];

int
main(void)
{
    for (int i = 0; i < 200000; i++) {
        char *p = malloc(1000); /* SITE: churn */
        memset(p, i, 8);
        g_sink = p;
        free(p);
    }
    for (int i = 0; i < 4000; i++) {
        g_kept[i] = malloc(4096); /* LEAK: kept */
    }
    for (int i = 0; i < 50000; i++) {
        char *p = calloc(1, 2000); /* SITE: churn_calloc */
        g_sink = p;
        free(p);
    }
    for (int i = 0; i < 50000; i++) {
        char *p = malloc(100);
        p = realloc(p, 3000); /* SITE: churn_realloc */
        g_sink = p;
        free(p);
    }
    for (int i = 0; i < 1000; i++) {
        g_kept_calloc[i] = calloc(1, 8192); /* LEAK: kept_calloc */
    }
    for (int i = 0; i < 1000; i++) {
        g_kept_realloc[i] = realloc(malloc(64), 8192); /* LEAK: kept_realloc */
    }
    g_sink = g_kept;
    g_sink = g_kept_calloc;
    g_sink = g_kept_realloc;
    return 0;
}
