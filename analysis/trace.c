/* leakhound - SPDX-License-Identifier: MIT
 *
 * trace.c: the streaming trace reader: file header, info block, frames (checksummed,
 * zstd-compressed), records, and the reorder window that delivers events in time order.
 */
#include "trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zstd.h>

#include "sitecanon.h"
#include "dec.h"
#include "dupstr.h"
#include "enc.h"
#include "fread_count.h"
#include "grow.h"
#include "prefetch.h"
#include "replay.h"
#include "window.h"

/* Without SYNC records (an agent without a ticker), the window would hold the whole trace;
 * past this many pending events the oldest half is released anyway, with a warning. */
#define WINDOW_SOFT_MAX (4u << 20)

typedef struct thread_name {
    uint64_t tid;
    char *name;
} thread_name_t;

struct lh_trace {
    lh_trace_parts_t parts; /* path (malloc'd here), info, end, stats, tables, warnings */
    FILE *f;
    lh_trace_opts_t opts;
    thread_name_t *threads;
    size_t n_threads, cap_threads;
    char **snap_files;   /* contents file names of SNAPSHOT events (lh_event_t.file) */
    size_t n_snap_files, cap_snap_files;
    lh_window_t window;
    lh_prefetch_t *pf;   /* frames read ahead and decompressed by workers (or NULL) */
    uint8_t *comp, *raw; /* payload buffers, reused across frames */
    size_t comp_cap, raw_cap;
    char *last_label;    /* label of the event delivered last, freed on the next call */
    int eof;             /* no more frames will be read */
    uint64_t n_decoded;  /* events decoded into the window so far */
    int warned_seq, warned_count, warned_nosync, warned_interp;
    lh_trace_interp_t interps[8]; /* INTERP records, in file order */
    size_t n_interps;
    int seen_event;
    int failed;          /* sticky error of lh_trace_next */
    lh_sitecanon_t *canon; /* one site per displayed stack (sitecanon.h), made on first use */
    int map_sites;         /* a stack with script frames was read, or a module unloaded:
                              only then is a stack mapped (until a module is unloaded, a
                              native stack is its own site: sitecanon.c's native_site) */
    char failed_msg[sizeof(((lh_err_t *)0)->msg)];
};

/* Decoding state of one frame: deltas restart at every frame. */
typedef struct frame_state {
    const lh_frame_hdr_t *h;
    uint64_t ts;
    uint64_t addr;
    int has_sync;
    uint64_t sync_ts;
    uint64_t realloc_dt; /* of the last REALLOC record */
    uint32_t ev_stack;   /* EVENTS: the current stack id (format.h) */
} frame_state_t;

/* ---------------------------------------------------------------------------------------
 * Small helpers
 * ------------------------------------------------------------------------------------- */

/* Replaces *dst by a NUL-terminated copy of s[0..n). */
static int
set_str(char **dst, const char *s, size_t n)
{
    char *r = lh_dupstr(s, n);
    if (!r) {
        return LH_ENOMEM;
    }
    free(*dst);
    *dst = r;
    return 0;
}

/* Decodes a string of pl into *dst when pl is still good. Returns 0 or LH_ENOMEM. */
static int
dec_str_into(lh_dec_t *pl, const char **dst)
{
    size_t len;
    const char *s = lh_dec_str(pl, &len);
    return lh_dec_ok(pl) ? set_str((char **)dst, s, len) : 0;
}

/* Reads up to n bytes; returns how many were read (short only at end of file or error). */
static size_t
read_some(lh_trace_t *t, void *buf, size_t n)
{
    return lh_fread_count(t->f, buf, n, &t->parts.stats.file_bytes);
}

static uint64_t
rd_ts(lh_dec_t *d, frame_state_t *st)
{
    st->ts += lh_dec_varint(d);
    return st->ts;
}

static uint64_t
rd_addr(lh_dec_t *d, frame_state_t *st)
{
    st->addr += (uint64_t)lh_dec_addr(d);
    return st->addr;
}

static int
rd_stack_id(lh_dec_t *d, uint32_t *id)
{
    uint64_t v = lh_dec_varint(d);
    if (v > LH_STACK_ID_MAX) {
        return -1;
    }
    *id = (uint32_t)v;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Info block
 * ------------------------------------------------------------------------------------- */

static void
free_argv(lh_trace_info_t *in)
{
    lh_strv_free(in->argv, in->argc);
    in->argv = NULL;
    in->argc = 0;
}

static int
info_cmdline(lh_trace_t *t, lh_dec_t *pl)
{
    uint64_t argc = lh_dec_varint(pl);
    if (!lh_dec_ok(pl) || argc > lh_dec_left(pl)) {
        return LH_EFORMAT; /* each argument needs at least its length byte */
    }
    char **argv = calloc(argc + 1, sizeof *argv);
    if (!argv) {
        return LH_ENOMEM;
    }
    size_t i;
    for (i = 0; i < argc; i++) {
        size_t len;
        const char *s = lh_dec_str(pl, &len);
        if (!lh_dec_ok(pl)) {
            goto fail;
        }
        argv[i] = lh_dupstr(s, len);
        if (!argv[i]) {
            goto fail;
        }
    }
    free_argv(&t->parts.info);
    t->parts.info.argv = argv;
    t->parts.info.argc = (size_t)argc;
    return 0;
fail:
    lh_strv_free(argv, i);
    return lh_dec_ok(pl) ? LH_ENOMEM : LH_EFORMAT;
}

static int
info_record(lh_trace_t *t, uint8_t type, lh_dec_t *pl)
{
    lh_trace_info_t *in = &t->parts.info;
    int rc = 0;
    switch (type) {
    case LH_REC_INFO_PID:
        in->pid = lh_dec_varint(pl);
        in->ppid = lh_dec_varint(pl);
        break;
    case LH_REC_INFO_EXE:
        rc = dec_str_into(pl, &in->exe);
        break;
    case LH_REC_INFO_CMDLINE:
        return info_cmdline(t, pl);
    case LH_REC_INFO_CLOCK:
        in->clock_id = lh_dec_varint(pl);
        in->mono_start_ns = lh_dec_varint(pl);
        in->realtime_start_ns = lh_dec_varint(pl);
        in->has_clock = lh_dec_ok(pl);
        break;
    case LH_REC_INFO_AGENT:
        if ((rc = dec_str_into(pl, &in->agent_version)) < 0) {
            return rc;
        }
        in->unwinder = lh_dec_varint(pl);
        in->max_depth = lh_dec_varint(pl);
        in->pointer_size = lh_dec_varint(pl);
        if ((rc = dec_str_into(pl, &in->arch)) < 0) {
            return rc;
        }
        in->sample_rate_bytes = lh_dec_varint(pl);
        in->has_agent = lh_dec_ok(pl);
        break;
    case LH_REC_INFO_ATTACH:
        in->attach_how = lh_dec_varint(pl);
        if (!lh_dec_ok(pl)) {
            in->attach_how = 0;
        }
        break;
    case LH_REC_INFO_PARENT:
        in->parent_pid = lh_dec_varint(pl);
        in->has_parent = lh_dec_ok(pl);
        if (in->has_parent && lh_dec_left(pl) > 0) { /* minor 3 */
            in->fork_ts_ns = lh_dec_varint(pl);
            if ((rc = dec_str_into(pl, &in->parent_trace)) < 0) {
                return rc;
            }
            in->parent_trace_pid = lh_dec_varint(pl);
        }
        break;
    default:
        t->parts.stats.n_unknown++;
        break;
    }
    if (rc < 0) {
        return rc;
    }
    return lh_dec_ok(pl) ? 0 : LH_EFORMAT;
}

static int
read_info(lh_trace_t *t, uint32_t info_len, lh_err_t *err)
{
    uint8_t *buf = malloc(info_len ? info_len : 1);
    lh_dec_t d, pl;
    uint8_t type;
    int rc, n = 0;
    if (!buf) {
        return lh_err_set(err, LH_ENOMEM, "%s: out of memory reading the info block",
                          t->parts.path);
    }
    if (read_some(t, buf, info_len) != info_len) {
        rc = ferror(t->f) ? lh_err_set(err, LH_EIO, "%s: read error: %s", t->parts.path,
                                       strerror(errno))
                          : lh_err_set(err, LH_ETRUNC,
                                       "%s: truncated at offset %" PRIu64 " (in the info block)",
                                       t->parts.path, t->parts.stats.file_bytes);
        goto fail;
    }
    lh_dec_init(&d, buf, info_len);
    while ((rc = lh_dec_record(&d, &type, &pl)) > 0) {
        rc = info_record(t, type, &pl);
        if (rc == LH_ENOMEM) {
            rc = lh_err_set(err, rc, "%s: out of memory reading the info block", t->parts.path);
            goto fail;
        }
        if (rc < 0) {
            rc = lh_err_set(err, rc, "%s: malformed info record %d (type 0x%02x)", t->parts.path, n,
                            type);
            goto fail;
        }
        n++;
    }
    if (rc < 0) {
        rc = lh_err_set(err, LH_EFORMAT, "%s: malformed info block (record %d)", t->parts.path, n);
        goto fail;
    }
    free(buf);
    return 0;
fail:
    free(buf);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * Frame records
 * ------------------------------------------------------------------------------------- */

/* The thread tid's entry, the latest when a tid was reused; NULL when unnamed. */
static thread_name_t *
find_thread(const lh_trace_t *t, uint64_t tid)
{
    for (size_t i = t->n_threads; i-- > 0;) {
        if (t->threads[i].tid == tid) {
            return &t->threads[i];
        }
    }
    return NULL;
}

static int
set_thread_name(lh_trace_t *t, uint64_t tid, const char *name, size_t len)
{
    thread_name_t *th = find_thread(t, tid);
    if (!th) {
        if (lh_grow(&t->threads, &t->cap_threads, t->n_threads, sizeof *t->threads, 16) < 0) {
            return LH_ENOMEM;
        }
        th = &t->threads[t->n_threads];
        *th = (thread_name_t){.tid = tid};
        t->n_threads++;
    }
    return set_str(&th->name, name, len);
}

static int
rec_module(lh_trace_t *t, lh_dec_t *pl, lh_event_t *ev)
{
    lh_segment_t segs[64];
    size_t bid_len;
    const uint8_t *bid;
    uint64_t n_segs;
    ev->epoch = lh_dec_varint(pl);
    ev->size = lh_dec_varint(pl);
    ev->label = lh_dec_str(pl, &ev->label_len);
    bid_len = (size_t)lh_dec_varint(pl);
    bid = lh_dec_bytes(pl, bid_len);
    n_segs = lh_dec_varint(pl);
    if (!lh_dec_ok(pl) || n_segs > sizeof segs / sizeof segs[0]) {
        return LH_EFORMAT;
    }
    for (size_t i = 0; i < n_segs; i++) {
        segs[i].vaddr = lh_dec_varint(pl);
        segs[i].memsz = lh_dec_varint(pl);
        segs[i].flags = (uint32_t)lh_dec_varint(pl);
    }
    if (!lh_dec_ok(pl)) {
        return LH_EFORMAT;
    }
    int rc = lh_modules_add(&t->parts.modules, ev->label, ev->label_len, ev->size, bid, bid_len,
                            segs, (size_t)n_segs, ev->epoch);
    return rc < 0 ? rc : 0;
}

static int
rec_stack(lh_trace_t *t, lh_dec_t *pl)
{
    uint64_t ips[LH_STACK_DEPTH_MAX];
    uint32_t id;
    uint64_t epoch, n, ip = 0;
    if (rd_stack_id(pl, &id) < 0) {
        return LH_EFORMAT;
    }
    epoch = lh_dec_varint(pl);
    n = lh_dec_varint(pl);
    if (!lh_dec_ok(pl) || id == 0 || n > LH_STACK_DEPTH_MAX) {
        return LH_EFORMAT;
    }
    for (size_t i = 0; i < n; i++) {
        ip += (uint64_t)lh_dec_svarint(pl);
        ips[i] = ip;
    }
    if (!lh_dec_ok(pl)) {
        return LH_EFORMAT;
    }
    uint32_t script[LH_SCRIPT_DEPTH_MAX];
    uint32_t n_script = 0;
    if (lh_dec_stack_script(pl, script, LH_SCRIPT_DEPTH_MAX, &n_script) < 0) {
        return LH_EFORMAT;
    }
    int rc = lh_stacks_put(&t->parts.stacks, id, epoch, ips, (size_t)n);
    if (rc == 0 && n_script > 0) {
        t->map_sites = 1;
        rc = lh_stacks_put_script(&t->parts.stacks, id, script, n_script);
    }
    return rc;
}

static int
rec_sframe(lh_trace_t *t, lh_dec_t *pl)
{
    lh_sframe_rec_t r;
    if (lh_dec_sframe_rec(pl, &r) < 0) {
        return LH_EFORMAT;
    }
    return lh_stacks_put_sframe(&t->parts.stacks, r.id, r.lang, r.func, r.func_len, r.file,
                                r.file_len, r.line);
}

/* An interpreter the agent found. When it could not read its frames, the agent's line is
 * repeated as a warning, so every report says why it shows interpreter frames only. */
static int
rec_interp(lh_trace_t *t, lh_dec_t *pl, frame_state_t *st)
{
    lh_interp_rec_t r;
    if (lh_dec_interp_rec(pl, &r) < 0) {
        return LH_EFORMAT;
    }
    st->ts += r.ts_delta;
    if (t->n_interps < sizeof t->interps / sizeof t->interps[0]) {
        lh_trace_interp_t *x = &t->interps[t->n_interps];
        size_t vn = r.version_len < sizeof x->version ? r.version_len : sizeof x->version - 1;
        memcpy(x->version, r.version, vn);
        x->version[vn] = 0;
        x->lang = r.lang;
        x->status = r.status;
        t->n_interps++;
    }
    if (r.status == LH_INTERP_UNSUPPORTED && !t->warned_interp) {
        t->warned_interp = 1;
        lh_warn(&t->parts.warnings, "%s: %.*s", t->parts.path,
                (int)(r.detail_len > 300 ? 300 : r.detail_len), r.detail);
    }
    return 0;
}

static void
rec_end(lh_trace_t *t, lh_dec_t *pl, frame_state_t *st)
{
    lh_trace_end_t e = {0};
    e.ts_ns = rd_ts(pl, st);
    e.kind = lh_dec_varint(pl);
    e.status = lh_dec_varint(pl);
    e.events = lh_dec_varint(pl);
    e.frames = lh_dec_varint(pl);
    e.dropped = lh_dec_varint(pl);
    e.pre_init_allocs = lh_dec_varint(pl);
    if (lh_dec_ok(pl) && lh_dec_left(pl) > 0) { /* trailing fields of later agents */
        e.table_walks = lh_dec_varint(pl);
        e.table_fallbacks = lh_dec_varint(pl);
        e.verify_checked = lh_dec_varint(pl);
        e.verify_mismatches = lh_dec_varint(pl);
        e.has_unwind = 1;
    }
    e.present = 1;
    if (lh_dec_ok(pl)) {
        t->parts.end = e;
    }
}

/* The optional fields of a SNAPSHOT record: contents file, mode, number, pause. The name
 * is kept by the trace so the event can point at it through the reorder window. */
static int
rec_snapshot_contents(lh_trace_t *t, lh_dec_t *pl, lh_event_t *ev)
{
    size_t len;
    const char *file = lh_dec_str(pl, &len);
    ev->epoch = lh_dec_varint(pl);
    ev->addr = lh_dec_varint(pl);
    ev->size = lh_dec_varint(pl);
    if (!lh_dec_ok(pl)) {
        return LH_EFORMAT;
    }
    if (len == 0 || memchr(file, '\0', len) || memchr(file, '/', len)) {
        return 1; /* no contents, or not a plain name in the trace's directory */
    }
    char *name = lh_dupstr(file, len);
    if (!name || lh_grow(&t->snap_files, &t->cap_snap_files, t->n_snap_files,
                         sizeof *t->snap_files, 8) < 0) {
        free(name);
        return LH_ENOMEM;
    }
    ev->file = t->snap_files[t->n_snap_files++] = name;
    return 1;
}

/* Decodes one record of a frame. Returns 1 when it produced an event in *ev, 0 when not,
 * or a negative code (LH_EFORMAT for a malformed payload). */
static int
frame_record(lh_trace_t *t, uint8_t type, lh_dec_t *pl, frame_state_t *st, lh_event_t *ev)
{
    int rc = 1;
    memset(ev, 0, sizeof *ev);
    ev->type = type;
    ev->tid = st->h->tid;
    switch (type) {
    case LH_REC_ALLOC:
        ev->ts_ns = rd_ts(pl, st);
        ev->addr = rd_addr(pl, st);
        ev->size = lh_dec_varint(pl);
        if (rd_stack_id(pl, &ev->stack_id) < 0) {
            return LH_EFORMAT;
        }
        ev->kind = lh_dec_left(pl) ? lh_dec_u8(pl) : LH_AK_MALLOC; /* absent: malloc */
        ev->sample_rate = t->parts.info.sample_rate_bytes;
        break;
    case LH_REC_FREE:
        ev->ts_ns = rd_ts(pl, st);
        ev->addr = rd_addr(pl, st);
        break;
    case LH_REC_REALLOC:
        ev->ts_ns = rd_ts(pl, st);
        ev->old_addr = rd_addr(pl, st);
        ev->addr = rd_addr(pl, st);
        ev->size = lh_dec_varint(pl);
        if (rd_stack_id(pl, &ev->stack_id) < 0) {
            return LH_EFORMAT;
        }
        ev->kind = LH_AK_REALLOC;
        ev->half = LH_HALF_FREE;
        /* dt_alloc: when the new block came to exist; the next delta starts from there. */
        st->realloc_dt = lh_dec_left(pl) ? lh_dec_varint(pl) : 0;
        if (lh_dec_ok(pl)) {
            st->ts += st->realloc_dt;
        }
        break;
    case LH_REC_MARK:
    case LH_REC_EXEC:
        ev->ts_ns = rd_ts(pl, st);
        ev->label = lh_dec_str(pl, &ev->label_len);
        break;
    case LH_REC_SNAPSHOT: {
        ev->ts_ns = rd_ts(pl, st);
        ev->label = lh_dec_str(pl, &ev->label_len);
        uint64_t trig = lh_dec_varint(pl);
        ev->kind = trig > 255 ? 255 : (uint8_t)trig;
        if (lh_dec_ok(pl) && lh_dec_left(pl)) {
            return rec_snapshot_contents(t, pl, ev);
        }
        break;
    }
    case LH_REC_RSS:
        ev->ts_ns = rd_ts(pl, st);
        ev->size = lh_dec_varint(pl); /* pss and anon (optional) are not used yet */
        break;
    case LH_REC_TAG:
        ev->ts_ns = rd_ts(pl, st);
        ev->addr = rd_addr(pl, st);
        ev->label = lh_dec_str(pl, &ev->label_len);
        break;
    case LH_REC_SUPPRESSIONS: {
        size_t len;
        (void)rd_ts(pl, st);
        const char *s = lh_dec_str(pl, &len);
        if (!lh_dec_ok(pl)) {
            return LH_EFORMAT;
        }
        return set_str((char **)&t->parts.lsan_supp, s, len); /* not an event; the last wins */
    }
    case LH_REC_THREAD:
        ev->ts_ns = rd_ts(pl, st);
        ev->tid = (uint32_t)lh_dec_varint(pl);
        ev->label = lh_dec_str(pl, &ev->label_len);
        if (lh_dec_ok(pl) && set_thread_name(t, ev->tid, ev->label, ev->label_len) < 0) {
            return LH_ENOMEM;
        }
        break;
    case LH_REC_THREAD_END:
        ev->ts_ns = rd_ts(pl, st);
        ev->tid = (uint32_t)lh_dec_varint(pl);
        break;
    case LH_REC_MODULE:
        ev->ts_ns = rd_ts(pl, st);
        if ((rc = rec_module(t, pl, ev)) < 0) {
            return rc;
        }
        rc = 1;
        break;
    case LH_REC_MODULE_UNLOAD:
        ev->ts_ns = rd_ts(pl, st);
        ev->epoch = lh_dec_varint(pl);
        ev->size = lh_dec_varint(pl);
        ev->label = lh_dec_str(pl, &ev->label_len);
        t->map_sites = 1; /* code can come back under other stack ids: sites are mapped */
        if (lh_dec_ok(pl) && lh_modules_unload(&t->parts.modules, ev->label, ev->label_len,
                                               ev->size, ev->epoch) < 0) {
            lh_warn(&t->parts.warnings, "%s: unload of a module that was not loaded: %.*s",
                    t->parts.path, (int)(ev->label_len > 200 ? 200 : ev->label_len), ev->label);
        }
        break;
    case LH_REC_STACK:
        rc = rec_stack(t, pl);
        return rc < 0 ? rc : 0;
    case LH_REC_SFRAME:
        rc = rec_sframe(t, pl);
        return rc < 0 ? rc : 0;
    case LH_REC_INTERP:
        rc = rec_interp(t, pl, st);
        return rc < 0 ? rc : 0;
    case LH_REC_SYNC: {
        uint64_t ts = rd_ts(pl, st);
        if (lh_dec_ok(pl) && (!st->has_sync || ts > st->sync_ts)) {
            st->sync_ts = ts;
            st->has_sync = 1;
        }
        t->parts.stats.n_syncs++;
        rc = 0;
        break;
    }
    case LH_REC_END:
        rec_end(t, pl, st);
        rc = 0;
        break;
    default:
        t->parts.stats.n_unknown++; /* a newer record type: skip it */
        return 0;
    }
    return lh_dec_ok(pl) ? rc : LH_EFORMAT;
}

/* One event of an EVENTS record (format.h) into *ev: an ALLOC or a FREE as their own
 * records would give. Returns 0, or LH_EFORMAT. */
static int
events_one(lh_trace_t *t, lh_dec_t *pl, frame_state_t *st, lh_event_t *ev)
{
    memset(ev, 0, sizeof *ev);
    ev->tid = st->h->tid;
    uint64_t head = lh_dec_varint(pl);
    st->ts += head >> 2;
    ev->ts_ns = st->ts;
    ev->addr = rd_addr(pl, st);
    switch (head & 3) {
    case LH_EV_FREE:
        ev->type = LH_REC_FREE;
        break;
    case LH_EV_ALLOC_STACK:
        ev->size = lh_dec_varint(pl);
        if (rd_stack_id(pl, &st->ev_stack) < 0) {
            return LH_EFORMAT;
        }
        ev->kind = lh_dec_u8(pl);
        goto alloc;
    case LH_EV_ALLOC:
        ev->size = lh_dec_varint(pl);
        ev->kind = LH_AK_MALLOC;
    alloc:
        ev->type = LH_REC_ALLOC;
        ev->stack_id = st->ev_stack;
        ev->sample_rate = t->parts.info.sample_rate_bytes;
        break;
    default:
        return LH_EFORMAT;
    }
    return lh_dec_ok(pl) ? 0 : LH_EFORMAT;
}

/* The events of an EVENTS record into the window, each ordered as its own record would be
 * (key: its place in the frame). Returns 0 or a negative code. */
static int
events_record(lh_trace_t *t, const lh_frame_hdr_t *h, lh_dec_t *pl, frame_state_t *st,
              uint64_t *key)
{
    while (lh_dec_left(pl) > 0) {
        lh_pending_t *slot = lh_window_room(&t->window, 1);
        if (!slot) {
            return LH_ENOMEM;
        }
        int rc = events_one(t, pl, st, &slot->ev);
        if (rc < 0) {
            return rc;
        }
        if (lh_window_commit(&t->window, h->seq, *key * 2) < 0) {
            return LH_ENOMEM;
        }
        ++*key;
        t->n_decoded++;
    }
    return 0;
}

static int
decode_payload(lh_trace_t *t, const lh_frame_hdr_t *h, const uint8_t *p, size_t len,
               frame_state_t *st, uint64_t frame_off, lh_err_t *err)
{
    lh_dec_t d, pl;
    uint8_t type = 0;
    uint32_t idx = 0;
    uint64_t key = 0; /* the place of the next event in the frame, for the window's order */
    int rc;
    lh_dec_init(&d, p, len);
    while ((rc = lh_dec_record(&d, &type, &pl)) > 0) {
        lh_pending_t *slot = NULL;
        if (type == LH_REC_EVENTS) {
            rc = events_record(t, h, &pl, st, &key); /* 0: its events are in the window */
        } else {
            /* Decoded in place, in the window's next entry (a REALLOC takes two). */
            slot = lh_window_room(&t->window, 2);
            rc = slot ? frame_record(t, type, &pl, st, &slot->ev) : LH_ENOMEM;
        }
        if (rc == LH_ENOMEM) {
            return lh_err_set(err, rc, "%s: out of memory", t->parts.path);
        }
        if (rc < 0) {
            return lh_err_set(err, LH_EFORMAT,
                              "%s: frame %" PRIu64 " at offset %" PRIu64
                              ": malformed record %u (type 0x%02x); %" PRIu64
                              " events before it",
                              t->parts.path, t->parts.stats.n_frames, frame_off, idx, type,
                              t->n_decoded);
        }
        if (rc > 0) {
            /* Two keys per record: a REALLOC is delivered as two halves. */
            rc = lh_window_commit(&t->window, h->seq, key * 2);
            if (rc == 0 && slot[0].ev.type == LH_REC_REALLOC) {
                slot[1].ev = slot[0].ev;
                slot[1].ev.half = LH_HALF_ALLOC;
                slot[1].ev.ts_ns += st->realloc_dt;
                rc = lh_window_commit(&t->window, h->seq, key * 2 + 1);
            }
            if (rc < 0) {
                return lh_err_set(err, LH_ENOMEM, "%s: out of memory", t->parts.path);
            }
            t->n_decoded++;
        }
        idx++;
        key++;
        t->parts.stats.n_records++;
    }
    if (rc < 0) {
        return lh_err_set(err, LH_EFORMAT,
                          "%s: frame %" PRIu64 " at offset %" PRIu64
                          ": malformed record %u (length past the end of the payload); %" PRIu64
                          " events before it",
                          t->parts.path, t->parts.stats.n_frames, frame_off, idx, t->n_decoded);
    }
    if (idx != h->n_records && !t->warned_count) {
        t->warned_count = 1;
        lh_warn(&t->parts.warnings,
                "%s: frame %" PRIu64 " holds %u records but its header says %u", t->parts.path,
                t->parts.stats.n_frames, idx, h->n_records);
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Frames
 * ------------------------------------------------------------------------------------- */

static int
truncated(lh_trace_t *t, uint64_t frame_off, lh_err_t *err)
{
    if (ferror(t->f)) {
        return lh_err_set(err, LH_EIO, "%s: read error at offset %" PRIu64 ": %s", t->parts.path,
                          t->parts.stats.file_bytes, strerror(errno));
    }
    return lh_err_set(err, LH_ETRUNC,
                      "%s: truncated at offset %" PRIu64 " (frame %" PRIu64
                      " incomplete); %" PRIu64 " events before it",
                      t->parts.path, frame_off, t->parts.stats.n_frames, t->n_decoded);
}

/* Reads, checks and decodes one frame into the window. Returns 1, 0 at the end of the
 * file, or a negative code. */
/* The next frame from the prefetcher, with the same errors as reading it here. */
static int
take_frame(lh_trace_t *t, lh_frame_hdr_t *h, const uint8_t **payload, uint64_t *off,
           lh_err_t *err)
{
    lh_pf_frame_t fr;
    lh_prefetch_next(t->pf, &fr);
    *off = fr.off;
    if (fr.status != LH_PF_EOF) {
        t->parts.stats.file_bytes = fr.end_off;
    }
    switch (fr.status) {
    case LH_PF_FRAME:
        *h = fr.h;
        *payload = fr.payload;
        return 1;
    case LH_PF_EOF:
        return 0;
    case LH_PF_TRUNC:
        if (fr.err_no) {
            return lh_err_set(err, LH_EIO, "%s: read error at offset %" PRIu64 ": %s",
                              t->parts.path, t->parts.stats.file_bytes, strerror(fr.err_no));
        }
        return truncated(t, fr.off, err);
    case LH_PF_HEADER:
        return lh_err_set(err, LH_EFORMAT,
                          "%s: frame %" PRIu64 " at offset %" PRIu64 ": %s; %" PRIu64
                          " events before it",
                          t->parts.path, t->parts.stats.n_frames, fr.off, fr.why, t->n_decoded);
    case LH_PF_CRC:
        return lh_err_set(err, LH_EFORMAT,
                          "%s: frame %" PRIu64 " at offset %" PRIu64
                          ": payload checksum mismatch; %" PRIu64 " events before it",
                          t->parts.path, t->parts.stats.n_frames, fr.off, t->n_decoded);
    case LH_PF_ZSTD:
        return lh_err_set(err, LH_EFORMAT,
                          "%s: frame %" PRIu64 " at offset %" PRIu64
                          ": cannot decompress (%s); %" PRIu64 " events before it",
                          t->parts.path, t->parts.stats.n_frames, fr.off, fr.why, t->n_decoded);
    default:
        return lh_err_set(err, LH_ENOMEM, "%s: out of memory", t->parts.path);
    }
}

static int
read_frame(lh_trace_t *t, lh_err_t *err)
{
    uint8_t hb[LH_FRAME_HEADER_LEN];
    lh_frame_hdr_t h;
    const char *why = NULL;
    uint64_t off = t->parts.stats.file_bytes;
    size_t keep = lh_window_pending(&t->window);
    const uint8_t *payload = NULL;
    frame_state_t st = {0};
    int rc;

    if (t->pf) {
        rc = take_frame(t, &h, &payload, &off, err);
        if (rc <= 0) {
            return rc;
        }
        goto decode;
    }
    size_t got = read_some(t, hb, sizeof hb);
    if (got == 0 && !ferror(t->f)) {
        return 0;
    }
    if (got < sizeof hb) {
        return truncated(t, off, err);
    }
    if (lh_dec_frame_header(hb, &h, &why) < 0) {
        return lh_err_set(err, LH_EFORMAT,
                          "%s: frame %" PRIu64 " at offset %" PRIu64 ": %s; %" PRIu64
                          " events before it",
                          t->parts.path, t->parts.stats.n_frames, off, why, t->n_decoded);
    }
    /* Extra header bytes of a later minor version: skip. */
    for (size_t extra = h.header_len - LH_FRAME_HEADER_LEN; extra > 0;) {
        size_t n = extra < sizeof hb ? extra : sizeof hb;
        if (read_some(t, hb, n) != n) {
            return truncated(t, off, err);
        }
        extra -= n;
    }
    if (lh_grow_to(&t->comp, &t->comp_cap, h.comp_len ? h.comp_len : 1, 1, 65536) < 0) {
        return lh_err_set(err, LH_ENOMEM, "%s: out of memory", t->parts.path);
    }
    if (read_some(t, t->comp, h.comp_len) != h.comp_len) {
        return truncated(t, off, err);
    }
    if (lh_crc32c(0, t->comp, h.comp_len) != h.payload_crc) {
        return lh_err_set(err, LH_EFORMAT,
                          "%s: frame %" PRIu64 " at offset %" PRIu64
                          ": payload checksum mismatch; %" PRIu64 " events before it",
                          t->parts.path, t->parts.stats.n_frames, off, t->n_decoded);
    }
    payload = t->comp;
    if (h.codec == LH_CODEC_ZSTD) {
        if (lh_grow_to(&t->raw, &t->raw_cap, h.raw_len ? h.raw_len : 1, 1, 65536) < 0) {
            return lh_err_set(err, LH_ENOMEM, "%s: out of memory", t->parts.path);
        }
        size_t n = ZSTD_decompress(t->raw, h.raw_len, t->comp, h.comp_len);
        if (ZSTD_isError(n) || n != h.raw_len) {
            return lh_err_set(err, LH_EFORMAT,
                              "%s: frame %" PRIu64 " at offset %" PRIu64
                              ": cannot decompress (%s); %" PRIu64 " events before it",
                              t->parts.path, t->parts.stats.n_frames, off,
                              ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size mismatch",
                              t->n_decoded);
        }
        payload = t->raw;
    }
decode:
    if (h.seq != t->parts.stats.n_frames && !t->warned_seq) {
        t->warned_seq = 1;
        lh_warn(&t->parts.warnings,
                "%s: frame %" PRIu64 " has sequence number %" PRIu64
                " (frames lost or reordered?)",
                t->parts.path, t->parts.stats.n_frames, h.seq);
    }
    st.h = &h;
    st.ts = h.ts_base_ns;
    rc = decode_payload(t, &h, payload, h.raw_len, &st, off, err);
    if (rc < 0) {
        lh_window_truncate(&t->window, keep);
        return rc;
    }
    t->parts.stats.n_frames++;
    if (st.has_sync) {
        lh_window_release(&t->window, st.sync_ts, 0);
    } else if (lh_window_pending(&t->window) > WINDOW_SOFT_MAX) {
        if (!t->warned_nosync) {
            t->warned_nosync = 1;
            lh_warn(&t->parts.warnings,
                    "%s: more than %u events without a SYNC record; the order of events "
                    "across threads may be approximate",
                    t->parts.path, WINDOW_SOFT_MAX);
        }
        lh_window_release_oldest(&t->window, lh_window_pending(&t->window) / 2);
    }
    return 1;
}

/* ---------------------------------------------------------------------------------------
 * Public API
 * ------------------------------------------------------------------------------------- */

static int
read_header(lh_trace_t *t, lh_err_t *err)
{
    uint8_t b[LH_FILE_HEADER_LEN];
    uint16_t major = 0, minor = 0;
    uint32_t info_len = 0;
    const char *why = NULL;
    size_t got = read_some(t, b, sizeof b);
    if (ferror(t->f)) {
        return lh_err_set(err, LH_EIO, "%s: read error: %s", t->parts.path, strerror(errno));
    }
    size_t cmp = got < LH_FILE_MAGIC_LEN ? got : LH_FILE_MAGIC_LEN;
    if (got == 0) {
        return lh_err_set(err, LH_EFORMAT, "%s: empty file (not a leakhound trace)", t->parts.path);
    }
    if (memcmp(b, LH_FILE_MAGIC, cmp) != 0) {
        return lh_err_set(err, LH_EFORMAT, "%s: not a leakhound trace (bad magic)", t->parts.path);
    }
    if (got < sizeof b) {
        return lh_err_set(err, LH_ETRUNC, "%s: truncated at offset %zu (in the file header)",
                          t->parts.path, got);
    }
    if (lh_dec_file_header(b, got, &major, &minor, &info_len, &why) < 0) {
        major = (uint16_t)(b[8] | b[9] << 8);
        minor = (uint16_t)(b[10] | b[11] << 8);
        if (major > LH_FORMAT_MAJOR) {
            return lh_err_set(err, LH_EVERSION,
                              "%s: trace format %u.%u is newer than this leakhound (reads %d.x); "
                              "upgrade leakhound",
                              t->parts.path, major, minor, LH_FORMAT_MAJOR);
        }
        if (major != LH_FORMAT_MAJOR) {
            return lh_err_set(err, LH_EVERSION,
                              "%s: trace format %u.%u is not supported (this leakhound reads "
                              "%d.x)",
                              t->parts.path, major, minor, LH_FORMAT_MAJOR);
        }
        return lh_err_set(err, LH_EFORMAT, "%s: %s", t->parts.path, why);
    }
    t->parts.info.major = major;
    t->parts.info.minor = minor;
    return read_info(t, info_len, err);
}

/* ---------------------------------------------------------------------------------------
 * The inherited heap of a fork child
 * ------------------------------------------------------------------------------------- */

#define SEED_DEPTH_MAX 32 /* fork generations followed (a loop of renamed files ends too) */

static int
cmp_live(const void *a, const void *b)
{
    const lh_live_block_t *x = a, *y = b;
    if (x->ts_ns != y->ts_ns) {
        return x->ts_ns < y->ts_ns ? -1 : 1;
    }
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Copies stack id of src (with its script frames) into t's table, where the same id names
 * the same stack: the child inherited the agent's stack table, and ids made before the
 * fork are never given again. Returns 0, 1 when src does not know it (yet), or LH_ENOMEM. */
static int
copy_stack(lh_trace_t *t, const lh_stacks_t *src, uint32_t id)
{
    const lh_stack_t *s = lh_stacks_get(src, id);
    if (!s || !s->ips) {
        return 1;
    }
    if (lh_stacks_get(&t->parts.stacks, id)) {
        return 0;
    }
    int rc = lh_stacks_put(&t->parts.stacks, id, s->epoch, s->ips, s->n_ips);
    if (rc < 0 || s->n_script == 0) {
        return rc < 0 ? rc : 0;
    }
    for (uint32_t i = 0; i < s->n_script; i++) {
        const lh_sframe_t *f = lh_sframes_get(&src->sframes, s->script[i]);
        if (f && f->function &&
            (rc = lh_stacks_put_sframe(&t->parts.stacks, s->script[i], f->lang, f->function,
                                       strlen(f->function), f->file, strlen(f->file),
                                       f->line)) < 0) {
            return rc;
        }
    }
    t->map_sites = 1;
    return lh_stacks_put_script(&t->parts.stacks, id, s->script, s->n_script) < 0 ? LH_ENOMEM : 0;
}

/* The blocks live in parent p at the fork, sorted by time; reads p up to the first event
 * at or after the fork, then on only while a stack they use is still unknown (a STACK
 * record may come in a later frame than the first event using it). *reached: whether p
 * went up to the fork. Returns the count, or a negative LH_E* code. */
static long
parent_live(lh_trace_t *p, uint64_t fork_ts, lh_live_block_t **out, int *reached,
            lh_err_t *err)
{
    lh_replay_t *r = NULL;
    lh_live_block_t *v = NULL;
    size_t n = 0, cap = 0, cur = 0;
    lh_event_t ev;
    int rc = lh_replay_new(&r, err);
    *reached = 0;
    while (rc == 0 && (rc = lh_trace_next(p, &ev, err)) > 0) {
        if (ev.ts_ns >= fork_ts) {
            *reached = 1;
            break;
        }
        rc = lh_replay_event(r, &ev, err);
    }
    if (rc < 0 && rc != LH_ENOMEM) {
        rc = 0; /* what came before a bad tail is the parent's heap as far as it is known */
    }
    lh_live_block_t b;
    while (rc >= 0 && lh_replay_live_next(r, &cur, &b)) {
        if (lh_grow(&v, &cap, n, sizeof *v, 1024) < 0) {
            rc = LH_ENOMEM;
            break;
        }
        v[n++] = b;
    }
    lh_replay_free(r);
    for (size_t i = 0, more = 1; rc >= 0 && more && i < n;) {
        if (v[i].stack_id == 0 || lh_stacks_get(&p->parts.stacks, v[i].stack_id)) {
            i++;
            continue;
        }
        lh_err_t e2;
        more = lh_trace_next(p, &ev, &e2) > 0;
    }
    if (rc < 0) {
        free(v);
        return rc;
    }
    if (n > 1) {
        qsort(v, n, sizeof *v, cmp_live);
    }
    *out = v;
    return (long)n;
}

/* lh_trace_open for a parent trace: a regular file only (a name in a trace is data: a
 * FIFO or a device would block or never end). */
static int
open_regular(const char *path, const lh_trace_opts_t *o, lh_trace_t **p, lh_err_t *e)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        return lh_err_set(e, errno == ENOENT ? LH_ENOENT : LH_EIO, "%s: %s", path,
                          strerror(errno));
    }
    if (!S_ISREG(sb.st_mode)) {
        return lh_err_set(e, LH_EFORMAT, "%s: not a regular file", path);
    }
    return lh_trace_open(path, o, p, e);
}

/* Opens the trace named by a fork child's INFO_PARENT: first beside the child (the two
 * files moved together), then as the agent named it; when neither exists and the name
 * ends in the agent's ".K" (the name asked for was taken: a wrapper's trace), both again
 * without it (`leakhound run` moves the program's trace to the name asked for). */
static int
open_parent(const lh_trace_t *t, lh_trace_t **p, char *why, size_t why_len)
{
    const char *name = t->parts.info.parent_trace;
    const char *base = strrchr(name, '/');
    const char *slash = strrchr(t->parts.path, '/');
    const char *dot = strrchr(name, '.');
    base = base ? base + 1 : name;
    size_t nl = strlen(name), bl = strlen(base), cut = 0;
    if (dot && dot > base && dot[1] && strspn(dot + 1, "0123456789") == strlen(dot + 1)) {
        cut = strlen(dot);
    }
    int dl = slash ? (int)(slash - t->parts.path + 1) : 0;
    lh_trace_opts_t o = {.salvage = 1, .depth = t->opts.depth + 1};
    lh_err_t e, named = {0};
    char path[4096], tried[4096] = "";
    int rc = LH_ENOENT, k;
    for (k = 0; k < 4 && rc == LH_ENOENT; k++) {
        size_t strip = k < 2 ? 0 : cut; /* k even: beside the child; odd: as named */
        if (k >= 2 && !cut) {
            break;
        }
        int n = k % 2 ? snprintf(path, sizeof path, "%.*s", (int)(nl - strip), name)
                      : snprintf(path, sizeof path, "%.*s%.*s", dl, t->parts.path,
                                 (int)(bl - strip), base);
        if (n > 0 && (size_t)n < sizeof path && strcmp(path, tried) != 0) {
            rc = open_regular(path, &o, p, &e);
            memcpy(tried, path, (size_t)n + 1);
            named = k < 2 ? e : named;
        }
    }
    if (rc == LH_ENOENT && !tried[0]) {
        rc = open_regular(name, &o, p, &e);
    } else if (rc == LH_ENOENT) {
        e = named; /* the error names the file as the agent named it */
    } else if (rc == 0 && k > 2 && strcmp((*p)->parts.info.exe, t->parts.info.exe) != 0) {
        /* Without ".K": the trace that took the name first, a wrapper's when not moved. */
        snprintf(why, why_len, "%s is the trace of %s, not of %s", (*p)->parts.path,
                 (*p)->parts.info.exe, t->parts.info.exe);
        lh_trace_close(*p);
        *p = NULL;
        return LH_EFORMAT;
    }
    if (rc < 0) {
        snprintf(why, why_len, "%s", e.msg);
        return rc;
    }
    if ((*p)->parts.info.pid != t->parts.info.parent_trace_pid) {
        snprintf(why, why_len, "%s is the trace of pid %" PRIu64 ", not of pid %" PRIu64,
                 (*p)->parts.path, (*p)->parts.info.pid, t->parts.info.parent_trace_pid);
        lh_trace_close(*p);
        *p = NULL;
        return LH_EFORMAT;
    }
    return 0;
}

/* A fork child's trace: pushes the blocks live in its parent's trace at the fork into the
 * window, as ALLOC events, and their stacks into the child's table. Problems with the
 * parent's trace are a one-line warning (the child is read alone); only memory fails. */
static int
seed_inherited(lh_trace_t *t, lh_err_t *err)
{
    lh_trace_info_t *in = &t->parts.info;
    if (!in->has_parent || !in->fork_ts_ns || t->opts.no_parent) {
        return 0;
    }
    if (!in->parent_trace[0]) {
        lh_warn(&t->parts.warnings,
                "%s: pid %" PRIu64 " was forked from pid %" PRIu64 ", which wrote no trace: "
                "analyzed alone (frees of inherited blocks are unmatched)",
                t->parts.path, in->pid, in->parent_pid);
        return 0;
    }
    char why[sizeof err->msg];
    lh_trace_t *p = NULL;
    if (t->opts.depth >= SEED_DEPTH_MAX) {
        snprintf(why, sizeof why, "more than %d generations of fork", SEED_DEPTH_MAX);
    } else if (open_parent(t, &p, why, sizeof why) == LH_ENOMEM) {
        return lh_err_set(err, LH_ENOMEM, "%s: out of memory reading its parent's trace",
                          t->parts.path);
    }
    if (!p) {
        lh_warn(&t->parts.warnings, "%s: inherited heap not read (%s): analyzed alone",
                t->parts.path, why);
        return 0;
    }
    lh_live_block_t *v = NULL;
    int reached = 0;
    long n = parent_live(p, in->fork_ts_ns, &v, &reached, err);
    int rc = n < 0 ? (int)n : 0;
    uint64_t bytes = 0;
    for (long i = 0; rc == 0 && i < n; i++) {
        lh_event_t ev = {.type = LH_REC_ALLOC, .stack_id = v[i].stack_id, .ts_ns = v[i].ts_ns,
                         .addr = v[i].addr, .size = v[i].size,
                         .sample_rate = in->sample_rate_bytes};
        if (v[i].stack_id && (rc = copy_stack(t, &p->parts.stacks, v[i].stack_id)) > 0) {
            rc = 0; /* the parent's trace ends before that stack: the block has no site */
            ev.stack_id = 0;
        }
        if (rc == 0) {
            rc = lh_window_push(&t->window, &ev, 0, (uint64_t)i);
        }
        bytes += v[i].size;
    }
    if (rc == 0) {
        rc = set_str((char **)&in->inherited_from, p->parts.path, strlen(p->parts.path));
    }
    if (rc == 0 && !reached && !p->parts.end.present) {
        lh_warn(&t->parts.warnings,
                "%s: the parent's trace %s ends before the fork (its process still runs?): "
                "%ld inherited blocks known; any it allocated after its last frame are not",
                t->parts.path, p->parts.path, n);
    }
    free(v);
    lh_trace_close(p);
    if (rc < 0) {
        return rc == LH_ENOMEM ? lh_err_set(err, rc, "%s: out of memory reading its parent's "
                                                     "trace", t->parts.path)
                               : rc;
    }
    in->inherited = 1;
    in->inherited_blocks = (uint64_t)n;
    in->inherited_bytes = bytes;
    return 0;
}

int
lh_trace_open(const char *path, const lh_trace_opts_t *opts, lh_trace_t **out, lh_err_t *err)
{
    lh_trace_t *t = calloc(1, sizeof *t);
    int rc;
    *out = NULL;
    if (!t) {
        return lh_err_set(err, LH_ENOMEM, "%s: out of memory", path);
    }
    lh_warnings_init(&t->parts.warnings);
    lh_window_init(&t->window);
    if (opts) {
        t->opts = *opts;
    }
    t->parts.path = strdup(path);
    t->parts.info.exe = strdup("");
    t->parts.info.agent_version = strdup("");
    t->parts.info.arch = strdup("");
    t->parts.info.parent_trace = strdup("");
    t->parts.info.inherited_from = strdup("");
    t->parts.info.argv = calloc(1, sizeof *t->parts.info.argv);
    if (!t->parts.path || !t->parts.info.exe || !t->parts.info.agent_version ||
        !t->parts.info.arch || !t->parts.info.argv || !t->parts.info.parent_trace ||
        !t->parts.info.inherited_from) {
        rc = lh_err_set(err, LH_ENOMEM, "%s: out of memory", path);
        goto fail;
    }
    t->f = fopen(path, "rb");
    if (!t->f) {
        int e = errno;
        rc = lh_err_set(err, e == ENOENT ? LH_ENOENT : LH_EIO, "%s: %s", path, strerror(e));
        goto fail;
    }
    rc = read_header(t, err);
    if (rc < 0 || (rc = seed_inherited(t, err)) < 0) {
        goto fail;
    }
    int n_workers = lh_prefetch_threads();
    if (n_workers > 0) {
        /* No workers (no memory, no threads): the frames are read here, as before. */
        (void)lh_prefetch_start(&t->pf, t->f, t->parts.stats.file_bytes, n_workers);
    }
    *out = t;
    return 0;
fail:
    lh_trace_close(t);
    return rc;
}

void
lh_trace_close(lh_trace_t *t)
{
    if (!t) {
        return;
    }
    lh_prefetch_stop(t->pf); /* before the file it reads is closed */
    if (t->f) {
        fclose(t->f);
    }
    free((char *)t->parts.path);
    free((char *)t->parts.info.exe);
    free((char *)t->parts.lsan_supp);
    free((char *)t->parts.info.agent_version);
    free((char *)t->parts.info.arch);
    free((char *)t->parts.info.parent_trace);
    free((char *)t->parts.info.inherited_from);
    free_argv(&t->parts.info);
    lh_modules_fini(&t->parts.modules);
    lh_stacks_fini(&t->parts.stacks);
    LH_FREE_EACH(t->threads, t->n_threads, thread_name_t, name);
    lh_warnings_fini(&t->parts.warnings);
    lh_strv_free(t->snap_files, t->n_snap_files);
    lh_window_fini(&t->window);
    free(t->comp);
    free(t->raw);
    free(t->last_label);
    lh_sitecanon_free(t->canon);
    free(t);
}

int
lh_trace_next(lh_trace_t *t, lh_event_t *ev, lh_err_t *err)
{
    lh_err_t local;
    if (!err) {
        err = &local;
    }
    free(t->last_label);
    t->last_label = NULL;
    if (t->failed) {
        return lh_err_set(err, t->failed, "%s", t->failed_msg); /* errors are sticky */
    }
    for (;;) {
        if (lh_window_pop(&t->window, ev, &t->last_label)) {
            lh_trace_stats_t *st = &t->parts.stats;
            lh_event_count(ev, &t->seen_event, &st->n_events, &st->first_ts_ns, &st->last_ts_ns);
            if ((ev->type == LH_REC_ALLOC || ev->type == LH_REC_REALLOC) && ev->stack_id &&
                t->map_sites) {
                int rc = 0;
                if (!t->canon) {
                    rc = lh_sitecanon_new(&t->parts.modules, t->parts.info.exe, &t->canon, err);
                }
                if (rc < 0 ||
                    (rc = lh_sitecanon_map(t->canon, &t->parts.stacks, ev->stack_id, &ev->stack_id,
                                           err)) < 0) {
                    return rc;
                }
            }
            return 1;
        }
        if (t->eof) {
            if (lh_window_pending(&t->window) == 0) {
                return 0;
            }
            lh_window_release(&t->window, 0, 1);
            continue;
        }
        int rc = read_frame(t, err);
        if (rc == 0) {
            t->eof = 1;
        } else if (rc < 0) {
            if (!t->opts.salvage || (rc != LH_ETRUNC && rc != LH_EFORMAT)) {
                t->failed = rc;
                snprintf(t->failed_msg, sizeof t->failed_msg, "%s", err->msg);
                return rc;
            }
            lh_warn(&t->parts.warnings, "%s; salvaged the events before it", err->msg);
            t->parts.stats.salvaged = 1;
            t->eof = 1;
        }
    }
}

const lh_event_t *
lh_trace_ahead(const lh_trace_t *t, size_t k)
{
    const lh_window_t *w = &t->window;
    return k < w->ready - w->pos ? &w->v[w->pos + k].ev : NULL;
}

const lh_trace_parts_t *
lh_trace_parts(const lh_trace_t *t)
{
    return &t->parts;
}

const char *
lh_trace_thread_name(const lh_trace_t *t, uint64_t tid)
{
    const thread_name_t *th = find_thread(t, tid);
    return th ? th->name : NULL;
}

const lh_trace_interp_t *
lh_trace_interps(const lh_trace_t *t, size_t *n)
{
    *n = t->n_interps;
    return t->interps;
}
