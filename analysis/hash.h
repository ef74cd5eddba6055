/* leakhound - SPDX-License-Identifier: MIT
 *
 * hash.h: the hashes of analysis's in-memory tables (string interning, address lookups):
 * a word-at-a-time hash of bytes, FNV-1a over a string, and a multiplicative mix for integer keys. Not for
 * anything stored: a table rebuilt in another run may hash differently. lh_fnv1a is the
 * exception: standard 64-bit FNV-1a, fixed for good (the symbol cache's files use it).
 */
#ifndef LH_HASH_H
#define LH_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LH_FNV_OFFSET 14695981039346656037ull
#define LH_FNV_PRIME 1099511628211ull

/* n bytes, eight a step, mixed as in splitmix64's finalizer (keys can be whole stacks of
 * names and paths: a byte-at-a-time hash was most of a report's time on Python traces). */
static inline uint64_t
lh_hash_bytes(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
    }
    uint64_t w = 0;
    if (n > i) {
        memcpy(&w, b + i, n - i);
    }
    h = (h ^ w) * 0x94d049bb133111ebull;
    return h ^ (h >> 29);
}

/* 64-bit FNV-1a of n bytes, continuing from h (LH_FNV_OFFSET to start). */
static inline uint64_t
lh_fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ b[i]) * LH_FNV_PRIME;
    }
    return h;
}

/* FNV-1a of a NUL-terminated string. */
static inline uint64_t
lh_hash_str(const char *s)
{
    uint64_t h = LH_FNV_OFFSET;
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * LH_FNV_PRIME;
    }
    return h;
}

/* Spreads an integer key over all bits (Fibonacci hashing). */
static inline uint64_t
lh_hash_mix(uint64_t x)
{
    x *= 0x9e3779b97f4a7c15ull;
    return x ^ (x >> 29);
}

/* Rebuilds an open-addressing index: a new table of cap slots (a power of two; an empty
 * slot is UINT32_MAX) holding entries first..n-1, each at the first free slot from
 * hash(ctx, k) on. Frees the old *table and sets *table and *mask; -1 without memory (the
 * old table kept). */
static inline int
lh_index_rebuild(uint32_t **table, size_t *mask, size_t cap, size_t first, size_t n,
                 uint64_t (*hash)(const void *ctx, size_t k), const void *ctx)
{
    uint32_t *h = malloc(cap * sizeof *h);
    if (!h) {
        return -1;
    }
    memset(h, 0xff, cap * sizeof *h);
    for (size_t k = first; k < n; k++) {
        size_t i = hash(ctx, k) & (cap - 1);
        while (h[i] != UINT32_MAX) {
            i = (i + 1) & (cap - 1);
        }
        h[i] = (uint32_t)k;
    }
    free(*table);
    *table = h;
    *mask = cap - 1;
    return 0;
}

/* Makes room in an index of entries first..n-1 for one more: doubles it (rebuilt from
 * hash) once one more would fill more than half its slots, which keeps probes short.
 * Returns 1 when it rebuilt (a slot found before is stale), 0, or -1 without memory. */
static inline int
lh_index_room(uint32_t **table, size_t *mask, size_t first, size_t n,
              uint64_t (*hash)(const void *ctx, size_t k), const void *ctx)
{
    if ((n + 1) * 2 <= *mask + 1) {
        return 0;
    }
    return lh_index_rebuild(table, mask, (*mask + 1) * 2, first, n, hash, ctx) < 0 ? -1 : 1;
}

#endif /* LH_HASH_H */
