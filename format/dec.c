/* leakhound - SPDX-License-Identifier: MIT
 *
 * dec.c: bounds-checked readers for the trace format.
 */
#include "dec.h"

#include <string.h>

#include "enc.h" /* lh_crc32c, lh_unzigzag */

uint8_t
lh_dec_u8(lh_dec_t *d)
{
    if (d->err || d->p >= d->end) {
        d->err = 1;
        return 0;
    }
    return *d->p++;
}

static uint64_t
dec_le(lh_dec_t *d, int n)
{
    if (d->err || d->end - d->p < n) {
        d->err = 1;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < n; i++) {
        v |= (uint64_t)d->p[i] << (8 * i);
    }
    d->p += n;
    return v;
}

uint16_t
lh_dec_u16le(lh_dec_t *d)
{
    return (uint16_t)dec_le(d, 2);
}

uint32_t
lh_dec_u32le(lh_dec_t *d)
{
    return (uint32_t)dec_le(d, 4);
}

uint64_t
lh_dec_u64le(lh_dec_t *d)
{
    return dec_le(d, 8);
}

uint64_t
lh_dec_varint_slow(lh_dec_t *d)
{
    uint64_t v = 0;
    /* Two and three bytes (time and address deltas) without the general loop's checks per
     * byte: 148M -> 84M instructions of a churn report (callgrind). */
    if (!d->err && d->end - d->p >= 3) {
        const uint8_t *p = d->p;
        if (!(p[0] & 0x80)) {
            d->p += 1;
            return p[0];
        }
        v = (uint64_t)(p[0] & 0x7f) | (uint64_t)(p[1] & 0x7f) << 7;
        if (!(p[1] & 0x80)) {
            d->p += 2;
            return v;
        }
        if (!(p[2] & 0x80)) {
            d->p += 3;
            return v | (uint64_t)p[2] << 14;
        }
        v = 0;
    }
    for (int shift = 0; shift < 64; shift += 7) {
        if (d->err || d->p >= d->end) {
            d->err = 1;
            return 0;
        }
        uint8_t b = *d->p++;
        if (shift == 63 && b > 1) {
            break; /* would overflow 64 bits */
        }
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            return v;
        }
    }
    d->err = 1;
    return 0;
}

int64_t
lh_dec_addr(lh_dec_t *d)
{
    uint64_t v = lh_dec_varint(d);
    int64_t m = lh_unzigzag(v >> 1);
    return (v & 1) ? m : (int64_t)((uint64_t)m * 16u);
}

const uint8_t *
lh_dec_bytes(lh_dec_t *d, size_t len)
{
    if (d->err || (size_t)(d->end - d->p) < len) {
        d->err = 1;
        return NULL;
    }
    const uint8_t *r = d->p;
    d->p += len;
    return r;
}

const char *
lh_dec_str(lh_dec_t *d, size_t *len)
{
    uint64_t n = lh_dec_varint(d);
    const uint8_t *s = lh_dec_bytes(d, n);
    *len = s ? (size_t)n : 0;
    return s ? (const char *)s : "";
}

int
lh_dec_record(lh_dec_t *d, uint8_t *type, lh_dec_t *payload)
{
    if (d->err) {
        return -1;
    }
    if (d->p == d->end) {
        return 0;
    }
    *type = lh_dec_u8(d);
    uint64_t len = lh_dec_varint(d);
    const uint8_t *p = lh_dec_bytes(d, len);
    if (!p) {
        return -1;
    }
    lh_dec_init(payload, p, len);
    return 1;
}

int
lh_dec_file_header(const uint8_t *buf, size_t len, uint16_t *major, uint16_t *minor,
                   uint32_t *info_len, const char **why)
{
    lh_dec_t d;
    if (len < LH_FILE_HEADER_LEN) {
        *why = "file too short for a leakhound trace header";
        return -1;
    }
    if (memcmp(buf, LH_FILE_MAGIC, LH_FILE_MAGIC_LEN) != 0) {
        *why = "not a leakhound trace (bad magic)";
        return -1;
    }
    lh_dec_init(&d, buf + LH_FILE_MAGIC_LEN, len - LH_FILE_MAGIC_LEN);
    *major = lh_dec_u16le(&d);
    *minor = lh_dec_u16le(&d);
    *info_len = lh_dec_u32le(&d);
    if (*major != LH_FORMAT_MAJOR) {
        *why = *major > LH_FORMAT_MAJOR ? "trace format is newer than this leakhound (major "
                                          "version mismatch); upgrade leakhound"
                                        : "trace format major version is unsupported";
        return -1;
    }
    if (*info_len > (1u << 20)) {
        *why = "corrupt header (info block larger than 1 MiB)";
        return -1;
    }
    return 0;
}

int
lh_dec_frame_header(const uint8_t *buf, lh_frame_hdr_t *h, const char **why)
{
    lh_dec_t d;
    lh_dec_init(&d, buf, LH_FRAME_HEADER_LEN);
    h->magic = lh_dec_u32le(&d);
    h->header_len = lh_dec_u16le(&d);
    h->codec = lh_dec_u8(&d);
    h->flags = lh_dec_u8(&d);
    h->tid = lh_dec_u32le(&d);
    h->raw_len = lh_dec_u32le(&d);
    h->comp_len = lh_dec_u32le(&d);
    h->payload_crc = lh_dec_u32le(&d);
    h->ts_base_ns = lh_dec_u64le(&d);
    h->seq = lh_dec_u64le(&d);
    h->n_records = lh_dec_u32le(&d);
    h->header_crc = lh_dec_u32le(&d);
    if (h->magic != LH_FRAME_MAGIC) {
        *why = "bad frame magic";
        return -1;
    }
    if (lh_crc32c(0, buf, 44) != h->header_crc) {
        *why = "frame header checksum mismatch";
        return -1;
    }
    if (h->header_len < LH_FRAME_HEADER_LEN || h->header_len > 4096) {
        *why = "bad frame header length";
        return -1;
    }
    if (h->codec != LH_CODEC_RAW && h->codec != LH_CODEC_ZSTD) {
        *why = "unknown frame codec";
        return -1;
    }
    if (h->raw_len > LH_FRAME_MAX_RAW || h->comp_len > LH_FRAME_MAX_RAW) {
        *why = "frame larger than the 64 MiB limit";
        return -1;
    }
    if (h->codec == LH_CODEC_RAW && h->raw_len != h->comp_len) {
        *why = "raw frame with mismatched sizes";
        return -1;
    }
    return 0;
}

int
lh_dec_sframe_rec(lh_dec_t *pl, lh_sframe_rec_t *out)
{
    uint64_t id = lh_dec_varint(pl);
    uint64_t lang = lh_dec_varint(pl);
    out->func = lh_dec_str(pl, &out->func_len);
    out->file = lh_dec_str(pl, &out->file_len);
    uint64_t line = lh_dec_varint(pl);
    if (!lh_dec_ok(pl) || id == 0 || id > LH_SFRAME_ID_MAX || lang > 255 ||
        line > UINT32_MAX) {
        return -1;
    }
    out->id = (uint32_t)id;
    out->lang = (uint32_t)lang;
    out->line = (uint32_t)line;
    return 0;
}

int
lh_dec_stack_script(lh_dec_t *pl, uint32_t *out, uint32_t max, uint32_t *n_script)
{
    *n_script = 0;
    if (!lh_dec_ok(pl)) {
        return -1;
    }
    if (lh_dec_left(pl) == 0) {
        return 0; /* written before minor 1, or a stack without script frames */
    }
    uint64_t n = lh_dec_varint(pl);
    if (!lh_dec_ok(pl) || n > max || n > LH_SCRIPT_DEPTH_MAX) {
        return -1;
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t id = lh_dec_varint(pl);
        if (!lh_dec_ok(pl) || id == 0 || id > LH_SFRAME_ID_MAX) {
            return -1;
        }
        out[i] = (uint32_t)id;
    }
    *n_script = (uint32_t)n;
    return 0;
}

int
lh_dec_interp_rec(lh_dec_t *pl, lh_interp_rec_t *out)
{
    out->ts_delta = lh_dec_varint(pl);
    uint64_t lang = lh_dec_varint(pl);
    out->version = lh_dec_str(pl, &out->version_len);
    uint64_t status = lh_dec_varint(pl);
    out->detail = lh_dec_str(pl, &out->detail_len);
    if (!lh_dec_ok(pl) || lang > 255 || status > 255) {
        return -1;
    }
    out->lang = (uint32_t)lang;
    out->status = (uint32_t)status;
    return 0;
}
