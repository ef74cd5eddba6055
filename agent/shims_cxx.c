/* leakhound - SPDX-License-Identifier: MIT
 *
 * shims_cxx.c: the LD_PRELOAD front-end's interposition of C++'s global operator new and
 * operator delete (every form: array, nothrow, sized, aligned), by their mangled names.
 *
 * Why: libstdc++'s operators call malloc and free, which shims.c sees. An allocator linked
 * into a C++ program (libjemalloc2, libtcmalloc-minimal4, libmimalloc2.0 on Debian) defines
 * the operators itself, and its operator new never calls malloc: without these shims every
 * `new` of such a program went unseen (a program of 574 allocations recorded 2).
 *
 * Each shim forwards to the next definition (dlsym(RTLD_NEXT), resolved with the malloc
 * family; or, for a C++ runtime loaded later, on its first call). When that definition is
 * in the module of the real malloc (the allocator's own operators), the shim records:
 * new after the real call returned, delete before the real call. Otherwise the real
 * operator calls malloc or free itself (libstdc++'s, a program library's) and the shim is
 * a bare jump, so that nothing is recorded twice, the stacks are the ones recorded before
 * and sampling's countdown sees each byte once.
 *
 * No agent state is held across the real call: the real operator new may throw
 * (std::bad_alloc) through the shim's frame, which then has nothing to undo. The agent is
 * C and links no C++ runtime; these are plain C functions with the operators' mangled
 * names and their x86-64/aarch64 calling convention (std::size_t and std::align_val_t in
 * integer registers, a nothrow_t reference as a pointer).
 */
#include <dlfcn.h>
#include <stdlib.h>

#include "shims.h"

#include "agent.h"
#include "format.h"
#include "recorder.h"
#include "sys.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

enum {
    NEW,         /* operator new(size_t) */
    NEW_NT,      /* operator new(size_t, const nothrow_t &) */
    NEW_AL,      /* operator new(size_t, align_val_t) */
    NEW_AL_NT,   /* operator new(size_t, align_val_t, const nothrow_t &) */
    NEWA,        /* the same four for new[] */
    NEWA_NT,
    NEWA_AL,
    NEWA_AL_NT,
    DEL,         /* operator delete(void *) */
    DEL_NT,      /* operator delete(void *, const nothrow_t &) */
    DEL_SZ,      /* operator delete(void *, size_t) */
    DEL_AL,      /* operator delete(void *, align_val_t) */
    DEL_SZ_AL,   /* operator delete(void *, size_t, align_val_t) */
    DEL_AL_NT,   /* operator delete(void *, align_val_t, const nothrow_t &) */
    DELA,        /* the same six for delete[] */
    DELA_NT,
    DELA_SZ,
    DELA_AL,
    DELA_SZ_AL,
    DELA_AL_NT,
    N_OPS
};

static const char *const op_name[N_OPS] = {
    "_Znwm", "_ZnwmRKSt9nothrow_t", "_ZnwmSt11align_val_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t", "_Znam", "_ZnamRKSt9nothrow_t",
    "_ZnamSt11align_val_t", "_ZnamSt11align_val_tRKSt9nothrow_t", "_ZdlPv",
    "_ZdlPvRKSt9nothrow_t", "_ZdlPvm", "_ZdlPvSt11align_val_t", "_ZdlPvmSt11align_val_t",
    "_ZdlPvSt11align_val_tRKSt9nothrow_t", "_ZdaPv", "_ZdaPvRKSt9nothrow_t", "_ZdaPvm",
    "_ZdaPvSt11align_val_t", "_ZdaPvmSt11align_val_t", "_ZdaPvSt11align_val_tRKSt9nothrow_t",
};

/* The real operators, and whether each is the allocator's own (the shim records). Written
 * once each (a racing second resolution writes the same values). */
static void *real_op[N_OPS];
static _Bool own_op[N_OPS];

static void
set_op(int i, void *f)
{
    __atomic_store_n(&own_op[i], lh_shims_in_allocator((uintptr_t)f), __ATOMIC_RELAXED);
    __atomic_store_n(&real_op[i], f, __ATOMIC_RELEASE);
}

void
lh_shims_cxx_resolve(void)
{
    for (int i = 0; i < N_OPS; i++) {
        void *f = dlsym(RTLD_NEXT, op_name[i]);
        if (f) {
            set_op(i, f);
        }
    }
}

/* Operator i, resolved on its first call when no C++ runtime was loaded at the start;
 * NULL when none defines it (then the shim falls back on the malloc family). A runtime
 * dlopen'd RTLD_LOCAL (a C++ extension of a C program) is not in the global scope that
 * RTLD_NEXT searches, while its callers still bind to these shims: asked by name then. */
__attribute__((noinline)) static void *
resolve_late(int i)
{
    if (atomic_load(&lh_g.state) == LH_ST_UNINIT) {
        lh_shims_resolve();
    }
    void *f = __atomic_load_n(&real_op[i], __ATOMIC_ACQUIRE);
    if (f) {
        return f;
    }
    f = dlsym(RTLD_NEXT, op_name[i]);
    static const char *const runtimes[] = {"libstdc++.so.6", "libc++.so.1"};
    for (size_t k = 0; !f && k < sizeof runtimes / sizeof runtimes[0]; k++) {
        void *h = dlopen(runtimes[k], RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            f = dlsym(h, op_name[i]);
            dlclose(h);
        }
    }
    if (f) {
        set_op(i, f);
    }
    return f;
}

static inline void *
op(int i)
{
    void *f = __atomic_load_n(&real_op[i], __ATOMIC_ACQUIRE);
    return likely(f != NULL) ? f : resolve_late(i);
}

/* No definition anywhere, but a caller bound to this one (cannot happen with a C++
 * runtime loaded): the malloc family, and std::bad_alloc's place taken by an abort, which
 * C cannot throw. */
__attribute__((noinline)) static void *
new_fallback(size_t n, size_t align, int nothrow)
{
    void *p = NULL;
    if (align > 16) {
        if (posix_memalign(&p, align, n ? n : 1) != 0) {
            p = NULL;
        }
    } else {
        p = malloc(n ? n : 1);
    }
    if (!p && !nothrow) {
        lh_sys_log("operator new: out of memory, and no C++ runtime to throw std::bad_alloc",
                   "", "");
        abort();
    }
    return p;
}

/* -------------------------------------------------------------------------------------
 * operator new: the allocator's own is recorded here, after it returned
 * ----------------------------------------------------------------------------------- */

typedef void *(*new_fn)(size_t);
typedef void *(*new_nt_fn)(size_t, const void *);
typedef void *(*new_al_fn)(size_t, size_t);
typedef void *(*new_al_nt_fn)(size_t, size_t, const void *);

#define ENTRY_FP() ((uintptr_t)__builtin_frame_address(0))
#define NO_TAIL(v) __asm__ volatile("" : "+r"(v))

static inline __attribute__((always_inline)) void *
new_record(void *p, size_t n, int kind, uintptr_t entry_fp)
{
    if (p && lh_recorder_wants_alloc(n)) {
        lh_recorder_alloc_from(p, n, kind, entry_fp);
    }
    return p;
}

/* The slow paths, one per signature: the agent's code starts here (LH_REALIGN). Reached by
 * a tail call from the exported shim, so their frame's return address is the program's. */
__attribute__((noinline)) LH_REALIGN static void *
new_slow(int i, size_t n)
{
    new_fn f = (new_fn)op(i);
    void *p = !f ? new_fallback(n, 0, 0)
              : own_op[i] ? new_record(f(n), n, LH_AK_MALLOC, ENTRY_FP()) : f(n);
    NO_TAIL(p);
    return p;
}

__attribute__((noinline)) LH_REALIGN static void *
new_nt_slow(int i, size_t n, const void *nt)
{
    new_nt_fn f = (new_nt_fn)op(i);
    void *p = !f ? new_fallback(n, 0, 1)
              : own_op[i] ? new_record(f(n, nt), n, LH_AK_MALLOC, ENTRY_FP()) : f(n, nt);
    NO_TAIL(p);
    return p;
}

__attribute__((noinline)) LH_REALIGN static void *
new_al_slow(int i, size_t n, size_t al)
{
    new_al_fn f = (new_al_fn)op(i);
    void *p = !f ? new_fallback(n, al, 0)
              : own_op[i] ? new_record(f(n, al), n, LH_AK_MEMALIGN, ENTRY_FP()) : f(n, al);
    NO_TAIL(p);
    return p;
}

__attribute__((noinline)) LH_REALIGN static void *
new_al_nt_slow(int i, size_t n, size_t al, const void *nt)
{
    new_al_nt_fn f = (new_al_nt_fn)op(i);
    void *p = !f ? new_fallback(n, al, 1)
              : own_op[i] ? new_record(f(n, al, nt), n, LH_AK_MEMALIGN, ENTRY_FP())
                          : f(n, al, nt);
    NO_TAIL(p);
    return p;
}

/* The exported shims: a jump to the real operator when it calls malloc itself. */
#define NEW_SHIM(name, i, fn_t, slow, params, args)                                          \
    __attribute__((visibility("default"))) void *name params;                                \
    __attribute__((visibility("default"))) void *name params                                 \
    {                                                                                        \
        fn_t f = (fn_t)__atomic_load_n(&real_op[i], __ATOMIC_ACQUIRE);                       \
        if (likely(f != NULL) && !own_op[i]) {                                               \
            return f args;                                                                   \
        }                                                                                    \
        return slow(i, UNPAREN args);                                                        \
    }
#define UNPAREN(...) __VA_ARGS__

NEW_SHIM(_Znwm, NEW, new_fn, new_slow, (size_t n), (n))
NEW_SHIM(_ZnwmRKSt9nothrow_t, NEW_NT, new_nt_fn, new_nt_slow, (size_t n, const void *nt),
         (n, nt))
NEW_SHIM(_ZnwmSt11align_val_t, NEW_AL, new_al_fn, new_al_slow, (size_t n, size_t al), (n, al))
NEW_SHIM(_ZnwmSt11align_val_tRKSt9nothrow_t, NEW_AL_NT, new_al_nt_fn, new_al_nt_slow,
         (size_t n, size_t al, const void *nt), (n, al, nt))
NEW_SHIM(_Znam, NEWA, new_fn, new_slow, (size_t n), (n))
NEW_SHIM(_ZnamRKSt9nothrow_t, NEWA_NT, new_nt_fn, new_nt_slow, (size_t n, const void *nt),
         (n, nt))
NEW_SHIM(_ZnamSt11align_val_t, NEWA_AL, new_al_fn, new_al_slow, (size_t n, size_t al), (n, al))
NEW_SHIM(_ZnamSt11align_val_tRKSt9nothrow_t, NEWA_AL_NT, new_al_nt_fn, new_al_nt_slow,
         (size_t n, size_t al, const void *nt), (n, al, nt))

/* -------------------------------------------------------------------------------------
 * operator delete: the allocator's own is recorded here, before it runs
 * ----------------------------------------------------------------------------------- */

typedef void (*del_fn)(void *);
typedef void (*del_1_fn)(void *, size_t);             /* sized, or aligned */
typedef void (*del_p_fn)(void *, const void *);       /* nothrow */
typedef void (*del_2_fn)(void *, size_t, size_t);     /* sized and aligned */
typedef void (*del_1p_fn)(void *, size_t, const void *); /* aligned, nothrow */

/* Records the free of p when operator i is the allocator's own. Returns the real operator,
 * or NULL when there is none (then the shim calls free, which records). */
__attribute__((noinline)) LH_REALIGN static void *
del_record(int i, void *p)
{
    void *f = op(i);
    if (f && own_op[i] && p && lh_recorder_wants_free(p)) {
        lh_recorder_free(p);
    }
    return f;
}

#define DEL_SHIM(name, i, fn_t, params, args)                                                \
    __attribute__((visibility("default"))) void name params;                                 \
    __attribute__((visibility("default"))) void name params                                  \
    {                                                                                        \
        fn_t f = (fn_t)__atomic_load_n(&real_op[i], __ATOMIC_ACQUIRE);                       \
        if (unlikely(f == NULL || own_op[i])) {                                              \
            f = (fn_t)del_record(i, p);                                                      \
            if (!f) {                                                                        \
                free(p);                                                                     \
                return;                                                                      \
            }                                                                                \
        }                                                                                    \
        f args;                                                                              \
    }

DEL_SHIM(_ZdlPv, DEL, del_fn, (void *p), (p))
DEL_SHIM(_ZdlPvRKSt9nothrow_t, DEL_NT, del_p_fn, (void *p, const void *nt), (p, nt))
DEL_SHIM(_ZdlPvm, DEL_SZ, del_1_fn, (void *p, size_t n), (p, n))
DEL_SHIM(_ZdlPvSt11align_val_t, DEL_AL, del_1_fn, (void *p, size_t al), (p, al))
DEL_SHIM(_ZdlPvmSt11align_val_t, DEL_SZ_AL, del_2_fn, (void *p, size_t n, size_t al),
         (p, n, al))
DEL_SHIM(_ZdlPvSt11align_val_tRKSt9nothrow_t, DEL_AL_NT, del_1p_fn,
         (void *p, size_t al, const void *nt), (p, al, nt))
DEL_SHIM(_ZdaPv, DELA, del_fn, (void *p), (p))
DEL_SHIM(_ZdaPvRKSt9nothrow_t, DELA_NT, del_p_fn, (void *p, const void *nt), (p, nt))
DEL_SHIM(_ZdaPvm, DELA_SZ, del_1_fn, (void *p, size_t n), (p, n))
DEL_SHIM(_ZdaPvSt11align_val_t, DELA_AL, del_1_fn, (void *p, size_t al), (p, al))
DEL_SHIM(_ZdaPvmSt11align_val_t, DELA_SZ_AL, del_2_fn, (void *p, size_t n, size_t al),
         (p, n, al))
DEL_SHIM(_ZdaPvSt11align_val_tRKSt9nothrow_t, DELA_AL_NT, del_1p_fn,
         (void *p, size_t al, const void *nt), (p, al, nt))
