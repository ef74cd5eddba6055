/* leakhound - SPDX-License-Identifier: MIT
 *
 * leaky_server.c: the demo. A simulated request loop with one real-world leak in it.
 *
 * Each "connection" reads a request into a buffer, parses its headers into a struct, runs
 * a per-connection emitter for its "data" and "end" events and frees all of that
 * properly. But it also subscribes to "error" on the process-wide emitter that every
 * connection shares, and never unsubscribes: one more handler per connection, forever.
 * This is Node's "MaxListenersExceededWarning: Possible EventEmitter memory leak detected.
 * 11 error listeners added": the heap grows with the number of connections ever served,
 * and every emit("error") walks all of them.
 *
 * Each connection starts with lh_mark("request"), so `leakhound leaks` and `leakhound report
 * --growth` can show what grows per request. The API is declared weak (LH_WEAK_API): without
 * the agent, lh_mark is NULL and the server runs as usual.
 *
 * Usage: leaky_server [--requests N]   (default 2000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LH_WEAK_API
#include <leakhound.h>

#include "emitter.h"

#define MAX_HEADERS 8

typedef struct header {
    char *name;
    char *value;
} header_t;

typedef struct request {
    char *method;
    char *path;
    size_t n_headers;
    header_t headers[MAX_HEADERS];
} request_t;

typedef struct conn {
    unsigned long id;
    emitter_t *events; /* per-connection: freed when the connection closes */
    size_t n_bytes_in;
} conn_t;

typedef struct server {
    emitter_t *shared_events; /* process-wide: lives as long as the server */
    unsigned long n_served;
    unsigned long n_errors;
    size_t n_bytes_in;
} server_t;

/* ---------------------------------------------------------------------------------------
 * Handlers
 * ------------------------------------------------------------------------------------- */

static void
on_conn_error(void *ctx, const char *event, void *arg)
{
    (void)ctx;
    (void)event;
    server_t *srv = arg;
    srv->n_errors++;
}

static void
on_conn_data(void *ctx, const char *event, void *arg)
{
    (void)event;
    conn_t *conn = ctx;
    conn->n_bytes_in += *(const size_t *)arg;
}

static void
on_conn_end(void *ctx, const char *event, void *arg)
{
    (void)event;
    conn_t *conn = ctx;
    server_t *srv = arg;
    srv->n_bytes_in += conn->n_bytes_in;
}

/* ---------------------------------------------------------------------------------------
 * Request parsing (all of it freed by request_free)
 * ------------------------------------------------------------------------------------- */

static char *
dup_range(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s != NULL) {
        memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

static void
request_free(request_t *req)
{
    if (req == NULL) {
        return;
    }
    free(req->method);
    free(req->path);
    for (size_t i = 0; i < req->n_headers; i++) {
        free(req->headers[i].name);
        free(req->headers[i].value);
    }
    free(req);
}

/* Parses "METHOD PATH HTTP/1.1\r\n(Name: value\r\n)*\r\n". Returns NULL on a malformed
 * request. */
static request_t *
request_parse(const char *buf)
{
    request_t *req = calloc(1, sizeof(*req));
    if (req == NULL) {
        return NULL;
    }
    const char *sp = strchr(buf, ' ');
    const char *sp2 = sp ? strchr(sp + 1, ' ') : NULL;
    const char *eol = strstr(buf, "\r\n");
    if (sp == NULL || sp2 == NULL || eol == NULL || sp2 > eol) {
        request_free(req);
        return NULL;
    }
    req->method = dup_range(buf, (size_t)(sp - buf));
    req->path = dup_range(sp + 1, (size_t)(sp2 - sp - 1));
    const char *line = eol + 2;
    while (req->n_headers < MAX_HEADERS && strncmp(line, "\r\n", 2) != 0) {
        const char *colon = strchr(line, ':');
        eol = strstr(line, "\r\n");
        if (colon == NULL || eol == NULL || colon > eol) {
            request_free(req);
            return NULL;
        }
        header_t *h = &req->headers[req->n_headers++];
        h->name = dup_range(line, (size_t)(colon - line));
        h->value = dup_range(colon + 2, (size_t)(eol - colon - 2));
        line = eol + 2;
    }
    return req;
}

/* ---------------------------------------------------------------------------------------
 * The connection: read, parse, dispatch, close
 * ------------------------------------------------------------------------------------- */

static void
handle_connection(server_t *srv, unsigned long id)
{
    conn_t *conn = calloc(1, sizeof(*conn));
    if (conn == NULL) {
        return;
    }
    conn->id = id;
    conn->events = emitter_new();
    emitter_on(conn->events, "data", on_conn_data, conn);
    emitter_on(conn->events, "end", on_conn_end, conn);

    /* The bug: a handler per connection on the shared emitter, never removed. It should
     * be registered once at start-up, or removed in the close path below. */
    emitter_on(srv->shared_events, "error", on_conn_error, conn->events); /* LEAK: demo */

    char *buf = malloc(4096);
    if (buf == NULL) {
        emitter_free(conn->events);
        free(conn);
        return;
    }
    /* Every 500th client sends garbage, which makes the server emit "error". */
    int n = (id % 500 == 499)
                ? snprintf(buf, 4096, "garbage-%lu", id)
                : snprintf(buf, 4096,
                           "GET /items/%lu HTTP/1.1\r\nHost: example.org\r\n"
                           "User-Agent: demo/1.0\r\nX-Request-Id: %lu\r\n\r\n",
                           id, id * 7919);
    size_t n_read = (size_t)n;
    emitter_emit(conn->events, "data", &n_read);

    request_t *req = request_parse(buf);
    if (req == NULL) {
        emitter_emit(srv->shared_events, "error", srv);
    }
    request_free(req);
    free(buf);

    emitter_emit(conn->events, "end", srv);
    emitter_free(conn->events);
    free(conn);
    srv->n_served++;
}

int
main(int argc, char **argv)
{
    unsigned long n_requests = 2000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--requests") == 0 && i + 1 < argc) {
            n_requests = strtoul(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: %s [--requests N]\n", argv[0]);
            return 2;
        }
    }

    server_t srv = {0};
    srv.shared_events = emitter_new(); /* process-wide, deliberately never freed */
    if (srv.shared_events == NULL) {
        return 1;
    }
    for (unsigned long id = 0; id < n_requests; id++) {
        if (lh_mark) {
            lh_mark("request");
        }
        handle_connection(&srv, id);
    }
    printf("leaky_server: served %lu connections (%zu bytes in, %lu error events); "
           "%zu \"error\" listeners on the shared emitter\n",
           srv.n_served, srv.n_bytes_in, srv.n_errors,
           emitter_listener_count(srv.shared_events, "error"));
    return 0;
}
