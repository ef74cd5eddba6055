/* leakhound - SPDX-License-Identifier: MIT
 *
 * leaky_server.c (bench): a request loop with a slow leak, the shape of the programs
 * leakhound is for. Each request allocates a request object, a handful of header strings
 * (strdup), a body (calloc), a response buffer grown with realloc, and a small "session"
 * object; everything is freed at the end of the request except, once every 1000
 * requests, the session, which is put in a cache that is never cleaned. No I/O: the
 * requests are synthesised from a PRNG.
 *
 * Usage: leaky_server [REQUESTS]   (default 1000000)
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HEADERS 8

typedef struct request {
    char *method;
    char *path;
    char *headers[MAX_HEADERS];
    int n_headers;
    unsigned char *body;
    size_t body_len;
} request_t;

typedef struct session {
    uint64_t id;
    char user[40];
    struct session *next;
} session_t;

static session_t *leaked_cache; /* never freed: the slow leak */

static uint64_t
next_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static __attribute__((noinline)) request_t *
parse_request(uint64_t r)
{
    static const char *const methods[] = {"GET", "POST", "PUT", "DELETE"};
    char buf[96];
    request_t *req = calloc(1, sizeof(*req));
    if (req == NULL) {
        abort();
    }
    req->method = strdup(methods[r & 3]);
    snprintf(buf, sizeof(buf), "/api/v1/items/%" PRIu64 "/detail", (r >> 8) % 100000);
    req->path = strdup(buf);
    req->n_headers = 3 + (int)((r >> 4) % (MAX_HEADERS - 3));
    for (int i = 0; i < req->n_headers; i++) {
        snprintf(buf, sizeof(buf), "X-Header-%d: value-%" PRIu64, i, (r >> (i + 10)) & 0xffff);
        req->headers[i] = strdup(buf);
    }
    req->body_len = (r >> 24) % 2048;
    req->body = calloc(1, req->body_len + 1);
    return req;
}

static __attribute__((noinline)) char *
build_response(const request_t *req, size_t *len)
{
    size_t cap = 64, n = 0;
    char *out = malloc(cap);
    if (out == NULL) {
        abort();
    }
    for (int i = -1; i < req->n_headers; i++) {
        const char *s = i < 0 ? req->path : req->headers[i];
        size_t sl = strlen(s);
        while (n + sl + 2 > cap) {
            cap *= 2;
            char *grown = realloc(out, cap);
            if (grown == NULL) {
                abort();
            }
            out = grown;
        }
        memcpy(out + n, s, sl);
        n += sl;
        out[n++] = '\n';
    }
    out[n] = '\0';
    *len = n;
    return out;
}

static __attribute__((noinline)) session_t *
open_session(uint64_t id)
{
    session_t *s = malloc(sizeof(*s));
    if (s == NULL) {
        abort();
    }
    s->id = id;
    snprintf(s->user, sizeof(s->user), "user-%" PRIu64, id % 4096);
    s->next = NULL;
    return s;
}

static void
free_request(request_t *req)
{
    free(req->method);
    free(req->path);
    for (int i = 0; i < req->n_headers; i++) {
        free(req->headers[i]);
    }
    free(req->body);
    free(req);
}

int
main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000UL;
    uint64_t state = 0x9E3779B97F4A7C15ULL;
    uint64_t checksum = 0;
    unsigned long leaked = 0;
    for (unsigned long i = 0; i < n; i++) {
        uint64_t r = next_rand(&state);
        request_t *req = parse_request(r);
        session_t *s = open_session(r >> 3);
        size_t len;
        char *resp = build_response(req, &len);
        checksum += len + (unsigned char)resp[len / 2] + s->user[5];
        free(resp);
        if (i % 1000 == 999) { /* the bug: the session is cached and never released */
            s->next = leaked_cache;
            leaked_cache = s;
            leaked++;
        } else {
            free(s);
        }
        free_request(req);
    }
    printf("leaky_server: %lu requests, %lu sessions leaked, checksum %" PRIu64 "\n", n, leaked,
           checksum);
    return 0;
}
