/* leakhound - SPDX-License-Identifier: MIT
 *
 * graph_handlers.c (e2e, `leakhound shell`): known reference graphs at the exit snapshot.
 *
 *   - g_emitter -> 48-byte emitter (emitter_new) -> 32 KiB handler array (emitter_on's
 *     realloc: 4096 pointers) -> 4096 handlers of 48 bytes (handler_new): reachable;
 *     g_emitter retains 48 + 32768 + 4096 * 48 = 229424 bytes.
 *   - three lone nodes stored in g_last one after the other: the first two lost their last
 *     pointer when it was overwritten: 2 x 32 bytes definitely lost (lone_new).
 *   - a 10-node chain whose head pointer was cleared: head definitely lost, 9 indirectly
 *     (chain_new, 16 bytes each).
 *   - a ring of 5 reference-counted objects (refs 1 each, from the ring itself) whose
 *     owner dropped it without a release: lost as a whole, 1 definitely + 4 indirectly lost
 *     (obj_new, 56 bytes each).
 *   - a 64-byte buffer known only by g_cursor = buffer + 16: possibly lost (buffer_new).
 *   - a 40-byte block tagged "config_t" with lh_tag, held by g_config: reachable.
 */
#define LH_WEAK_API
#include <leakhound.h>
#include <stdlib.h>
#include <string.h>

typedef struct handler {
    void (*fn)(void);
    long id;
    char pad[32];
} handler_t; /* 48 bytes */

typedef struct emitter {
    handler_t **handlers;
    size_t n, cap;
    char name[24];
} emitter_t; /* 48 bytes */

typedef struct node {
    struct node *next;
    long value;
} node_t; /* 16 bytes */

typedef struct obj {
    int refs;
    struct obj *next;
    char data[40];
} obj_t; /* 56 bytes */

static emitter_t *g_emitter;
static void *g_last;
static node_t *g_chain;
static obj_t *g_ring;
static char *g_cursor;
static void *g_config;

static void
on_event(void)
{
}

__attribute__((noinline)) static emitter_t *
emitter_new(void)
{
    return calloc(1, sizeof(emitter_t)); /* SITE: emitter_new */
}

__attribute__((noinline)) static void
emitter_on(emitter_t *e, handler_t *h)
{
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 16;
        e->handlers = realloc(e->handlers, e->cap * sizeof *e->handlers); /* SITE: emitter_on */
    }
    e->handlers[e->n++] = h;
}

__attribute__((noinline)) static handler_t *
handler_new(long id)
{
    handler_t *h = malloc(sizeof *h); /* SITE: handler_new */
    h->fn = on_event;
    h->id = id;
    return h;
}

__attribute__((noinline)) static void *
lone_new(void)
{
    return calloc(1, 32); /* SITE: lone_new */
}

__attribute__((noinline)) static node_t *
chain_new(node_t *next, long v)
{
    node_t *n = malloc(sizeof *n); /* SITE: chain_new */
    n->next = next;
    n->value = v;
    return n;
}

__attribute__((noinline)) static obj_t *
obj_new(void)
{
    obj_t *o = calloc(1, sizeof *o); /* SITE: obj_new */
    o->refs = 1;
    return o;
}

__attribute__((noinline)) static char *
buffer_new(void)
{
    return calloc(1, 64); /* SITE: buffer_new */
}

__attribute__((noinline)) static void
build(void)
{
    g_emitter = emitter_new();
    for (long i = 0; i < 4096; i++) {
        emitter_on(g_emitter, handler_new(i));
    }
    for (int i = 0; i < 3; i++) {
        g_last = lone_new(); /* the previous one loses its last pointer */
    }
    for (long i = 0; i < 10; i++) {
        g_chain = chain_new(g_chain, i);
    }
    g_chain = NULL;
    obj_t *o[5];
    for (int i = 0; i < 5; i++) {
        o[i] = obj_new();
    }
    for (int i = 0; i < 5; i++) {
        o[i]->next = o[(i + 1) % 5];
    }
    g_ring = o[0];
    g_ring = NULL; /* dropped without a release: the refcounts keep the cycle */
    memset(o, 0, sizeof o);
    g_cursor = buffer_new() + 16;
    g_config = malloc(40); /* SITE: config */
    if (lh_tag) {
        lh_tag(g_config, "config_t");
    }
}

/* Stale copies of pointers in dead stack slots would be seen as references (a
 * conservative scan, as Valgrind's): overwrite the stack area the work used. */
__attribute__((noinline)) static void
scrub_stack(void)
{
    volatile char area[64 * 1024];
    memset((char *)area, 0, sizeof area);
}

int
main(void)
{
    build();
    scrub_stack();
    return 0;
}
