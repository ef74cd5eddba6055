/* leakhound - SPDX-License-Identifier: MIT
 *
 * symcache.c: the per-module symbol cache files (symcache.h; the layout is in
 * docs/FORMAT.md, "Symbol cache files").
 */
#include "symcache.h"

#include "hash.h"

#include <dlfcn.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bound.h"
#include "dupstr.h"
#include "grow.h"
#include "hash.h"
#include "privfile.h"

#define SC_MAGIC "LHSYMC\r\n"
#define SC_VERSION 1u
#define SC_HEADER 40u       /* magic, version, key kind, key length, fingerprint, 3 counts */
#define SC_ENTRY 16u        /* offset, first frame, frame count */
#define SC_FRAME 16u        /* function, file, line, inlined */
#define SC_MAX_FILE (256u << 20)
#define SC_KEY_BUILD_ID 1u
#define SC_KEY_PATH 2u
#define SC_NO_STRING 0xFFFFFFFFu

typedef struct sc_entry {
    uint64_t offset;
    uint32_t first, n; /* frames[first .. first+n) */
} sc_entry_t;

struct lh_symcache {
    char *file; /* the cache file's path */
    uint8_t *key;
    uint32_t key_len, key_kind;
    uint64_t fingerprint;
    sc_entry_t *ents;
    size_t n_ents, cap_ents;
    lh_symcache_frame_t *frames;
    size_t n_frames, cap_frames;
    uint32_t *slots; /* open addressing: entry index, UINT32_MAX empty (hash.h) */
    size_t mask;
    int loaded; /* a valid file was read */
    char **bufs; /* loaded files: their strings are pointed at */
    size_t n_bufs, cap_bufs;
    int dirty;
};

/* ---------------------------------------------------------------------------------------
 * Little-endian fields and the checksum (FNV-1a, 64 bits)
 * ------------------------------------------------------------------------------------- */


static uint32_t
get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t
get64(const uint8_t *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void
put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static void
put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

/* ---------------------------------------------------------------------------------------
 * The directory
 * ------------------------------------------------------------------------------------- */

static int enabled = 1;
static int dir_state; /* 0: not decided; 1: usable; -1: not */
static char dir_path[PATH_MAX];

void
lh_symcache_set_enabled(int on)
{
    enabled = on;
    dir_state = 0;
}

/* A private directory of ours: not a symlink, owned by the effective user, mode 0700 or
 * narrower. */
static int
private_dir(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
           (st.st_mode & 077) == 0;
}

const char *
lh_symcache_dir(void)
{
    if (!enabled) {
        return NULL;
    }
    if (dir_state) {
        return dir_state > 0 ? dir_path : NULL;
    }
    dir_state = -1;
    const char *env = getenv("LEAKHOUND_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n;
    if (env && env[0]) {
        n = snprintf(dir_path, sizeof dir_path, "%s", env);
    } else if (xdg && xdg[0] == '/') {
        n = snprintf(dir_path, sizeof dir_path, "%s/leakhound", xdg);
        if (n > 0 && (size_t)n < sizeof dir_path) {
            (void)mkdir(xdg, 0700);
        }
    } else if (home && home[0] == '/') {
        char parent[PATH_MAX];
        n = snprintf(parent, sizeof parent, "%s/.cache", home);
        if (n > 0 && (size_t)n < sizeof parent) {
            (void)mkdir(parent, 0700);
        }
        n = snprintf(dir_path, sizeof dir_path, "%s/.cache/leakhound", home);
    } else {
        return NULL;
    }
    if (n <= 0 || (size_t)n >= sizeof dir_path - 64) {
        return NULL;
    }
    if (mkdir(dir_path, 0700) != 0 && errno != EEXIST) {
        return NULL;
    }
    if (!private_dir(dir_path)) {
        return NULL;
    }
    dir_state = 1;
    return dir_path;
}

/* ---------------------------------------------------------------------------------------
 * Keys and the debug-information fingerprint
 * ------------------------------------------------------------------------------------- */

/* Folds in whether path exists, and its size, modification time and inode. */
static uint64_t
fp_file(uint64_t h, const char *path)
{
    struct stat st;
    h = lh_fnv1a(h, path, strlen(path) + 1);
    if (stat(path, &st) != 0) {
        return lh_fnv1a(h, "-", 1);
    }
    uint64_t v[4] = {(uint64_t)st.st_size, (uint64_t)st.st_mtim.tv_sec,
                     (uint64_t)st.st_mtim.tv_nsec, (uint64_t)st.st_ino};
    return lh_fnv1a(h, v, sizeof v);
}

/* From libstdc++ (C linkage): the demangler, whose library's identity is fingerprinted. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

/* What the symbolizer's answers depend on besides the module's identity: the module file's
 * size (a stripped copy keeps its build id), the separate debug files libdwfl would look
 * for, the libdw version, leakhound itself (a rebuilt leakhound may symbolize
 * differently) and the C++ demangler's library. */
static uint64_t
fingerprint(const char *path, Dwfl_Module *mod, const uint8_t *id, size_t id_len)
{
    char p[PATH_MAX + 64];
    struct stat st;
    uint64_t h = LH_FNV_OFFSET;
    uint64_t size = stat(path, &st) == 0 ? (uint64_t)st.st_size : UINT64_MAX;
    h = lh_fnv1a(h, &size, sizeof size);
    h = fp_file(h, "/proc/self/exe");
    Dl_info so;
    if (dladdr((void *)__cxa_demangle, &so) && so.dli_fname) {
        h = fp_file(h, so.dli_fname);
    }
    const char *ver = dwfl_version(NULL);
    h = lh_fnv1a(h, ver ? ver : "", ver ? strlen(ver) + 1 : 1);
    if (id_len > 1 && id_len <= 64) {
        char idhex[129];
        lh_hex(idhex, sizeof idhex, id, id_len);
        snprintf(p, sizeof p, "/usr/lib/debug/.build-id/%.2s/%s.debug", idhex, idhex + 2);
        h = fp_file(h, p);
        const char *dcache = getenv("DEBUGINFOD_CACHE_PATH");
        const char *xdg = getenv("XDG_CACHE_HOME");
        const char *home = getenv("HOME");
        if (dcache && dcache[0]) {
            snprintf(p, sizeof p, "%s/%s/debuginfo", dcache, idhex);
        } else if (xdg && xdg[0]) {
            snprintf(p, sizeof p, "%s/debuginfod_client/%s/debuginfo", xdg, idhex);
        } else {
            snprintf(p, sizeof p, "%s/.cache/debuginfod_client/%s/debuginfo",
                     home ? home : "", idhex);
        }
        h = fp_file(h, p);
    }
    Dwarf_Addr bias;
    Elf *elf = dwfl_module_getelf(mod, &bias);
    GElf_Word crc;
    const char *link = elf ? dwelf_elf_gnu_debuglink(elf, &crc) : NULL;
    if (link && !strchr(link, '/')) {
        const char *slash = strrchr(path, '/');
        int dl = slash ? (int)(slash - path) : 1;
        const char *dir = slash ? path : ".";
        snprintf(p, sizeof p, "%.*s/%s", dl, dir, link);
        h = fp_file(h, p);
        snprintf(p, sizeof p, "%.*s/.debug/%s", dl, dir, link);
        h = fp_file(h, p);
        if (path[0] == '/') {
            snprintf(p, sizeof p, "/usr/lib/debug%.*s/%s", dl, dir, link);
            h = fp_file(h, p);
        }
    }
    return h;
}

/* ---------------------------------------------------------------------------------------
 * The in-memory table
 * ------------------------------------------------------------------------------------- */

static long
find(const lh_symcache_t *c, uint64_t offset)
{
    if (!c->slots) {
        return -1;
    }
    for (size_t i = lh_hash_mix(offset) & c->mask; c->slots[i] != UINT32_MAX;
         i = (i + 1) & c->mask) {
        if (c->ents[c->slots[i]].offset == offset) {
            return (long)c->slots[i];
        }
    }
    return -1;
}

static uint64_t
ent_hash(const void *c, size_t k)
{
    return lh_hash_mix(((const lh_symcache_t *)c)->ents[k].offset);
}

/* Adds offset's frames (copied; their strings are not) unless offset is there already.
 * Returns 1 added, 0 present, -1 out of memory. */
static int
add(lh_symcache_t *c, uint64_t offset, const lh_symcache_frame_t *frames, uint32_t n)
{
    if (find(c, offset) >= 0) {
        return 0;
    }
    if (c->n_ents >= UINT32_MAX - 1 || c->n_frames + n >= UINT32_MAX) {
        return -1;
    }
    if ((c->n_ents + 1) * 2 > (c->slots ? c->mask + 1 : 0) &&
        lh_index_rebuild(&c->slots, &c->mask, c->slots ? (c->mask + 1) * 2 : 256, 0, c->n_ents,
                         ent_hash, c) < 0) {
        return -1;
    }
    if (lh_grow(&c->ents, &c->cap_ents, c->n_ents, sizeof *c->ents, 256) < 0 ||
        lh_grow_to(&c->frames, &c->cap_frames, c->n_frames + n, sizeof *c->frames, 256) < 0) {
        return -1;
    }
    memcpy(c->frames + c->n_frames, frames, n * sizeof *frames);
    c->ents[c->n_ents] = (sc_entry_t){offset, (uint32_t)c->n_frames, n};
    c->n_frames += n;
    size_t i = lh_hash_mix(offset) & c->mask;
    while (c->slots[i] != UINT32_MAX) {
        i = (i + 1) & c->mask;
    }
    c->slots[i] = (uint32_t)c->n_ents++;
    return 1;
}

/* ---------------------------------------------------------------------------------------
 * Reading a file
 * ------------------------------------------------------------------------------------- */

static char *
read_all(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        return NULL;
    }
    struct stat st;
    char *buf = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        st.st_size < (off_t)(SC_HEADER + 8) || st.st_size > (off_t)SC_MAX_FILE ||
        !(buf = malloc((size_t)st.st_size))) {
        close(fd);
        return NULL;
    }
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r <= 0) {
            if (r < 0 && errno == EINTR) {
                continue;
            }
            break;
        }
        got += (size_t)r;
    }
    close(fd);
    if (got != (size_t)st.st_size) {
        free(buf);
        return NULL;
    }
    *len = got;
    return buf;
}

/* A string field: NULL for SC_NO_STRING; -1 when it points outside the table or at a
 * string that does not end in it. */
static int
string_at(const char *strs, uint32_t n_strs, uint32_t v, const char **out)
{
    if (v == SC_NO_STRING) {
        *out = NULL;
        return 0;
    }
    if (v >= n_strs || !memchr(strs + v, '\0', n_strs - v)) {
        return -1;
    }
    *out = strs + v;
    return 0;
}

/* Merges the valid file at c->file into c (entries c lacks). Returns the number of entries
 * merged, or -1 when there is no valid file for this key (missing, corrupt, truncated,
 * another version, another key or fingerprint) or memory is short. */
static long
load(lh_symcache_t *c)
{
    size_t len = 0;
    char *buf = read_all(c->file, &len);
    if (!buf) {
        return -1;
    }
    const uint8_t *b = (const uint8_t *)buf;
    uint32_t key_len = get32(b + 16);
    uint64_t fp = get64(b + 20);
    uint32_t n_ents = get32(b + 28), n_frames = get32(b + 32), n_strs = get32(b + 36);
    uint64_t need = (uint64_t)SC_HEADER + key_len + (uint64_t)n_ents * SC_ENTRY +
                    (uint64_t)n_frames * SC_FRAME + n_strs + 8;
    if (memcmp(b, SC_MAGIC, 8) != 0 || get32(b + 8) != SC_VERSION ||
        get32(b + 12) != c->key_kind || key_len != c->key_len || fp != c->fingerprint ||
        need != len || get64(b + len - 8) != lh_fnv1a(LH_FNV_OFFSET, b, len - 8) ||
        memcmp(b + SC_HEADER, c->key, key_len) != 0 ||
        lh_grow(&c->bufs, &c->cap_bufs, c->n_bufs, sizeof *c->bufs, 4) < 0) {
        free(buf);
        return -1;
    }
    const uint8_t *ents = b + SC_HEADER + key_len;
    const uint8_t *frames = ents + (size_t)n_ents * SC_ENTRY;
    const char *strs = (const char *)(frames + (size_t)n_frames * SC_FRAME);
    c->bufs[c->n_bufs++] = buf; /* kept even when invalid below: entries may point in */
    c->loaded = 1;
    long merged = 0;
    lh_symcache_frame_t fv[64];
    for (uint32_t k = 0; k < n_ents; k++) {
        const uint8_t *e = ents + (size_t)k * SC_ENTRY;
        uint32_t first = get32(e + 8), n = get32(e + 12);
        if (n == 0 || n > 64 || first > n_frames || n > n_frames - first) {
            return merged; /* stop at the first bad entry: keep what was valid */
        }
        for (uint32_t j = 0; j < n; j++) {
            const uint8_t *f = frames + (size_t)(first + j) * SC_FRAME;
            if (string_at(strs, n_strs, get32(f), &fv[j].function) < 0 ||
                string_at(strs, n_strs, get32(f + 4), &fv[j].file) < 0) {
                return merged;
            }
            fv[j].line = get32(f + 8);
            fv[j].inlined = get32(f + 12) != 0;
        }
        int r = add(c, get64(e), fv, n);
        if (r < 0) {
            return merged;
        }
        merged += r;
    }
    return merged;
}

/* ---------------------------------------------------------------------------------------
 * Writing a file
 * ------------------------------------------------------------------------------------- */

typedef struct strtab {
    char *data;
    size_t len, cap;
    uint32_t *slots; /* offset + 1 */
    size_t mask, n;
} strtab_t;

/* The offset of s in the table, adding it; SC_NO_STRING for NULL; -1 out of memory. */
static int64_t
intern(strtab_t *t, const char *s)
{
    if (!s) {
        return SC_NO_STRING;
    }
    size_t len = strlen(s) + 1;
    uint64_t h = lh_fnv1a(LH_FNV_OFFSET, s, len);
    size_t i = (size_t)h & t->mask;
    for (; t->slots[i]; i = (i + 1) & t->mask) {
        if (strcmp(t->data + t->slots[i] - 1, s) == 0) {
            return t->slots[i] - 1;
        }
    }
    if (t->len + len >= SC_MAX_FILE ||
        lh_grow_to(&t->data, &t->cap, t->len + len, 1, 4096) < 0) {
        return -1;
    }
    memcpy(t->data + t->len, s, len);
    t->slots[i] = (uint32_t)t->len + 1;
    t->len += len;
    if (++t->n * 2 > t->mask + 1) {
        size_t cap = (t->mask + 1) * 2;
        uint32_t *v = calloc(cap, sizeof *v);
        if (!v) {
            return -1;
        }
        for (size_t k = 0; k <= t->mask; k++) {
            if (t->slots[k]) {
                const char *o = t->data + t->slots[k] - 1;
                size_t j = (size_t)lh_fnv1a(LH_FNV_OFFSET, o, strlen(o) + 1) & (cap - 1);
                while (v[j]) {
                    j = (j + 1) & (cap - 1);
                }
                v[j] = t->slots[k];
            }
        }
        free(t->slots);
        t->slots = v;
        t->mask = cap - 1;
    }
    return (int64_t)t->len - (int64_t)len;
}

/* The file's bytes (entries sorted by offset, strings shared), or NULL. */
static uint8_t *
encode(lh_symcache_t *c, size_t *len)
{
    uint8_t *out = NULL;
    sc_entry_t *ents = malloc((c->n_ents ? c->n_ents : 1) * sizeof *ents);
    strtab_t st = {.slots = calloc(1024, sizeof(uint32_t)), .mask = 1023};
    uint8_t *fr = malloc((c->n_frames ? c->n_frames : 1) * SC_FRAME);
    if (!ents || !st.slots || !fr) {
        goto done;
    }
    memcpy(ents, c->ents, c->n_ents * sizeof *ents);
    LH_SORT(ents, c->n_ents, sc_entry_t, offset);
    uint32_t nf = 0;
    for (size_t k = 0; k < c->n_ents; k++) {
        for (uint32_t j = 0; j < ents[k].n; j++) {
            const lh_symcache_frame_t *f = &c->frames[ents[k].first + j];
            int64_t fn = intern(&st, f->function), fi = intern(&st, f->file);
            if (fn < 0 || fi < 0) {
                goto done;
            }
            uint8_t *p = fr + (size_t)(nf + j) * SC_FRAME;
            put32(p, (uint32_t)fn);
            put32(p + 4, (uint32_t)fi);
            put32(p + 8, f->line);
            put32(p + 12, f->inlined ? 1 : 0);
        }
        ents[k].first = nf;
        nf += ents[k].n;
    }
    size_t n = SC_HEADER + c->key_len + c->n_ents * SC_ENTRY + (size_t)nf * SC_FRAME + st.len + 8;
    if (n > SC_MAX_FILE || !(out = malloc(n))) {
        goto done;
    }
    memcpy(out, SC_MAGIC, 8);
    put32(out + 8, SC_VERSION);
    put32(out + 12, c->key_kind);
    put32(out + 16, c->key_len);
    put64(out + 20, c->fingerprint);
    put32(out + 28, (uint32_t)c->n_ents);
    put32(out + 32, nf);
    put32(out + 36, (uint32_t)st.len);
    uint8_t *p = out + SC_HEADER;
    memcpy(p, c->key, c->key_len);
    p += c->key_len;
    for (size_t k = 0; k < c->n_ents; k++, p += SC_ENTRY) {
        put64(p, ents[k].offset);
        put32(p + 8, ents[k].first);
        put32(p + 12, ents[k].n);
    }
    if (nf) {
        memcpy(p, fr, (size_t)nf * SC_FRAME);
        p += (size_t)nf * SC_FRAME;
    }
    if (st.len) {
        memcpy(p, st.data, st.len);
        p += st.len;
    }
    put64(p, lh_fnv1a(LH_FNV_OFFSET, out, n - 8));
    *len = n;
done:
    LH_FREE_ALL(ents, fr, st.data, st.slots);
    return out;
}

void
lh_symcache_save(lh_symcache_t *c)
{
    if (!c || !c->dirty || !lh_symcache_dir()) {
        return;
    }
    c->dirty = 0;
    (void)load(c); /* what another report wrote meanwhile */
    size_t len = 0;
    uint8_t *data = encode(c, &len);
    if (!data) {
        return;
    }
    lh_privfile_t pf;
    if (lh_privfile_open(&pf, c->file) == 0) {
        (void)lh_privfile_commit(&pf, fwrite(data, 1, len, pf.f) == len);
    }
    free(data);
}

/* ---------------------------------------------------------------------------------------
 * Opening, lookups
 * ------------------------------------------------------------------------------------- */

lh_symcache_t *
lh_symcache_open(const char *path, Dwfl_Module *mod, const char *suffix)
{
    const char *dir = lh_symcache_dir();
    if (!dir || !path || !mod) {
        return NULL;
    }
    lh_symcache_t *c = calloc(1, sizeof *c);
    if (!c) {
        return NULL;
    }
    const unsigned char *bits = NULL;
    GElf_Addr vaddr;
    int n = dwfl_module_build_id(mod, &bits, &vaddr);
    char name[160];
    if (n > 0 && n <= 64) {
        c->key_kind = SC_KEY_BUILD_ID;
        c->key_len = (uint32_t)n;
        c->key = malloc((size_t)n);
        if (c->key) {
            memcpy(c->key, bits, (size_t)n);
        }
        lh_hex(name, sizeof name, bits, (size_t)n);
        snprintf(name + 2 * n, sizeof name - 2 * (size_t)n, "%s", suffix);
    } else {
        struct stat st;
        size_t plen = strlen(path);
        if (stat(path, &st) != 0 || plen > PATH_MAX) {
            free(c);
            return NULL;
        }
        c->key_kind = SC_KEY_PATH;
        c->key_len = (uint32_t)(plen + 1 + 24);
        c->key = malloc(c->key_len);
        if (c->key) {
            memcpy(c->key, path, plen + 1);
            put64(c->key + plen + 1, (uint64_t)st.st_size);
            put64(c->key + plen + 9, (uint64_t)st.st_mtim.tv_sec);
            put64(c->key + plen + 17, (uint64_t)st.st_mtim.tv_nsec);
        }
        snprintf(name, sizeof name, "path-%016llx%s",
                 c->key ? (unsigned long long)lh_fnv1a(LH_FNV_OFFSET, c->key, c->key_len) : 0ull, suffix);
    }
    size_t flen = strlen(dir) + 1 + strlen(name) + 1;
    if (!c->key || !(c->file = malloc(flen))) {
        lh_symcache_free(c);
        return NULL;
    }
    snprintf(c->file, flen, "%s/%s", dir, name);
    c->fingerprint = fingerprint(path, mod, n > 0 ? bits : NULL, n > 0 ? (size_t)n : 0);
    (void)load(c);
    return c;
}

int
lh_symcache_loaded(const lh_symcache_t *c)
{
    return c && c->loaded;
}

void
lh_symcache_each(const lh_symcache_t *c,
                 void (*fn)(void *ctx, uint64_t offset, const lh_symcache_frame_t *frames,
                            uint32_t n),
                 void *ctx)
{
    for (size_t k = 0; c && k < c->n_ents; k++) {
        fn(ctx, c->ents[k].offset, c->frames + c->ents[k].first, c->ents[k].n);
    }
}

int
lh_symcache_get(lh_symcache_t *c, uint64_t offset, const lh_symcache_frame_t **frames)
{
    long k = c ? find(c, offset) : -1;
    if (k < 0) {
        return 0;
    }
    *frames = c->frames + c->ents[k].first;
    return (int)c->ents[k].n;
}

void
lh_symcache_put(lh_symcache_t *c, uint64_t offset, const lh_symcache_frame_t *frames,
                uint32_t n)
{
    if (c && n > 0 && n <= 64 && add(c, offset, frames, n) > 0) {
        c->dirty = 1;
    }
}

void
lh_symcache_free(lh_symcache_t *c)
{
    if (!c) {
        return;
    }
    lh_strv_free(c->bufs, c->n_bufs);
    LH_FREE_ALL(c->slots, c->ents, c->frames, c->key, c->file, c);
}
