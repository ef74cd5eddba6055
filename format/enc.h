/* leakhound - SPDX-License-Identifier: MIT
 *
 * enc.h: encoding primitives for the trace format (varint, zigzag, records, frame headers).
 *
 * Used by the agent inside malloc hooks, so everything here is AS-safe: no allocation, no
 * locks, no libc beyond memcpy/memmove. A lh_enc_t is a cursor over caller-owned memory; on
 * overflow it sets a sticky flag instead of writing past the end, and the caller checks
 * lh_enc_ok() once after a whole record.
 */
#ifndef LH_ENC_H
#define LH_ENC_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

typedef struct lh_enc {
    uint8_t *p;   /* next byte to write */
    uint8_t *end; /* one past the last writable byte */
    int overflow; /* sticky: a write did not fit */
} lh_enc_t;

/* Bytes a varint of v takes (1..10). AS-safe. */
static inline size_t
lh_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline uint64_t
lh_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t
lh_unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline void
lh_enc_init(lh_enc_t *e, void *buf, size_t len)
{
    e->p = buf;
    e->end = (uint8_t *)buf + len;
    e->overflow = 0;
}

static inline int
lh_enc_ok(const lh_enc_t *e)
{
    return !e->overflow;
}

/* AS-safe. */
static inline void
lh_enc_u8(lh_enc_t *e, uint8_t v)
{
    if (e->p >= e->end) {
        e->overflow = 1;
        return;
    }
    *e->p++ = v;
}

/* Unsigned LEB128. AS-safe. */
static inline void
lh_enc_varint(lh_enc_t *e, uint64_t v)
{
    if ((size_t)(e->end - e->p) < 10 && (size_t)(e->end - e->p) < lh_varint_len(v)) {
        e->overflow = 1;
        return;
    }
    while (v >= 0x80) {
        *e->p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *e->p++ = (uint8_t)v;
}

static inline void
lh_enc_svarint(lh_enc_t *e, int64_t v)
{
    lh_enc_varint(e, lh_zigzag(v));
}

/* The "addr" field: the difference d from the previous address, as a varint of
 * (zigzag(d / 16) << 1) when d is a multiple of 16 (almost every heap block is 16-byte
 * aligned, so the four zero bits are not stored), else (zigzag(d) << 1) | 1. AS-safe. */
static inline uint64_t
lh_addr_code(int64_t d)
{
    return (d & 15) ? (lh_zigzag(d) << 1) | 1 : lh_zigzag(d / 16) << 1;
}

static inline void
lh_enc_addr(lh_enc_t *e, int64_t d)
{
    lh_enc_varint(e, lh_addr_code(d));
}

/* AS-safe. */
void lh_enc_bytes(lh_enc_t *e, const void *p, size_t len);
/* A string as varint length + bytes; s may be NULL (empty). AS-safe. */
void lh_enc_str(lh_enc_t *e, const char *s);
/* Little-endian fixed-width integers. AS-safe. */
void lh_enc_u16le(lh_enc_t *e, uint16_t v);
void lh_enc_u32le(lh_enc_t *e, uint32_t v);
void lh_enc_u64le(lh_enc_t *e, uint64_t v);

/* Records: lh_enc_rec_begin writes the type and reserves one length byte; the caller writes
 * the payload, then lh_enc_rec_end patches the length, moving the payload when the length
 * needs more than one byte. Returns the start of the record for rec_end. AS-safe. */
uint8_t *lh_enc_rec_begin(lh_enc_t *e, uint8_t type);
void lh_enc_rec_end(lh_enc_t *e, uint8_t *rec);

/* Whole records of the script-frame extension (minor 1), written by the agent and by test
 * builders alike. All AS-safe; check lh_enc_ok() after.
 * STACK: ips[0..n) innermost first, then (when n_script > 0) the script frame ids. */
void lh_enc_rec_stack(lh_enc_t *e, uint32_t id, uint32_t epoch, const uint64_t *ips,
                      uint32_t n, const uint32_t *script, uint32_t n_script);
/* SFRAME: strings given with their lengths (not NUL-terminated; NULL means empty). */
void lh_enc_rec_sframe(lh_enc_t *e, uint32_t id, unsigned lang, const char *func,
                       size_t func_len, const char *file, size_t file_len, uint32_t line);
/* INTERP: ts_delta is the record's ts field (a delta, see format.h). */
void lh_enc_rec_interp(lh_enc_t *e, uint64_t ts_delta, unsigned lang, const char *version,
                       unsigned status, const char *detail);

/* The 16-byte file header. AS-safe. */
void lh_enc_file_header(lh_enc_t *e, uint32_t info_len);

/* Fills in header_len, magic and both CRCs (payload_crc over payload/comp_len) and writes
 * the 48-byte frame header. AS-safe. */
void lh_enc_frame_header(lh_enc_t *e, lh_frame_hdr_t *h, const void *payload);

/* CRC-32C (Castagnoli), software table. AS-safe. */
uint32_t lh_crc32c(uint32_t crc, const void *p, size_t len);

#endif /* LH_ENC_H */
