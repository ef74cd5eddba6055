/* leakhound - SPDX-License-Identifier: MIT
 *
 * filewriter.h: writing a trace (.lht) or a snapshot contents file (.lhs) from outside the
 * target (docs/FORMAT.md: the 16-byte header, the info block, 48-byte frames of records,
 * zstd-compressed, tid 0). Used by `snapshot -p`, which has no agent to write them.
 *
 * The file is created new (O_EXCL | O_NOFOLLOW, mode 0600). A record is written between
 * lh_fw_rec_begin, which starts a new frame first when the current one could not take
 * max_len more bytes, and lh_fw_rec_end. The delta state of a frame (ts, addresses, PTRS
 * values) lives here and restarts with every frame, as readers expect. Not thread-safe.
 */
#ifndef LH_CLI_FILEWRITER_H
#define LH_CLI_FILEWRITER_H

#include <stddef.h>
#include <stdint.h>

#include "enc.h"
#include "err.h"

typedef struct lh_fw {
    int fd;
    const char *path;
    uint8_t *raw, *comp;
    size_t raw_cap, comp_cap;
    lh_enc_t e;           /* the current frame's payload */
    uint8_t *rec;         /* the open record */
    uint32_t n_records;
    uint64_t seq;
    uint64_t ts_base;     /* the current frame's ts_base_ns */
    uint64_t prev_ts, prev_addr, prev_val; /* delta state of the current frame */
    int failed;
} lh_fw_t;

/* Creates path and writes the file header (magic: LH_FILE_MAGIC or LH_SNAP_MAGIC) and the
 * info block. Returns 0, or LH_EIO with one line (the file exists, cannot be created). */
int lh_fw_open(lh_fw_t *fw, const char *path, const char *magic, const void *info,
               size_t info_len, uint64_t ts_base, lh_err_t *err);

/* Starts a record of type; returns the encoder to write its payload into. */
lh_enc_t *lh_fw_rec_begin(lh_fw_t *fw, uint8_t type, size_t max_len);
void lh_fw_rec_end(lh_fw_t *fw);

/* The ts field of a record: the delta from the frame's previous time stamp. */
void lh_fw_ts(lh_fw_t *fw, uint64_t ts_ns);

/* Writes the last frame and closes. Returns 0 or LH_EIO (the file is removed). */
int lh_fw_close(lh_fw_t *fw, lh_err_t *err);

/* Closes and removes the file after an error elsewhere. */
void lh_fw_abort(lh_fw_t *fw);

#endif /* LH_CLI_FILEWRITER_H */
