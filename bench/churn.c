/* leakhound - SPDX-License-Identifier: MIT
 *
 * churn.c (bench): the allocator-bound worst case for a tracer. N malloc/free pairs of
 * mixed sizes (16..512 bytes), keeping LIVE blocks (10k) in a ring, sizes and slots
 * from a deterministic PRNG (xorshift64*). Prints a checksum so nothing is optimised away.
 *
 * Usage: churn [N [LIVE]]   (default 25000000 pairs, 10000 live blocks)
 *
 * bench/run also builds it without frame pointers (churn_nofp) and uses LIVE to measure
 * the agent's memory per live block.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    unsigned long n_pairs = argc > 1 ? strtoul(argv[1], NULL, 10) : 25000000UL;
    size_t ring_size = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 10000;
    if (ring_size == 0) {
        ring_size = 1;
    }
    /* The ring is one extra block (calloc), outside the N pairs. */
    unsigned char **ring = calloc(ring_size, sizeof(*ring));
    if (ring == NULL) {
        return 1;
    }
    uint64_t state = 0x9E3779B97F4A7C15ULL;
    uint64_t checksum = 0;

    /* Fill the ring first: those allocations are part of the N pairs (each is freed
     * later, when its slot is reused, or at the end). */
    for (unsigned long i = 0; i < n_pairs; i++) {
        uint64_t r = next_rand(&state);
        size_t slot = (size_t)(r % ring_size);
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
    size_t live = 0;
    for (size_t i = 0; i < ring_size; i++) {
        live += ring[i] != NULL;
        free(ring[i]);
    }
    free(ring);
    printf("churn: %lu pairs, checksum %" PRIu64 ", %zu live before the final frees\n", n_pairs,
           checksum, live);
    return 0;
}
