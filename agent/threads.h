/* leakhound - SPDX-License-Identifier: MIT
 *
 * threads.h: the program's threads as a snapshot needs them, from the threads themselves
 * and never from the shape of /proc/self/maps (issue 11): each live thread's stack bounds,
 * static TLS block, descriptor (with its pthread_setspecific slots) and DTV.
 *
 * A thread records its stack bounds and thread pointer in its slot when it registers
 * (agent.h, lh_thread_slot). pthread_create is interposed so that every thread registers
 * as it starts, also one that never allocates; a thread that has exited is marked so in
 * its slot and is no root (glibc keeps its stack for reuse).
 *
 * Other threads' registers are not read (docs/FORMAT.md says why); their stacks are scanned
 * from their stack pointers up when threadsp.h could read them (a thread asleep at the
 * snapshot), whole otherwise.
 *
 * The TLS layout comes from what glibc publishes for debuggers (libthread_db reads the
 * same): the static TLS size (_dl_get_tls_static_info), the descriptor's size and the
 * offsets of its DTV pointer and specific-data array (_thread_db_*). Where any is missing
 * (another C library), threads have stacks only: no offset is ever guessed.
 */
#ifndef LH_THREADS_H
#define LH_THREADS_H

#include <stdint.h>

#include "agent.h"

/* One root range of a thread, as the snapshot child cuts regions into. */
enum lh_troot_kind {
    LH_TROOT_LOADER = 1,   /* the loader's own memory (loadermem.h): module data of ld.so */
    LH_TROOT_STACK = 2,    /* live stack: "[stack:TID]" or "[stack:capture]" */
    LH_TROOT_DEAD = 3,     /* below a thread's stack pointer: not scanned */
    LH_TROOT_TLS = 4,      /* static TLS block, descriptor, DTV: "[tls:TID]" */
    LH_TROOT_SPECIFIC = 5, /* pthread_setspecific slots: "[specific:TID]" */
    LH_TROOT_AGENT = 6,    /* the agent's own memory (snapshot.c): never scanned */
    LH_TROOT_MAPPED = 7,   /* memory the program mapped itself (mmaps.h): "[mmap]"; the
                              lowest rank, whatever its number: any other range wins */
};

typedef struct lh_troot {
    uintptr_t lo, hi;
    uint8_t kind;       /* lh_troot_kind; a higher kind wins where ranges overlap
                           (LH_TROOT_MAPPED the lowest) */
    uint8_t is_capture; /* the thread taking the snapshot */
    uint32_t tid;
} lh_troot_t;

/* Reads glibc's TLS layout and the real pthread_create. Not AS-safe (dlsym): at init. */
void lh_threads_init(void);

/* In the calling thread, when it registers its slot: its thread pointer. AS-safe. */
void lh_threads_note(lh_slot_t *s);

/* maps.c, for every module it sees: the highest TLS module id bounds the DTV scanned. */
void lh_threads_saw_module(uint64_t tls_modid);

/* In the snapshot child: the root ranges of the thread of slot s into out (at most max),
 * returns how many. sp: where its live stack starts, the capturing thread's (is_capture)
 * or another thread's that was asleep at the clone (threadsp.h); 0: not known, its whole
 * stack is live. readable(lo, hi) says whether [lo, hi) may be read (the DTV is found
 * through memory). AS-safe, memory reads only. */
int lh_threads_roots(const lh_slot_t *s, uintptr_t sp, int is_capture, lh_troot_t *out,
                     int max, int (*readable)(uintptr_t lo, uintptr_t hi));

/* A thread in glibc's own thread lists (the ones libthread_db walks: threads on stacks
 * glibc allocated, and on stacks the program gave), whether the agent knows it or not: a
 * library may start threads with the real pthread_create found through dlsym(RTLD_NEXT)
 * (jemalloc's background threads), which no interposition sees and which may never call
 * malloc through the agent. */
typedef struct lh_listed_thread {
    uint32_t tid;
    uintptr_t self;    /* its descriptor */
    uintptr_t desc_hi; /* the descriptor's end: glibc's stack block ends right above it */
    uint8_t own_stack; /* glibc allocated its stack (the descriptor sits at the top) */
} lh_listed_thread_t;

/* In the snapshot child: the live threads of glibc's lists into out (at most max), returns
 * how many; 0 when glibc does not publish the lists' layout (_rtld_global,
 * _thread_db_rtld_global__dl_stack_used/user, _thread_db_pthread_list/tid). Reads memory
 * only where readable(lo, hi) says so. AS-safe. */
int lh_threads_listed(lh_listed_thread_t *out, int max,
                      int (*readable)(uintptr_t lo, uintptr_t hi));

/* Ended threads. glibc keeps the stack of a thread that has ended, its descriptor
 * included, for the next thread it starts (its stack cache, which no list libthread_db
 * reads publishes), and with the descriptor the DTV it calloc'd for that thread and the
 * dynamic TLS blocks the DTV holds: glibc's blocks, reachable, not lost (Valgrind's libc
 * freeres frees them before its leak check). Only the DTV (and the descriptor's pointer to it) is a root: what the ended
 * thread's static TLS or stack still points to is lost (the thread is gone). */

/* In an ending thread (its slot's key destructor): notes its descriptor and tid in a fixed
 * table (the oldest note goes when it is full). AS-safe. */
void lh_threads_ended(uintptr_t self, uint32_t tid);

/* In the snapshot child: the ended threads whose descriptor is still in place (readable,
 * its first word pointing at itself as the x86-64 TLS ABI has the thread pointer's, its
 * tid 0 or below: cleared by the kernel, or -1 once glibc took the stack back), its root
 * ranges (LH_TROOT_TLS): the descriptor's DTV pointer and the DTV, as lh_threads_roots
 * gives a live thread's; returns how many. The caller drops those a live thread's ranges cover (a stack glibc has given
 * to a new thread). Other architectures: 0 (nothing to check the descriptor against). */
int lh_threads_ended_roots(lh_troot_t *out, int max,
                           int (*readable)(uintptr_t lo, uintptr_t hi));

#endif /* LH_THREADS_H */
