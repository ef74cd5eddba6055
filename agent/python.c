/* leakhound - SPDX-License-Identifier: MIT
 *
 * python.c: the CPython frame reader (contract in python.h). Two halves:
 * - detection (not AS-safe, at init and after dlopen): find _PyRuntime and friends in the
 *   dynamic symbol table of a loaded module, work out the version, refuse what the table
 *   does not describe, cross-check 3.13's own _Py_DebugOffsets;
 * - capture (AS-safe, from the malloc hooks): the calling thread's PyThreadState, then its
 *   frames, by plain loads. Strings and lines are produced once per code object / per
 *   instruction and kept in agent mappings (caches below), so a repeated stack costs a walk
 *   and a few hash probes.
 * The reader never calls into the interpreter: no API call can be made from inside malloc
 * (it may allocate, take the GIL or raise).
 */
#include "python.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "python_offsets.h"
#include "sys.h"

/* ------------------------------------------------------------------------------------------ */
/* State                                                                                      */

static const lh_pyoff_t *off; /* layout of the detected version, or NULL */
static uintptr_t py_runtime;  /* &_PyRuntime */
static uintptr_t py_code_type, py_unicode_type;
static lh_interp_info_t py_info;
static int py_found; /* detection answered: py_info holds the answer */
static _Atomic int py_ready; /* capture may run */
static int py_is_program;     /* the executable is a python, not a program embedding one */

/* Per thread: the PyThreadState found last time (checked again before each use). */
static __thread uintptr_t tls_tstate __attribute__((tls_model("initial-exec")));

#define MAX_INTERPS 64
#define MAX_TSTATES 4096
#define MAX_FRAMES_WALKED 4096

/* Code cache: one entry per code object (and its names), insert-only, open addressing.
 * An entry is claimed by a CAS of its key from 0 to code|1 and published by storing code. */
#define CODE_SLOTS (1u << 16)
#define CODE_PROBES 32
typedef struct code_ent {
    _Atomic uintptr_t key; /* code object address; low bit set while being filled */
    uintptr_t linetable, filename, name; /* objects, to tell a reused address apart */
    const char *func;
    const char *file;
    uint32_t func_len, file_len;
} code_ent_t;
static code_ent_t *code_tab;

/* Line cache: direct-mapped, one 64-bit word per slot (tag << 24 | line), so a racing
 * writer can never leave a torn entry behind. */
#define LINE_SLOTS (1u << 16)
#define LINE_NONE 0xffffffu
static _Atomic uint64_t *line_tab;

/* Arena for names and file names, bump-allocated with one atomic add. */
#define ARENA_BYTES (16u << 20)
static char *arena;
static _Atomic size_t arena_used;

/* ------------------------------------------------------------------------------------------ */
/* Memory reads                                                                               */

static inline uintptr_t
rd_ptr(uintptr_t a)
{
    uintptr_t v;
    memcpy(&v, (const void *)a, sizeof v);
    return v;
}

static inline int32_t
rd_i32(uintptr_t a)
{
    int32_t v;
    memcpy(&v, (const void *)a, sizeof v);
    return v;
}

/* A pointer the reader is willing to follow: non-null, aligned, in user space. */
static inline int
ptr_ok(uintptr_t p)
{
    return p >= 4096 && (p & 7) == 0 && p < ((uintptr_t)1 << 47);
}

static inline int
is_type(uintptr_t obj, uintptr_t type)
{
    return ptr_ok(obj) && rd_ptr(obj + (uintptr_t)off->ob_type) == type;
}

/* ------------------------------------------------------------------------------------------ */
/* Line tables                                                                                */

int
lh_python_line_lnotab(const uint8_t *tab, size_t len, int first, int offset)
{
    /* (address increment, signed line increment) pairs; the line of offset is the one in
     * force after the last pair whose address is <= offset. */
    int line = first;
    int addr = 0;
    for (size_t i = 0; i + 1 < len; i += 2) {
        addr += tab[i];
        if (addr > offset) {
            break;
        }
        line += (int8_t)tab[i + 1];
    }
    return line;
}

int
lh_python_line_310(const uint8_t *tab, size_t len, int first, int offset)
{
    /* PEP 626: (byte length, signed line delta) pairs, delta -128 = no line. */
    int line = first;
    int start = 0;
    for (size_t i = 0; i + 1 < len; i += 2) {
        int end = start + tab[i];
        int8_t d = (int8_t)tab[i + 1];
        if (d != -128) {
            line += d;
        }
        if (offset < end) {
            return d == -128 ? -1 : line;
        }
        start = end;
    }
    return -1;
}

static int
varint(const uint8_t *tab, size_t len, size_t *i, unsigned *out)
{
    unsigned v = 0;
    int shift = 0;
    for (;;) {
        if (*i >= len || shift > 28) {
            return -1;
        }
        uint8_t b = tab[(*i)++];
        v |= (unsigned)(b & 63) << shift;
        shift += 6;
        if (!(b & 64)) {
            break;
        }
    }
    *out = v;
    return 0;
}

int
lh_python_line_311(const uint8_t *tab, size_t len, int first, int offset)
{
    /* The location table (Objects/locations.md): entries open with a byte 1cccclll,
     * code c, length l+1 code units. Only line deltas matter here. */
    int line = first;
    int addr = 0; /* code units */
    int target = offset / 2;
    size_t i = 0;
    while (i < len) {
        uint8_t b = tab[i++];
        if (!(b & 0x80)) {
            return -1;
        }
        int code = (b >> 3) & 15;
        int n = (b & 7) + 1;
        int delta = 0;
        unsigned v;
        switch (code) {
        case 15: /* no location */
            break;
        case 14: /* long form: line delta, end line delta, column, end column */
        case 13: /* no columns: line delta */
            if (varint(tab, len, &i, &v) < 0) {
                return -1;
            }
            delta = (v & 1) ? -(int)(v >> 1) : (int)(v >> 1);
            if (code == 14) {
                for (int k = 0; k < 3; k++) {
                    if (varint(tab, len, &i, &v) < 0) {
                        return -1;
                    }
                }
            }
            break;
        case 10:
        case 11:
        case 12: /* one line: delta code - 10, column, end column */
            delta = code - 10;
            i += 2;
            break;
        default: /* short form: same line, one byte of columns */
            i += 1;
            break;
        }
        line += delta;
        if (target < addr + n) {
            return code == 15 ? -1 : line;
        }
        addr += n;
    }
    return -1;
}

/* ------------------------------------------------------------------------------------------ */
/* Strings                                                                                    */

static char *
arena_take(size_t n)
{
    size_t at = atomic_fetch_add_explicit(&arena_used, n, memory_order_relaxed);
    if (at + n > ARENA_BYTES || at + n < at) {
        return NULL;
    }
    return arena + at;
}

/* UTF-8 length of str object s, or -1 if it is not a str this reader understands. Sets
 * *kind (0 = UTF-8 bytes at *data, else 1/2/4 bytes per code point) and *n code units. */
static long
str_view(uintptr_t s, const uint8_t **data, int *kind, size_t *n)
{
    if (!is_type(s, py_unicode_type)) {
        return -1;
    }
    long len = (long)rd_ptr(s + (uintptr_t)off->str_length);
    uint32_t st;
    memcpy(&st, (const void *)(s + (uintptr_t)off->str_state), sizeof st);
    int k = (int)((st >> off->kind_shift) & 7);
    int compact = (int)((st >> off->compact_shift) & 1);
    int ascii = (int)((st >> off->ascii_shift) & 1);
    if (len < 0 || len > 4096 || !compact) {
        return -1;
    }
    if (ascii) {
        *data = (const uint8_t *)(s + (uintptr_t)off->str_ascii_size);
        *kind = 0;
        *n = (size_t)len;
        return len;
    }
    uintptr_t u8 = rd_ptr(s + (uintptr_t)off->str_utf8);
    if (u8) {
        long u8len = (long)rd_ptr(s + (uintptr_t)off->str_utf8_length);
        if (u8len < 0 || u8len > 16384) {
            return -1;
        }
        *data = (const uint8_t *)u8;
        *kind = 0;
        *n = (size_t)u8len;
        return u8len;
    }
    if (k != 1 && k != 2 && k != 4) {
        return -1;
    }
    *data = (const uint8_t *)(s + (uintptr_t)off->str_compact_size);
    *kind = k;
    *n = (size_t)len;
    return len * 4; /* upper bound */
}

/* Appends str object s to out as UTF-8; returns bytes written. */
static size_t
str_put(char *out, const uint8_t *data, int kind, size_t n)
{
    if (kind == 0) {
        memcpy(out, data, n);
        return n;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c;
        if (kind == 1) {
            c = data[i];
        } else if (kind == 2) {
            uint16_t c16;
            memcpy(&c16, data + 2 * i, 2);
            c = c16;
        } else {
            memcpy(&c, data + 4 * i, 4);
        }
        if (c < 0x80) {
            out[o++] = (char)c;
        } else if (c < 0x800) {
            out[o++] = (char)(0xc0 | (c >> 6));
            out[o++] = (char)(0x80 | (c & 63));
        } else if (c < 0x10000) {
            out[o++] = (char)(0xe0 | (c >> 12));
            out[o++] = (char)(0x80 | ((c >> 6) & 63));
            out[o++] = (char)(0x80 | (c & 63));
        } else {
            out[o++] = (char)(0xf0 | (c >> 18));
            out[o++] = (char)(0x80 | ((c >> 12) & 63));
            out[o++] = (char)(0x80 | ((c >> 6) & 63));
            out[o++] = (char)(0x80 | (c & 63));
        }
    }
    return o;
}

/* "module.qualname" (or the name alone, or "<module>" for module code) and the file name of
 * code into the arena. Returns 0, or -1 when a string is unreadable or the arena is full. */
static int
code_names(uintptr_t code, uintptr_t func, code_ent_t *e)
{
    const uint8_t *qd, *md = NULL, *fd;
    int qk, mk = 0, fk;
    size_t qn, mn = 0, fn;
    uintptr_t qual = rd_ptr(code + (uintptr_t)(off->co_qualname >= 0 ? off->co_qualname
                                                                       : off->co_name));
    long qmax = str_view(qual, &qd, &qk, &qn);
    long fmax = str_view(e->filename, &fd, &fk, &fn);
    if (qmax < 0 || fmax < 0) {
        return -1;
    }
    long mmax = -1;
    int is_module_code = qk == 0 && qn == 8 && memcmp(qd, "<module>", 8) == 0;
    if (off->fn_module >= 0 && ptr_ok(func) && !is_module_code) {
        uintptr_t mod = rd_ptr(func + (uintptr_t)off->fn_module);
        mmax = str_view(mod, &md, &mk, &mn);
    }
    char *p = arena_take((size_t)qmax + (mmax > 0 ? (size_t)mmax + 1 : 0) + (size_t)fmax);
    if (!p) {
        return -1;
    }
    size_t o = 0;
    if (mmax > 0) {
        o += str_put(p + o, md, mk, mn);
        p[o++] = '.';
    }
    o += str_put(p + o, qd, qk, qn);
    e->func = p;
    e->func_len = (uint32_t)o;
    e->file = p + o;
    e->file_len = (uint32_t)str_put(p + o, fd, fk, fn);
    return 0;
}

/* The cache entry of code (names and file), inserting it if new. NULL if unreadable. */
static const code_ent_t *
code_get(uintptr_t code, uintptr_t func)
{
    uintptr_t lt = rd_ptr(code + (uintptr_t)off->co_linetable);
    uintptr_t fname = rd_ptr(code + (uintptr_t)off->co_filename);
    uintptr_t name = rd_ptr(code + (uintptr_t)off->co_name);
    uint32_t h = (uint32_t)lh_sys_mix64(code);
    for (uint32_t i = 0; i < CODE_PROBES; i++) {
        code_ent_t *e = &code_tab[(h + i) & (CODE_SLOTS - 1)];
        uintptr_t k = atomic_load_explicit(&e->key, memory_order_acquire);
        if (k == code) {
            if (e->linetable == lt && e->filename == fname && e->name == name) {
                return e;
            }
            continue; /* the address of a freed code object, reused: another slot */
        }
        if (k == (code | 1)) {
            return NULL; /* another thread is filling it in: this stack goes without */
        }
        if (k != 0) {
            continue;
        }
        uintptr_t zero = 0;
        if (!atomic_compare_exchange_strong_explicit(&e->key, &zero, code | 1,
                                                     memory_order_acq_rel,
                                                     memory_order_relaxed)) {
            i--; /* lost the race for this slot: look at what won it */
            continue;
        }
        e->linetable = lt;
        e->filename = fname;
        e->name = name;
        if (code_names(code, func, e) < 0) {
            /* Keep the slot claimed as unreadable: key stays odd, lookups give up. */
            return NULL;
        }
        atomic_store_explicit(&e->key, code, memory_order_release);
        return e;
    }
    return NULL;
}

/* Line of the instruction at byte offset in code, through the line cache. 0 = none. */
static uint32_t
code_line(uintptr_t code, int offset)
{
    uintptr_t lt = rd_ptr(code + (uintptr_t)off->co_linetable);
    uint64_t h = lh_sys_mix64(code ^ (lt * 31) ^ ((uint64_t)(uint32_t)offset << 40));
    _Atomic uint64_t *slot = &line_tab[h & (LINE_SLOTS - 1)];
    uint64_t tag = h >> 24;
    uint64_t v = atomic_load_explicit(slot, memory_order_relaxed);
    uint32_t line;
    if ((v >> 24) == tag) {
        line = (uint32_t)(v & 0xffffff);
    } else {
        int first = rd_i32(code + (uintptr_t)off->co_firstlineno);
        int l = first;
        if (ptr_ok(lt)) {
            long n = (long)rd_ptr(lt + (uintptr_t)off->var_size);
            const uint8_t *tab = (const uint8_t *)(lt + (uintptr_t)off->bytes_sval);
            if (n < 0 || n > (1l << 24)) {
                l = -1;
            } else if (offset < 0) {
                l = first;
            } else if (off->minor >= 11) {
                l = lh_python_line_311(tab, (size_t)n, first, offset);
            } else if (off->minor == 10) {
                l = lh_python_line_310(tab, (size_t)n, first, offset);
            } else {
                l = lh_python_line_lnotab(tab, (size_t)n, first, offset);
            }
        }
        line = (l < 0 || l >= (int)LINE_NONE) ? LINE_NONE : (uint32_t)l;
        atomic_store_explicit(slot, (tag << 24) | line, memory_order_relaxed);
    }
    return line == LINE_NONE ? 0 : line;
}

/* ------------------------------------------------------------------------------------------ */
/* Capture                                                                                    */

static uintptr_t
frame_of(uintptr_t ts)
{
    uintptr_t f = rd_ptr(ts + (uintptr_t)off->ts_frame);
    if (off->cf_current >= 0) {
        if (!ptr_ok(f)) {
            return 0;
        }
        f = rd_ptr(f + (uintptr_t)off->cf_current);
    }
    return ptr_ok(f) ? f : 0;
}

/* The calling thread's PyThreadState: the one of the interpreter's lists whose thread_id is
 * ours (PyThread_get_thread_ident is pthread_self in every version here). A new thread's
 * state carries its creator's id until the thread binds it, so a state with frames wins. */
static uintptr_t
my_tstate(void)
{
    uintptr_t me = (uintptr_t)pthread_self();
    uintptr_t ts = tls_tstate;
    if (ts && rd_ptr(ts + (uintptr_t)off->ts_thread_id) == me && frame_of(ts)) {
        return ts;
    }
    uintptr_t any = 0;
    uintptr_t interp = rd_ptr(py_runtime + (uintptr_t)off->rt_interp_head);
    for (int i = 0; i < MAX_INTERPS && ptr_ok(interp); i++) {
        ts = rd_ptr(interp + (uintptr_t)off->is_tstate_head);
        for (int j = 0; j < MAX_TSTATES && ptr_ok(ts); j++) {
            if (rd_ptr(ts + (uintptr_t)off->ts_thread_id) == me) {
                if (frame_of(ts)) {
                    tls_tstate = ts;
                    return ts;
                }
                if (!any) {
                    any = ts;
                }
            }
            ts = rd_ptr(ts + (uintptr_t)off->ts_next);
        }
        interp = rd_ptr(interp + (uintptr_t)off->is_next);
    }
    return any;
}

int
lh_python_capture(lh_sframe_t *out, int max)
{
    if (!atomic_load_explicit(&py_ready, memory_order_acquire) || max <= 0) {
        return 0;
    }
    uintptr_t ts = my_tstate();
    if (!ts) {
        return 0;
    }
    uintptr_t f = frame_of(ts);
    int n = 0;
    for (int walked = 0; f && n < max && walked < MAX_FRAMES_WALKED; walked++) {
        uintptr_t code = rd_ptr(f + (uintptr_t)off->fr_code);
        uintptr_t next = rd_ptr(f + (uintptr_t)off->fr_back);
        int offset;
        int skip = !is_type(code, py_code_type); /* 3.13 shims run no code object */
        if (off->fr_owner >= 0 && !skip) {
            int owner = *(const int8_t *)(f + (uintptr_t)off->fr_owner);
            uintptr_t start = code + (uintptr_t)off->co_code_adaptive;
            uintptr_t ip = rd_ptr(f + (uintptr_t)off->fr_instr);
            long units = ((long)ip - (long)start) / 2;
            int first_traceable = rd_i32(code + (uintptr_t)off->co_firsttraceable);
            /* Entry frames of the C stack, and frames still being set up (before their
             * first traceable instruction: _PyFrame_IsIncomplete), are not Python calls. */
            if (owner == off->owner_cstack ||
                (owner != off->owner_generator && units < first_traceable)) {
                skip = 1;
            }
            offset = (int)(units < 0 ? -1 : units * 2);
        } else if (!skip) {
            int lasti = rd_i32(f + (uintptr_t)off->fr_instr);
            offset = lasti < 0 ? -1 : (off->minor >= 10 ? lasti * 2 : lasti);
        } else {
            offset = -1;
        }
        if (!skip) {
            uintptr_t func = off->fr_func >= 0 ? rd_ptr(f + (uintptr_t)off->fr_func) : 0;
            const code_ent_t *e = code_get(code, func);
            if (e) {
                lh_sframe_t *s = &out[n++];
                s->line = code_line(code, offset);
                s->key = (uintptr_t)e; /* an entry is one (function, file) */
                s->key2 = s->line;
                s->func = e->func;
                s->func_len = e->func_len;
                s->file = e->file;
                s->file_len = e->file_len;
            }
        }
        f = ptr_ok(next) ? next : 0;
    }
    return n;
}

/* "At exit" for a Python program is when its main module is over: Py_FinalizeEx sets
 * _PyRuntime._finalizing once the atexit callbacks ran, then frees modules and objects. The
 * exit status is not in memory then (Py_RunMain keeps it in a local), so *status is 0 here
 * and the recorder writes the real one at the process's exit (lh_recorder_exit_status).
 * An interpreter embedded in another program (its executable is not a python) ends when
 * that program does: 0. */
int
lh_python_ended(int *status)
{
    if (!py_is_program || !atomic_load_explicit(&py_ready, memory_order_acquire)) {
        return 0;
    }
    uintptr_t fin;
    memcpy(&fin, (const void *)(py_runtime + (uintptr_t)off->rt_finalizing), sizeof fin);
    if (!fin) {
        return 0;
    }
    *status = 0;
    return 1;
}

/* ------------------------------------------------------------------------------------------ */
/* Detection                                                                                  */

typedef struct sym_query {
    const char *name;
    uintptr_t addr;
} sym_query_t;

enum {
    Q_RUNTIME,
    Q_VERSION,
    Q_CODE_TYPE,
    Q_UNICODE_TYPE,
    Q_VECTORCALL, /* 3.8+ */
    Q_FRAME_GETCODE, /* 3.9+ */
    Q_IS_NONE, /* 3.10+ */
    Q_REFTOTAL, /* debug builds, 3.8-3.11 */
    Q_GETREFTOTAL, /* debug builds, 3.12+ */
    Q_N
};

typedef struct find_ctx {
    sym_query_t q[Q_N];
    char module[4096];
} find_ctx_t;

static uint32_t
gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (; *s; s++) {
        h = h * 33 + (uint8_t)*s;
    }
    return h;
}

static uint32_t
elf_hash(const char *s)
{
    uint32_t h = 0;
    for (; *s; s++) {
        h = (h << 4) + (uint8_t)*s;
        uint32_t g = h & 0xf0000000u;
        if (g) {
            h ^= g >> 24;
        }
        h &= ~g;
    }
    return h;
}

/* Elf64 rather than ElfW: the layouts table describes LP64 builds only (x86-64, aarch64). */
typedef struct dynsyms {
    uintptr_t base;
    const Elf64_Sym *sym;
    const char *str;
    const uint32_t *gnu;
    const uint32_t *sysv;
} dynsyms_t;

static uintptr_t
dyn_addr(uintptr_t base, uint64_t v)
{
    /* glibc relocates these in place where .dynamic is writable; the vDSO's are not. */
    return v < base ? base + v : v;
}

static uintptr_t
dyn_lookup(const dynsyms_t *d, const char *name)
{
    const Elf64_Sym *hit = NULL;
    if (d->gnu) {
        uint32_t nb = d->gnu[0], symoff = d->gnu[1], bloom = d->gnu[2];
        const uint32_t *buckets = d->gnu + 4 + bloom * (sizeof(uint64_t) / 4);
        const uint32_t *chain = buckets + nb;
        uint32_t h = gnu_hash(name);
        uint32_t i = nb ? buckets[h % nb] : 0;
        if (i >= symoff) {
            for (;; i++) {
                uint32_t c = chain[i - symoff];
                if ((c | 1) == (h | 1) && strcmp(d->str + d->sym[i].st_name, name) == 0) {
                    hit = &d->sym[i];
                    break;
                }
                if (c & 1) {
                    break;
                }
            }
        }
    } else if (d->sysv) {
        uint32_t nb = d->sysv[0];
        const uint32_t *buckets = d->sysv + 2, *chain = buckets + nb;
        for (uint32_t i = nb ? buckets[elf_hash(name) % nb] : 0; i; i = chain[i]) {
            if (strcmp(d->str + d->sym[i].st_name, name) == 0) {
                hit = &d->sym[i];
                break;
            }
        }
    }
    if (!hit || hit->st_shndx == SHN_UNDEF || !hit->st_value) {
        return 0;
    }
    return d->base + hit->st_value;
}

static int
find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    find_ctx_t *ctx = arg;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) {
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        }
    }
    if (!dyn) {
        return 0;
    }
    dynsyms_t d = {.base = info->dlpi_addr};
    for (; dyn->d_tag != DT_NULL; dyn++) {
        uintptr_t v = dyn_addr(info->dlpi_addr, dyn->d_un.d_ptr);
        switch (dyn->d_tag) {
        case DT_SYMTAB: d.sym = (const Elf64_Sym *)v; break;
        case DT_STRTAB: d.str = (const char *)v; break;
        case DT_GNU_HASH: d.gnu = (const uint32_t *)v; break;
        case DT_HASH: d.sysv = (const uint32_t *)v; break;
        default: break;
        }
    }
    if (!d.sym || !d.str || (!d.gnu && !d.sysv)) {
        return 0;
    }
    /* Py_Initialize: every CPython, also those older than _PyRuntime (3.7). */
    if (!dyn_lookup(&d, "_PyRuntime") && !dyn_lookup(&d, "Py_Initialize")) {
        return 0;
    }
    for (int i = 0; i < Q_N; i++) {
        ctx->q[i].addr = dyn_lookup(&d, ctx->q[i].name);
    }
    lh_sys_strlcpy(ctx->module, info->dlpi_name, sizeof ctx->module);
    return 1; /* the first interpreter in load order: the one the program runs */
}

/* "M.N" in a file name (python3.11, libpython3.9.so.1.0): M * 100 + N, or -1. */
static int
version_from_name(const char *p)
{
    int v = -1;
    for (const char *q = p; (q = strstr(q, "python")) != NULL; q++) {
        const char *s = q + 6;
        if (s[0] < '0' || s[0] > '9' || s[1] != '.' || s[2] < '0' || s[2] > '9') {
            continue;
        }
        int m = 0;
        for (s += 2; *s >= '0' && *s <= '9' && m < 100; s++) {
            m = m * 10 + (*s - '0');
        }
        v = (q[6] - '0') * 100 + m;
    }
    return v;
}

static void
say(const char *a, const char *b, const char *c)
{
    size_t o = lh_sys_strlcpy(py_info.detail, a, sizeof py_info.detail);
    if (b && o < sizeof py_info.detail) {
        o += lh_sys_strlcpy(py_info.detail + o, b, sizeof py_info.detail - o);
    }
    if (c && o < sizeof py_info.detail) {
        lh_sys_strlcpy(py_info.detail + o, c, sizeof py_info.detail - o);
    }
}

static void
version_str(unsigned long hex, int minor)
{
    char *v = py_info.version;
    size_t o = 0;
    if (hex) {
        o += lh_sys_fmt_u64(v + o, (hex >> 24) & 0xff);
        v[o++] = '.';
        o += lh_sys_fmt_u64(v + o, (hex >> 16) & 0xff);
        v[o++] = '.';
        o += lh_sys_fmt_u64(v + o, (hex >> 8) & 0xff);
    } else {
        v[o++] = '3';
        v[o++] = '.';
        o += lh_sys_fmt_u64(v + o, (uint64_t)minor);
    }
    v[o] = 0;
}

/* 3.13 publishes its own layout at the start of _PyRuntime (_Py_DebugOffsets, read as u64
 * words; indices from Include/internal/pycore_runtime.h of 3.13). 0 = agrees. */
static int
check_debug_offsets(const lh_pyoff_t *t, uintptr_t rt, const char **why)
{
    const uint64_t *w = (const uint64_t *)rt;
    if (memcmp((const void *)rt, "xdebugpy", 8) != 0) {
        *why = "its _Py_DebugOffsets cookie is missing";
        return -1;
    }
    if (w[2] != 0) {
        *why = "it is a free-threaded build";
        return -1;
    }
    struct {
        int idx;
        int val;
    } chk[] = {
        {4, t->rt_finalizing},     {5, t->rt_interp_head},    {8, t->is_next},      {9, t->is_tstate_head},
        {21, t->ts_next},          {22, t->ts_interp},   {23, t->ts_frame},
        {24, t->ts_thread_id},     {29, t->fr_back},     {30, t->fr_code},
        {31, t->fr_instr},         {33, t->fr_owner},    {35, t->co_filename},
        {36, t->co_name},          {37, t->co_qualname}, {38, t->co_linetable},
        {39, t->co_firstlineno},   {43, t->co_code_adaptive},
        {45, t->ob_type},          {68, t->str_state},   {69, t->str_length},
        {70, t->str_ascii_size},
    };
    for (size_t i = 0; i < sizeof chk / sizeof chk[0]; i++) {
        if (w[chk[i].idx] != (uint64_t)chk[i].val) {
            *why = "its _Py_DebugOffsets disagree with this leakhound's table";
            return -1;
        }
    }
    return 0;
}

static int
maps_init(void)
{
    if (code_tab) {
        return 0;
    }
    code_tab = lh_sys_map(sizeof(code_ent_t) * CODE_SLOTS);
    line_tab = lh_sys_map(sizeof(uint64_t) * LINE_SLOTS);
    arena = lh_sys_map(ARENA_BYTES);
    return code_tab && line_tab && arena ? 0 : -1;
}

void
lh_python_describe(lh_sframe_t *f, char *buf, size_t cap)
{
    (void)buf;
    (void)cap;
    if (!f->func && f->key) {
        const code_ent_t *e = (const code_ent_t *)f->key;
        f->func = e->func;
        f->func_len = e->func_len;
        f->file = e->file;
        f->file_len = e->file_len;
    }
}

/* pymalloc serves objects of 512 bytes or less from its own arenas, out of the malloc
 * hooks' sight. PYTHONMALLOC=malloc (read by CPython 3.6+ when it starts, after our
 * constructor) sends them through malloc, one recorded block per object. Chosen over
 * hooking the allocator domains (PyMem_SetAllocator), which would mean calling the
 * interpreter and keeping a second recording path; its cost is measured in bench/ (issue
 * 13). Set only from the constructor (putenv is not safe with other threads running), only
 * where the user did not choose, and said in one line when the program is a python (a
 * native program that links libpython, unbound, gdb, may never run Python: no word about
 * it there). LEAKHOUND_PYMALLOC=keep opts out. */
static void
pymalloc_off(int say)
{
    const char *keep = getenv("LEAKHOUND_PYMALLOC");
    if (getenv("PYTHONMALLOC") || (keep && strcmp(keep, "keep") == 0)) {
        return;
    }
    /* putenv of our own static string, not setenv: setenv would malloc, before recording
     * starts, the root of libc's tsearch tree of set strings, and every node the program's
     * own setenv (os.environ[k] = v) adds under it would look definitely lost (config.c
     * does the same for LEAKHOUND_MAIN_PID). */
    static char pymalloc_env[] = "PYTHONMALLOC=malloc";
    if (putenv(pymalloc_env) == 0 && say) {
        lh_sys_log("python: PYTHONMALLOC=malloc set so that every object is recorded "
                   "(LEAKHOUND_PYMALLOC=keep keeps pymalloc)", "", "");
    }
}

int
lh_python_detect(lh_interp_info_t *info)
{
    static int calls;
    int first = calls++ == 0;
    if (py_found) {
        *info = py_info;
        return 1;
    }
    static const char *const names[Q_N] = {
        [Q_RUNTIME] = "_PyRuntime",          [Q_VERSION] = "Py_Version",
        [Q_CODE_TYPE] = "PyCode_Type",       [Q_UNICODE_TYPE] = "PyUnicode_Type",
        [Q_VECTORCALL] = "PyVectorcall_Call", [Q_FRAME_GETCODE] = "PyFrame_GetCode",
        [Q_IS_NONE] = "Py_IsNone",           [Q_REFTOTAL] = "_Py_RefTotal",
        [Q_GETREFTOTAL] = "_Py_GetRefTotal",
    };
    static find_ctx_t ctx; /* not reentrant: detection runs at init or after dlopen */
    memset(&ctx, 0, sizeof ctx);
    for (int i = 0; i < Q_N; i++) {
        ctx.q[i].name = names[i];
    }
    if (!dl_iterate_phdr(find_cb, &ctx)) {
        return 0;
    }
    static char exe[4096];
    ssize_t xn = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[xn > 0 ? xn : 0] = 0;
    const char *base = strrchr(exe, '/');
    base = base ? base + 1 : exe;
    py_is_program = strncmp(base, "python", 6) == 0;
    if (!ctx.module[0]) {
        lh_sys_strlcpy(ctx.module, exe, sizeof ctx.module);
    }
    py_found = 1;
    py_info.lang = LH_LANG_PYTHON;
    py_info.status = LH_INTERP_UNSUPPORTED;
    if (first) {
        pymalloc_off(py_is_program);
    }
    unsigned long hex = 0;
    int minor;
    if (ctx.q[Q_VERSION].addr) {
        hex = *(const unsigned long *)ctx.q[Q_VERSION].addr;
        minor = (hex >> 24) == 3 ? (int)((hex >> 16) & 0xff) : -1;
    } else if (!ctx.q[Q_VECTORCALL].addr || !ctx.q[Q_RUNTIME].addr) {
        int named = version_from_name(ctx.module); /* older than 3.8 */
        if (named < 0 || named >= 308) {
            named = 307;
        }
        if (named / 100 != 3) {
            py_found = 1;
            py_info.lang = LH_LANG_PYTHON;
            py_info.status = LH_INTERP_UNSUPPORTED;
            py_info.version[0] = (char)('0' + named / 100);
            py_info.version[1] = '.';
            py_info.version[2 + lh_sys_fmt_u64(py_info.version + 2, (uint64_t)(named % 100))] = 0;
            say("python ", py_info.version,
                " is not known to this leakhound (3.8 to 3.13 are): recording native frames only");
            goto out;
        }
        minor = named % 100;
    } else {
        /* 3.8-3.10 keep their version only in a string built at run time: the API each
         * minor version added tells them apart, and the file name must agree. */
        minor = 8 + (ctx.q[Q_FRAME_GETCODE].addr != 0) + (ctx.q[Q_IS_NONE].addr != 0);
        int named = version_from_name(ctx.module);
        if (named >= 0 && named != 300 + minor) {
            version_str(0, named % 100);
            say("python ", py_info.version,
                ": its symbols do not match its version: recording native frames only");
            goto out;
        }
    }
    version_str(hex, minor);
    const lh_pyoff_t *t = NULL;
    for (size_t i = 0; i < sizeof lh_pyoff_table / sizeof lh_pyoff_table[0]; i++) {
        if (lh_pyoff_table[i].minor == minor) {
            t = &lh_pyoff_table[i];
        }
    }
    if (!t || sizeof(void *) != 8) {
        say("python ", py_info.version,
            " is not known to this leakhound (3.8 to 3.13 are): recording native frames only");
        goto out;
    }
    if (ctx.q[Q_REFTOTAL].addr || ctx.q[Q_GETREFTOTAL].addr) {
        say("python ", py_info.version,
            " is a debug build (Py_DEBUG): recording native frames only");
        goto out;
    }
    if (!ctx.q[Q_CODE_TYPE].addr || !ctx.q[Q_UNICODE_TYPE].addr) {
        say("python ", py_info.version,
            " does not export PyCode_Type/PyUnicode_Type: recording native frames only");
        goto out;
    }
    const char *why = NULL;
    if (minor >= 13 && check_debug_offsets(t, ctx.q[Q_RUNTIME].addr, &why) < 0) {
        char head[64];
        size_t o = lh_sys_strlcpy(head, "python ", sizeof head);
        o += lh_sys_strlcpy(head + o, py_info.version, sizeof head - o);
        lh_sys_strlcpy(head + o, ": ", sizeof head - o);
        say(head, why, ": recording native frames only");
        goto out;
    }
    const char *want = getenv("LEAKHOUND_PYTHON_FRAMES");
    if (want && strcmp(want, "0") == 0) {
        say("python ", py_info.version,
            ": Python frames turned off (LEAKHOUND_PYTHON_FRAMES=0): native frames only");
        goto out;
    }
    if (maps_init() < 0) {
        say("python ", py_info.version, ": no memory for the frame reader: native frames only");
        goto out;
    }
    off = t;
    py_runtime = ctx.q[Q_RUNTIME].addr;
    py_code_type = ctx.q[Q_CODE_TYPE].addr;
    py_unicode_type = ctx.q[Q_UNICODE_TYPE].addr;
    py_info.status = LH_INTERP_RECORDED;
    py_info.detail[0] = 0;
    atomic_store_explicit(&py_ready, 1, memory_order_release);
out:
    *info = py_info;
    return 1;
}
