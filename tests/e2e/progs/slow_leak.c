/* leakhound - SPDX-License-Identifier: MIT
 *
 * slow_leak.c (e2e): one small block lost every 100 requests, among heavy churn. 2000
 * requests, each starting with lh_mark("request"), then lh_mark("done"). Each request
 * allocates and frees 20 buffers of 16..1000 bytes; every 100th (i % 100 == 99) also loses
 * one 48-byte block.
 * Expected: 20 blocks of 48 bytes leak (960 bytes, also at exit). leaks --skip 0: 2000
 * intervals, the leak in 20 of them, 0.48 bytes (0.01 blocks) per mark; report --growth: the
 * leak line grows in 20 of 2000 intervals, about 0.48 bytes per mark; the churn does not.
 */
#include <stdlib.h>
#include <string.h>

#define LH_WEAK_API
#include <leakhound.h>

static void
handle(int i)
{
    char *bufs[20];
    for (int k = 0; k < 20; k++) {
        bufs[k] = malloc(16 + (size_t)((i * 31 + k * 97) % 985)); /* SITE: slow_churn */
        if (bufs[k] == NULL) {
            abort();
        }
        bufs[k][0] = (char)k;
    }
    if (i % 100 == 99) {
        char *lost = malloc(48); /* LEAK: slow_leak */
        if (lost == NULL) {
            abort();
        }
        memset(lost, 0, 48);
    }
    for (int k = 0; k < 20; k++) {
        free(bufs[k]);
    }
}

int
main(void)
{
    for (int i = 0; i < 2000; i++) {
        if (lh_mark) {
            lh_mark("request");
        }
        handle(i);
    }
    if (lh_mark) {
        lh_mark("done");
    }
    return 0;
}
