/* leakhound - SPDX-License-Identifier: MIT
 *
 * trace_builder.h: writes synthetic traces with format/enc.h, for the unit tests.
 *
 * Usage: add info records, then frames (frame_begin, records with absolute times and
 * addresses, which the builder turns into deltas, frame_end), then take the bytes or write
 * them to a file. Frame sequence numbers count up in file order. Failures abort: this is
 * test code.
 */
#ifndef LH_TRACE_BUILDER_H
#define LH_TRACE_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

typedef struct lh_tb lh_tb_t;

lh_tb_t *lh_tb_new(void);
void lh_tb_free(lh_tb_t *tb);

/* File header version (default LH_FORMAT_MAJOR.LH_FORMAT_MINOR). */
void lh_tb_version(lh_tb_t *tb, uint16_t major, uint16_t minor);

/* Info block records. */
void lh_tb_info_pid(lh_tb_t *tb, uint64_t pid, uint64_t ppid);
void lh_tb_info_exe(lh_tb_t *tb, const char *exe);
void lh_tb_info_cmdline(lh_tb_t *tb, int argc, const char *const *argv);
void lh_tb_info_clock(lh_tb_t *tb, uint64_t mono_start_ns, uint64_t realtime_start_ns);
void lh_tb_info_raw(lh_tb_t *tb, uint8_t type, const void *payload, size_t len);

/* Frames. Records are appended to the open frame. */
void lh_tb_frame_begin(lh_tb_t *tb, uint32_t tid, uint64_t ts_base_ns);
void lh_tb_alloc(lh_tb_t *tb, uint64_t ts, uint64_t addr, uint64_t size, uint32_t stack,
                 uint8_t kind);
void lh_tb_free_rec(lh_tb_t *tb, uint64_t ts, uint64_t addr);
/* The old block freed at ts, the new one allocated at ts + dt_alloc. */
void lh_tb_realloc(lh_tb_t *tb, uint64_t ts, uint64_t old_addr, uint64_t new_addr,
                   uint64_t size, uint32_t stack, uint64_t dt_alloc);
void lh_tb_stack(lh_tb_t *tb, uint32_t id, uint64_t epoch, const uint64_t *ips, size_t n);
/* Script frames (format minor 1): a STACK with trailing script frame ids, SFRAME, INTERP. */
void lh_tb_script_stack(lh_tb_t *tb, uint32_t id, uint64_t epoch, const uint64_t *ips,
                        size_t n, const uint32_t *script, size_t n_script);
void lh_tb_sframe(lh_tb_t *tb, uint32_t id, unsigned lang, const char *func, const char *file,
                  uint32_t line);
void lh_tb_interp(lh_tb_t *tb, uint64_t ts, unsigned lang, const char *version,
                  unsigned status, const char *detail);
void lh_tb_module(lh_tb_t *tb, uint64_t ts, uint64_t epoch, uint64_t load_bias,
                  const char *path, const uint8_t *build_id, size_t build_id_len,
                  uint64_t vaddr, uint64_t memsz);
void lh_tb_module_unload(lh_tb_t *tb, uint64_t ts, uint64_t epoch, uint64_t load_bias,
                         const char *path);
void lh_tb_thread(lh_tb_t *tb, uint64_t ts, uint64_t tid, const char *name);
void lh_tb_mark(lh_tb_t *tb, uint64_t ts, const char *label);
void lh_tb_suppressions(lh_tb_t *tb, uint64_t ts, const char *text);
void lh_tb_snapshot(lh_tb_t *tb, uint64_t ts, const char *label, uint64_t trigger);
void lh_tb_rss(lh_tb_t *tb, uint64_t ts, uint64_t rss_bytes);
void lh_tb_sync(lh_tb_t *tb, uint64_t ts);
void lh_tb_end(lh_tb_t *tb, uint64_t ts, uint64_t kind, uint64_t status);
/* Any record, payload given as is (not timestamped for the builder's delta state). */
void lh_tb_raw(lh_tb_t *tb, uint8_t type, const void *payload, size_t len);
/* Closes the frame: codec LH_CODEC_RAW or LH_CODEC_ZSTD, flags LH_FRAME_F_*. */
void lh_tb_frame_end(lh_tb_t *tb, uint8_t codec, uint8_t flags);

/* The whole file so far (header, info block, closed frames); valid until the next call. */
const uint8_t *lh_tb_data(lh_tb_t *tb, size_t *len);
/* File offset of frame k's header, and of its payload. */
size_t lh_tb_frame_offset(lh_tb_t *tb, size_t k);
size_t lh_tb_payload_offset(lh_tb_t *tb, size_t k);
/* Writes the first len bytes (SIZE_MAX: all) to path. */
void lh_tb_write(lh_tb_t *tb, const char *path, size_t len);

#endif /* LH_TRACE_BUILDER_H */
