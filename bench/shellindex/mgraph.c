/* leakhound - SPDX-License-Identifier: MIT
 *
 * mgraph.c: about N live blocks (default 1 million) for the shell index benchmark (run.sh):
 * 8 linked lists (N/4), a binary tree with a name per node (N/4), a chained hash table with
 * a key per entry (N/4) and a lost list (N/4: definitely + indirectly lost).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef struct lnode { struct lnode *next; long v; } lnode_t;
typedef struct tnode { struct tnode *l, *r; long key; char *name; } tnode_t;
typedef struct hent { struct hent *next; char *key; long val; } hent_t;
static lnode_t *g_lists[8];
static tnode_t *g_tree;
static hent_t **g_table;
static unsigned long g_nbuckets = 65536;
static tnode_t *insert(tnode_t *t, long k) {
    tnode_t **p = &t, *root = t;
    while (*p) p = k < (*p)->key ? &(*p)->l : &(*p)->r;
    *p = calloc(1, sizeof **p); (*p)->key = k; (*p)->name = malloc(16);
    snprintf((*p)->name, 16, "n%ld", k);
    return root ? root : *p;
}
static void make_list(int i, long n) { for (long k = 0; k < n; k++) { lnode_t *x = malloc(sizeof *x); x->next = g_lists[i]; x->v = k; g_lists[i] = x; } }
static lnode_t *volatile g_leak;
static void leak_list(long n) { lnode_t *h = NULL; for (long k = 0; k < n; k++) { lnode_t *x = malloc(sizeof *x); x->next = h; h = x; g_leak = h; } g_leak = NULL; }
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000; /* total blocks ~ n */
    for (int i = 0; i < 8; i++) make_list(i, n / 32);          /* n/4 */
    unsigned long s = 12345;
    for (long k = 0; k < n / 8; k++) { s = s * 6364136223846793005ul + 1; g_tree = insert(g_tree, (long)(s >> 20)); } /* n/4 */
    g_table = calloc(g_nbuckets, sizeof *g_table);
    for (long k = 0; k < n / 8; k++) { hent_t *e = malloc(sizeof *e); e->key = malloc(24); snprintf(e->key, 24, "key%ld", k);
        unsigned long h = (unsigned long)k * 2654435761u % g_nbuckets; e->next = g_table[h]; g_table[h] = e; e->val = k; } /* n/4 */
    leak_list(n / 4);
    printf("done\n");
    return 0;
}
