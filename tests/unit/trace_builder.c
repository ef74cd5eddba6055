/* leakhound - SPDX-License-Identifier: MIT
 *
 * trace_builder.c: synthetic traces for the unit tests.
 */
#include "trace_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "enc.h"

#define FRAME_CAP (1u << 20)
#define MAX_FRAMES 256

struct lh_tb {
    uint16_t major, minor;
    uint8_t info[65536];
    lh_enc_t ie;
    uint8_t *file; /* frames only; the header and info block are prepended by lh_tb_data */
    size_t file_len, file_cap;
    uint8_t *frame;
    lh_enc_t fe;
    int in_frame;
    uint32_t tid;
    uint64_t ts_base, ts, addr, seq;
    uint32_t n_records;
    size_t frame_off[MAX_FRAMES];
    size_t payload_off[MAX_FRAMES];
    uint8_t *out;
};

static void
die(const char *what)
{
    fprintf(stderr, "trace_builder: %s\n", what);
    abort();
}

lh_tb_t *
lh_tb_new(void)
{
    lh_tb_t *tb = calloc(1, sizeof *tb);
    if (!tb || !(tb->frame = malloc(FRAME_CAP))) {
        die("out of memory");
    }
    tb->major = LH_FORMAT_MAJOR;
    tb->minor = LH_FORMAT_MINOR;
    lh_enc_init(&tb->ie, tb->info, sizeof tb->info);
    return tb;
}

void
lh_tb_free(lh_tb_t *tb)
{
    if (tb) {
        free(tb->file);
        free(tb->frame);
        free(tb->out);
        free(tb);
    }
}

void
lh_tb_version(lh_tb_t *tb, uint16_t major, uint16_t minor)
{
    tb->major = major;
    tb->minor = minor;
}

static void
info_end(lh_tb_t *tb, uint8_t *r)
{
    lh_enc_rec_end(&tb->ie, r);
    if (!lh_enc_ok(&tb->ie)) {
        die("info block overflow");
    }
}

void
lh_tb_info_pid(lh_tb_t *tb, uint64_t pid, uint64_t ppid)
{
    uint8_t *r = lh_enc_rec_begin(&tb->ie, LH_REC_INFO_PID);
    lh_enc_varint(&tb->ie, pid);
    lh_enc_varint(&tb->ie, ppid);
    info_end(tb, r);
}

void
lh_tb_info_exe(lh_tb_t *tb, const char *exe)
{
    uint8_t *r = lh_enc_rec_begin(&tb->ie, LH_REC_INFO_EXE);
    lh_enc_str(&tb->ie, exe);
    info_end(tb, r);
}

void
lh_tb_info_cmdline(lh_tb_t *tb, int argc, const char *const *argv)
{
    uint8_t *r = lh_enc_rec_begin(&tb->ie, LH_REC_INFO_CMDLINE);
    lh_enc_varint(&tb->ie, (uint64_t)argc);
    for (int i = 0; i < argc; i++) {
        lh_enc_str(&tb->ie, argv[i]);
    }
    info_end(tb, r);
}

void
lh_tb_info_clock(lh_tb_t *tb, uint64_t mono_start_ns, uint64_t realtime_start_ns)
{
    uint8_t *r = lh_enc_rec_begin(&tb->ie, LH_REC_INFO_CLOCK);
    lh_enc_varint(&tb->ie, 1);
    lh_enc_varint(&tb->ie, mono_start_ns);
    lh_enc_varint(&tb->ie, realtime_start_ns);
    info_end(tb, r);
}

void
lh_tb_info_raw(lh_tb_t *tb, uint8_t type, const void *payload, size_t len)
{
    uint8_t *r = lh_enc_rec_begin(&tb->ie, type);
    lh_enc_bytes(&tb->ie, payload, len);
    info_end(tb, r);
}

void
lh_tb_frame_begin(lh_tb_t *tb, uint32_t tid, uint64_t ts_base_ns)
{
    if (tb->in_frame) {
        die("frame_begin inside a frame");
    }
    tb->in_frame = 1;
    tb->tid = tid;
    tb->ts_base = tb->ts = ts_base_ns;
    tb->addr = 0;
    tb->n_records = 0;
    lh_enc_init(&tb->fe, tb->frame, FRAME_CAP);
}

static uint8_t *
rec_ts(lh_tb_t *tb, uint8_t type, uint64_t ts)
{
    if (!tb->in_frame) {
        die("record outside a frame");
    }
    uint8_t *r = lh_enc_rec_begin(&tb->fe, type);
    lh_enc_varint(&tb->fe, ts - tb->ts);
    tb->ts = ts;
    return r;
}

static void
rec_addr(lh_tb_t *tb, uint64_t addr)
{
    lh_enc_addr(&tb->fe, (int64_t)(addr - tb->addr));
    tb->addr = addr;
}

static void
rec_end(lh_tb_t *tb, uint8_t *r)
{
    lh_enc_rec_end(&tb->fe, r);
    if (!lh_enc_ok(&tb->fe)) {
        die("frame overflow");
    }
    tb->n_records++;
}

void
lh_tb_alloc(lh_tb_t *tb, uint64_t ts, uint64_t addr, uint64_t size, uint32_t stack, uint8_t kind)
{
    uint8_t *r = rec_ts(tb, LH_REC_ALLOC, ts);
    rec_addr(tb, addr);
    lh_enc_varint(&tb->fe, size);
    lh_enc_varint(&tb->fe, stack);
    lh_enc_u8(&tb->fe, kind);
    rec_end(tb, r);
}

void
lh_tb_free_rec(lh_tb_t *tb, uint64_t ts, uint64_t addr)
{
    uint8_t *r = rec_ts(tb, LH_REC_FREE, ts);
    rec_addr(tb, addr);
    rec_end(tb, r);
}

void
lh_tb_realloc(lh_tb_t *tb, uint64_t ts, uint64_t old_addr, uint64_t new_addr, uint64_t size,
              uint32_t stack, uint64_t dt_alloc)
{
    uint8_t *r = rec_ts(tb, LH_REC_REALLOC, ts);
    rec_addr(tb, old_addr);
    rec_addr(tb, new_addr);
    lh_enc_varint(&tb->fe, size);
    lh_enc_varint(&tb->fe, stack);
    lh_enc_varint(&tb->fe, dt_alloc);
    tb->ts = ts + dt_alloc;
    rec_end(tb, r);
}

void
lh_tb_stack(lh_tb_t *tb, uint32_t id, uint64_t epoch, const uint64_t *ips, size_t n)
{
    uint64_t prev = 0;
    uint8_t *r = lh_enc_rec_begin(&tb->fe, LH_REC_STACK);
    lh_enc_varint(&tb->fe, id);
    lh_enc_varint(&tb->fe, epoch);
    lh_enc_varint(&tb->fe, n);
    for (size_t i = 0; i < n; i++) {
        lh_enc_svarint(&tb->fe, (int64_t)(ips[i] - prev));
        prev = ips[i];
    }
    rec_end(tb, r);
}

void
lh_tb_script_stack(lh_tb_t *tb, uint32_t id, uint64_t epoch, const uint64_t *ips, size_t n,
                   const uint32_t *script, size_t n_script)
{
    if (!tb->in_frame) {
        die("record outside a frame");
    }
    lh_enc_rec_stack(&tb->fe, id, (uint32_t)epoch, ips, (uint32_t)n, script,
                     (uint32_t)n_script);
    if (!lh_enc_ok(&tb->fe)) {
        die("frame overflow");
    }
    tb->n_records++;
}

void
lh_tb_sframe(lh_tb_t *tb, uint32_t id, unsigned lang, const char *func, const char *file,
             uint32_t line)
{
    if (!tb->in_frame) {
        die("record outside a frame");
    }
    lh_enc_rec_sframe(&tb->fe, id, lang, func, strlen(func), file, strlen(file), line);
    if (!lh_enc_ok(&tb->fe)) {
        die("frame overflow");
    }
    tb->n_records++;
}

void
lh_tb_interp(lh_tb_t *tb, uint64_t ts, unsigned lang, const char *version, unsigned status,
             const char *detail)
{
    if (!tb->in_frame) {
        die("record outside a frame");
    }
    lh_enc_rec_interp(&tb->fe, ts - tb->ts, lang, version, status, detail);
    tb->ts = ts;
    if (!lh_enc_ok(&tb->fe)) {
        die("frame overflow");
    }
    tb->n_records++;
}

void
lh_tb_module(lh_tb_t *tb, uint64_t ts, uint64_t epoch, uint64_t load_bias, const char *path,
             const uint8_t *build_id, size_t build_id_len, uint64_t vaddr, uint64_t memsz)
{
    uint8_t *r = rec_ts(tb, LH_REC_MODULE, ts);
    lh_enc_varint(&tb->fe, epoch);
    lh_enc_varint(&tb->fe, load_bias);
    lh_enc_str(&tb->fe, path);
    lh_enc_varint(&tb->fe, build_id_len);
    lh_enc_bytes(&tb->fe, build_id, build_id_len);
    lh_enc_varint(&tb->fe, 1);
    lh_enc_varint(&tb->fe, vaddr);
    lh_enc_varint(&tb->fe, memsz);
    lh_enc_varint(&tb->fe, 5); /* PF_R | PF_X */
    rec_end(tb, r);
}

void
lh_tb_module_unload(lh_tb_t *tb, uint64_t ts, uint64_t epoch, uint64_t load_bias,
                    const char *path)
{
    uint8_t *r = rec_ts(tb, LH_REC_MODULE_UNLOAD, ts);
    lh_enc_varint(&tb->fe, epoch);
    lh_enc_varint(&tb->fe, load_bias);
    lh_enc_str(&tb->fe, path);
    rec_end(tb, r);
}

void
lh_tb_thread(lh_tb_t *tb, uint64_t ts, uint64_t tid, const char *name)
{
    uint8_t *r = rec_ts(tb, LH_REC_THREAD, ts);
    lh_enc_varint(&tb->fe, tid);
    lh_enc_str(&tb->fe, name);
    rec_end(tb, r);
}

void
lh_tb_mark(lh_tb_t *tb, uint64_t ts, const char *label)
{
    uint8_t *r = rec_ts(tb, LH_REC_MARK, ts);
    lh_enc_str(&tb->fe, label);
    rec_end(tb, r);
}

void
lh_tb_suppressions(lh_tb_t *tb, uint64_t ts, const char *text)
{
    uint8_t *r = rec_ts(tb, LH_REC_SUPPRESSIONS, ts);
    lh_enc_str(&tb->fe, text);
    rec_end(tb, r);
}

void
lh_tb_snapshot(lh_tb_t *tb, uint64_t ts, const char *label, uint64_t trigger)
{
    uint8_t *r = rec_ts(tb, LH_REC_SNAPSHOT, ts);
    lh_enc_str(&tb->fe, label);
    lh_enc_varint(&tb->fe, trigger);
    rec_end(tb, r);
}

void
lh_tb_rss(lh_tb_t *tb, uint64_t ts, uint64_t rss_bytes)
{
    uint8_t *r = rec_ts(tb, LH_REC_RSS, ts);
    lh_enc_varint(&tb->fe, rss_bytes);
    rec_end(tb, r);
}

void
lh_tb_sync(lh_tb_t *tb, uint64_t ts)
{
    uint8_t *r = rec_ts(tb, LH_REC_SYNC, ts);
    rec_end(tb, r);
}

void
lh_tb_end(lh_tb_t *tb, uint64_t ts, uint64_t kind, uint64_t status)
{
    uint8_t *r = rec_ts(tb, LH_REC_END, ts);
    lh_enc_varint(&tb->fe, kind);
    lh_enc_varint(&tb->fe, status);
    for (int i = 0; i < 4; i++) {
        lh_enc_varint(&tb->fe, 0); /* events, frames, dropped, pre_init_allocs */
    }
    rec_end(tb, r);
}

void
lh_tb_raw(lh_tb_t *tb, uint8_t type, const void *payload, size_t len)
{
    uint8_t *r = lh_enc_rec_begin(&tb->fe, type);
    lh_enc_bytes(&tb->fe, payload, len);
    rec_end(tb, r);
}

static void
file_append(lh_tb_t *tb, const void *p, size_t n)
{
    if (tb->file_len + n > tb->file_cap) {
        size_t cap = tb->file_cap ? tb->file_cap : 65536;
        while (cap < tb->file_len + n) {
            cap *= 2;
        }
        if (!(tb->file = realloc(tb->file, cap))) {
            die("out of memory");
        }
        tb->file_cap = cap;
    }
    memcpy(tb->file + tb->file_len, p, n);
    tb->file_len += n;
}

void
lh_tb_frame_end(lh_tb_t *tb, uint8_t codec, uint8_t flags)
{
    lh_frame_hdr_t h = {0};
    uint8_t hb[LH_FRAME_HEADER_LEN];
    lh_enc_t he;
    size_t raw_len = (size_t)(tb->fe.p - tb->frame);
    void *payload = tb->frame;
    void *comp = NULL;
    size_t comp_len = raw_len;
    if (!tb->in_frame || tb->seq >= MAX_FRAMES) {
        die("frame_end without a frame, or too many frames");
    }
    if (codec == LH_CODEC_ZSTD) {
        size_t cap = ZSTD_compressBound(raw_len);
        comp = malloc(cap);
        if (!comp) {
            die("out of memory");
        }
        comp_len = ZSTD_compress(comp, cap, tb->frame, raw_len, 3);
        if (ZSTD_isError(comp_len)) {
            die("zstd");
        }
        payload = comp;
    }
    h.codec = codec;
    h.flags = flags;
    h.tid = tb->tid;
    h.raw_len = (uint32_t)raw_len;
    h.comp_len = (uint32_t)comp_len;
    h.ts_base_ns = tb->ts_base;
    h.seq = tb->seq;
    h.n_records = tb->n_records;
    lh_enc_init(&he, hb, sizeof hb);
    lh_enc_frame_header(&he, &h, payload);
    tb->frame_off[tb->seq] = tb->file_len;
    file_append(tb, hb, sizeof hb);
    tb->payload_off[tb->seq] = tb->file_len;
    file_append(tb, payload, comp_len);
    free(comp);
    tb->seq++;
    tb->in_frame = 0;
}

static size_t
prefix_len(lh_tb_t *tb)
{
    return LH_FILE_HEADER_LEN + (size_t)(tb->ie.p - tb->info);
}

const uint8_t *
lh_tb_data(lh_tb_t *tb, size_t *len)
{
    size_t info_len = (size_t)(tb->ie.p - tb->info);
    size_t total = prefix_len(tb) + tb->file_len;
    lh_enc_t e;
    free(tb->out);
    if (!(tb->out = malloc(total ? total : 1))) {
        die("out of memory");
    }
    lh_enc_init(&e, tb->out, total);
    lh_enc_bytes(&e, LH_FILE_MAGIC, LH_FILE_MAGIC_LEN);
    lh_enc_u16le(&e, tb->major);
    lh_enc_u16le(&e, tb->minor);
    lh_enc_u32le(&e, (uint32_t)info_len);
    lh_enc_bytes(&e, tb->info, info_len);
    lh_enc_bytes(&e, tb->file, tb->file_len);
    *len = total;
    return tb->out;
}

size_t
lh_tb_frame_offset(lh_tb_t *tb, size_t k)
{
    return prefix_len(tb) + tb->frame_off[k];
}

size_t
lh_tb_payload_offset(lh_tb_t *tb, size_t k)
{
    return prefix_len(tb) + tb->payload_off[k];
}

void
lh_tb_write(lh_tb_t *tb, const char *path, size_t len)
{
    size_t total;
    const uint8_t *d = lh_tb_data(tb, &total);
    if (len > total) {
        len = total;
    }
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(d, 1, len, f) != len || fclose(f) != 0) {
        die("cannot write the trace file");
    }
}
