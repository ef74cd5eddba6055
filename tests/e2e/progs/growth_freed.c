/* leakhound - SPDX-License-Identifier: MIT
 *
 * growth_freed.c (e2e): a request log that only grows while the program runs and is freed
 * at shutdown, so nothing of it is "leaked at exit". Each of 500 requests starts with
 * lh_mark("request") and appends one 64-byte node; an lh_mark("done") follows the last
 * one, then the list is freed. Per request there is also churn, freed at once.
 * Expected: report --growth puts the node line first, +64 bytes (+1 block) per mark,
 * growing in 500 of 500 intervals; leaks (default --skip 1) finds 499 blocks of 64 bytes
 * in 499 of 499 intervals, 64 bytes per mark; the exit-time report shows no leak here.
 */
#include <stdlib.h>
#include <string.h>

#define LH_WEAK_API
#include <leakhound.h>

typedef struct node {
    struct node *next;
    char text[56];
} node_t; /* 64 bytes */

static node_t *g_first;

static void
log_request(int i)
{
    node_t *n = malloc(sizeof(*n)); /* SITE: freed_list_node */
    if (n == NULL) {
        abort();
    }
    memset(n, 0, sizeof(*n));
    n->text[0] = (char)('a' + i % 26);
    n->next = g_first;
    g_first = n;
}

static void
churn(int i)
{
    for (int k = 0; k < 8; k++) {
        char *tmp = malloc(32 + (size_t)(i + k) % 200); /* SITE: freed_list_churn */
        if (tmp == NULL) {
            abort();
        }
        tmp[0] = 1;
        free(tmp);
    }
}

int
main(void)
{
    for (int i = 0; i < 500; i++) {
        if (lh_mark) {
            lh_mark("request");
        }
        churn(i);
        log_request(i);
    }
    if (lh_mark) {
        lh_mark("done");
    }
    while (g_first != NULL) {
        node_t *next = g_first->next;
        free(g_first);
        g_first = next;
    }
    return 0;
}
