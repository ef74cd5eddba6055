/* leakhound - SPDX-License-Identifier: MIT
 *
 * hash.h: the hashes of analysis's in-memory tables (string interning, address lookups):
 * FNV-1a over a string or bytes, and a multiplicative mix for integer keys. Not for
 * anything stored: a table rebuilt in another run may hash differently.
 */
#ifndef LH_HASH_H
#define LH_HASH_H

#include <stddef.h>
#include <stdint.h>

#define LH_FNV_OFFSET 1469598103934665603ull
#define LH_FNV_PRIME 1099511628211ull

/* FNV-1a of n bytes. */
static inline uint64_t
lh_hash_bytes(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = LH_FNV_OFFSET;
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

#endif /* LH_HASH_H */
