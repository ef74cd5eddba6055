/* leakhound - SPDX-License-Identifier: MIT
 *
 * emitter.c: the event emitter of the demo (see emitter.h). Handlers live in one array of
 * pointers per emitter, grown by doubling with realloc; each handler is its own malloc'd
 * record, as a closure would be in a garbage-collected runtime.
 */
#include "emitter.h"

#include <stdlib.h>
#include <string.h>

typedef struct handler {
    const char *event;
    emitter_handler_fn fn;
    void *ctx;
    unsigned long n_calls; /* how often it ran, for the curious */
    int is_once;           /* reserved: Node's once(); always 0 here */
    char label[20];        /* short copy of the event name for debugging dumps */
} handler_t;

struct emitter {
    handler_t **handlers;
    size_t n_handlers;
    size_t cap_handlers;
};

emitter_t *
emitter_new(void)
{
    return calloc(1, sizeof(emitter_t));
}

void
emitter_free(emitter_t *em)
{
    if (em == NULL) {
        return;
    }
    for (size_t i = 0; i < em->n_handlers; i++) {
        free(em->handlers[i]);
    }
    free(em->handlers);
    free(em);
}

int
emitter_on(emitter_t *em, const char *event, emitter_handler_fn fn, void *ctx)
{
    if (em->n_handlers == em->cap_handlers) {
        size_t cap = em->cap_handlers ? 2 * em->cap_handlers : 4;
        handler_t **grown = realloc(em->handlers, cap * sizeof(*grown));
        if (grown == NULL) {
            return -1;
        }
        em->handlers = grown;
        em->cap_handlers = cap;
    }
    handler_t *h = malloc(sizeof(*h)); /* the handler record: one per emitter_on() call */
    if (h == NULL) {
        return -1;
    }
    h->event = event;
    h->fn = fn;
    h->ctx = ctx;
    h->n_calls = 0;
    h->is_once = 0;
    strncpy(h->label, event, sizeof(h->label) - 1);
    h->label[sizeof(h->label) - 1] = '\0';
    em->handlers[em->n_handlers++] = h;
    return 0;
}

size_t
emitter_emit(emitter_t *em, const char *event, void *arg)
{
    size_t n_called = 0;
    for (size_t i = 0; i < em->n_handlers; i++) {
        handler_t *h = em->handlers[i];
        if (strcmp(h->event, event) == 0) {
            h->n_calls++;
            h->fn(h->ctx, event, arg);
            n_called++;
        }
    }
    return n_called;
}

size_t
emitter_listener_count(const emitter_t *em, const char *event)
{
    size_t n = 0;
    for (size_t i = 0; i < em->n_handlers; i++) {
        if (strcmp(em->handlers[i]->event, event) == 0) {
            n++;
        }
    }
    return n;
}
