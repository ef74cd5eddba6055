/* leakhound - SPDX-License-Identifier: MIT
 *
 * deep.c (bench): allocations made 30 to 60 frames deep, as in a recursive-descent parser
 * or an interpreter. Each of N allocations recurses to a random depth through two mutually
 * recursive functions, the path between them chosen by the bits of a random "shape", so
 * there are up to 31 x 2^BITS distinct stacks. The block (16..256 bytes) replaces one of
 * 100k slots of a ring, freeing the old one; the last 100k are leaked on purpose (a leak
 * report has something to say). Prints a checksum.
 *
 * Usage: deep [N [BITS]]   (default 2000000 allocations, BITS 10: about 32k stacks)
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define RING_SIZE 100000

static unsigned char *ring[RING_SIZE];

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

static uint64_t rec_b(unsigned depth, uint64_t shape, size_t size, size_t slot);

static __attribute__((noinline)) uint64_t
leaf(size_t size, size_t slot)
{
    free(ring[slot]);
    unsigned char *p = malloc(size);
    if (p == NULL) {
        abort();
    }
    p[0] = (unsigned char)size;
    ring[slot] = p;
    return size;
}

/* The work after each call (and the empty asm) keeps the compiler from turning the
 * recursion into a loop or a tail call: every level stays a real frame. */
static __attribute__((noinline)) uint64_t
rec_a(unsigned depth, uint64_t shape, size_t size, size_t slot)
{
    uint64_t r;
    if (depth == 0) {
        r = leaf(size, slot);
    } else if (shape & 1) {
        r = rec_b(depth - 1, shape >> 1 | shape << 63, size, slot);
    } else {
        r = rec_a(depth - 1, shape >> 1 | shape << 63, size, slot);
    }
    __asm__ volatile("" : "+r"(r)::"memory");
    return r + depth;
}

static __attribute__((noinline)) uint64_t
rec_b(unsigned depth, uint64_t shape, size_t size, size_t slot)
{
    uint64_t r;
    if (depth == 0) {
        r = leaf(size, slot);
    } else if (shape & 1) {
        r = rec_a(depth - 1, shape >> 1 | shape << 63, size, slot);
    } else {
        r = rec_b(depth - 1, shape >> 1 | shape << 63, size, slot);
    }
    __asm__ volatile("" : "+r"(r)::"memory");
    return r ^ depth;
}

int
main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000UL;
    unsigned bits = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 10;
    uint64_t mask = bits >= 64 ? ~0ULL : (1ULL << bits) - 1;
    uint64_t state = 0x9E3779B97F4A7C15ULL;
    uint64_t checksum = 0;
    for (unsigned long i = 0; i < n; i++) {
        uint64_t r = next_rand(&state);
        /* main -> rec_* x (depth + 1) -> leaf -> malloc: 30 to 60 frames below main. */
        unsigned depth = 27 + (unsigned)(r % 31);
        uint64_t shape = (r >> 8) & mask;
        size_t size = 16 + (size_t)((r >> 40) % 241);
        size_t slot = (size_t)((r >> 16) % RING_SIZE);
        checksum += rec_a(depth, shape, size, slot);
    }
    printf("deep: %lu allocations, checksum %" PRIu64 "\n", n, checksum);
    return 0;
}
