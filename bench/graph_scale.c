/* leakhound - SPDX-License-Identifier: MIT
 *
 * graph_scale.c: the scale test of `leakhound shell` (issue 5): N live blocks (default 10
 * million) in a linked list of 32-byte nodes hanging off a global, snapshotted at exit.
 * Measure with:  leakhound run -o big.lht -- ./graph_scale 10000000
 *                /usr/bin/time -f '%e s %M KiB' leakhound shell big.lht -c 'summary'
 */
#include <stdio.h>
#include <stdlib.h>

typedef struct node {
    struct node *next;
    long value[3];
} node_t;

static node_t *g_head;

int
main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    for (long i = 0; i < n; i++) {
        node_t *x = malloc(sizeof *x);
        x->next = g_head;
        x->value[0] = i;
        g_head = x;
    }
    printf("%ld nodes\n", n);
    return 0;
}
