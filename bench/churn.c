/* leakhound - SPDX-License-Identifier: MIT
 *
 * churn.c (bench): the allocator-bound worst case for a tracer. N malloc/free pairs of
 * mixed sizes (16..512 bytes), keeping 10k blocks live in a ring, sizes and slots from a
 * deterministic PRNG (xorshift64*). Prints a checksum so nothing is optimised away.
 *
 * Usage: churn [N]   (default 10000000 pairs)
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING_SIZE 10000

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

int
main(int argc, char **argv)
{
    unsigned long n_pairs = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000000UL;
    static unsigned char *ring[RING_SIZE];
    uint64_t state = 0x9E3779B97F4A7C15ULL;
    uint64_t checksum = 0;

    /* Fill the ring first: those allocations are part of the N pairs (each is freed
     * later, when its slot is reused, or at the end). */
    for (unsigned long i = 0; i < n_pairs; i++) {
        uint64_t r = next_rand(&state);
        size_t slot = (size_t)(r % RING_SIZE);
        size_t size = 16 + (size_t)((r >> 32) % 497); /* 16..512 */
        free(ring[slot]);
        unsigned char *p = malloc(size);
        if (p == NULL) {
            return 1;
        }
        p[0] = (unsigned char)i;
        p[size - 1] = (unsigned char)(i >> 8);
        checksum += p[0] + size;
        ring[slot] = p;
    }
    for (size_t i = 0; i < RING_SIZE; i++) {
        free(ring[i]);
    }
    printf("churn: %lu pairs, checksum %" PRIu64 "\n", n_pairs, checksum);
    return 0;
}
