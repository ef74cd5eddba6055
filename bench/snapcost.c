/* leakhound - SPDX-License-Identifier: MIT
 *
 * snapcost.c: a program that keeps working on a big heap, for bench/snapcost.py (what
 * periodic snapshots cost it, issue 14.4).
 *
 * Usage: snapcost [MB [SECONDS [HOT]]]   (defaults 100, 20, 8)
 * Builds a heap of about MB megabytes in blocks of mixed sizes (16 B to 2 KiB), each
 * holding two pointers to other blocks, then works for SECONDS: each step writes into one
 * block of a hot set (one run of 64 consecutive blocks in HOT, so about one page in HOT,
 * spread over the whole heap: the bytes after the pointers; one write in 8 also repoints
 * it), and one step in 256 frees a hot block and allocates a new one of a random size in
 * its place. The rest of the heap is read by nobody and stays as it was built. At the end
 * it prints "steps N seconds S cpu C sys Y minflt F children K children_sys KS rate R": its
 * own work rate
 * over the working phase only (building the heap is not timed), wall seconds, the CPU
 * seconds of the process (every thread, user and system), its system seconds and minor
 * faults (the copy-on-write faults it takes while a snapshot child runs are both), and the
 * CPU seconds of its reaped children (the agent's snapshot children: the agent reaps them).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

typedef struct block {
    struct block *a, *b;
    uint64_t payload[]; /* the rest of the block */
} block_t;

static uint64_t rng = 88172645463325252ull;

static uint64_t
next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double
clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double
tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static size_t
pick_size(void)
{
    return (size_t)16 << (next() % 8); /* 16 B .. 2 KiB, about 510 B on average */
}

static block_t *
new_block(size_t size, block_t **all, size_t n)
{
    block_t *b = malloc(size);
    if (!b) {
        exit(1);
    }
    memset(b, 0x5a, size);
    b->a = n ? all[next() % n] : NULL;
    b->b = n ? all[next() % n] : NULL;
    return b;
}

int
main(int argc, char **argv)
{
    long mb = argc > 1 ? atol(argv[1]) : 100;
    double seconds = argc > 2 ? atof(argv[2]) : 20;
    long hot = argc > 3 ? atol(argv[3]) : 8;
    if (mb <= 0 || seconds <= 0 || hot <= 0) {
        fprintf(stderr, "usage: snapcost [MB [SECONDS [HOT]]]\n");
        return 2;
    }
    size_t n = (size_t)mb * 1024 * 1024 / 528; /* 510 B of payload + malloc's header */
    block_t **all = malloc(n * sizeof *all);
    size_t *sizes = malloc(n * sizeof *sizes);
    if (!all || !sizes) {
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        sizes[i] = pick_size();
        all[i] = new_block(sizes[i], all, i);
    }
    size_t n_runs = n / 64 / (size_t)hot; /* hot runs of 64 blocks */
    if (!n_runs) {
        n_runs = 1;
    }
    uint64_t steps = 0, sum = 0;
    struct rusage self0, kids0, self1, kids1;
    getrusage(RUSAGE_SELF, &self0);
    getrusage(RUSAGE_CHILDREN, &kids0);
    double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    double t0 = clock_s(CLOCK_MONOTONIC), t1 = t0;
    while (t1 - t0 < seconds) {
        for (int k = 0; k < 4096; k++, steps++) {
            /* hot runs are every HOT-th run of 64 blocks: spread over the heap */
            uint64_t r = next();
            size_t i = ((size_t)(r % n_runs) * (size_t)hot * 64 + (size_t)(r >> 58)) % n;
            block_t *b = all[i];
            if (sizes[i] > 16) {
                size_t words = (sizes[i] - 16) / 8;
                size_t w = next() % words;
                b->payload[w] += steps;
                sum += b->payload[(w + 1) % words];
            }
            if ((steps & 7) == 0) {
                b->a = all[next() % n];
            }
            if ((steps & 255) == 0) {
                size_t j = i;
                free(all[j]);
                sizes[j] = pick_size();
                all[j] = new_block(sizes[j], all, n);
            }
        }
        t1 = clock_s(CLOCK_MONOTONIC);
    }
    double took = t1 - t0;
    double cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    getrusage(RUSAGE_SELF, &self1);
    getrusage(RUSAGE_CHILDREN, &kids1);
    printf("steps %llu seconds %.3f cpu %.3f sys %.3f minflt %ld children %.3f "
           "children_sys %.3f rate %.0f check %llu\n", (unsigned long long)steps, took, cpu,
           tv_s(self1.ru_stime) - tv_s(self0.ru_stime), self1.ru_minflt - self0.ru_minflt,
           tv_s(kids1.ru_utime) + tv_s(kids1.ru_stime) - tv_s(kids0.ru_utime) -
               tv_s(kids0.ru_stime),
           tv_s(kids1.ru_stime) - tv_s(kids0.ru_stime), (double)steps / took,
           (unsigned long long)(sum & 0xff));
    for (size_t i = 0; i < n; i++) {
        free(all[i]);
    }
    free(all);
    free(sizes);
    return 0;
}
