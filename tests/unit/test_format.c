/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_format.c: the encoder and decoder of format/: varints, zigzag, records, headers,
 * CRC-32C, and the decoder's rejection of malformed input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dec.h"
#include "enc.h"

static void
test_varint_roundtrip(void **state)
{
    (void)state;
    static const uint64_t values[] = {0,     1,          127,        128,
                                      255,   16383,      16384,      (1ull << 32) - 1,
                                      1ull << 32, (1ull << 56), 1ull << 63, UINT64_MAX - 1,
                                      UINT64_MAX};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        uint8_t buf[16];
        lh_enc_t e;
        lh_dec_t d;
        lh_enc_init(&e, buf, sizeof buf);
        lh_enc_varint(&e, values[i]);
        assert_true(lh_enc_ok(&e));
        assert_int_equal((size_t)(e.p - buf), lh_varint_len(values[i]));
        lh_dec_init(&d, buf, (size_t)(e.p - buf));
        assert_int_equal(lh_dec_varint(&d), values[i]);
        assert_true(lh_dec_ok(&d));
        assert_int_equal(lh_dec_left(&d), 0);
    }
    assert_int_equal(lh_varint_len(0), 1);
    assert_int_equal(lh_varint_len(127), 1);
    assert_int_equal(lh_varint_len(128), 2);
    assert_int_equal(lh_varint_len(1ull << 63), 10);
    assert_int_equal(lh_varint_len(UINT64_MAX), 10);
}

static void
test_varint_exact_bytes(void **state)
{
    (void)state;
    uint8_t buf[16];
    lh_enc_t e;
    lh_enc_init(&e, buf, sizeof buf);
    lh_enc_varint(&e, 128);
    assert_int_equal(buf[0], 0x80);
    assert_int_equal(buf[1], 0x01);
    lh_enc_init(&e, buf, 1);
    lh_enc_varint(&e, 128); /* does not fit */
    assert_false(lh_enc_ok(&e));
}

static void
test_zigzag(void **state)
{
    (void)state;
    static const int64_t values[] = {0, -1, 1, -2, 2, 63, -64, INT64_MAX, INT64_MIN,
                                     INT64_MIN + 1};
    assert_int_equal(lh_zigzag(0), 0);
    assert_int_equal(lh_zigzag(-1), 1);
    assert_int_equal(lh_zigzag(1), 2);
    assert_int_equal(lh_zigzag(INT64_MIN), UINT64_MAX);
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        uint8_t buf[16];
        lh_enc_t e;
        lh_dec_t d;
        assert_true(lh_unzigzag(lh_zigzag(values[i])) == values[i]);
        lh_enc_init(&e, buf, sizeof buf);
        lh_enc_svarint(&e, values[i]);
        lh_dec_init(&d, buf, (size_t)(e.p - buf));
        assert_true(lh_dec_svarint(&d) == values[i]);
        assert_true(lh_dec_ok(&d));
    }
}

static void
test_varint_rejects_overlong(void **state)
{
    (void)state;
    lh_dec_t d;
    /* 11 bytes: longer than any 64-bit varint. */
    uint8_t eleven[11];
    memset(eleven, 0x80, sizeof eleven);
    eleven[10] = 0x00;
    lh_dec_init(&d, eleven, sizeof eleven);
    lh_dec_varint(&d);
    assert_false(lh_dec_ok(&d));
    /* 10 bytes whose last one carries bits beyond 64. */
    uint8_t overflow[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    lh_dec_init(&d, overflow, sizeof overflow);
    lh_dec_varint(&d);
    assert_false(lh_dec_ok(&d));
    /* ...but UINT64_MAX itself is fine. */
    overflow[9] = 0x01;
    lh_dec_init(&d, overflow, sizeof overflow);
    assert_true(lh_dec_varint(&d) == UINT64_MAX);
    assert_true(lh_dec_ok(&d));
    /* Truncated: the continuation bit promises more. */
    uint8_t cut[2] = {0x80, 0x80};
    lh_dec_init(&d, cut, sizeof cut);
    lh_dec_varint(&d);
    assert_false(lh_dec_ok(&d));
    /* Errors are sticky. */
    assert_int_equal(lh_dec_u8(&d), 0);
    assert_int_equal(lh_dec_left(&d), 0);
}

static void
test_fixed_and_strings(void **state)
{
    (void)state;
    uint8_t buf[64];
    lh_enc_t e;
    lh_dec_t d;
    size_t len;
    lh_enc_init(&e, buf, sizeof buf);
    lh_enc_u16le(&e, 0xBEEF);
    lh_enc_u32le(&e, 0xDEADBEEF);
    lh_enc_u64le(&e, 0x0123456789ABCDEFull);
    lh_enc_str(&e, "hello");
    lh_enc_str(&e, NULL);
    assert_true(lh_enc_ok(&e));
    lh_dec_init(&d, buf, (size_t)(e.p - buf));
    assert_int_equal(lh_dec_u16le(&d), 0xBEEF);
    assert_int_equal(lh_dec_u32le(&d), 0xDEADBEEF);
    assert_true(lh_dec_u64le(&d) == 0x0123456789ABCDEFull);
    const char *s = lh_dec_str(&d, &len);
    assert_int_equal(len, 5);
    assert_memory_equal(s, "hello", 5);
    lh_dec_str(&d, &len);
    assert_int_equal(len, 0);
    assert_true(lh_dec_ok(&d));
    /* A string whose length runs past the end. */
    uint8_t bad[3] = {10, 'a', 'b'};
    lh_dec_init(&d, bad, sizeof bad);
    s = lh_dec_str(&d, &len);
    assert_false(lh_dec_ok(&d));
    assert_int_equal(len, 0);
    assert_non_null(s);
    lh_dec_init(&d, bad, sizeof bad);
    assert_null(lh_dec_bytes(&d, 4));
}

static void
record_roundtrip(size_t payload_len)
{
    static uint8_t buf[4096], payload[1024];
    lh_enc_t e;
    lh_dec_t d, pl;
    uint8_t type = 0;
    for (size_t i = 0; i < payload_len; i++) {
        payload[i] = (uint8_t)(i * 7 + 1);
    }
    lh_enc_init(&e, buf, sizeof buf);
    uint8_t *r = lh_enc_rec_begin(&e, LH_REC_MARK);
    lh_enc_bytes(&e, payload, payload_len);
    lh_enc_rec_end(&e, r);
    r = lh_enc_rec_begin(&e, LH_REC_SYNC);
    lh_enc_varint(&e, 42);
    lh_enc_rec_end(&e, r);
    assert_true(lh_enc_ok(&e));
    lh_dec_init(&d, buf, (size_t)(e.p - buf));
    assert_int_equal(lh_dec_record(&d, &type, &pl), 1);
    assert_int_equal(type, LH_REC_MARK);
    assert_int_equal(lh_dec_left(&pl), payload_len);
    if (payload_len) {
        assert_memory_equal(lh_dec_bytes(&pl, payload_len), payload, payload_len);
    }
    assert_int_equal(lh_dec_record(&d, &type, &pl), 1);
    assert_int_equal(type, LH_REC_SYNC);
    assert_int_equal(lh_dec_varint(&pl), 42);
    assert_int_equal(lh_dec_record(&d, &type, &pl), 0);
}

static void
test_record_roundtrip(void **state)
{
    (void)state;
    record_roundtrip(0);
    record_roundtrip(1);
    record_roundtrip(127);  /* the length still fits one byte */
    record_roundtrip(128);  /* two bytes: the payload is moved */
    record_roundtrip(1000);
}

static void
test_record_truncated(void **state)
{
    (void)state;
    lh_dec_t d, pl;
    uint8_t type;
    uint8_t rec[] = {LH_REC_FREE, 10, 1, 2, 3, 4, 5}; /* says 10 bytes, has 5 */
    lh_dec_init(&d, rec, sizeof rec);
    assert_int_equal(lh_dec_record(&d, &type, &pl), -1);
    uint8_t only_type[] = {LH_REC_FREE};
    lh_dec_init(&d, only_type, sizeof only_type);
    assert_int_equal(lh_dec_record(&d, &type, &pl), -1);
    uint8_t bad_len[] = {LH_REC_FREE, 0x80};
    lh_dec_init(&d, bad_len, sizeof bad_len);
    assert_int_equal(lh_dec_record(&d, &type, &pl), -1);
}

static void
encode_header(uint8_t *hb, lh_frame_hdr_t *h, const void *payload)
{
    lh_enc_t e;
    lh_enc_init(&e, hb, LH_FRAME_HEADER_LEN);
    lh_enc_frame_header(&e, h, payload);
    assert_true(lh_enc_ok(&e));
}

static void
test_frame_header_roundtrip(void **state)
{
    (void)state;
    uint8_t hb[LH_FRAME_HEADER_LEN], payload[5] = {1, 2, 3, 4, 5};
    lh_frame_hdr_t h = {0}, g;
    const char *why = NULL;
    h.codec = LH_CODEC_RAW;
    h.flags = LH_FRAME_F_SYNC;
    h.tid = 4242;
    h.raw_len = h.comp_len = sizeof payload;
    h.ts_base_ns = 123456789012345ull;
    h.seq = 7;
    h.n_records = 3;
    encode_header(hb, &h, payload);
    assert_int_equal(lh_dec_frame_header(hb, &g, &why), 0);
    assert_int_equal(g.magic, LH_FRAME_MAGIC);
    assert_int_equal(g.header_len, LH_FRAME_HEADER_LEN);
    assert_int_equal(g.codec, LH_CODEC_RAW);
    assert_int_equal(g.flags, LH_FRAME_F_SYNC);
    assert_int_equal(g.tid, 4242);
    assert_int_equal(g.raw_len, 5);
    assert_int_equal(g.comp_len, 5);
    assert_int_equal(g.payload_crc, lh_crc32c(0, payload, sizeof payload));
    assert_true(g.ts_base_ns == 123456789012345ull);
    assert_int_equal(g.seq, 7);
    assert_int_equal(g.n_records, 3);
}

static void
test_frame_header_rejects(void **state)
{
    (void)state;
    uint8_t hb[LH_FRAME_HEADER_LEN], bad[LH_FRAME_HEADER_LEN];
    lh_frame_hdr_t h = {0}, g;
    const char *why = NULL;
    h.codec = LH_CODEC_ZSTD;
    h.raw_len = 100;
    h.comp_len = 0;
    encode_header(hb, &h, "");

    /* Any flipped bit: header checksum mismatch. */
    memcpy(bad, hb, sizeof bad);
    bad[9] ^= 0x10;
    assert_int_equal(lh_dec_frame_header(bad, &g, &why), -1);
    assert_non_null(strstr(why, "checksum"));
    memcpy(bad, hb, sizeof bad);
    bad[46] ^= 1; /* the stored CRC itself */
    assert_int_equal(lh_dec_frame_header(bad, &g, &why), -1);

    /* Bad magic. */
    memcpy(bad, hb, sizeof bad);
    bad[0] = 'X';
    assert_int_equal(lh_dec_frame_header(bad, &g, &why), -1);
    assert_non_null(strstr(why, "magic"));

    /* Unknown codec and oversized frames, with valid checksums. */
    h.codec = 9;
    encode_header(bad, &h, "");
    assert_int_equal(lh_dec_frame_header(bad, &g, &why), -1);
    h.codec = LH_CODEC_ZSTD;
    h.raw_len = LH_FRAME_MAX_RAW + 1;
    encode_header(bad, &h, "");
    assert_int_equal(lh_dec_frame_header(bad, &g, &why), -1);
    h.codec = LH_CODEC_RAW;
    h.raw_len = 10;
    h.comp_len = 0;
    encode_header(bad, &h, "");
    assert_int_equal(lh_dec_frame_header(bad, &g, &why), -1);
}

static void
test_file_header(void **state)
{
    (void)state;
    uint8_t b[LH_FILE_HEADER_LEN];
    lh_enc_t e;
    uint16_t major, minor;
    uint32_t info_len;
    const char *why = NULL;
    lh_enc_init(&e, b, sizeof b);
    lh_enc_file_header(&e, 77);
    assert_true(lh_enc_ok(&e));
    assert_int_equal(lh_dec_file_header(b, sizeof b, &major, &minor, &info_len, &why), 0);
    assert_int_equal(major, LH_FORMAT_MAJOR);
    assert_int_equal(minor, LH_FORMAT_MINOR);
    assert_int_equal(info_len, 77);
    assert_int_equal(lh_dec_file_header(b, 10, &major, &minor, &info_len, &why), -1);
    b[8] = LH_FORMAT_MAJOR + 1;
    assert_int_equal(lh_dec_file_header(b, sizeof b, &major, &minor, &info_len, &why), -1);
    assert_non_null(strstr(why, "newer"));
    b[8] = LH_FORMAT_MAJOR;
    b[0] = 'M';
    assert_int_equal(lh_dec_file_header(b, sizeof b, &major, &minor, &info_len, &why), -1);
}

static void
test_crc32c(void **state)
{
    (void)state;
    /* The standard check value of CRC-32C. */
    assert_int_equal(lh_crc32c(0, "123456789", 9), 0xE3069283u);
    assert_int_equal(lh_crc32c(0, "", 0), 0);
    /* Incremental use gives the same result. */
    assert_int_equal(lh_crc32c(lh_crc32c(0, "1234", 4), "56789", 5), 0xE3069283u);
}

/* CRC-32C one bit at a time, straight from the definition (reflected, 0x82F63B78). */
static uint32_t
crc32c_bitwise(uint32_t crc, const uint8_t *b, size_t len)
{
    crc = ~crc;
    while (len--) {
        crc ^= *b++;
        for (int k = 0; k < 8; k++) {
            crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
        }
    }
    return ~crc;
}

/* Long inputs are checked in three interleaved streams (enc.c): every length around the
 * stream and chunk boundaries, unaligned starts, and a running CRC carried in, must give
 * the definition's answer. */
static void
test_crc32c_long(void **state)
{
    (void)state;
    static uint8_t buf[3 * 65536 + 64];
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < sizeof buf; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (uint8_t)x;
    }
    static const size_t lens[] = {0,     1,     7,     8,     4095,  4096,  12287, 12288,
                                  12289, 12295, 24575, 24576, 24583, 36864, 65536, 65536 + 13,
                                  3 * 65536};
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        for (size_t off = 0; off < 3; off++) {
            assert_int_equal(lh_crc32c(0, buf + off, lens[k]),
                             crc32c_bitwise(0, buf + off, lens[k]));
            assert_int_equal(lh_crc32c(0xDEADBEEFu, buf + off, lens[k]),
                             crc32c_bitwise(0xDEADBEEFu, buf + off, lens[k]));
        }
    }
    /* A frame's CRC in two calls is the CRC of the whole. */
    assert_int_equal(lh_crc32c(lh_crc32c(0, buf, 20000), buf + 20000, 50001),
                     crc32c_bitwise(0, buf, 70001));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_varint_roundtrip),
        cmocka_unit_test(test_varint_exact_bytes),
        cmocka_unit_test(test_zigzag),
        cmocka_unit_test(test_varint_rejects_overlong),
        cmocka_unit_test(test_fixed_and_strings),
        cmocka_unit_test(test_record_roundtrip),
        cmocka_unit_test(test_record_truncated),
        cmocka_unit_test(test_frame_header_roundtrip),
        cmocka_unit_test(test_frame_header_rejects),
        cmocka_unit_test(test_file_header),
        cmocka_unit_test(test_crc32c),
        cmocka_unit_test(test_crc32c_long),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
