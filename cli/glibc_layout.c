/* leakhound - SPDX-License-Identifier: MIT
 *
 * glibc_layout.c: lh_glibc_layout_load (mallocwalk.h): the symbols and struct layouts of
 * glibc's malloc, from the debug info of the exact libc and ld.so the process runs
 * (libc6-dbg, by build id), and the few values of the process that locate them (libc's
 * TLS offset, the static TLS size), read from the loader's structures.
 */
#include <stdio.h>
#include <string.h>

#include "dbginfo.h"
#include "mallocwalk.h"

#define DBG_PKG "libc6-dbg"

typedef struct want_member {
    const char *strct, *member;
    uint64_t *off, *size, *count;
} want_member_t;

static int
members(lh_dbginfo_t *d, const char *what, const want_member_t *w, size_t n, lh_err_t *err)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t off, size, count;
        if (lh_dbginfo_member(d, w[i].strct, w[i].member, &off, &size, &count) < 0) {
            return lh_err_set(err, LH_EFORMAT,
                              "snapshot -p: %s (%s) has no member %s.%s: this glibc is not "
                              "one leakhound knows how to walk; the process was not touched",
                              lh_dbginfo_path(d), what, w[i].strct, w[i].member);
        }
        if (w[i].off) {
            *w[i].off = off;
        }
        if (w[i].size) {
            *w[i].size = size;
        }
        if (w[i].count) {
            *w[i].count = count;
        }
    }
    return 0;
}

/* The address of symbol name (kind "symbol") or the size of struct name (kind "struct") in
 * d; a missing one is an error naming d and what. */
static int
need(lh_dbginfo_t *d, const char *what, const char *kind, const char *name, uint64_t *v,
     lh_err_t *err)
{
    int rc = strcmp(kind, "struct") == 0 ? lh_dbginfo_struct_size(d, name, v)
                                          : lh_dbginfo_symbol(d, name, v);
    if (rc < 0) {
        return lh_err_set(err, LH_EFORMAT,
                          "snapshot -p: %s (%s) has no %s %s; the process was not touched",
                          lh_dbginfo_path(d), what, kind, name);
    }
    return 0;
}

static int
libc_part(pid_t pid, lh_dbginfo_t *d, const char *libc_path, uint64_t bias,
          lh_glibc_layout_t *l, lh_err_t *err)
{
    int rc;
    uint64_t vers = 0, arena, mp, unused;
    char v[16] = "";
    if ((rc = need(d, libc_path, "symbol", "__libc_version", &vers, err)) < 0 ||
        (rc = need(d, libc_path, "symbol", "main_arena", &arena, err)) < 0 ||
        (rc = need(d, libc_path, "symbol", "mp_", &mp, err)) < 0) {
        return rc;
    }
    if (lh_memcopy_read_live(pid, bias + vers, v, sizeof v - 1) < 0 ||
        sscanf(v, "%d.%d", &l->major, &l->minor) != 2) {
        rc = lh_err_set(err, LH_EINVAL, "snapshot -p: cannot read the glibc version of process "
                        "%d; the process was not touched", (int)pid);
        return rc;
    }
    if (l->major != 2 || l->minor < 26) {
        rc = lh_err_set(err, LH_EINVAL, "snapshot -p: glibc %d.%d is older than 2.26, whose "
                        "malloc this walk does not know; the process was not touched",
                        l->major, l->minor);
        return rc;
    }
    l->safe_linking = l->minor >= 32;
    l->libc_bias = bias;
    l->main_arena = bias + arena;
    l->mp = bias + mp;
    const want_member_t w[] = {
        {"malloc_state", "mutex", &l->ms_mutex, NULL, NULL},
        {"malloc_state", "fastbinsY", &l->ms_fastbins, NULL, &l->ms_n_fastbins},
        {"malloc_state", "top", &l->ms_top, NULL, NULL},
        {"malloc_state", "next", &l->ms_next, NULL, NULL},
        {"malloc_state", "system_mem", &l->ms_system_mem, NULL, NULL},
        {"malloc_chunk", "mchunk_size", &l->ch_size, &l->size_sz, NULL},
        {"malloc_chunk", "fd", &l->ch_fd, NULL, NULL},
        /* MINSIZE is the offset of fd_nextsize (glibc's MIN_CHUNK_SIZE). */
        {"malloc_chunk", "fd_nextsize", &l->min_size, NULL, NULL},
        {"_heap_info", "ar_ptr", &l->hi_ar_ptr, NULL, NULL},
        {"_heap_info", "prev", &l->hi_prev, NULL, NULL},
        {"_heap_info", "size", &l->hi_size, NULL, NULL},
        {"malloc_par", "sbrk_base", &l->mp_sbrk_base, NULL, NULL},
        {"malloc_par", "n_mmaps", &l->mp_n_mmaps, NULL, NULL},
        {"malloc_par", "mmapped_mem", &l->mp_mmapped_mem, NULL, NULL},
    };
    if ((rc = members(d, libc_path, w, sizeof w / sizeof w[0], err)) < 0 ||
        (rc = need(d, libc_path, "struct", "malloc_state", &l->ms_size, err)) < 0 ||
        (rc = need(d, libc_path, "struct", "_heap_info", &l->hi_size_of, err)) < 0 ||
        (rc = need(d, libc_path, "struct", "pthread", &l->pthread_size, err)) < 0) {
        return rc;
    }
    l->n_malloc_code = lh_dbginfo_cu_ranges(d, "malloc.c", l->malloc_code, 64);
    if (!l->n_malloc_code) {
        rc = lh_err_set(err, LH_EFORMAT, "snapshot -p: %s (%s) has no code range for malloc.c; "
                        "the process was not touched", lh_dbginfo_path(d), libc_path);
        return rc;
    }
    for (size_t i = 0; i < l->n_malloc_code; i++) {
        l->malloc_code[i][0] += bias;
        l->malloc_code[i][1] += bias;
    }
    l->has_tcache = lh_dbginfo_symbol(d, "tcache", &l->tcache_tls) == 0;
    if (l->has_tcache) {
        const want_member_t t[] = {
            {"tcache_perthread_struct", "counts", &l->tc_counts, &unused, &l->tc_n_bins},
            {"tcache_perthread_struct", "entries", &l->tc_entries, NULL, NULL},
            {"tcache_entry", "next", &l->te_next, NULL, NULL},
        };
        if ((rc = members(d, libc_path, t, sizeof t / sizeof t[0], err)) < 0) {
            return rc;
        }
        l->tc_count_size = l->tc_n_bins ? unused / l->tc_n_bins : 0;
        if (l->tc_count_size != 1 && l->tc_count_size != 2) {
            rc = lh_err_set(err, LH_EFORMAT, "snapshot -p: %s: tcache counts of %llu bytes "
                            "each are not known; the process was not touched",
                            lh_dbginfo_path(d), (unsigned long long)l->tc_count_size);
        }
    }
    return rc;
}

/* libc's TLS offset (link_map.l_tls_offset, through _r_debug.r_map) and the static TLS
 * size (_rtld_global_ro._dl_tls_static_size), from ld.so's debug info. */
static int
ldso_part(pid_t pid, lh_dbginfo_t *d, const char *ldso_path, uint64_t bias,
          lh_glibc_layout_t *l, lh_err_t *err)
{
    int rc;
    uint64_t r_debug, rtld_ro, o_rmap, o_addr, o_next, o_tls, o_tls_size;
    const want_member_t w[] = {
        {"r_debug", "r_map", &o_rmap, NULL, NULL},
        {"link_map", "l_addr", &o_addr, NULL, NULL},
        {"link_map", "l_next", &o_next, NULL, NULL},
        {"link_map", "l_tls_offset", &o_tls, NULL, NULL},
        {"rtld_global_ro", "_dl_tls_static_size", &o_tls_size, NULL, NULL},
    };
    if ((rc = need(d, ldso_path, "symbol", "_r_debug", &r_debug, err)) < 0 ||
        (rc = need(d, ldso_path, "symbol", "_rtld_global_ro", &rtld_ro, err)) < 0 ||
        (rc = members(d, ldso_path, w, sizeof w / sizeof w[0], err)) < 0) {
        return rc;
    }
    uint64_t map = 0;
    if (lh_memcopy_read_live(pid, bias + rtld_ro + o_tls_size, &l->tls_static_size, 8) < 0 ||
        lh_memcopy_read_live(pid, bias + r_debug + o_rmap, &map, 8) < 0) {
        rc = lh_err_set(err, LH_EIO, "snapshot -p: cannot read the loader's data in process "
                        "%d; the process was not touched", (int)pid);
        return rc;
    }
    rc = lh_err_set(err, LH_EFORMAT, "snapshot -p: libc (loaded at 0x%llx) is not in the "
                    "loader's list of process %d; the process was not touched",
                    (unsigned long long)l->libc_bias, (int)pid);
    for (int i = 0; map && i < 4096; i++) {
        uint64_t addr = 0, next = 0;
        if (lh_memcopy_read_live(pid, map + o_addr, &addr, 8) < 0 ||
            lh_memcopy_read_live(pid, map + o_next, &next, 8) < 0) {
            break;
        }
        if (addr == l->libc_bias) {
            if (lh_memcopy_read_live(pid, map + o_tls, &l->libc_tls_offset, 8) == 0) {
                rc = 0;
            }
            break;
        }
        map = next;
    }
    return rc;
}

int
lh_glibc_layout_load(pid_t pid, const char *libc_path, uint64_t libc_bias,
                     const char *ldso_path, uint64_t ldso_bias, lh_glibc_layout_t *l,
                     lh_err_t *err)
{
    const struct {
        const char *path;
        uint64_t bias;
        int (*part)(pid_t, lh_dbginfo_t *, const char *, uint64_t, lh_glibc_layout_t *,
                    lh_err_t *);
    } parts[] = {{libc_path, libc_bias, libc_part}, {ldso_path, ldso_bias, ldso_part}};
    memset(l, 0, sizeof *l);
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        lh_dbginfo_t *d = NULL;
        int rc = lh_dbginfo_open(parts[i].path, DBG_PKG, &d, err);
        if (rc == LH_ENOENT) { /* no debug info installed */
            lh_err_t e2;
            lh_err_set(&e2, LH_ENOENT, "snapshot -p: %s; the process was not touched", err->msg);
            *err = e2;
        }
        if (rc >= 0) {
            rc = parts[i].part(pid, d, parts[i].path, parts[i].bias, l, err);
            lh_dbginfo_close(d);
        }
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}
