/* leakhound - SPDX-License-Identifier: MIT
 *
 * filewriter.c: trace and contents files written from outside the target (filewriter.h).
 */
#include "filewriter.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#define RAW_CAP (1u << 20)

static void
write_all(lh_fw_t *fw, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n && !fw->failed) {
        ssize_t w = write(fw->fd, b, n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            fw->failed = 1;
            return;
        }
        b += w;
        n -= (size_t)w;
    }
}

static void
frame_start(lh_fw_t *fw)
{
    lh_enc_init(&fw->e, fw->raw, fw->raw_cap);
    fw->n_records = 0;
    fw->prev_ts = fw->ts_base;
    fw->prev_addr = 0;
    fw->prev_val = 0;
}

static void
frame_flush(lh_fw_t *fw)
{
    size_t len = (size_t)(fw->e.p - fw->raw);
    if (!fw->n_records || fw->failed) {
        frame_start(fw);
        return;
    }
    size_t c = ZSTD_compress(fw->comp + LH_FRAME_HEADER_LEN, fw->comp_cap - LH_FRAME_HEADER_LEN,
                             fw->raw, len, 3);
    if (ZSTD_isError(c)) {
        fw->failed = 1;
        return;
    }
    lh_frame_hdr_t h = {0};
    h.codec = LH_CODEC_ZSTD;
    h.raw_len = (uint32_t)len;
    h.comp_len = (uint32_t)c;
    h.ts_base_ns = fw->ts_base;
    h.seq = fw->seq++;
    h.n_records = fw->n_records;
    lh_enc_t he;
    lh_enc_init(&he, fw->comp, LH_FRAME_HEADER_LEN);
    lh_enc_frame_header(&he, &h, fw->comp + LH_FRAME_HEADER_LEN);
    write_all(fw, fw->comp, LH_FRAME_HEADER_LEN + c);
    frame_start(fw);
}

int
lh_fw_open(lh_fw_t *fw, const char *path, const char *magic, const void *info, size_t info_len,
           uint64_t ts_base, lh_err_t *err)
{
    memset(fw, 0, sizeof *fw);
    fw->path = path;
    fw->ts_base = ts_base;
    fw->raw_cap = RAW_CAP;
    fw->comp_cap = LH_FRAME_HEADER_LEN + ZSTD_compressBound(RAW_CAP);
    fw->raw = malloc(fw->raw_cap);
    fw->comp = malloc(fw->comp_cap);
    if (!fw->raw || !fw->comp) {
        free(fw->raw);
        free(fw->comp);
        fw->fd = -1;
        return lh_err_set(err, LH_ENOMEM, "out of memory");
    }
    fw->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fw->fd < 0) {
        int e = errno;
        free(fw->raw);
        free(fw->comp);
        fw->raw = fw->comp = NULL;
        return lh_err_set(err, LH_EIO, "%s: cannot create: %s", path, strerror(e));
    }
    uint8_t hdr[LH_FILE_HEADER_LEN];
    lh_enc_t e;
    lh_enc_init(&e, hdr, sizeof hdr);
    lh_enc_file_header(&e, (uint32_t)info_len);
    memcpy(hdr, magic, LH_FILE_MAGIC_LEN); /* the same container for both magics */
    write_all(fw, hdr, sizeof hdr);
    write_all(fw, info, info_len);
    frame_start(fw);
    return 0;
}

lh_enc_t *
lh_fw_rec_begin(lh_fw_t *fw, uint8_t type, size_t max_len)
{
    if ((size_t)(fw->e.end - fw->e.p) < max_len + 16) {
        frame_flush(fw);
    }
    fw->rec = lh_enc_rec_begin(&fw->e, type);
    return &fw->e;
}

void
lh_fw_rec_end(lh_fw_t *fw)
{
    lh_enc_rec_end(&fw->e, fw->rec);
    if (!lh_enc_ok(&fw->e)) {
        fw->failed = 1;
    }
    fw->n_records++;
}

void
lh_fw_ts(lh_fw_t *fw, uint64_t ts_ns)
{
    lh_enc_varint(&fw->e, ts_ns >= fw->prev_ts ? ts_ns - fw->prev_ts : 0);
    if (ts_ns > fw->prev_ts) {
        fw->prev_ts = ts_ns;
    }
}

int
lh_fw_close(lh_fw_t *fw, lh_err_t *err)
{
    frame_flush(fw);
    int failed = fw->failed;
    if (fsync(fw->fd) < 0 && errno != EINVAL) {
        failed = 1;
    }
    if (close(fw->fd) < 0) {
        failed = 1;
    }
    fw->fd = -1;
    free(fw->raw);
    free(fw->comp);
    fw->raw = fw->comp = NULL;
    if (failed) {
        unlink(fw->path);
        return lh_err_set(err, LH_EIO, "%s: write failed (disk full?)", fw->path);
    }
    return 0;
}

void
lh_fw_abort(lh_fw_t *fw)
{
    if (fw->fd >= 0) {
        close(fw->fd);
        unlink(fw->path);
    }
    fw->fd = -1;
    free(fw->raw);
    free(fw->comp);
    fw->raw = fw->comp = NULL;
}
