/* leakhound - SPDX-License-Identifier: MIT
 *
 * growing_list.c (e2e): a list that only grows and is never freed (still reachable from a
 * global at exit, which leakhound counts as leaked). Expected: list_new() leaks 1 block of
 * 24 bytes; list_push() leaks 100 blocks of 64 bytes (6400 bytes).
 */
#include <stdlib.h>
#include <string.h>

typedef struct item {
    struct item *next;
    char text[56];
} item_t; /* 64 bytes */

typedef struct list {
    item_t *first;
    item_t *last;
    size_t n_items;
} list_t; /* 24 bytes */

static list_t *g_log;

static list_t *
list_new(void)
{
    list_t *l = malloc(sizeof(*l)); /* LEAK: grow_head */
    if (l == NULL) {
        abort();
    }
    memset(l, 0, sizeof(*l));
    return l;
}

static void
list_push(list_t *l, const char *text)
{
    item_t *it = malloc(sizeof(*it)); /* LEAK: grow_item */
    if (it == NULL) {
        abort();
    }
    it->next = NULL;
    strncpy(it->text, text, sizeof(it->text) - 1);
    it->text[sizeof(it->text) - 1] = '\0';
    if (l->last != NULL) {
        l->last->next = it;
    } else {
        l->first = it;
    }
    l->last = it;
    l->n_items++;
}

int
main(void)
{
    g_log = list_new();
    for (int i = 0; i < 100; i++) {
        list_push(g_log, "request served");
    }
    return g_log->n_items == 100 ? 0 : 1;
}
