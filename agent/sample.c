/* leakhound - SPDX-License-Identifier: MIT
 *
 * sample.c: Poisson sampling by bytes and the set of sampled live blocks (see sample.h).
 */
#include "sample.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "agent.h"
#include "sys.h"

#define FILTER_SIZE (1u << LH_SAMPLE_FILTER_BITS)
#define SET_CAP (1u << 20) /* sampled live blocks; past it new samples are not recorded */

static uint64_t rate;
_Atomic unsigned char lh_sample_filter[FILTER_SIZE];
#define filter lh_sample_filter
static uintptr_t *set; /* linear probing, 0 = empty, backward-shift deletion */
static uint32_t set_used;
static atomic_flag set_lock = ATOMIC_FLAG_INIT;

__thread int64_t lh_sample_left __attribute__((tls_model("initial-exec")));
#define t_left lh_sample_left
static __thread uint64_t t_rng __attribute__((tls_model("initial-exec")));

static inline uint32_t
set_home(uintptr_t p)
{
    return (uint32_t)((p >> 4) * 0xff51afd7ed558ccdull >> 40) & (SET_CAP - 1);
}

/* Empties slot i and moves later entries of the probe run back, so lookups can stop at the
 * first empty slot (no tombstones to accumulate). */
static void
set_delete_at(uint32_t i)
{
    uint32_t j = i;
    for (;;) {
        j = (j + 1) & (SET_CAP - 1);
        uintptr_t v = set[j];
        if (v == 0) {
            break;
        }
        uint32_t h = set_home(v);
        int stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
        if (!stays) {
            set[i] = v;
            i = j;
        }
    }
    set[i] = 0;
}

int
lh_sample_init(uint64_t rate_bytes)
{
    rate = rate_bytes;
    if (!rate) {
        return 0;
    }
    if (set) { /* a new attach: reuse the set, forget the last attach's blocks */
        memset(set, 0, SET_CAP * sizeof *set);
        memset((void *)lh_sample_filter, 0, sizeof lh_sample_filter);
    } else {
        set = lh_sys_map(SET_CAP * sizeof *set);
    }
    return set ? 0 : -1;
}

static int64_t
draw(void)
{
    if (!t_rng) {
        t_rng = lh_sys_now_ns() ^ ((uint64_t)lh_sys_gettid() << 32) ^ 0x9E3779B97F4A7C15ull;
    }
    /* xorshift64*, then an exponential variate of mean `rate` */
    t_rng ^= t_rng >> 12;
    t_rng ^= t_rng << 25;
    t_rng ^= t_rng >> 27;
    uint64_t r = t_rng * 2685821657736338717ull;
    double u = ((double)(r >> 11) + 1.0) / 9007199254740993.0; /* (0, 1] */
    double v = -log(u) * (double)rate;
    return v < 1.0 ? 1 : (int64_t)v;
}

int
lh_sample_take(size_t n)
{
    if (__builtin_expect(t_left == 0, 0)) {
        t_left = draw(); /* this thread's first allocation */
    }
    t_left -= (int64_t)n;
    if (__builtin_expect(t_left > 0, 1)) {
        return 0;
    }
    t_left = draw();
    return 1;
}

static void
set_lock_take(void)
{
    while (atomic_flag_test_and_set_explicit(&set_lock, memory_order_acquire)) {
    }
}

static void
set_lock_drop(void)
{
    atomic_flag_clear_explicit(&set_lock, memory_order_release);
}

void
lh_sample_mark(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    if (!set || a == 0) {
        return;
    }
    set_lock_take();
    if (set_used < SET_CAP / 2) {
        for (uint32_t i = set_home(a);; i = (i + 1) & (SET_CAP - 1)) {
            uintptr_t *e = &set[i];
            if (*e == a) {
                break; /* already there (a missed free): keep one entry */
            }
            if (*e == 0) {
                *e = a;
                set_used++;
                uint32_t f = lh_sample_filter_index(p);
                if (atomic_load_explicit(&filter[f], memory_order_relaxed) < 255) {
                    atomic_fetch_add_explicit(&filter[f], 1, memory_order_relaxed);
                }
                break;
            }
        }
    }
    set_lock_drop();
}

int
lh_sample_unmark(const void *p)
{
    uint32_t f = lh_sample_filter_index(p);
    if (__builtin_expect(!atomic_load_explicit(&filter[f], memory_order_relaxed), 1)) {
        return 0;
    }
    uintptr_t a = (uintptr_t)p;
    int found = 0;
    set_lock_take();
    for (uint32_t i = set_home(a); set; i = (i + 1) & (SET_CAP - 1)) {
        if (set[i] == 0) {
            break;
        }
        if (set[i] == a) {
            set_delete_at(i);
            set_used--;
            found = 1;
            uint8_t c = atomic_load_explicit(&filter[f], memory_order_relaxed);
            if (c > 0 && c < 255) {
                atomic_fetch_sub_explicit(&filter[f], 1, memory_order_relaxed);
            }
            break;
        }
    }
    set_lock_drop();
    return found;
}

void
lh_sample_after_fork(void)
{
    atomic_flag_clear(&set_lock);
}
