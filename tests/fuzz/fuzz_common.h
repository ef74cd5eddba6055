/* leakhound - SPDX-License-Identifier: MIT
 *
 * fuzz_common.h: helpers of the libFuzzer targets. The readers take a path, so the input
 * goes to a memfd and the reader opens /proc/self/fd/N (no disk I/O, one fd reused).
 * Frames carry CRC-32C checksums that any mutation breaks; crc_fixup() recomputes them
 * in a copy of the input, so that mutations reach the record decoders (the checksum
 * branches are covered by the unit and e2e tests).
 */
#ifndef LH_FUZZ_COMMON_H
#define LH_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "enc.h"
#include "format.h"

static int fuzz_fd = -1;
static char fuzz_path[64];

/* Writes data to the memfd; returns the path to open, or NULL. */
static const char *
fuzz_file(const uint8_t *data, size_t size)
{
    if (fuzz_fd < 0) {
        fuzz_fd = memfd_create("lhfuzz", 0);
        if (fuzz_fd < 0) {
            abort();
        }
        snprintf(fuzz_path, sizeof fuzz_path, "/proc/self/fd/%d", fuzz_fd);
    }
    if (ftruncate(fuzz_fd, 0) != 0 || pwrite(fuzz_fd, data, size, 0) != (ssize_t)size) {
        abort();
    }
    return fuzz_path;
}

static uint32_t
rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t
rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static void
wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* Recomputes the payload and header checksums of every frame that can be walked to
 * (16-byte file header, info block, then frames); stops at the first frame that does not
 * fit. data is a private copy. */
static void
crc_fixup(uint8_t *data, size_t size)
{
    if (size < 16) {
        return;
    }
    size_t off = 16 + (size_t)rd32(data + 12);
    while (off + LH_FRAME_HEADER_LEN <= size) {
        uint8_t *h = data + off;
        size_t hlen = rd16(h + 4);
        size_t clen = rd32(h + 16);
        if (rd32(h) != LH_FRAME_MAGIC || hlen < LH_FRAME_HEADER_LEN || hlen > size - off ||
            clen > size - off - hlen) {
            return;
        }
        wr32(h + 20, lh_crc32c(0, h + hlen, clen));
        wr32(h + 44, lh_crc32c(0, h, 44));
        off += hlen + clen;
    }
}

#endif /* LH_FUZZ_COMMON_H */
