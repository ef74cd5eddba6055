/* leakhound - SPDX-License-Identifier: MIT
 *
 * cmd_snapshot.c: `leakhound snapshot -p PID`: a heap snapshot of a running process with
 * no agent in it. The threads are held (ptstop.h) just long enough to copy the process's
 * writable memory (memcopy.h); glibc's malloc is walked in the copy after the release
 * (mallocwalk.h, offsets from libc6-dbg), and the result is written as an ordinary trace
 * (the live blocks as ALLOC records with no stack, then a SNAPSHOT record) with a contents
 * file (snapcontents.h): `leakhound shell` opens it like any other. With --count N, N
 * snapshots go into the one trace (the blocks gone as FREE records, the new ones as
 * ALLOC), so `diff` compares them.
 */
#include <errno.h>
#include <gelf.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "filewriter.h"
#include "format.h"
#include "mallocwalk.h"
#include "memcopy.h"
#include "opts.h"
#include "procmem.h"
#include "ptstop.h"
#include "snapcontents.h"
#include "target.h"

#define MAX_TRIES 50

const char lh_cmd_snapshot_usage[] =
    "usage: leakhound snapshot -p PID [-o FILE] [--contents none|pointers|full]\n"
    "                          [--count N] [--interval DURATION]\n"
    "\n"
    "Takes a heap snapshot of a running process with no agent in it and nothing added to\n"
    "it: its threads are stopped (ptrace) while its writable memory is copied, then it runs\n"
    "on; glibc's malloc arenas are walked in the copy for the live blocks (addresses and\n"
    "usable sizes; no allocation stacks), with the offsets from glibc's debug info (Debian\n"
    "package libc6-dbg). `leakhound shell FILE` opens the result. The pause is printed.\n"
    "\n"
    "  -p, --pid PID        the process (same user, or root)\n"
    "  -o, --output FILE    the trace (default leakhound.COMM.PID.snapshot.lht here; must\n"
    "                       not exist); the contents files go next to it (FILE.snapN.lhs)\n"
    "  --contents MODE      pointers (default: the words that point into the heap or into\n"
    "                       modules), full (every byte of the heap and roots) or none\n"
    "  --count N            take N snapshots into the one trace (default 1), for `diff`\n"
    "  --interval DURATION  between them (default 10s)\n";

typedef struct snap_args {
    const char *pid, *output, *interval;
    int contents;
    unsigned long count;
} snap_args_t;

/* ---------------------------------------------------------------------------------------
 * The trace: info block, modules, threads
 * ------------------------------------------------------------------------------------- */

static size_t
info_block(uint8_t *buf, size_t cap, const lh_target_t *t, uint64_t mono0)
{
    lh_enc_t e;
    lh_enc_init(&e, buf, cap);
    char stat[1024] = "", cmd[32768 + 1]; /* + 1: lh_proc_read_small's NUL */
    lh_proc_read_pid(t->pid, "stat", stat, sizeof stat);
    const char *rp = strrchr(stat, ')');
    int ppid = 0;
    if (rp) {
        sscanf(rp + 1, " %*c %d", &ppid);
    }
    uint8_t *r = lh_enc_rec_begin(&e, LH_REC_INFO_PID);
    lh_enc_varint(&e, (uint64_t)t->pid);
    lh_enc_varint(&e, (uint64_t)ppid);
    lh_enc_rec_end(&e, r);
    r = lh_enc_rec_begin(&e, LH_REC_INFO_EXE);
    lh_enc_str(&e, t->exe);
    lh_enc_rec_end(&e, r);
    ssize_t got = lh_proc_read_pid(t->pid, "cmdline", cmd, sizeof cmd);
    size_t n = got > 0 ? (size_t)got : 0, argc = 0;
    for (size_t i = 0; i < n; i++) {
        argc += cmd[i] == '\0';
    }
    r = lh_enc_rec_begin(&e, LH_REC_INFO_CMDLINE);
    lh_enc_varint(&e, argc);
    for (size_t i = 0; i < n;) {
        size_t len = strnlen(cmd + i, n - i);
        lh_enc_varint(&e, len);
        lh_enc_bytes(&e, cmd + i, len);
        i += len + 1;
    }
    lh_enc_rec_end(&e, r);
    r = lh_enc_rec_begin(&e, LH_REC_INFO_CLOCK);
    lh_enc_varint(&e, 1);
    lh_enc_varint(&e, mono0);
    lh_enc_varint(&e, lh_cli_clock_ns(CLOCK_REALTIME) - (lh_cli_clock_ns(CLOCK_MONOTONIC) - mono0));
    lh_enc_rec_end(&e, r);
    r = lh_enc_rec_begin(&e, LH_REC_INFO_AGENT);
    lh_enc_str(&e, "snapshot -p");
    lh_enc_varint(&e, 0);
    lh_enc_varint(&e, 0);
    lh_enc_varint(&e, sizeof(void *));
    lh_enc_str(&e, "x86_64");
    lh_enc_varint(&e, 0);
    lh_enc_rec_end(&e, r);
    /* how 2: `snapshot -p`: the live blocks were read from the allocator from outside. */
    r = lh_enc_rec_begin(&e, LH_REC_INFO_ATTACH);
    lh_enc_varint(&e, 2);
    lh_enc_rec_end(&e, r);
    return lh_enc_ok(&e) ? (size_t)(e.p - buf) : 0;
}

/* One MODULE record per ELF file the process mapped from offset 0. */
static void
write_modules(lh_fw_t *fw, const lh_memcopy_t *m, uint64_t ts)
{
    elf_version(EV_CURRENT);
    for (size_t i = 0; i < m->n; i++) {
        const lh_mapping_t *mp = &m->maps[i];
        if (mp->path[0] != '/' || mp->offset != 0 || strstr(mp->path, " (deleted)")) {
            continue;
        }
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++) {
            seen = m->maps[k].offset == 0 && strcmp(m->maps[k].path, mp->path) == 0;
        }
        int fd = seen ? -1 : open(mp->path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            continue;
        }
        Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        size_t nph = 0;
        if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nph) != 0 || nph > 64) {
            if (elf) {
                elf_end(elf);
            }
            close(fd);
            continue;
        }
        GElf_Phdr ph[64];
        size_t n_load = 0;
        uint64_t first_vaddr = UINT64_MAX;
        for (size_t k = 0; k < nph; k++) {
            GElf_Phdr p;
            if (gelf_getphdr(elf, (int)k, &p) && p.p_type == PT_LOAD) {
                ph[n_load++] = p;
                if (p.p_offset == 0 && first_vaddr == UINT64_MAX) {
                    first_vaddr = p.p_vaddr & ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1);
                }
            }
        }
        const void *id = NULL;
        ssize_t id_len = dwelf_elf_gnu_build_id(elf, &id);
        if (n_load && first_vaddr != UINT64_MAX) {
            lh_enc_t *e = lh_fw_rec_begin(fw, LH_REC_MODULE, 200 + strlen(mp->path) + 64 * 30);
            lh_fw_ts(fw, ts);
            lh_enc_varint(e, 0);
            lh_enc_varint(e, mp->lo - first_vaddr);
            lh_enc_str(e, mp->path);
            lh_enc_varint(e, id_len > 0 ? (uint64_t)id_len : 0);
            if (id_len > 0) {
                lh_enc_bytes(e, id, (size_t)id_len);
            }
            lh_enc_varint(e, n_load);
            for (size_t k = 0; k < n_load; k++) {
                lh_enc_varint(e, ph[k].p_vaddr);
                lh_enc_varint(e, ph[k].p_memsz);
                lh_enc_varint(e, ph[k].p_flags);
            }
            lh_fw_rec_end(fw);
        }
        elf_end(elf);
        close(fd);
    }
}

static void
write_threads(lh_fw_t *fw, const lh_ptstop_t *s, uint64_t ts)
{
    for (size_t i = 0; i < s->n; i++) {
        char path[96], name[64] = "";
        snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)s->pid,
                 (int)s->threads[i].tid);
        lh_proc_read_small(path, name, sizeof name);
        name[strcspn(name, "\n")] = '\0';
        lh_enc_t *e = lh_fw_rec_begin(fw, LH_REC_THREAD, 100);
        lh_fw_ts(fw, ts);
        lh_enc_varint(e, (uint64_t)s->threads[i].tid);
        lh_enc_str(e, name);
        lh_fw_rec_end(fw);
    }
}

static void
write_alloc(lh_fw_t *fw, uint64_t ts, const lh_mblock_t *b)
{
    lh_enc_t *e = lh_fw_rec_begin(fw, LH_REC_ALLOC, 40);
    lh_fw_ts(fw, ts);
    lh_enc_addr(e, (int64_t)(b->addr - fw->prev_addr));
    fw->prev_addr = b->addr;
    lh_enc_varint(e, b->size);
    lh_enc_varint(e, 0); /* no stack: the allocation happened before we looked */
    lh_fw_rec_end(fw);
}

static void
write_free(lh_fw_t *fw, uint64_t ts, uint64_t addr)
{
    lh_enc_t *e = lh_fw_rec_begin(fw, LH_REC_FREE, 24);
    lh_fw_ts(fw, ts);
    lh_enc_addr(e, (int64_t)(addr - fw->prev_addr));
    fw->prev_addr = addr;
    lh_fw_rec_end(fw);
}

/* The change from the previous snapshot's blocks (both sorted by address): a block at the
 * same address with the same size is taken for the same block. */
static void
write_delta(lh_fw_t *fw, uint64_t ts, const lh_mwalk_t *prev, const lh_mwalk_t *cur)
{
    size_t i = 0, j = 0, np = prev ? prev->n : 0;
    while (i < np || j < cur->n) {
        const lh_mblock_t *a = i < np ? &prev->blocks[i] : NULL;
        const lh_mblock_t *b = j < cur->n ? &cur->blocks[j] : NULL;
        if (a && b && a->addr == b->addr) {
            if (a->size != b->size) {
                write_free(fw, ts, a->addr);
                write_alloc(fw, ts, b);
            }
            i++;
            j++;
        } else if (a && (!b || a->addr < b->addr)) {
            write_free(fw, ts, a->addr);
            i++;
        } else {
            write_alloc(fw, ts, b);
            j++;
        }
    }
}

/* ---------------------------------------------------------------------------------------
 * One capture: hold, copy, release; walk the copy
 * ------------------------------------------------------------------------------------- */

typedef struct capture {
    lh_ptstop_t stop;
    lh_memcopy_t mem;
    lh_mwalk_t walk;
    lh_mempool_t pool;
    unsigned tries;
} capture_t;

static void
capture_fini(capture_t *c)
{
    lh_ptstop_fini(&c->stop);
    lh_memcopy_fini(&c->mem);
    lh_mwalk_fini(&c->walk);
    lh_mempool_fini(&c->pool);
}

/* MemAvailable of /proc/meminfo in bytes, or 0 when unknown. */
static uint64_t
mem_available(void)
{
    char buf[4096] = "";
    lh_proc_read_small("/proc/meminfo", buf, sizeof buf);
    const char *p = strstr(buf, "MemAvailable:");
    unsigned long long kb = 0;
    if (!p || sscanf(p + 13, "%llu", &kb) != 1) {
        return 0;
    }
    return (uint64_t)kb * 1024;
}

static int
capture(pid_t pid, const lh_glibc_layout_t *l, capture_t *c, lh_err_t *err)
{
    memset(c, 0, sizeof *c);
    lh_err_t why = {{0}};
    /* The copy's memory is made resident while the process still runs (see memcopy.h),
     * with room for some growth until it is stopped. */
    lh_memcopy_t pre;
    int rc = lh_memcopy_maps(&pre, pid, err);
    if (rc < 0) {
        return rc;
    }
    /* The copy is never so large that the machine could run short of memory (the OOM
     * killer might pick the process). */
    uint64_t avail = mem_available(), need = 0;
    rc = lh_mempool_init(&c->pool, &pre, avail ? avail / 2 : UINT64_MAX, &need);
    lh_memcopy_fini(&pre);
    if (rc == -2) {
        return lh_err_set(err, LH_ENOMEM, "snapshot -p: copying process %d's memory would take "
                          "%" PRIu64 " MiB, more than half of the %" PRIu64 " MiB available; "
                          "the process was not touched", (int)pid, need >> 20, avail >> 20);
    }
    for (c->tries = 1; c->tries <= MAX_TRIES; c->tries++) {
        rc = lh_ptstop_stop(&c->stop, pid, err);
        if (rc < 0) {
            return rc;
        }
        /* A thread stopped in malloc's code may be half-way through changing the heap
         * (with no lock in a single-threaded process): release at once and retry. */
        pid_t inside = 0;
        for (size_t i = 0; i < c->stop.n && !inside; i++) {
            if (lh_mwalk_in_malloc(l, c->stop.threads[i].regs.rip)) {
                inside = c->stop.threads[i].tid;
            }
        }
        rc = inside ? 0 : lh_memcopy_maps(&c->mem, pid, err);
        if (rc == 0 && !inside) {
            rc = lh_memcopy_copy(&c->mem, &c->pool, err);
        }
        lh_ptstop_release(&c->stop);
        if (rc < 0) {
            return rc;
        }
        uint64_t locked = inside ? 0 : lh_mwalk_locked_arena(l, &c->mem);
        if (inside) {
            lh_err_set(&why, LH_EFORMAT, "snapshot -p: a thread (%d) was inside glibc's malloc "
                       "code each time", (int)inside);
        } else if (!locked) {
            uint64_t tps[4096];
            size_t n = c->stop.n < 4096 ? c->stop.n : 4096;
            for (size_t i = 0; i < n; i++) {
                tps[i] = c->stop.threads[i].regs.fs_base;
            }
            rc = lh_mwalk(l, &c->mem, tps, n, &c->walk, &why);
            if (rc == 0) {
                return 0;
            }
            if (rc != LH_EFORMAT) {
                *err = why;
                return rc;
            }
        } else {
            lh_err_set(&why, LH_EFORMAT, "snapshot -p: a thread was inside malloc (arena "
                       "0x%" PRIx64 " locked) each time", locked);
        }
        /* A thread was inside malloc or free: let it finish and look again. */
        lh_ptstop_fini(&c->stop);
        lh_memcopy_fini(&c->mem);
        struct timespec ts = {0, 20 * 1000000};
        nanosleep(&ts, NULL);
    }
    return lh_err_set(err, LH_EFORMAT, "%s (%u tries); the process runs on untouched", why.msg,
                      MAX_TRIES);
}

/* ---------------------------------------------------------------------------------------
 * The command
 * ------------------------------------------------------------------------------------- */

static int
parse_args(int argc, char **argv, snap_args_t *a, lh_err_t *err)
{
    memset(a, 0, sizeof *a);
    a->contents = LH_CONTENTS_POINTERS;
    a->count = 1;
    const lh_opt_t opts[] = {
        {"--pid", "-p", LH_OPT_STR, &a->pid, 0, 0, NULL},
        {"--output", "-o", LH_OPT_STR, &a->output, 0, 0, NULL},
        {"--contents", NULL, LH_OPT_CHOICE, &a->contents, 0, 0, "none|pointers|full"},
        {"--count", NULL, LH_OPT_UINT, &a->count, 1, 1000, NULL},
        {"--interval", NULL, LH_OPT_STR, &a->interval, 0, 0, NULL},
    };
    size_t n = sizeof opts / sizeof opts[0];
    int rc = lh_args_parse_own("snapshot", lh_cmd_snapshot_usage, opts, n, argc, argv, err);
    if (rc != 0) {
        return rc;
    }
    if (!a->pid) {
        return lh_err_set(err, LH_EINVAL, "snapshot: which process? give -p PID (a snapshot "
                          "under `leakhound run` is taken by the agent: --snapshot-every, "
                          "lh_snapshot(), SIGUSR2)");
    }
    return 0;
}

/* The dynamic loader's path and load address. */
static int
find_ldso(const lh_memcopy_t *m, const char **path, uint64_t *bias)
{
    for (size_t i = 0; i < m->n; i++) {
        const char *b = strrchr(m->maps[i].path, '/');
        if (b && strncmp(b + 1, "ld-linux", 8) == 0 && m->maps[i].offset == 0) {
            *path = m->maps[i].path;
            *bias = m->maps[i].lo;
            return 0;
        }
    }
    return -1;
}

static int
out_paths(const snap_args_t *a, const lh_target_t *t, char *lht, size_t len, char *stem,
          size_t stem_len, lh_err_t *err)
{
    if (a->output) {
        snprintf(lht, len, "%s", a->output);
    } else {
        snprintf(lht, len, "leakhound.%s.%d.snapshot.lht", t->comm, (int)t->pid);
    }
    struct stat st;
    if (lstat(lht, &st) == 0) {
        return lh_err_set(err, LH_EINVAL, "snapshot -p: %s exists: give another -o", lht);
    }
    size_t n = strlen(lht);
    if (n > 4 && strcmp(lht + n - 4, ".lht") == 0) {
        n -= 4;
    }
    snprintf(stem, stem_len, "%.*s", (int)n, lht);
    return 0;
}

int
lh_cmd_snapshot(int argc, char **argv, lh_err_t *err)
{
    snap_args_t a;
    int rc = parse_args(argc, argv, &a, err);
    if (rc != 0) {
        return rc < 0 ? rc : 0;
    }
    unsigned long pid_ul;
    if ((rc = lh_cli_parse_uint("-p", a.pid, 1, INT_MAX, &pid_ul, err)) < 0) {
        return rc;
    }
    uint64_t interval_ns = 10ull * 1000000000u;
    if (a.interval && lh_cli_value("snapshot", "--interval", a.interval, 0, 0, UINT64_MAX,
                                   &interval_ns, err) < 0) {
        return LH_EINVAL;
    }
    lh_target_t t;
    if ((rc = lh_target_check((pid_t)pid_ul, "snapshot -p", &t, err)) < 0) {
        return rc;
    }
    lh_memcopy_t maps;
    if ((rc = lh_memcopy_maps(&maps, t.pid, err)) < 0) {
        return rc;
    }
    const char *ldso = NULL;
    uint64_t ldso_bias = 0;
    lh_glibc_layout_t l;
    if (find_ldso(&maps, &ldso, &ldso_bias) < 0) {
        rc = lh_err_set(err, LH_EINVAL, "snapshot -p: process %d (%s) has no ld-linux loaded; "
                        "the process was not touched", (int)t.pid, t.comm);
    } else {
        rc = lh_glibc_layout_load(t.pid, t.libc, t.libc_base, ldso, ldso_bias, &l, err);
    }
    lh_memcopy_fini(&maps);
    if (rc < 0) {
        return rc;
    }
    char lht[PATH_MAX], stem[PATH_MAX], lhs[PATH_MAX + 32];
    if ((rc = out_paths(&a, &t, lht, sizeof lht, stem, sizeof stem, err)) < 0) {
        return rc;
    }

    lh_fw_t fw;
    int fw_open = 0;
    lh_mwalk_t prev = {0};
    int have_prev = 0;
    uint64_t mono0 = 0;
    for (unsigned long k = 1; k <= a.count; k++) {
        if (k > 1) {
            struct timespec ts = {(time_t)(interval_ns / 1000000000u),
                                  (long)(interval_ns % 1000000000u)};
            nanosleep(&ts, NULL);
            if (!lh_target_alive(t.pid)) {
                rc = lh_err_set(err, LH_ENOENT, "snapshot -p: process %d has exited after "
                                "%lu snapshots", (int)t.pid, k - 1);
                break;
            }
        }
        capture_t c;
        if ((rc = capture(t.pid, &l, &c, err)) < 0) {
            capture_fini(&c);
            break;
        }
        uint64_t ts = c.stop.t_stop_ns;
        uint64_t pause = c.stop.t_release_ns - c.stop.t_stop_ns;
        if (!fw_open) {
            uint8_t info[40000];
            mono0 = ts;
            size_t info_len = info_block(info, sizeof info, &t, mono0);
            if ((rc = lh_fw_open(&fw, lht, LH_FILE_MAGIC, info, info_len, ts, err)) < 0) {
                capture_fini(&c);
                break;
            }
            fw_open = 1;
            write_modules(&fw, &c.mem, ts);
        }
        write_threads(&fw, &c.stop, ts);
        write_delta(&fw, ts, have_prev ? &prev : NULL, &c.walk);
        char label[64], file[PATH_MAX + 32] = "";
        snprintf(label, sizeof label, "snapshot-p %lu", k);
        lh_snapc_stats_t st = {0};
        if (a.contents != LH_CONTENTS_NONE) {
            snprintf(lhs, sizeof lhs, "%s.snap%lu.lhs", stem, k);
            const char *slash = strrchr(lhs, '/');
            snprintf(file, sizeof file, "%s", slash ? slash + 1 : lhs);
            lh_snapc_info_t si = {(uint64_t)t.pid, k, ts, label, a.contents};
            if ((rc = lh_snapc_write(lhs, &si, &c.mem, &c.stop, &l, &st, err)) < 0) {
                capture_fini(&c);
                break;
            }
        }
        lh_enc_t *e = lh_fw_rec_begin(&fw, LH_REC_SNAPSHOT, 200 + strlen(file));
        lh_fw_ts(&fw, ts);
        lh_enc_str(e, label);
        lh_enc_varint(e, LH_SNAP_API);
        lh_enc_str(e, file);
        lh_enc_varint(e, (uint64_t)a.contents);
        lh_enc_varint(e, k);
        lh_enc_varint(e, pause);
        lh_fw_rec_end(&fw);

        char retry[96] = "";
        if (c.tries > 1) {
            snprintf(retry, sizeof retry, "; taken at try %u: a thread was inside malloc before",
                     c.tries);
        }
        /* chunks + tcache: what mallinfo2's uordblks + hblkhd count (it counts the chunks
         * waiting in a tcache as in use, and whole chunks, headers included). */
        printf("snapshot %lu of process %d (%s): %zu live blocks, %" PRIu64 " bytes (%" PRIu64
               " in chunks, + %" PRIu64 " in %" PRIu64 " tcache chunks; %u arenas, %u heaps, "
               "%" PRIu64 " mmapped chunks); paused %.3f ms (%zu threads, %.1f MiB copied%s)\n",
               k, (int)t.pid, t.comm, c.walk.n, c.walk.bytes, c.walk.chunk_bytes,
               c.walk.tcache_bytes, c.walk.n_tcache, c.walk.arenas, c.walk.heaps,
               c.walk.n_mmapped, (double)pause / 1e6, c.stop.n,
               (double)c.mem.bytes_copied / (1024.0 * 1024.0),
               retry);
        if (c.walk.warning[0]) {
            printf("warning: %s\n", c.walk.warning);
        }
        fflush(stdout); /* a caller may act on it before the next snapshot */
        lh_mwalk_fini(&prev);
        prev = c.walk;
        have_prev = 1;
        c.walk.blocks = NULL;
        c.walk.n = 0;
        capture_fini(&c);
    }
    lh_mwalk_fini(&prev);
    if (!fw_open) {
        return rc;
    }
    if (rc < 0) {
        lh_fw_abort(&fw);
        return rc;
    }
    lh_enc_t *e = lh_fw_rec_begin(&fw, LH_REC_END, 80);
    lh_fw_ts(&fw, lh_cli_clock_ns(CLOCK_MONOTONIC));
    lh_enc_varint(e, LH_EXIT_DETACH);
    lh_enc_varint(e, 0);
    lh_enc_varint(e, 0);
    lh_enc_varint(e, fw.seq + 1);
    lh_enc_varint(e, 0);
    lh_enc_varint(e, 0);
    lh_fw_rec_end(&fw);
    if ((rc = lh_fw_close(&fw, err)) < 0) {
        return rc;
    }
    printf("wrote %s (no allocation stacks: the blocks were allocated before leakhound "
           "looked); open it with: leakhound shell %s\n", lht, lht);
    return 0;
}
