/* leakhound - SPDX-License-Identifier: MIT
 *
 * dec.h: bounds-checked decoding of the trace format, for readers.
 *
 * Every byte of a trace is hostile: a lh_dec_t never reads past its end. Errors are sticky
 * (the first one wins) and checked once after a record with lh_dec_ok(), in the style of
 * sqlite's "malformed database" checks. No allocation here.
 */
#ifndef LH_DEC_H
#define LH_DEC_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

typedef struct lh_dec {
    const uint8_t *p;
    const uint8_t *end;
    int err; /* sticky: 1 after a read past the end or a malformed varint */
} lh_dec_t;

static inline void
lh_dec_init(lh_dec_t *d, const void *buf, size_t len)
{
    d->p = buf;
    d->end = (const uint8_t *)buf + len;
    d->err = 0;
}

static inline int
lh_dec_ok(const lh_dec_t *d)
{
    return !d->err;
}

static inline size_t
lh_dec_left(const lh_dec_t *d)
{
    return d->err ? 0 : (size_t)(d->end - d->p);
}

uint8_t lh_dec_u8(lh_dec_t *d);
uint16_t lh_dec_u16le(lh_dec_t *d);
uint32_t lh_dec_u32le(lh_dec_t *d);
uint64_t lh_dec_u64le(lh_dec_t *d);
/* Unsigned LEB128 of at most 10 bytes; longer or overflowing encodings are errors. */
uint64_t lh_dec_varint_slow(lh_dec_t *d);
/* lh_dec_varint_slow, with the one-byte case (most fields of most records) inline: a call
 * per field was 4% of a report (perf, python trace). */
static inline uint64_t
lh_dec_varint(lh_dec_t *d)
{
    if (!d->err && d->p < d->end && *d->p < 0x80) {
        return *d->p++;
    }
    return lh_dec_varint_slow(d);
}
/* Inline: a STACK record is a run of these (one per return address). */
static inline int64_t
lh_dec_svarint(lh_dec_t *d)
{
    uint64_t v = lh_dec_varint(d);
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}
/* The "addr" field (see lh_addr_code in enc.h): the difference from the previous address. */
int64_t lh_dec_addr(lh_dec_t *d);
/* Points *out at len bytes inside the buffer (no copy); NULL and an error if they are not
 * all there. */
const uint8_t *lh_dec_bytes(lh_dec_t *d, size_t len);
/* A varint-length string: returns a pointer into the buffer and its length in *len, not
 * NUL-terminated. */
const char *lh_dec_str(lh_dec_t *d, size_t *len);

/* One record: type and a sub-decoder over its payload. Returns 0 at a clean end of the
 * buffer, 1 when a record was read, -1 when the buffer is malformed. */
int lh_dec_record(lh_dec_t *d, uint8_t *type, lh_dec_t *payload);

/* The script-frame extension (minor 1). Decoders of one record's payload; strings point
 * into the payload (not NUL-terminated). Each returns 0, or -1 when the payload is
 * malformed (short, an id of 0 or above the limits of format.h). */
typedef struct lh_sframe_rec {
    uint32_t id;
    uint32_t lang;
    const char *func;
    size_t func_len;
    const char *file;
    size_t file_len;
    uint32_t line;
} lh_sframe_rec_t;
int lh_dec_sframe_rec(lh_dec_t *pl, lh_sframe_rec_t *out);

/* The trailing script-frame ids of a STACK payload whose return addresses were read:
 * *n_script = 0 when absent; at most max ids go to out (more is malformed). */
int lh_dec_stack_script(lh_dec_t *pl, uint32_t *out, uint32_t max, uint32_t *n_script);

typedef struct lh_interp_rec {
    uint64_t ts_delta;
    uint32_t lang;
    const char *version;
    size_t version_len;
    uint32_t status;
    const char *detail;
    size_t detail_len;
} lh_interp_rec_t;
int lh_dec_interp_rec(lh_dec_t *pl, lh_interp_rec_t *out);

/* Parses a 16-byte file header. Returns 0, or -1 with a static message in *why. */
int lh_dec_file_header(const uint8_t *buf, size_t len, uint16_t *major, uint16_t *minor,
                       uint32_t *info_len, const char **why);

/* Parses and checks a frame header (magic, header CRC, codec, sizes against
 * LH_FRAME_MAX_RAW). buf must hold at least LH_FRAME_HEADER_LEN bytes. Returns 0, or -1
 * with a static message in *why. The payload CRC is checked by the caller once it has the
 * payload (lh_crc32c). */
int lh_dec_frame_header(const uint8_t *buf, lh_frame_hdr_t *h, const char **why);

#endif /* LH_DEC_H */
