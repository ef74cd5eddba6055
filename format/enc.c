/* leakhound - SPDX-License-Identifier: MIT
 *
 * enc.c: the trace encoder's primitives. Linked into the agent: no allocation, no stdio.
 */
#include "enc.h"

#include <string.h>

void
lh_enc_bytes(lh_enc_t *e, const void *p, size_t len)
{
    if ((size_t)(e->end - e->p) < len) {
        e->overflow = 1;
        return;
    }
    if (len) {
        memcpy(e->p, p, len);
    }
    e->p += len;
}

void
lh_enc_str(lh_enc_t *e, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    lh_enc_varint(e, n);
    lh_enc_bytes(e, s, n);
}

/* The n low bytes of v, little-endian. */
static void
enc_le(lh_enc_t *e, uint64_t v, int n)
{
    uint8_t b[8];
    for (int i = 0; i < n; i++) {
        b[i] = (uint8_t)(v >> (8 * i));
    }
    lh_enc_bytes(e, b, (size_t)n);
}

void
lh_enc_u16le(lh_enc_t *e, uint16_t v)
{
    enc_le(e, v, 2);
}

void
lh_enc_u32le(lh_enc_t *e, uint32_t v)
{
    enc_le(e, v, 4);
}

void
lh_enc_u64le(lh_enc_t *e, uint64_t v)
{
    enc_le(e, v, 8);
}

uint8_t *
lh_enc_rec_begin(lh_enc_t *e, uint8_t type)
{
    uint8_t *rec = e->p;
    lh_enc_u8(e, type);
    lh_enc_u8(e, 0); /* length, patched by rec_end */
    return rec;
}

void
lh_enc_rec_end(lh_enc_t *e, uint8_t *rec)
{
    if (e->overflow) {
        return;
    }
    uint8_t *payload = rec + 2;
    size_t len = (size_t)(e->p - payload);
    size_t extra = lh_varint_len(len) - 1;
    if (extra) {
        /* Rare: only stacks and module records pass 127 bytes. */
        if ((size_t)(e->end - e->p) < extra) {
            e->overflow = 1;
            return;
        }
        memmove(payload + extra, payload, len);
        e->p += extra;
    }
    lh_enc_t lenc = {rec + 1, rec + 1 + 10, 0};
    lh_enc_varint(&lenc, len);
}

void
lh_enc_file_header(lh_enc_t *e, uint32_t info_len)
{
    lh_enc_bytes(e, LH_FILE_MAGIC, LH_FILE_MAGIC_LEN);
    lh_enc_u16le(e, LH_FORMAT_MAJOR);
    lh_enc_u16le(e, LH_FORMAT_MINOR);
    lh_enc_u32le(e, info_len);
}

void
lh_enc_frame_header(lh_enc_t *e, lh_frame_hdr_t *h, const void *payload)
{
    uint8_t b[LH_FRAME_HEADER_LEN];
    lh_enc_t he;
    h->magic = LH_FRAME_MAGIC;
    h->header_len = LH_FRAME_HEADER_LEN;
    h->payload_crc = lh_crc32c(0, payload, h->comp_len);
    lh_enc_init(&he, b, sizeof b);
    lh_enc_u32le(&he, h->magic);
    lh_enc_u16le(&he, h->header_len);
    lh_enc_u8(&he, h->codec);
    lh_enc_u8(&he, h->flags);
    lh_enc_u32le(&he, h->tid);
    lh_enc_u32le(&he, h->raw_len);
    lh_enc_u32le(&he, h->comp_len);
    lh_enc_u32le(&he, h->payload_crc);
    lh_enc_u64le(&he, h->ts_base_ns);
    lh_enc_u64le(&he, h->seq);
    lh_enc_u32le(&he, h->n_records);
    h->header_crc = lh_crc32c(0, b, 44);
    lh_enc_u32le(&he, h->header_crc);
    lh_enc_bytes(e, b, sizeof b);
}

/* The table is filled on first use without a lock: racing threads write identical values,
 * so this stays AS-safe. Polynomial 0x82F63B78 (reflected Castagnoli). */
static uint32_t
crc_table_entry(uint32_t i)
{
    uint32_t c = i;
    for (int k = 0; k < 8; k++) {
        c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    return c;
}

static uint32_t crc_table[256];
static volatile int crc_table_ready;

static void
crc_table_fill(void)
{
    /* Idempotent: racing threads write the same values, so no lock is needed. */
    for (uint32_t i = 0; i < 256; i++) {
        crc_table[i] = crc_table_entry(i);
    }
    __atomic_store_n(&crc_table_ready, 1, __ATOMIC_RELEASE);
}

#if defined(__x86_64__)
/* The CRC register is linear: the register after A then B is the register after A moved
 * past |B| zero bytes, xor the register B alone leaves from 0. "Moving past n zero bytes"
 * is a product with x^(8n) modulo the polynomial, in the crc32 instruction's reflected
 * representation (bit 31 is x^0): three independent streams then combine exactly. */
#define CRC_POLY_REFLECTED 0x82F63B78u

/* a * b modulo the polynomial, both reflected. Pure; AS-safe. */
static uint32_t
crc_gf_mul(uint32_t a, uint32_t b)
{
    uint32_t prod = 0;
    for (int i = 0; i < 32; i++) {
        prod ^= b & (0u - ((a >> (31 - i)) & 1u)); /* a's x^i term times b */
        b = (b >> 1) ^ (CRC_POLY_REFLECTED & (0u - (b & 1u))); /* b * x */
    }
    return prod;
}

/* x^(8 * n) modulo the polynomial, reflected: what moves a register past n zero bytes. */
static uint32_t
crc_x8n(size_t n)
{
    uint32_t r = 0x80000000u;   /* x^0 */
    uint32_t base = 0x00800000u; /* x^8 */
    while (n) {
        if (n & 1) {
            r = crc_gf_mul(r, base);
        }
        base = crc_gf_mul(base, base);
        n >>= 1;
    }
    return r;
}

/* SSE4.2's crc32 instruction computes exactly CRC-32C, 8 bytes per instruction: an order of
 * magnitude faster than the table, which matters on the agent's flush path. Each
 * instruction waits 3 cycles for the one before in its chain, so long inputs run as three
 * chains of CRC_STREAM bytes side by side (combined with two products per 3 x CRC_STREAM
 * bytes), at the instruction's throughput instead of its latency. */
#define CRC_STREAM 4096

__attribute__((target("sse4.2"))) static uint64_t
crc32c_hw_run(uint64_t c, const uint8_t *b, size_t n8)
{
    while (n8--) {
        uint64_t w;
        memcpy(&w, b, 8);
        c = __builtin_ia32_crc32di(c, w);
        b += 8;
    }
    return c;
}

__attribute__((target("sse4.2"))) static uint32_t
crc32c_hw(uint32_t crc, const uint8_t *b, size_t len)
{
    uint64_t c = ~crc & 0xffffffffu;
    if (len >= 3 * CRC_STREAM) {
        /* Racing threads compute the same two constants: no lock. */
        static uint32_t k1, k2; /* x^(8 CRC_STREAM), x^(16 CRC_STREAM) */
        if (!__atomic_load_n(&k2, __ATOMIC_RELAXED)) {
            __atomic_store_n(&k1, crc_x8n(CRC_STREAM), __ATOMIC_RELAXED);
            __atomic_store_n(&k2, crc_x8n(2 * CRC_STREAM), __ATOMIC_RELAXED);
        }
        uint32_t m1 = __atomic_load_n(&k1, __ATOMIC_RELAXED);
        uint32_t m2 = __atomic_load_n(&k2, __ATOMIC_RELAXED);
        while (len >= 3 * CRC_STREAM) {
            uint64_t c0 = c, c1 = 0, c2 = 0;
            const uint8_t *b1 = b + CRC_STREAM, *b2 = b + 2 * CRC_STREAM;
            for (size_t i = 0; i < CRC_STREAM; i += 8) {
                uint64_t w0, w1, w2;
                memcpy(&w0, b + i, 8);
                memcpy(&w1, b1 + i, 8);
                memcpy(&w2, b2 + i, 8);
                c0 = __builtin_ia32_crc32di(c0, w0);
                c1 = __builtin_ia32_crc32di(c1, w1);
                c2 = __builtin_ia32_crc32di(c2, w2);
            }
            c = crc_gf_mul(m2, (uint32_t)c0) ^ crc_gf_mul(m1, (uint32_t)c1) ^ (uint32_t)c2;
            b += 3 * CRC_STREAM;
            len -= 3 * CRC_STREAM;
        }
    }
    c = crc32c_hw_run(c, b, len / 8);
    b += len & ~(size_t)7;
    len &= 7;
    uint32_t c32 = (uint32_t)c;
    while (len--) {
        c32 = __builtin_ia32_crc32qi(c32, *b++);
    }
    return ~c32;
}

static int
have_hw_crc(void)
{
    static int cached = -1; /* racing threads compute the same answer */
    if (cached < 0) {
        __builtin_cpu_init();
        cached = __builtin_cpu_supports("sse4.2") ? 1 : 0;
    }
    return cached;
}
#endif

uint32_t
lh_crc32c(uint32_t crc, const void *p, size_t len)
{
    const uint8_t *b = p;
#if defined(__x86_64__)
    if (have_hw_crc()) {
        return crc32c_hw(crc, b, len);
    }
#endif
    if (!__atomic_load_n(&crc_table_ready, __ATOMIC_ACQUIRE)) {
        crc_table_fill();
    }
    crc = ~crc;
    while (len--) {
        crc = crc_table[(crc ^ *b++) & 0xff] ^ (crc >> 8);
    }
    return ~crc;
}

void
lh_enc_rec_stack(lh_enc_t *e, uint32_t id, uint32_t epoch, const uint64_t *ips, uint32_t n,
                 const uint32_t *script, uint32_t n_script)
{
    uint8_t *r = lh_enc_rec_begin(e, LH_REC_STACK);
    uint64_t prev = 0;
    lh_enc_varint(e, id);
    lh_enc_varint(e, epoch);
    lh_enc_varint(e, n);
    for (uint32_t i = 0; i < n; i++) {
        lh_enc_svarint(e, (int64_t)(ips[i] - prev));
        prev = ips[i];
    }
    if (n_script > 0) { /* absent trailing fields mean "no script frames" */
        lh_enc_varint(e, n_script);
        for (uint32_t i = 0; i < n_script; i++) {
            lh_enc_varint(e, script[i]);
        }
    }
    lh_enc_rec_end(e, r);
}

void
lh_enc_rec_sframe(lh_enc_t *e, uint32_t id, unsigned lang, const char *func, size_t func_len,
                  const char *file, size_t file_len, uint32_t line)
{
    uint8_t *r = lh_enc_rec_begin(e, LH_REC_SFRAME);
    lh_enc_varint(e, id);
    lh_enc_varint(e, lang);
    lh_enc_varint(e, func ? func_len : 0);
    lh_enc_bytes(e, func, func ? func_len : 0);
    lh_enc_varint(e, file ? file_len : 0);
    lh_enc_bytes(e, file, file ? file_len : 0);
    lh_enc_varint(e, line);
    lh_enc_rec_end(e, r);
}

void
lh_enc_rec_interp(lh_enc_t *e, uint64_t ts_delta, unsigned lang, const char *version,
                  unsigned status, const char *detail)
{
    uint8_t *r = lh_enc_rec_begin(e, LH_REC_INTERP);
    lh_enc_varint(e, ts_delta);
    lh_enc_varint(e, lang);
    lh_enc_str(e, version);
    lh_enc_varint(e, status);
    lh_enc_str(e, detail);
    lh_enc_rec_end(e, r);
}
