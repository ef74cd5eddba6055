/* leakhound - SPDX-License-Identifier: MIT
 *
 * sample.h: sampling mode (LEAKHOUND_SAMPLE_RATE, `leakhound run --sample-rate 512K`).
 *
 * Poisson sampling by bytes, as jemalloc and tcmalloc do: each thread counts down the bytes
 * it allocates from an exponentially distributed start (mean R); the allocation that crosses
 * zero is recorded, with its stack, and a new count starts. An allocation of s bytes is
 * sampled with probability 1 - exp(-s/R), so the analyzer's estimate of what it stands for
 * (1 / that probability allocations, s / that probability bytes) is unbiased.
 *
 * Only the frees of sampled blocks are recorded. They are recognised by a 16 KiB filter of
 * counters indexed by bits of the address (almost every free reads one byte and returns)
 * and, behind it, a small exact set of the sampled live addresses.
 */
#ifndef LH_SAMPLE_H
#define LH_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

/* Sets the mean R in bytes (0 = off) and reserves the set. Not AS-safe: at init. */
int lh_sample_init(uint64_t rate_bytes);

/* Nonzero when this allocation of n bytes is to be recorded. AS-safe. */
int lh_sample_take(size_t n);

/* The fast paths, inlined into the hooks. */
extern __thread int64_t lh_sample_left __attribute__((tls_model("initial-exec")));
/* 2^14 one-byte counters: small enough to stay in the first-level cache, which every free
 * of the program reads at a random place (a 64 KiB filter missed it on most frees). */
#define LH_SAMPLE_FILTER_BITS 14
extern _Atomic unsigned char lh_sample_filter[1u << LH_SAMPLE_FILTER_BITS];

/* Nonzero when n bytes do not reach this thread's next sample: the allocation is skipped
 * with no other work. The caller falls back to lh_sample_take otherwise, which counts the
 * n bytes itself (so the count is given back here). AS-safe.
 * The count is taken first and tested after, so that the common case is one subtraction
 * in memory and a branch on its flags (the test before the subtraction was two more
 * instructions on every allocation). Unsigned arithmetic: no overflow whatever n is. */
static inline int
lh_sample_skip(size_t n)
{
#if defined(__x86_64__) && defined(__GCC_ASM_FLAG_OUTPUTS__)
    /* The compilers load, subtract, store and test (four instructions) where one
     * subtraction in memory sets the flags; the variable's offset from the thread pointer
     * is read from the GOT as for any initial-exec TLS variable. */
    int positive;
    uintptr_t off;
    __asm__("movq lh_sample_left@gottpoff(%%rip), %1\n\t"
            "subq %2, %%fs:(%1)"
            : "=@ccg"(positive), "=&r"(off)
            : "r"(n)
            : "memory");
    if (__builtin_expect(positive, 1)) {
        return 1;
    }
    lh_sample_left = (int64_t)((uint64_t)lh_sample_left + (uint64_t)n);
    return 0;
#else
    int64_t left = (int64_t)((uint64_t)lh_sample_left - (uint64_t)n);
    lh_sample_left = left;
    if (__builtin_expect(left > 0, 1)) {
        return 1;
    }
    lh_sample_left = (int64_t)((uint64_t)left + (uint64_t)n);
    return 0;
#endif
}

/* The filter slot of address p: bits 4-17 of the address as they are. malloc's blocks are
 * 16-byte aligned and a heap's addresses spread evenly over any 256 KiB window, so no hash
 * is needed (a multiplicative one cost three instructions on every free). */
static inline unsigned
lh_sample_filter_index(const void *p)
{
    return (unsigned)((unsigned long)p >> 4) & ((1u << LH_SAMPLE_FILTER_BITS) - 1);
}

/* Zero when p is certainly not a sampled block (one byte read). NULL is never a sampled
 * block, and nothing stops the caller from asking about it. AS-safe. */
static inline int
lh_sample_maybe(const void *p)
{
#if defined(__x86_64__) && defined(__GCC_ASM_FLAG_OUTPUTS__)
    /* The compilers load the byte and test it (two instructions) where one compare with
     * memory does; a relaxed load is a plain byte read on x86-64 either way. */
    int nonzero;
    __asm__("cmpb $0, (%1,%2)"
            : "=@ccne"(nonzero)
            : "r"(lh_sample_filter), "r"((unsigned long)lh_sample_filter_index(p))
            : "memory");
    return nonzero;
#else
    return __atomic_load_n((unsigned char *)&lh_sample_filter[lh_sample_filter_index(p)],
                           __ATOMIC_RELAXED) != 0;
#endif
}

/* Remembers p as a sampled live block. AS-safe (spinlock, never held across a call). */
void lh_sample_mark(const void *p);

/* If p is a sampled live block, forgets it and returns 1; else 0. AS-safe. */
int lh_sample_unmark(const void *p);

/* In a fork child: the set's lock may have been held by a thread that is gone. */
void lh_sample_after_fork(void);

#endif /* LH_SAMPLE_H */
