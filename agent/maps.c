/* leakhound - SPDX-License-Identifier: MIT
 *
 * maps.c: the module map (path, load bias, build-id, segments) of every loaded object,
 * written at start, after dlopen/dlclose, and whenever the ticker sees the loader's
 * add/remove counters move (libraries loaded behind our back, e.g. by NSS). The analyzer
 * symbolizes offline from these records, after the process is gone.
 *
 * lh_maps_scan calls dl_iterate_phdr, which takes the loader's lock: it must never run with
 * an agent lock held, and takes its own scan lock only with trylock, because a dlopen'd
 * constructor may reach it while the loader lock is held by the same thread.
 */
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "maps.h"
#include "output.h"
#include "enc.h"
#include "format.h"
#include "sys.h"
#include "threads.h"
#include "unwind_table.h"

#define MAX_MODULES 4096
#define SCRATCH (256u * 1024u)
#define REC_ARENA (8u << 20)

typedef struct known {
    uintptr_t base;
    uint64_t key;
    uint32_t rec_off; /* the encoded MODULE record, for re-emission into a new file */
    uint32_t rec_len;
    uint8_t present;
    uint8_t seen;
} known_t;

static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;
static void (*_Atomic on_added)(void); /* lh_maps_set_listener */
static known_t *known;
static atomic_uint n_known;
static uint8_t *rec_arena;
static size_t rec_used;
static uint8_t *scratch;
static unsigned long long last_adds, last_subs;
static char cwd[LH_PATH_MAX];

typedef struct scan_ctx {
    lh_enc_t e;
    uint32_t n_records;
    uint64_t now;
    unsigned long long adds, subs;
    int counters_only;
} scan_ctx_t;

static uint64_t
hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    }
    return h;
}

static void
module_path(const struct dl_phdr_info *info, char *out, size_t len)
{
    const char *name = info->dlpi_name;
    if (!name || !*name) {
        lh_sys_strlcpy(out, lh_g.exe, len); /* the main program */
    } else if (name[0] != '/' && strchr(name, '/') && cwd[0]) {
        /* dlopen("./libx.so"): make it absolute now, the analyzer runs elsewhere later */
        size_t n = lh_sys_strlcpy(out, cwd, len);
        if (n + 1 < len) {
            out[n++] = '/';
            lh_sys_strlcpy(out + n, name[0] == '.' && name[1] == '/' ? name + 2 : name, len - n);
        }
    } else {
        lh_sys_strlcpy(out, name, len);
    }
}

static void
enc_build_id(lh_enc_t *e, const struct dl_phdr_info *info)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) {
            continue;
        }
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        const uint8_t *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            size_t namesz = (nh->n_namesz + 3u) & ~3u;
            size_t descsz = (nh->n_descsz + 3u) & ~3u;
            const uint8_t *name = p + sizeof *nh;
            const uint8_t *desc = name + namesz;
            if (desc + nh->n_descsz > end) {
                break;
            }
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
                memcmp(name, "GNU", 4) == 0 && nh->n_descsz <= 64) {
                lh_enc_varint(e, nh->n_descsz);
                lh_enc_bytes(e, desc, nh->n_descsz);
                return;
            }
            p = desc + descsz;
        }
    }
    lh_enc_varint(e, 0);
}

static void
enc_module(lh_enc_t *e, const struct dl_phdr_info *info, const char *path, uint32_t epoch)
{
    uint8_t *r = lh_enc_rec_begin(e, LH_REC_MODULE);
    lh_enc_varint(e, 0); /* ts delta: the frame's base */
    lh_enc_varint(e, epoch);
    lh_enc_varint(e, (uint64_t)info->dlpi_addr);
    lh_enc_str(e, path);
    enc_build_id(e, info);
    uint32_t n_load = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        n_load += info->dlpi_phdr[i].p_type == PT_LOAD;
    }
    lh_enc_varint(e, n_load);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD) {
            lh_enc_varint(e, ph->p_vaddr);
            lh_enc_varint(e, ph->p_memsz);
            lh_enc_varint(e, ph->p_flags);
        }
    }
    lh_enc_rec_end(e, r);
}

static void
flush_scratch(scan_ctx_t *c)
{
    if (c->n_records) {
        lh_write_agent_frame(scratch, (size_t)(c->e.p - scratch), c->n_records, c->now, 0);
    }
    lh_enc_init(&c->e, scratch, SCRATCH);
    c->n_records = 0;
}

static int
scan_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    scan_ctx_t *c = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        c->adds = info->dlpi_adds;
        c->subs = info->dlpi_subs;
    }
    if (c->counters_only) {
        return 1;
    }
    lh_threads_saw_module(info->dlpi_tls_modid);
    char path[LH_PATH_MAX];
    module_path(info, path, sizeof path);
    uint64_t key = hash_str(path) ^ (uint64_t)info->dlpi_addr;
    unsigned n = atomic_load(&n_known);
    for (unsigned i = 0; i < n; i++) {
        if (known[i].present && known[i].key == key && known[i].base == info->dlpi_addr) {
            known[i].seen = 1;
            return 0;
        }
    }
    if (n >= MAX_MODULES) {
        return 0;
    }
    if ((size_t)(c->e.end - c->e.p) < 2 * LH_PATH_MAX + 4096) {
        /* Scratch full: records are written in the scan's frames in order. We are inside
         * dl_iterate_phdr here, so only the writer lock is taken, never the loader's. */
        flush_scratch(c);
    }
    uint8_t *start = c->e.p;
    enc_module(&c->e, info, path, atomic_load(&lh_g.epoch));
    if (!lh_enc_ok(&c->e)) {
        return 1;
    }
    size_t len = (size_t)(c->e.p - start);
    known_t *k = &known[n];
    k->base = info->dlpi_addr;
    k->key = key;
    k->present = 1;
    k->seen = 1;
    k->rec_len = 0;
    if (rec_used + len <= REC_ARENA) {
        memcpy(rec_arena + rec_used, start, len);
        k->rec_off = (uint32_t)rec_used;
        k->rec_len = (uint32_t)len;
        rec_used += len;
    }
    atomic_store(&n_known, n + 1);
    c->n_records++;
    lh_utab_add_module(info); /* its unwind table is compiled on first use */
    return 0;
}

int
lh_maps_init(void)
{
    known = lh_sys_map(sizeof(known_t) * MAX_MODULES);
    rec_arena = lh_sys_map(REC_ARENA);
    scratch = lh_sys_map(SCRATCH);
    if (!getcwd(cwd, sizeof cwd)) {
        cwd[0] = '\0';
    }
    return known && rec_arena && scratch ? 0 : -1;
}

uint64_t
lh_maps_loads(void)
{
    return __atomic_load_n(&last_adds, __ATOMIC_RELAXED);
}

void
lh_maps_scan(int force)
{
    if (!known || pthread_mutex_trylock(&scan_lock) != 0) {
        return; /* someone is scanning; the ticker catches anything missed */
    }
    scan_ctx_t c = {.now = lh_sys_now_ns(), .counters_only = 1};
    lh_enc_init(&c.e, scratch, SCRATCH);
    dl_iterate_phdr(scan_cb, &c);
    if (!force && c.adds == last_adds && c.subs == last_subs) {
        pthread_mutex_unlock(&scan_lock);
        return;
    }
    c.counters_only = 0;
    unsigned n = atomic_load(&n_known);
    for (unsigned i = 0; i < n; i++) {
        known[i].seen = 0;
    }
    dl_iterate_phdr(scan_cb, &c);
    int added = c.adds != last_adds;
    last_adds = c.adds;
    last_subs = c.subs;
    n = atomic_load(&n_known);
    for (unsigned i = 0; i < n; i++) {
        if (!known[i].present || known[i].seen) {
            continue;
        }
        /* Gone: later stacks get a new epoch, so an address reused by another library is
         * never resolved against this one. */
        known[i].present = 0;
        lh_utab_remove_module(known[i].base);
        uint32_t epoch = atomic_fetch_add(&lh_g.epoch, 1) + 1;
        if ((size_t)(c.e.end - c.e.p) < LH_PATH_MAX + 64) {
            flush_scratch(&c);
        }
        uint8_t *r = lh_enc_rec_begin(&c.e, LH_REC_MODULE_UNLOAD);
        lh_enc_varint(&c.e, 0);
        lh_enc_varint(&c.e, epoch);
        lh_enc_varint(&c.e, known[i].base);
        lh_enc_str(&c.e, "");
        lh_enc_rec_end(&c.e, r);
        c.n_records++;
    }
    flush_scratch(&c);
    pthread_mutex_unlock(&scan_lock);
    void (*fn)(void) = atomic_load(&on_added);
    if (added && fn) {
        fn(); /* no agent lock held, as lh_maps_set_listener promises */
    }
}

void
lh_maps_set_listener(void (*fn)(void))
{
    atomic_store(&on_added, fn);
}

void
lh_maps_emit_all_locked(void)
{
    /* Called with the writer lock held, while opening a new file (after fork): only the
     * table is read, the loader is not entered. Frames are written straight through. */
    static uint8_t buf[64 * 1024];
    size_t len = 0;
    uint32_t nrec = 0;
    unsigned n = atomic_load(&n_known);
    for (unsigned i = 0; i < n; i++) {
        if (!known[i].present || !known[i].rec_len) {
            continue;
        }
        if (len + known[i].rec_len > sizeof buf) {
            lh_write_agent_frame_locked(buf, len, nrec, lh_sys_now_ns());
            len = 0;
            nrec = 0;
        }
        if (known[i].rec_len > sizeof buf) {
            continue;
        }
        memcpy(buf + len, rec_arena + known[i].rec_off, known[i].rec_len);
        len += known[i].rec_len;
        nrec++;
    }
    if (len) {
        lh_write_agent_frame_locked(buf, len, nrec, lh_sys_now_ns());
    }
}

void
lh_maps_after_fork(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    scan_lock = fresh;
}

typedef struct text_query {
    uintptr_t addr, lo, hi;
    char *path;
    size_t len;
} text_query_t;

static int
text_segment_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    text_query_t *q = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && q->addr - lo < ph->p_memsz) {
            q->lo = lo;
            q->hi = lo + ph->p_memsz;
            if (q->path) {
                lh_sys_strlcpy(q->path, info->dlpi_name, q->len);
            }
            return 1;
        }
    }
    return 0;
}

int
lh_maps_text_segment(uintptr_t addr, uintptr_t *lo, uintptr_t *hi, char *path, size_t len)
{
    text_query_t q = {addr, 0, 0, path, len};
    if (!dl_iterate_phdr(text_segment_cb, &q)) {
        return 0;
    }
    *lo = q.lo;
    *hi = q.hi;
    return 1;
}
