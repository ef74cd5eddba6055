/* leakhound - SPDX-License-Identifier: MIT
 *
 * snap_delta.c: a deterministic heap that changes a little between snapshots, for the
 * delta snapshot tests (run_graph.py delta_*): a list of 4000 nodes of 992 bytes hangs
 * from g_list, each node pointing to 60 nodes before it, and 200 small blocks hang from
 * g_keep. Snapshot s1; then every 100th node is
 * unlinked and freed, g_keep[0..9] are dropped (definitely lost) and a ring of 50 blocks
 * is made and dropped; s2; then bytes of 40 nodes change and the list is cut after node
 * 2000 (the rest: lost); s3; then (argv[1]) that many snapshots "same" of the same heap;
 * then the program exits (the exit snapshot). Before each change
 * it waits for the snapshot children to finish, so every snapshot after the first can
 * refer to the one before it, whatever the machine's load.
 */
#define LH_WEAK_API
#include <dirent.h>
#include <leakhound.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "snapwait.h"

typedef struct node {
    struct node *next;
    struct node *refs[60]; /* earlier nodes: the list's tail is reached from its head only */
    char payload[504];
} node_t;

node_t *g_list;
void *g_keep[200];
static void *ring[50];

int
main(int argc, char **argv)
{
    node_t **tail = &g_list;
    node_t **made = malloc(4000 * sizeof *made);
    unsigned seed = 12345;
    for (int i = 0; i < 4000; i++) {
        node_t *n = calloc(1, sizeof *n);
        memset(n->payload, 'a' + i % 26, sizeof n->payload);
        for (int j = 0; i && j < 60; j++) {
            seed = seed * 1103515245u + 12345u;
            n->refs[j] = made[(seed >> 8) % (unsigned)i];
        }
        made[i] = n;
        *tail = n;
        tail = &n->next;
    }
    free(made);
    for (int i = 0; i < 200; i++) {
        g_keep[i] = malloc(64);
        memset(g_keep[i], 0, 64);
    }
    lh_snapshot("s1");
    wait_snapshot_children();

    int k = 0;
    for (node_t **p = &g_list; *p; k++) {
        if (k % 100 == 99) {
            node_t *dead = *p;
            *p = dead->next;
            free(dead);
        } else {
            p = &(*p)->next;
        }
    }
    for (int i = 0; i < 10; i++) {
        g_keep[i] = NULL;
    }
    for (int i = 0; i < 50; i++) {
        ring[i] = malloc(48);
    }
    for (int i = 0; i < 50; i++) {
        *(void **)ring[i] = ring[(i + 1) % 50];
    }
    memset(ring, 0, sizeof ring);
    lh_snapshot("s2");
    wait_snapshot_children();

    k = 0;
    for (node_t *n = g_list; n; n = n->next, k++) {
        if (k % 50 == 7) {
            n->payload[100] = 'Z';
        }
        if (k == 2000) {
            n->next = NULL; /* the rest of the list: lost */
        }
    }
    lh_snapshot("s3");
    wait_snapshot_children();
    /* argv[1]: that many more snapshots of the same heap (the rewrite bound's test) */
    int more = argc > 1 ? atoi(argv[1]) : 0;
    for (int i = 0; i < more; i++) {
        lh_snapshot("same");
        wait_snapshot_children();
    }
    return 0;
}
