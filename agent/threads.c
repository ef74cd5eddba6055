/* leakhound - SPDX-License-Identifier: MIT
 *
 * threads.c: thread registration at start (pthread_create interposed) and each thread's
 * root ranges for the snapshot child (see threads.h).
 */
#include "threads.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "slots.h"
#include "sys.h"

/* glibc's TLS layout, read once at init; ok is 0 when any part is unknown. */
static struct {
    int ok;
    uintptr_t static_size;   /* the static TLS block, TCB included (x86-64) */
    uint32_t desc_size;      /* sizeof (struct pthread) */
    uint32_t dtvp_off;       /* the descriptor's DTV pointer, from the descriptor */
    uint32_t specific_off;   /* specific[]: pointers to the blocks of key data */
    uint32_t specific_len;
    uint32_t block_len;      /* one block of key data (the first lives in the descriptor) */
    uint32_t dtv_entry;      /* one DTV entry */
} tls;

static atomic_uint_fast64_t max_modid;

/* glibc's thread lists, as libthread_db finds them; ok is 0 when any part is unknown. */
static struct {
    int ok;
    uintptr_t used_head; /* &_rtld_global._dl_stack_used: stacks glibc allocated */
    uintptr_t user_head; /* &_rtld_global._dl_stack_user: the main thread, given stacks */
    uint32_t list_off;   /* the descriptor's list_t member */
    uint32_t tid_off;
    uint32_t next_off;   /* list_t's next */
} glist;

/* A libthread_db descriptor: {bits of one element, number of elements, offset}. */
static const uint32_t *
db_desc(const char *name)
{
    return (const uint32_t *)dlsym(RTLD_DEFAULT, name);
}

void
lh_threads_init(void)
{
    void (*static_info)(size_t *, size_t *) =
        (void (*)(size_t *, size_t *))dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info");
    const uint32_t *sz = db_desc("_thread_db_sizeof_pthread");
    const uint32_t *dtvp = db_desc("_thread_db_pthread_dtvp");
    const uint32_t *spec = db_desc("_thread_db_pthread_specific");
    const uint32_t *blk = db_desc("_thread_db_sizeof_pthread_key_data_level2");
    const uint32_t *dtv = db_desc("_thread_db_dtv_dtv");
    if (!static_info || !sz || !dtvp || !spec || !blk || !dtv) {
        return;
    }
    size_t size = 0, align = 0;
    static_info(&size, &align);
    uint64_t spec_len = (uint64_t)spec[0] / 8 * spec[1];
    if (!size || size > (64u << 20) || !*sz || *sz > 65536 || dtvp[0] != 8 * sizeof(void *) ||
        spec_len == 0 || spec[2] + spec_len > *sz || !*blk || *blk > 65536 || dtv[0] < 64 ||
        dtv[0] % 8) {
        return; /* not the layout this code understands: stacks only */
    }
    tls.static_size = size;
    tls.desc_size = *sz;
    tls.dtvp_off = dtvp[2];
    tls.specific_off = spec[2];
    tls.specific_len = (uint32_t)spec_len;
    tls.block_len = *blk;
    tls.dtv_entry = dtv[0] / 8;
    tls.ok = 1;

    uintptr_t rtld = (uintptr_t)dlsym(RTLD_DEFAULT, "_rtld_global");
    const uint32_t *used = db_desc("_thread_db_rtld_global__dl_stack_used");
    const uint32_t *user = db_desc("_thread_db_rtld_global__dl_stack_user");
    const uint32_t *lst = db_desc("_thread_db_pthread_list");
    const uint32_t *tid = db_desc("_thread_db_pthread_tid");
    const uint32_t *next = db_desc("_thread_db_list_t_next");
    if (!rtld || !used || !user || !lst || !tid || !next || tid[0] != 32 ||
        next[0] != 8 * sizeof(void *) || lst[2] >= tls.desc_size ||
        tid[2] + 4 > tls.desc_size) {
        return; /* no thread list: the threads the agent saw start only */
    }
    glist.used_head = rtld + used[2];
    glist.user_head = rtld + user[2];
    glist.list_off = lst[2];
    glist.tid_off = tid[2];
    glist.next_off = next[2];
    glist.ok = 1;
}

void
lh_threads_note(lh_slot_t *s)
{
    s->self = (uintptr_t)pthread_self();
}

void
lh_threads_saw_module(uint64_t tls_modid)
{
    uint64_t cur = atomic_load_explicit(&max_modid, memory_order_relaxed);
    while (tls_modid > cur && tls_modid < 65536 &&
           !atomic_compare_exchange_weak(&max_modid, &cur, tls_modid)) {
    }
}

static int
add(lh_troot_t *out, int n, int max, uintptr_t lo, uintptr_t hi, uint8_t kind,
    const lh_slot_t *s, int is_capture)
{
    if (n >= max || lo >= hi) {
        return n;
    }
    out[n] = (lh_troot_t){lo, hi, kind, (uint8_t)is_capture, s->tid};
    return n + 1;
}

/* The DTV of the thread of descriptor d (readable), its length word and the entries of
 * the modules seen so far: 0 when it cannot be read. */
static int
dtv_range(uintptr_t d, int (*readable)(uintptr_t lo, uintptr_t hi), uintptr_t *lo,
          uintptr_t *hi)
{
    uintptr_t dtv = *(const uintptr_t *)(d + tls.dtvp_off);
    uint64_t mods = atomic_load_explicit(&max_modid, memory_order_relaxed);
    if (dtv <= tls.dtv_entry || !mods) {
        return 0;
    }
    *lo = dtv - tls.dtv_entry;
    *hi = dtv + tls.dtv_entry * (uintptr_t)(mods + 1);
    return readable(*lo, *hi);
}

int
lh_threads_roots(const lh_slot_t *s, uintptr_t sp, int is_capture, lh_troot_t *out, int max,
                 int (*readable)(uintptr_t lo, uintptr_t hi))
{
    int n = 0;
    if (s->stack_hi) {
        if (sp && sp >= s->stack_lo && sp < s->stack_hi) {
            n = add(out, n, max, s->stack_lo, sp, LH_TROOT_DEAD, s, is_capture);
            n = add(out, n, max, sp, s->stack_hi, LH_TROOT_STACK, s, is_capture);
        } else {
            n = add(out, n, max, s->stack_lo, s->stack_hi, LH_TROOT_STACK, s, 0);
        }
    }
    if (!tls.ok || !s->self) {
        return n;
    }
    uintptr_t d = s->self;
    uintptr_t d_end = d + tls.desc_size;
#if defined(__x86_64__) || defined(__i386__)
    /* TLS_TCB_AT_TP: the static TLS block ends at the descriptor, which it includes. */
    n = add(out, n, max, d_end - tls.static_size, d, LH_TROOT_TLS, s, 0);
#else
    /* TLS_DTV_AT_TP: the descriptor, then the TCB (thread pointer) and the static block. */
    n = add(out, n, max, d_end, d_end + tls.static_size, LH_TROOT_TLS, s, 0);
#endif
    n = add(out, n, max, d, d_end, LH_TROOT_TLS, s, 0);
    uintptr_t spec = d + tls.specific_off;
    n = add(out, n, max, spec, spec + tls.specific_len, LH_TROOT_SPECIFIC, s, 0);
    if (!readable(d, d_end)) {
        return n;
    }
    /* specific[0] is the first block of key data, inside the descriptor itself; the other
     * blocks are calloc'd: heap blocks the specific[] array points to. */
    uintptr_t first = *(const uintptr_t *)spec;
    if (first >= d && first + tls.block_len <= d_end) {
        n = add(out, n, max, first, first + tls.block_len, LH_TROOT_SPECIFIC, s, 0);
    }
    /* The DTV: the main thread's first one is not malloc'd (the loader's own memory), and
     * it holds the only pointers to the dynamic TLS blocks of dlopen'd modules. Entry 0 is
     * the generation, the one before it the length; modules count from 1. */
    uintptr_t lo, hi;
    if (dtv_range(d, readable, &lo, &hi)) {
        n = add(out, n, max, lo, hi, LH_TROOT_TLS, s, 0);
    }
    return n;
}

/* -------------------------------------------------------------------------------------
 * pthread_create: every thread registers as it starts
 * ----------------------------------------------------------------------------------- */
typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

#define MAX_STARTS 1024

typedef struct start {
    atomic_int used;
    void *(*fn)(void *);
    void *arg;
} start_t;

static start_t starts[MAX_STARTS]; /* claimed by the creator, released by the new thread */
static _Atomic(create_fn) real_create;

LH_REALIGN static void *
trampoline(void *p)
{
    start_t *st = p;
    void *(*fn)(void *) = st->fn;
    void *arg = st->arg;
    atomic_store_explicit(&st->used, 0, memory_order_release);
    if (lh_recording() && !lh_tls.guard) {
        lh_tls.guard = 1; /* pthread_getattr_np allocates: pass it through */
        lh_thread_slot();
        lh_guard_leave();
    }
    return fn(arg);
}

LH_ENTRY int
pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    create_fn real = atomic_load(&real_create);
    if (!real) {
        real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
        if (!real) {
            return EAGAIN; /* cannot happen with a C library that has threads */
        }
        atomic_store(&real_create, real);
    }
    /* The agent's own thread (created with the guard held) registers nothing. */
    if (lh_tls.guard || !lh_recording()) {
        return real(t, attr, fn, arg);
    }
    for (int i = 0; i < MAX_STARTS; i++) {
        int expect = 0;
        if (atomic_load_explicit(&starts[i].used, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong(&starts[i].used, &expect, 1)) {
            starts[i].fn = fn;
            starts[i].arg = arg;
            int rc = real(t, attr, trampoline, &starts[i]);
            if (rc != 0) {
                atomic_store(&starts[i].used, 0);
            }
            return rc;
        }
    }
    /* More threads starting at once than records: this one registers at its first event. */
    return real(t, attr, fn, arg);
}

/* -------------------------------------------------------------------------------------
 * glibc's thread lists, in the snapshot child
 * ----------------------------------------------------------------------------------- */
static int
walk_list(uintptr_t head, int own_stack, lh_listed_thread_t *out, int n, int max,
          int (*readable)(uintptr_t lo, uintptr_t hi))
{
    if (!readable(head + glist.next_off, head + glist.next_off + sizeof(uintptr_t))) {
        return n;
    }
    uintptr_t node = *(const uintptr_t *)(head + glist.next_off);
    /* The image is a copy taken at any moment: a list being changed may be cut or loop;
     * every read is checked and the walk is bounded. */
    for (int steps = 0; node != head && n < max && steps < 65536; steps++) {
        if (node % sizeof(uintptr_t) || node < glist.list_off) {
            break;
        }
        uintptr_t d = node - glist.list_off;
        if (!readable(d, d + tls.desc_size)) {
            break;
        }
        int32_t tid = *(const int32_t *)(d + glist.tid_off);
        if (tid > 0) { /* 0: ended (the kernel cleared it), not joined yet */
            out[n++] = (lh_listed_thread_t){(uint32_t)tid, d, d + tls.desc_size,
                                            (uint8_t)own_stack};
        }
        node = *(const uintptr_t *)(node + glist.next_off);
    }
    return n;
}

int
lh_threads_listed(lh_listed_thread_t *out, int max,
                  int (*readable)(uintptr_t lo, uintptr_t hi))
{
    if (!glist.ok || !tls.ok) {
        return 0;
    }
    int n = walk_list(glist.used_head, 1, out, 0, max, readable);
    return walk_list(glist.user_head, 0, out, n, max, readable);
}

/* -------------------------------------------------------------------------------------
 * ended threads: their DTV, kept with the stack glibc caches
 * ----------------------------------------------------------------------------------- */
#define MAX_ENDED 256

static _Atomic uintptr_t ended_self[MAX_ENDED];
static _Atomic uint32_t ended_tid[MAX_ENDED];
static atomic_uint ended_next; /* round robin once the table is full */

void
lh_threads_ended(uintptr_t self, uint32_t tid)
{
    if (!self) {
        return;
    }
    int at = -1;
    for (int i = 0; i < MAX_ENDED && at < 0; i++) {
        uintptr_t cur = atomic_load_explicit(&ended_self[i], memory_order_relaxed);
        if (cur == self) {
            at = i; /* a cached stack given to a new thread: the same descriptor */
        } else if (cur == 0 && atomic_compare_exchange_strong(&ended_self[i], &cur, self)) {
            at = i;
        }
    }
    if (at < 0) {
        at = (int)(atomic_fetch_add(&ended_next, 1) % MAX_ENDED);
        atomic_store(&ended_self[at], self);
    }
    atomic_store(&ended_tid[at], tid);
}

int
lh_threads_ended_roots(lh_troot_t *out, int max,
                       int (*readable)(uintptr_t lo, uintptr_t hi))
{
    int n = 0;
#if defined(__x86_64__)
    if (!tls.ok || !glist.ok) {
        return 0; /* no tid offset to see that the thread has ended */
    }
    for (int i = 0; i < MAX_ENDED && n < max; i++) {
        uintptr_t d = atomic_load_explicit(&ended_self[i], memory_order_relaxed);
        if (!d || d % sizeof(uintptr_t) || !readable(d, d + tls.desc_size)) {
            continue; /* unmapped: glibc trimmed its cache and freed the DTV */
        }
        /* The memory may be something else by now: the descriptor is still there when
         * its first word (tcbhead_t.tcb, %fs:0) points to itself and its tid says ended
         * (0: the kernel cleared it; -1: joined, the stack is in glibc's cache). */
        if (*(const uintptr_t *)d != d || *(const int32_t *)(d + glist.tid_off) > 0) {
            continue;
        }
        /* The descriptor's DTV pointer and the DTV, as for a live thread. */
        uint32_t tid = atomic_load_explicit(&ended_tid[i], memory_order_relaxed);
        uintptr_t w = d + tls.dtvp_off, lo, hi;
        out[n++] = (lh_troot_t){w, w + sizeof(uintptr_t), LH_TROOT_TLS, 0, tid};
        if (n < max && dtv_range(d, readable, &lo, &hi)) {
            out[n++] = (lh_troot_t){lo, hi, LH_TROOT_TLS, 0, tid};
        }
    }
#else
    (void)out;
    (void)max;
    (void)readable;
#endif
    return n;
}
