/* leakhound - SPDX-License-Identifier: MIT
 *
 * churn2.c (bench): churn on two threads, where half the frees happen in the other thread.
 * Each thread makes N/2 malloc/free pairs of mixed sizes (16..512 bytes) with 5k blocks
 * live in its own ring (10k in all). When a slot is reused, the old block is freed locally
 * or, half the time (one PRNG bit), handed to the other thread through a lock-free
 * single-producer single-consumer queue; each thread drains its inbound queue as it goes.
 * When the queue is full (the peer is descheduled: on a busy 2-core machine the threads
 * often share a core), the producer frees what it was sent and yields until there is
 * room, so exactly half the blocks are freed by the other thread. That is the producer/consumer pattern (allocate here, free there) a tracer must order.
 *
 * Usage: churn2 [N]   (default 25000000 pairs in all)
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>

#define RING_SIZE 5000
#define QUEUE_SIZE 65536 /* power of two: a few ms of the peer's output */

/* Single producer, single consumer: head is written by the consumer, tail by the producer. */
typedef struct spsc {
    _Alignas(64) atomic_size_t head;
    _Alignas(64) atomic_size_t tail;
    _Alignas(64) void *slot[QUEUE_SIZE];
} spsc_t;

typedef struct worker {
    int id;
    unsigned long n_pairs;
    spsc_t *in;  /* blocks the other thread hands us to free */
    spsc_t *out; /* blocks we hand to the other thread */
    atomic_int done;
    struct worker *peer;
    uint64_t checksum;
    unsigned long remote_frees; /* frees of blocks the peer allocated */
    unsigned long queue_full; /* times we waited for room */
} worker_t;

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

static int
spsc_push(spsc_t *q, void *p)
{
    size_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
    size_t h = atomic_load_explicit(&q->head, memory_order_acquire);
    if (t - h == QUEUE_SIZE) {
        return 0;
    }
    q->slot[t & (QUEUE_SIZE - 1)] = p;
    atomic_store_explicit(&q->tail, t + 1, memory_order_release);
    return 1;
}

static void *
spsc_pop(spsc_t *q)
{
    size_t h = atomic_load_explicit(&q->head, memory_order_relaxed);
    size_t t = atomic_load_explicit(&q->tail, memory_order_acquire);
    if (h == t) {
        return NULL;
    }
    void *p = q->slot[h & (QUEUE_SIZE - 1)];
    atomic_store_explicit(&q->head, h + 1, memory_order_release);
    return p;
}

/* Frees what the peer handed over; at most `max` blocks (0: all). */
static void
drain(worker_t *w, unsigned max)
{
    void *p;
    unsigned n = 0;
    while ((max == 0 || n < max) && (p = spsc_pop(w->in)) != NULL) {
        free(p);
        w->remote_frees++;
        n++;
    }
}

static void
release(worker_t *w, uint64_t r, void *p)
{
    if (p == NULL) {
        return;
    }
    if ((r >> 20) & 1) {
        while (!spsc_push(w->out, p)) {
            w->queue_full++;
            drain(w, 0);
            sched_yield();
        }
        return;
    }
    free(p);
}

static void *
worker_main(void *arg)
{
    worker_t *w = arg;
    static _Thread_local unsigned char *ring[RING_SIZE];
    uint64_t state = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)w->id * 0xD1B54A32D192ED03ULL);
    for (unsigned long i = 0; i < w->n_pairs; i++) {
        uint64_t r = next_rand(&state);
        size_t slot = (size_t)(r % RING_SIZE);
        size_t size = 16 + (size_t)((r >> 32) % 497); /* 16..512 */
        release(w, r, ring[slot]);
        unsigned char *p = malloc(size);
        if (p == NULL) {
            abort();
        }
        p[0] = (unsigned char)i;
        p[size - 1] = (unsigned char)(i >> 8);
        w->checksum += p[0] + size;
        ring[slot] = p;
        drain(w, 2);
    }
    for (size_t i = 0; i < RING_SIZE; i++) {
        release(w, (uint64_t)i << 20, ring[i]);
        ring[i] = NULL;
        drain(w, 2);
    }
    atomic_store(&w->done, 1);
    /* Keep freeing what the peer sends until it is done and its queue is empty. */
    while (!atomic_load(&w->peer->done)) {
        drain(w, 0);
    }
    drain(w, 0);
    return NULL;
}

int
main(int argc, char **argv)
{
    unsigned long n_pairs = argc > 1 ? strtoul(argv[1], NULL, 10) : 25000000UL;
    static spsc_t q01, q10;
    static worker_t w[2];
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        w[i].id = i;
        w[i].n_pairs = n_pairs / 2 + (i == 0 ? n_pairs % 2 : 0);
        w[i].in = i == 0 ? &q10 : &q01;
        w[i].out = i == 0 ? &q01 : &q10;
        w[i].peer = &w[1 - i];
    }
    for (int i = 0; i < 2; i++) {
        if (pthread_create(&th[i], NULL, worker_main, &w[i]) != 0) {
            return 1;
        }
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
    }
    unsigned long remote = w[0].remote_frees + w[1].remote_frees;
    printf("churn2: %lu pairs, checksum %" PRIu64 ", %.1f%% freed by the other thread "
           "(waited %lu times for queue room)\n",
           n_pairs, w[0].checksum + w[1].checksum, n_pairs ? 100.0 * remote / n_pairs : 0.0,
           w[0].queue_full + w[1].queue_full);
    return 0;
}
