/* leakhound - SPDX-License-Identifier: MIT
 *
 * sampled.c (e2e): known totals for sampling mode. 200,000 allocations of 1,000 bytes, all
 * freed, then 4,000 blocks of 4,096 bytes leaked: exact figures the sampled report must
 * estimate (run with --sample-rate 8K).
 */
#include <stdlib.h>
#include <string.h>

static void *volatile g_sink;
static void *g_kept[4000];

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
    g_sink = g_kept;
    return 0;
}
