/* leakhound - SPDX-License-Identifier: MIT
 *
 * lost_nodes.c (e2e): a definite leak. A buggy list removal unlinks nodes without freeing
 * them. Ten 48-byte nodes are made; the four with value % 3 == 0 are lost, the six others
 * are freed. Expected: the node_new() line leaks 4 blocks, 192 bytes, of 10 allocations.
 */
#include <stdlib.h>

typedef struct node {
    struct node *next;
    long value;
    char payload[32];
} node_t; /* 48 bytes on x86-64 */

static node_t *
node_new(long value, node_t *next)
{
    node_t *n = malloc(sizeof(*n)); /* LEAK: lost_node */
    if (n == NULL) {
        abort();
    }
    n->value = value;
    n->next = next;
    n->payload[0] = '\0';
    return n;
}

/* The bug: unlinks every node whose value is a multiple of 3 but forgets to free it. */
static node_t *
remove_multiples_of_three(node_t *head)
{
    node_t **link = &head;
    while (*link != NULL) {
        node_t *n = *link;
        if (n->value % 3 == 0) {
            *link = n->next;
        } else {
            link = &n->next;
        }
    }
    return head;
}

static void
list_free(node_t *head)
{
    while (head != NULL) {
        node_t *next = head->next;
        free(head);
        head = next;
    }
}

int
main(void)
{
    node_t *head = NULL;
    for (long v = 9; v >= 0; v--) {
        head = node_new(v, head);
    }
    head = remove_multiples_of_three(head);
    list_free(head);
    return 0;
}
