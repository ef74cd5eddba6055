/* leakhound - SPDX-License-Identifier: MIT
 *
 * emitter.h: a tiny event emitter in the style of Node's EventEmitter, for the demo.
 *
 * An emitter keeps, per event name, the handlers registered with emitter_on() in a growing
 * array and calls them in registration order from emitter_emit(). Nothing is ever removed
 * except by emitter_free(): that is the point of the demo (leaky_server.c), which registers
 * one more "error" handler on a long-lived shared emitter for every connection, the classic
 * Node "MaxListenersExceededWarning" leak. Not thread-safe.
 */
#ifndef LH_EXAMPLES_EMITTER_H
#define LH_EXAMPLES_EMITTER_H

#include <stddef.h>

typedef struct emitter emitter_t;

/* A handler gets the context it was registered with and the argument given to emit. */
typedef void (*emitter_handler_fn)(void *ctx, const char *event, void *arg);

/* Returns a new, empty emitter, or NULL when out of memory. Free it with emitter_free(). */
emitter_t *emitter_new(void);

/* Frees the emitter and every handler registered on it. NULL is a no-op. */
void emitter_free(emitter_t *em);

/* Registers fn (with ctx) for event; event must stay valid as long as the emitter. Returns
 * 0, or -1 when out of memory. */
int emitter_on(emitter_t *em, const char *event, emitter_handler_fn fn, void *ctx);

/* Calls every handler registered for event, in order. Returns how many were called. */
size_t emitter_emit(emitter_t *em, const char *event, void *arg);

/* Number of handlers registered for event. */
size_t emitter_listener_count(const emitter_t *em, const char *event);

#endif /* LH_EXAMPLES_EMITTER_H */
