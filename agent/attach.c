/* leakhound - SPDX-License-Identifier: MIT
 *
 * attach.c: the attach front-end (libleakhound_attach.so). `leakhound attach -p PID` has
 * gdb load this library into a running process and call lh_attach_start; it records from
 * then on through the same recorder core as the LD_PRELOAD front-end (recorder.h), and
 * lh_attach_stop puts everything back.
 *
 * Routing: nothing is interposed by symbol (the library is loaded RTLD_LOCAL, after every
 * module was bound). Instead every loaded module's relocations of the malloc family
 * (JUMP_SLOT and GLOB_DAT: calls through the PLT and through the GOT, libc's own included,
 * which is how glibc lets a preloaded malloc see strdup's allocations) are pointed at the
 * hooks below, and dlopen and dlclose too, so that modules loaded later are patched when
 * dlopen returns. Each patched slot remembers its old value; detach writes the old values
 * back, module by module, skipping modules unloaded meanwhile. Slots in RELRO are made
 * writable for the store and read-only again.
 *
 * The library is never unloaded: a thread may still be inside a hook when its slot is
 * restored, and code that took the address of malloc while attached keeps calling a hook,
 * which from then on forwards straight to libc. A second attach reuses it (and its memory).
 *
 * Modules that libc loads by itself (NSS, iconv, through __libc_dlopen_mode, not dlopen)
 * are patched when the recorder's module scan first sees them (maps.c's listener: at the
 * next new stack or tick, within 100 ms); their allocations before that are not seen.
 *
 * Known limits (docs/attach.md): a bare-name dlopen resolves against this library's
 * RUNPATH (none) instead of the caller's; allocations made by a module's constructor while
 * dlopen runs are not recorded.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "attach.h"

#include "agent.h"
#include "config.h"
#include "format.h"
#include "maps.h"
#include "recorder.h"
#include "sys.h"

#if defined(__x86_64__)
#define R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define R_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define R_GLOB_DAT R_AARCH64_GLOB_DAT
#else
#error "attach: unsupported architecture"
#endif

static struct {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    void *(*dlopen)(const char *, int);
    int (*dlclose)(void *);
} real;

static atomic_int attached;

/* -------------------------------------------------------------------------------------
 * Hooks: the same records as shims.c, with libc's functions known from the start.
 * ----------------------------------------------------------------------------------- */
LH_REALIGN static void *
hk_malloc(size_t n)
{
    void *p = real.malloc(n);
    if (p && lh_recorder_wants_alloc(n)) {
        lh_recorder_alloc(p, n, LH_AK_MALLOC);
    }
    return p;
}

LH_REALIGN static void
hk_free(void *p)
{
    if (p && lh_recorder_wants_free(p)) {
        lh_recorder_free(p);
    }
    real.free(p);
}

LH_REALIGN static void *
hk_calloc(size_t n, size_t m)
{
    void *p = real.calloc(n, m);
    if (p && lh_recorder_wants_alloc(n * m)) {
        lh_recorder_alloc(p, n * m, LH_AK_CALLOC);
    }
    return p;
}

LH_REALIGN static void *
hk_realloc(void *p, size_t n)
{
    return lh_recorder_realloc(real.realloc, p, n, LH_AK_REALLOC);
}

LH_REALIGN static void *
hk_reallocarray(void *p, size_t n, size_t m)
{
    size_t total;
    if (__builtin_mul_overflow(n, m, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return lh_recorder_realloc(real.realloc, p, total, LH_AK_REALLOCARRAY);
}

LH_REALIGN static int
hk_posix_memalign(void **out, size_t align, size_t n)
{
    int rc = real.posix_memalign(out, align, n);
    if (rc == 0 && lh_recorder_wants_alloc(n)) {
        lh_recorder_alloc(*out, n, LH_AK_MEMALIGN);
    }
    return rc;
}

#define ALIGNED_HOOK(fn, kind, n, ...)                                                       \
    void *p = real.fn(__VA_ARGS__);                                                          \
    if (p && lh_recorder_wants_alloc(n)) {                                                   \
        lh_recorder_alloc(p, n, kind);                                                       \
    }                                                                                        \
    return p

LH_REALIGN static void *
hk_aligned_alloc(size_t align, size_t n)
{
    ALIGNED_HOOK(aligned_alloc, LH_AK_MEMALIGN, n, align, n);
}

LH_REALIGN static void *
hk_memalign(size_t align, size_t n)
{
    ALIGNED_HOOK(memalign, LH_AK_MEMALIGN, n, align, n);
}

LH_REALIGN static void *
hk_valloc(size_t n)
{
    ALIGNED_HOOK(valloc, LH_AK_VALLOC, n, n);
}

LH_REALIGN static void *
hk_pvalloc(size_t n)
{
    ALIGNED_HOOK(pvalloc, LH_AK_VALLOC, lh_recorder_pvalloc_size(n), n);
}

static void patch_all(void);
static void forget_unloaded(void);

LH_REALIGN static void *
hk_dlopen(const char *file, int mode)
{
    void *h = real.dlopen(file, mode);
    if (h && atomic_load(&attached)) {
        int saved = errno;
        patch_all();
        lh_recorder_modules_changed();
        errno = saved;
    }
    return h;
}

LH_REALIGN static int
hk_dlclose(void *h)
{
    int on = atomic_load(&attached);
    if (on) {
        lh_recorder_modules_changed(); /* a module loaded and closed between two ticks */
    }
    int rc = real.dlclose(h);
    if (on) {
        int saved = errno;
        forget_unloaded();
        lh_recorder_modules_changed();
        errno = saved;
    }
    return rc;
}

/* -------------------------------------------------------------------------------------
 * Relocation patching
 * ----------------------------------------------------------------------------------- */
static const struct {
    const char *name;
    uintptr_t hook;
} hooks[] = {
    {"malloc", (uintptr_t)hk_malloc},
    {"free", (uintptr_t)hk_free},
    {"calloc", (uintptr_t)hk_calloc},
    {"realloc", (uintptr_t)hk_realloc},
    {"reallocarray", (uintptr_t)hk_reallocarray},
    {"posix_memalign", (uintptr_t)hk_posix_memalign},
    {"aligned_alloc", (uintptr_t)hk_aligned_alloc},
    {"memalign", (uintptr_t)hk_memalign},
    {"valloc", (uintptr_t)hk_valloc},
    {"pvalloc", (uintptr_t)hk_pvalloc},
    {"dlopen", (uintptr_t)hk_dlopen},
    {"dlclose", (uintptr_t)hk_dlclose},
};
#define N_HOOKS (sizeof hooks / sizeof hooks[0])

/* One patched slot. module/phdr identify the module instance that owns it. */
typedef struct patch {
    uintptr_t *slot;
    uintptr_t old;
    uintptr_t module;
    const void *phdr;
} patch_t;

#define MAX_PATCHES 65536
static patch_t *patches; /* agent memory (lh_sys_map) */
static size_t n_patches;
/* Lock order: the loader's lock (dl_iterate_phdr), then this one. */
static pthread_mutex_t patch_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t self_base;

static uintptr_t
dyn_ptr(const struct dl_phdr_info *info, Elf64_Addr v)
{
    /* ld.so relocates the pointers in .dynamic in place for most modules, not all (e.g. the
     * vDSO): a value below the load address is still an offset. */
    return v < info->dlpi_addr ? info->dlpi_addr + v : v;
}

static int
hook_index(const char *name)
{
    for (size_t i = 0; i < N_HOOKS; i++) {
        if (strcmp(name, hooks[i].name) == 0) {
            return (int)i;
        }
    }
    return -1;
}

/* Stores v into slot, through RELRO when it is in [relro_lo, relro_hi). */
static int
store(uintptr_t *slot, uintptr_t v, uintptr_t relro_lo, uintptr_t relro_hi)
{
    uintptr_t a = (uintptr_t)slot;
    if (a >= relro_lo && a < relro_hi) {
        uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
        void *page = (void *)(a & ~(pg - 1));
        if (mprotect(page, pg, PROT_READ | PROT_WRITE) != 0) {
            return -1;
        }
        __atomic_store_n(slot, v, __ATOMIC_RELEASE);
        mprotect(page, pg, PROT_READ);
        return 0;
    }
    __atomic_store_n(slot, v, __ATOMIC_RELEASE);
    return 0;
}

static void
relro_range(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
{
    *lo = *hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const Elf64_Phdr *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_RELRO) {
            *lo = info->dlpi_addr + ph->p_vaddr;
            *hi = *lo + ph->p_memsz;
        }
    }
}

static int
skip_module(const struct dl_phdr_info *info)
{
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    if (info->dlpi_addr == self_base && name[0]) {
        return 1; /* ourselves */
    }
    /* The loader allocates through its own pointers, and the vDSO imports nothing. */
    return strstr(name, "/ld-linux") != NULL || strstr(name, "linux-vdso") != NULL ||
           strstr(name, "linux-gate") != NULL;
}

static void
patch_relocs(const struct dl_phdr_info *info, const Elf64_Rela *rel, size_t n,
             const Elf64_Sym *symtab, const char *strtab, uintptr_t relro_lo,
             uintptr_t relro_hi)
{
    for (size_t i = 0; i < n; i++) {
        unsigned type = (unsigned)ELF64_R_TYPE(rel[i].r_info);
        size_t sym = ELF64_R_SYM(rel[i].r_info);
        if ((type != R_JUMP_SLOT && type != R_GLOB_DAT) || sym == 0) {
            continue;
        }
        int k = hook_index(strtab + symtab[sym].st_name);
        if (k < 0) {
            continue;
        }
        uintptr_t *slot = (uintptr_t *)(info->dlpi_addr + rel[i].r_offset);
        uintptr_t hook = hooks[k].hook;
        uintptr_t old = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        if (old == hook || n_patches == MAX_PATCHES) {
            continue;
        }
        if (store(slot, hook, relro_lo, relro_hi) == 0) {
            patches[n_patches++] = (patch_t){slot, old, info->dlpi_addr, info->dlpi_phdr};
        }
    }
}

static int
patch_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    if (skip_module(info)) {
        return 0;
    }
    const Elf64_Dyn *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) {
            dyn = (const Elf64_Dyn *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        }
    }
    if (!dyn) {
        return 0;
    }
    const Elf64_Sym *symtab = NULL;
    const char *strtab = NULL;
    const Elf64_Rela *rela = NULL, *jmprel = NULL;
    size_t relasz = 0, pltrelsz = 0;
    int pltrel_is_rela = 1;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB:
            symtab = (const Elf64_Sym *)dyn_ptr(info, dyn->d_un.d_ptr);
            break;
        case DT_STRTAB:
            strtab = (const char *)dyn_ptr(info, dyn->d_un.d_ptr);
            break;
        case DT_RELA:
            rela = (const Elf64_Rela *)dyn_ptr(info, dyn->d_un.d_ptr);
            break;
        case DT_RELASZ:
            relasz = dyn->d_un.d_val;
            break;
        case DT_JMPREL:
            jmprel = (const Elf64_Rela *)dyn_ptr(info, dyn->d_un.d_ptr);
            break;
        case DT_PLTRELSZ:
            pltrelsz = dyn->d_un.d_val;
            break;
        case DT_PLTREL:
            pltrel_is_rela = dyn->d_un.d_val == DT_RELA;
            break;
        default:
            break;
        }
    }
    if (!symtab || !strtab || !pltrel_is_rela) {
        return 0; /* x86-64 and aarch64 use RELA only */
    }
    uintptr_t lo, hi;
    relro_range(info, &lo, &hi);
    if (rela) {
        patch_relocs(info, rela, relasz / sizeof *rela, symtab, strtab, lo, hi);
    }
    if (jmprel) {
        patch_relocs(info, jmprel, pltrelsz / sizeof *jmprel, symtab, strtab, lo, hi);
    }
    return 0;
}

/* dl_iterate_phdr holds the loader's lock while it calls us: take ours inside it, always
 * in that order. */
static int
locked_patch_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    pthread_mutex_lock(&patch_lock);
    /* Checked under the lock: a detach that cleared it restores after us, or we see it.
     * (dl_iterate_phdr walks one at a time: the loader's lock is held for a whole walk.) */
    if (atomic_load(&attached)) {
        patch_cb(info, size, arg);
    }
    pthread_mutex_unlock(&patch_lock);
    return 0;
}

static void
patch_all(void)
{
    int saved = lh_tls.guard;
    lh_tls.guard = 1;
    dl_iterate_phdr(locked_patch_cb, NULL);
    lh_tls.guard = saved;
}

/* A pass over the loaded modules: marks their patches live, and on detach restores them. */
typedef struct sweep {
    int restore; /* write old values back (detach) rather than only keep live entries */
} sweep_t;

static uint8_t *live; /* per patch: its module is loaded (agent memory, MAX_PATCHES bytes) */

static int
mark_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    sweep_t *sw = arg;
    pthread_mutex_lock(&patch_lock);
    uintptr_t lo, hi;
    relro_range(info, &lo, &hi);
    for (size_t i = 0; i < n_patches; i++) {
        if (patches[i].module != info->dlpi_addr || patches[i].phdr != info->dlpi_phdr) {
            continue;
        }
        live[i] = 1;
        if (sw->restore) {
            uintptr_t cur = __atomic_load_n(patches[i].slot, __ATOMIC_ACQUIRE);
            /* Only a slot that still holds our hook: never undo what someone else wrote. */
            for (size_t k = 0; k < N_HOOKS; k++) {
                if (cur == hooks[k].hook) {
                    store(patches[i].slot, patches[i].old, lo, hi);
                    break;
                }
            }
        }
    }
    pthread_mutex_unlock(&patch_lock);
    return 0;
}

static void
sweep(int restore)
{
    int saved = lh_tls.guard;
    lh_tls.guard = 1;
    pthread_mutex_lock(&patch_lock);
    memset(live, 0, n_patches);
    pthread_mutex_unlock(&patch_lock);
    sweep_t sw = {restore};
    dl_iterate_phdr(mark_cb, &sw);
    pthread_mutex_lock(&patch_lock);
    size_t w = 0;
    for (size_t i = 0; i < n_patches; i++) {
        if (live[i] && !restore) {
            patches[w++] = patches[i];
        }
    }
    n_patches = w;
    pthread_mutex_unlock(&patch_lock);
    lh_tls.guard = saved;
}

/* After dlclose: drop the patches of modules that are gone (their GOT is unmapped). */
static void
forget_unloaded(void)
{
    sweep(0);
}

/* -------------------------------------------------------------------------------------
 * Entry points, called by gdb in the target (cli/cmd_attach.c)
 * ----------------------------------------------------------------------------------- */
static int
resolve(void)
{
    /* RTLD_NEXT from a library loaded with dlopen searches its own dependencies after it:
     * libc's functions (the CLI made sure libc's malloc is the process's). */
#define R(name) real.name = (__typeof__(real.name))dlsym(RTLD_NEXT, #name)
    R(malloc);
    R(free);
    R(calloc);
    R(realloc);
    R(posix_memalign);
    R(aligned_alloc);
    R(memalign);
    R(valloc);
    R(pvalloc);
    R(dlopen);
    R(dlclose);
#undef R
    return real.malloc && real.free && real.calloc && real.realloc && real.posix_memalign &&
                   real.aligned_alloc && real.memalign && real.valloc && real.pvalloc &&
                   real.dlopen && real.dlclose
               ? 0
               : -1;
}

LH_REALIGN static void
at_exit(int status, void *arg)
{
    (void)arg;
    if (atomic_exchange(&attached, 0)) {
        lh_recorder_finish(LH_EXIT_NORMAL, status);
    }
}

/* Returns 0: recording; 1: already attached; -1: could not start (said why on the
 * target's stderr with the <lh> prefix); -2: libc's functions not found. */
LH_ENTRY int
lh_attach_start(const char *vars)
{
    static int started_once;
    if (atomic_load(&attached)) {
        return 1;
    }
    int saved = lh_tls.guard;
    lh_tls.guard = 1;
    int rc = -1;
    if (!started_once) {
        if (resolve() != 0) {
            rc = -2;
            goto out;
        }
        Dl_info di;
        struct link_map *lm = NULL;
        /* dl_iterate_phdr's dlpi_addr is the load bias, dladdr1's l_addr. */
        if (dladdr1((void *)(uintptr_t)hk_malloc, &di, (void **)&lm, RTLD_DL_LINKMAP) && lm) {
            self_base = lm->l_addr;
        }
        patches = lh_sys_map(MAX_PATCHES * sizeof *patches);
        live = lh_sys_map(MAX_PATCHES);
        if (!patches || !live || lh_config_parse(&lh_g.cfg, vars) != 0) {
            goto out;
        }
        lh_g.is_attached = 1;
        if (lh_recorder_init() != 0) {
            goto out;
        }
        on_exit(at_exit, NULL);
        lh_maps_set_listener(patch_all);
        started_once = 1;
    } else {
        if (lh_config_parse(&lh_g.cfg, vars) != 0 || lh_recorder_restart() != 0) {
            goto out;
        }
    }
    lh_recorder_begin();
    atomic_store(&attached, 1);
    patch_all();
    rc = 0;
out:
    lh_tls.guard = saved;
    return rc;
}

/* Restores every patched slot, ends the trace (END: detached) and closes it. Returns 0,
 * 1 when not attached, -1 when the agent's thread did not stop in time (the trace is
 * complete all the same). */
LH_ENTRY int
lh_attach_stop(void)
{
    if (!atomic_exchange(&attached, 0)) {
        return 1;
    }
    int saved = lh_tls.guard;
    lh_tls.guard = 1;
    sweep(1);
    lh_tls.guard = saved;
    return lh_recorder_detach();
}
