/* leakhound - SPDX-License-Identifier: MIT
 *
 * rank_cache.c (e2e, issue 10: "the allocation sites that hold the growth, ranked by
 * growth"): a server whose leak is a cache that is still reachable and grows per request,
 * beside start-up allocations of a fixed size that are lost. The question "where is the
 * growth" must be answered by the cache, even though a report ranked by leak class alone
 * would put the lost start-up blocks first.
 *
 * `rank_cache [REQUESTS [nomarks]]` (default 400) serves REQUESTS requests, each starting
 * with lh_mark("request") (none with `nomarks`: a daemon that knows nothing of leakhound),
 * then exits without freeing anything (a daemon stopped as it ran):
 *   - rc_lost:     at start-up, a 64 KiB configuration buffer whose pointer is dropped
 *                  (definitely lost, one block, fixed size);
 *   - rc_possible: at start-up, a 16 KiB arena kept only through a pointer 64 bytes into it
 *                  (possibly lost, one block, fixed size);
 *   - rc_workers:  at start-up, 8 worker structs of 2 KiB each, kept in a global array
 *                  (reachable, a one-time step);
 *   - rc_buckets:  at start-up, the cache's bucket array, 256 pointers (reachable, one
 *                  allocation);
 *   - rc_entry:    per request, one 96-byte entry added to the global hash table and never
 *                  evicted (reachable, steady growth: 400 x 96 = 38,400 bytes);
 *   - per request too, a 512-byte request buffer, freed (no leak at all).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LH_WEAK_API
#include <leakhound.h>

#define N_BUCKETS 256
#define N_WORKERS 8

typedef struct entry {
    struct entry *next;
    unsigned long key;
    char value[80];
} entry_t; /* 96 bytes */

/* Not static: the compiler must keep the stores that make them reachable. */
entry_t **g_buckets;
char *g_workers[N_WORKERS];
char *g_arena_cursor; /* points inside the arena, not at its start */

static void
load_config(void)
{
    char *conf = malloc(65536); /* LEAK: rc_lost */
    if (!conf) {
        abort();
    }
    memset(conf, 'c', 256);
    /* parsed, then the buffer is forgotten: definitely lost */
}

static void
setup(void)
{
    char *arena = malloc(16384); /* LEAK: rc_possible */
    if (!arena) {
        abort();
    }
    memset(arena, 0, 128);
    g_arena_cursor = arena + 64;
    for (int i = 0; i < N_WORKERS; i++) {
        g_workers[i] = malloc(2048); /* SITE: rc_workers */
        if (!g_workers[i]) {
            abort();
        }
        memset(g_workers[i], i, 64);
    }
    g_buckets = calloc(N_BUCKETS, sizeof *g_buckets); /* SITE: rc_buckets */
    if (!g_buckets) {
        abort();
    }
}

static void
cache_put(unsigned long key)
{
    entry_t *e = malloc(sizeof *e); /* LEAK: rc_entry */
    if (!e) {
        abort();
    }
    e->key = key;
    snprintf(e->value, sizeof e->value, "/items/%lu", key);
    e->next = g_buckets[key % N_BUCKETS];
    g_buckets[key % N_BUCKETS] = e;
}

static void
handle(unsigned long id)
{
    char *req = malloc(512); /* SITE: rc_request */
    if (!req) {
        abort();
    }
    snprintf(req, 512, "GET /items/%lu HTTP/1.1\r\n\r\n", id);
    cache_put(id * 7919);
    free(req);
}

int
main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 400;
    int marks = !(argc > 2 && strcmp(argv[2], "nomarks") == 0);
    load_config();
    setup();
    for (unsigned long i = 0; i < n; i++) {
        if (marks) {
            lh_mark("request");
        }
        handle(i);
    }
    return g_arena_cursor == NULL;
}
