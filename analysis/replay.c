/* leakhound - SPDX-License-Identifier: MIT
 *
 * replay.c: the heap model. The live set is an open-addressing hash table with linear
 * probing and backward-shift deletion (no tombstones), so it stays as small as the live
 * blocks whatever the number of events.
 */
#include "replay.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hugepages.h"
#include "stacks.h"

typedef struct slot {
    uint64_t addr; /* 0: empty (NULL is never live) */
    uint64_t size;
    uint64_t ts_ns;
    uint32_t stack_id;
    uint32_t weight; /* allocations this block stands for: 1, or more in a sampled trace */
} slot_t;

typedef struct grower {
    uint32_t origin, grower;
} grower_t;

struct lh_replay {
    slot_t *slots;
    size_t mask; /* capacity - 1, capacity a power of two */
    size_t n_live;
    lh_stack_stats_t *stacks;
    size_t n_stacks;
    size_t cap_stacks;
    lh_replay_totals_t tot;
    int seen_event;
    lh_live_block_t freed[2]; /* blocks the last lh_replay_event() freed */
    size_t n_freed;
    uint64_t sample_rate; /* from the events: 0 = every allocation was recorded */
    uint32_t last_alloc_weight, last_free_weight;
    uint32_t last_stack;  /* the stack the last allocation was attributed to */
    /* REALLOCs between their two halves: the old block's creating stack, to give the new
     * block (issue 10: a block keeps its identity through realloc). Halves of one thread
     * come in order, so there is at most one per thread; a few threads at a time. */
    struct pending {
        uint32_t tid;
        uint32_t origin;
        uint64_t old_addr;
    } pending[64];
    size_t n_pending;
    grower_t *growers;    /* (origin, grower) stack pairs, in order of first use */
    size_t n_growers, cap_growers;
};

static const lh_stack_stats_t zero_stats;

/* Remembers that stack grower reallocated a block created at stack origin. */
static int
note_grower(lh_replay_t *r, uint32_t origin, uint32_t grower)
{
    for (size_t i = r->n_growers; i-- > 0;) {
        if (r->growers[i].origin == origin && r->growers[i].grower == grower) {
            return 0;
        }
    }
    if (lh_grow(&r->growers, &r->cap_growers, r->n_growers, sizeof *r->growers, 64) < 0) {
        return -1;
    }
    r->growers[r->n_growers++] = (grower_t){origin, grower};
    return 0;
}

static size_t
hash_addr(uint64_t addr)
{
    /* Fibonacci hashing; blocks are at least 16-byte aligned, so drop the low bits. */
    uint64_t h = (addr >> 4) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ (h >> 29));
}

int
lh_replay_new(lh_replay_t **out, lh_err_t *err)
{
    lh_replay_t *r = calloc(1, sizeof *r);
    slot_t *slots = lh_hugepages_calloc(1024 * sizeof *slots);
    if (!r || !slots) {
        free(r);
        lh_hugepages_free(slots, 1024 * sizeof *slots);
        *out = NULL;
        return lh_err_set(err, LH_ENOMEM, "out of memory creating the heap model");
    }
    r->slots = slots;
    r->mask = 1023;
    *out = r;
    return 0;
}

void
lh_replay_free(lh_replay_t *r)
{
    if (r) {
        lh_hugepages_free(r->slots, (r->mask + 1) * sizeof *r->slots);
        free(r->stacks);
        free(r->growers);
        free(r);
    }
}

/* The slot holding addr, or NULL; *hole (if not NULL) gets the empty slot that ended the
 * search: where addr would be inserted. */
static slot_t *
probe(const lh_replay_t *r, uint64_t addr, size_t *hole)
{
    for (size_t i = hash_addr(addr) & r->mask;; i = (i + 1) & r->mask) {
        slot_t *s = &r->slots[i];
        if (s->addr == addr) {
            return s;
        }
        if (s->addr == 0) {
            if (hole) {
                *hole = i;
            }
            return NULL;
        }
    }
}

static slot_t *
find(const lh_replay_t *r, uint64_t addr)
{
    return probe(r, addr, NULL);
}

static int
rehash(lh_replay_t *r)
{
    size_t cap = (r->mask + 1) * 2;
    slot_t *old = r->slots;
    size_t old_cap = r->mask + 1;
    /* in huge pages: a python3 trace's live set reaches 32 MiB, met at random */
    slot_t *slots = cap <= SIZE_MAX / sizeof *slots ? lh_hugepages_calloc(cap * sizeof *slots)
                                                    : NULL;
    if (!slots) {
        return LH_ENOMEM;
    }
    r->slots = slots;
    r->mask = cap - 1;
    for (size_t k = 0; k < old_cap; k++) {
        if (old[k].addr) {
            size_t i = hash_addr(old[k].addr) & r->mask;
            while (slots[i].addr) {
                i = (i + 1) & r->mask;
            }
            slots[i] = old[k];
        }
    }
    lh_hugepages_free(old, old_cap * sizeof *old);
    return 0;
}

/* Removes the slot at s, shifting later members of its probe chain back. */
static void
remove_slot(lh_replay_t *r, slot_t *s)
{
    size_t i = (size_t)(s - r->slots);
    size_t j = i;
    for (;;) {
        j = (j + 1) & r->mask;
        if (r->slots[j].addr == 0) {
            break;
        }
        size_t home = hash_addr(r->slots[j].addr) & r->mask;
        /* Move j into the hole at i unless its home lies cyclically in (i, j]. */
        int in_range = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!in_range) {
            r->slots[i] = r->slots[j];
            i = j;
        }
    }
    r->slots[i].addr = 0;
    r->n_live--;
}

static lh_stack_stats_t *
stack_stats(lh_replay_t *r, uint32_t id)
{
    if (id >= r->n_stacks) {
        /* slots past n_stacks were never written: growing zeroes them */
        if (id > LH_STACK_ID_MAX ||
            lh_grow_zeroed(&r->stacks, &r->cap_stacks, (size_t)id + 1, sizeof *r->stacks,
                           256) < 0) {
            return NULL;
        }
        r->n_stacks = id + 1;
    }
    return &r->stacks[id];
}

/* Sampled traces (the agent's Poisson sampling by bytes, mean rate R): a sampled block of
 * s bytes stands for w = 1 / (1 - exp(-s/R)) allocations and s*w bytes, the unbiased
 * estimate jemalloc and tcmalloc use. Counts stay integers: w is rounded up or down at
 * random with the right odds (seeded by the block, so reports are reproducible), which
 * keeps every sum unbiased. Unsampled traces: w = 1 exactly. */
static double
sample_weight(uint64_t size, uint64_t rate)
{
    double p = -expm1(-(double)(size ? size : 1) / (double)rate);
    return p > 0 ? 1.0 / p : 1.0;
}

static uint32_t
weighted_count(uint64_t addr, uint64_t ts, uint64_t size, uint64_t rate)
{
    if (!rate) {
        return 1;
    }
    double w = sample_weight(size, rate);
    uint64_t h = (addr ^ (ts * 0x9E3779B97F4A7C15ull)) * 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    double u = (double)(h >> 11) / 9007199254740992.0;
    double c = floor(w) + (u < w - floor(w) ? 1 : 0);
    return c > 4e9 ? 4000000000u : (uint32_t)c;
}

static uint64_t
weighted_bytes(uint64_t size, uint64_t rate)
{
    if (!rate) {
        return size;
    }
    return (uint64_t)llround((double)size * sample_weight(size, rate));
}

/* Frees the live block in slot s. */
static void
free_slot(lh_replay_t *r, slot_t *s)
{
    lh_stack_stats_t *st = &r->stacks[s->stack_id]; /* exists: created at its alloc */
    if (r->n_freed < 2) {
        r->freed[r->n_freed++] = (lh_live_block_t){s->addr, s->size, s->ts_ns, s->stack_id};
    }
    uint64_t bytes = weighted_bytes(s->size, r->sample_rate);
    st->n_frees += s->weight;
    st->live_blocks -= s->weight;
    st->live_bytes -= bytes;
    r->tot.heap_bytes -= bytes;
    r->tot.heap_blocks -= s->weight;
    r->last_free_weight = s->weight;
    remove_slot(r, s);
}

/* Frees a live block; returns 1 if it was live. */
static int
do_free(lh_replay_t *r, uint64_t addr)
{
    slot_t *s = find(r, addr);
    if (!s) {
        return 0;
    }
    free_slot(r, s);
    return 1;
}

/* origin: the stack the block is attributed to (the creator of a reallocated block). */
static int
do_alloc(lh_replay_t *r, const lh_event_t *ev, uint32_t origin, lh_err_t *err)
{
    if (ev->addr == 0) {
        return 0; /* a failed allocation */
    }
    /* One probe finds a block still live at this address (a missed free) or, most often,
     * the empty slot the new block goes to. */
    size_t hole = 0;
    slot_t *s = probe(r, ev->addr, &hole);
    if (s) {
        free_slot(r, s);
        r->tot.n_missed_frees++;
    }
    if (origin != ev->stack_id && note_grower(r, origin, ev->stack_id) < 0) {
        return lh_err_set(err, LH_ENOMEM, "out of memory in the heap model");
    }
    r->last_stack = origin;
    lh_stack_stats_t *st = stack_stats(r, origin);
    /* Load at most 1/2: at 3/4, a free's backward shift walked 10 slots on average to the
     * end of its cluster (callgrind, churn), and a miss probed as many. */
    int grow = (r->n_live + 1) * 2 > r->mask + 1;
    if (!st || (grow && rehash(r) < 0)) {
        return lh_err_set(err, LH_ENOMEM, "out of memory in the heap model (%zu live blocks)",
                          r->n_live);
    }
    size_t i = hole;
    if (s || grow) { /* the slots moved: probe again */
        (void)probe(r, ev->addr, &i);
    }
    if (ev->sample_rate) {
        r->sample_rate = ev->sample_rate;
    }
    uint32_t w = weighted_count(ev->addr, ev->ts_ns, ev->size, r->sample_rate);
    uint64_t bytes = weighted_bytes(ev->size, r->sample_rate);
    r->slots[i] = (slot_t){ev->addr, ev->size, ev->ts_ns, origin, w};
    r->n_live++;
    r->last_alloc_weight = w;
    st->n_allocs += w;
    st->alloc_bytes += bytes;
    st->live_blocks += w;
    st->live_bytes += bytes;
    r->tot.alloc_bytes += bytes;
    r->tot.heap_bytes += bytes;
    r->tot.heap_blocks += w;
    if (r->tot.heap_bytes > r->tot.peak_bytes) {
        r->tot.peak_bytes = r->tot.heap_bytes;
        r->tot.peak_ts_ns = ev->ts_ns;
    }
    return 0;
}

/* A REALLOC, or one of its halves: the new block is the old one's continuation, so it is
 * attributed to the stack that created the old one; the realloc's own stack is noted as a
 * grower of that one. Its time stamp is the realloc's (the interval analyses count the
 * old size as freed then). */
static int
do_realloc(lh_replay_t *r, const lh_event_t *ev, lh_err_t *err)
{
    uint32_t origin = ev->stack_id;
    if (ev->half != LH_HALF_ALLOC) {
        r->tot.n_reallocs++;
        if (ev->old_addr && !do_free(r, ev->old_addr)) {
            r->tot.n_unmatched_frees++;
        } else if (ev->old_addr) {
            origin = r->freed[r->n_freed - 1].stack_id;
        }
        if (ev->half == LH_HALF_FREE) {
            if (ev->old_addr && origin != ev->stack_id) {
                if (r->n_pending == sizeof r->pending / sizeof r->pending[0]) {
                    /* a lost second half: forget the oldest */
                    memmove(r->pending, r->pending + 1, --r->n_pending * sizeof *r->pending);
                }
                r->pending[r->n_pending++] = (struct pending){ev->tid, origin, ev->old_addr};
            }
            return 0;
        }
    } else {
        for (size_t i = 0; i < r->n_pending; i++) {
            if (r->pending[i].tid == ev->tid && r->pending[i].old_addr == ev->old_addr) {
                origin = r->pending[i].origin;
                r->pending[i] = r->pending[--r->n_pending];
                break;
            }
        }
    }
    return do_alloc(r, ev, origin, err);
}

int
lh_replay_event(lh_replay_t *r, const lh_event_t *ev, lh_err_t *err)
{
    r->n_freed = 0;
    lh_event_count(ev, &r->seen_event, &r->tot.n_events, &r->tot.first_ts_ns,
                   &r->tot.last_ts_ns);
    switch (ev->type) {
    case LH_REC_ALLOC: {
        int rc = do_alloc(r, ev, ev->stack_id, err);
        r->tot.n_allocs += ev->addr && rc == 0 ? r->last_alloc_weight : 0;
        return rc;
    }
    case LH_REC_FREE:
        if (ev->addr) {
            if (!do_free(r, ev->addr)) {
                r->tot.n_frees++;
                r->tot.n_unmatched_frees++;
            } else {
                r->tot.n_frees += r->last_free_weight;
            }
        }
        return 0;
    case LH_REC_REALLOC:
        return do_realloc(r, ev, err);
    default:
        return 0;
    }
}

void
lh_replay_prefetch(const lh_replay_t *r, const lh_event_t *ev)
{
    if (ev->type == LH_REC_REALLOC && ev->old_addr) {
        __builtin_prefetch(&r->slots[hash_addr(ev->old_addr) & r->mask]);
    }
    if (ev->addr) {
        __builtin_prefetch(&r->slots[hash_addr(ev->addr) & r->mask]);
    }
}

int
lh_replay_prefetch_pays(const lh_replay_t *r)
{
    return (r->mask + 1) * sizeof *r->slots >= (1u << 20);
}

const lh_replay_totals_t *
lh_replay_totals(const lh_replay_t *r)
{
    return &r->tot;
}

size_t
lh_replay_n_stacks(const lh_replay_t *r)
{
    return r->n_stacks;
}

const lh_stack_stats_t *
lh_replay_stack(const lh_replay_t *r, uint32_t stack_id)
{
    return stack_id < r->n_stacks ? &r->stacks[stack_id] : &zero_stats;
}

size_t
lh_replay_freed(const lh_replay_t *r, const lh_live_block_t **blocks)
{
    *blocks = r->freed;
    return r->n_freed;
}

int
lh_replay_lookup(const lh_replay_t *r, uint64_t addr, lh_live_block_t *out)
{
    const slot_t *s = addr ? find(r, addr) : NULL;
    if (!s) {
        return 0;
    }
    *out = (lh_live_block_t){s->addr, s->size, s->ts_ns, s->stack_id};
    return 1;
}

int
lh_replay_live_next(const lh_replay_t *r, size_t *cursor, lh_live_block_t *out)
{
    for (size_t i = *cursor; i <= r->mask; i++) {
        const slot_t *s = &r->slots[i];
        if (s->addr) {
            *out = (lh_live_block_t){s->addr, s->size, s->ts_ns, s->stack_id};
            *cursor = i + 1;
            return 1;
        }
    }
    *cursor = r->mask + 1;
    return 0;
}

uint32_t
lh_replay_last_stack(const lh_replay_t *r)
{
    return r->last_stack;
}

size_t
lh_replay_growers(const lh_replay_t *r, uint32_t origin, uint32_t *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_growers; i++) {
        if (r->growers[i].origin == origin) {
            if (n < max) {
                out[n] = r->growers[i].grower;
            }
            n++;
        }
    }
    return n;
}
