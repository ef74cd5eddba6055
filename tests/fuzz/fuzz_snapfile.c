/* leakhound - SPDX-License-Identifier: MIT
 *
 * fuzz_snapfile.c: libFuzzer target for the snapshot contents reader (analysis/snapfile.c):
 * a whole .lhs file, read with the default word filter and with the pages kept, then
 * region lookups. Frame checksums are fixed up first (fuzz_common.h).
 */
#include "fuzz_common.h"

#include "snapfile.h"

static int
keep_odd(void *ctx, uint64_t value)
{
    (void)ctx;
    return (value & 7) == 0 && value != 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    memcpy(copy, data, size);
    crc_fixup(copy, size);
    const char *path = fuzz_file(copy, size);
    for (int pass = 0; pass < 2; pass++) {
        lh_snapfile_t sf;
        lh_err_t err;
        lh_snapfile_opts_t opts = {.keep = pass ? keep_odd : NULL, .keep_pages = pass};
        if (lh_snapfile_read(path, &opts, &sf, &err) == 0) {
            for (size_t i = 0; i < sf.n_words; i++) {
                (void)lh_snapfile_region(&sf, sf.words[i].val);
            }
            for (size_t i = 0; i < sf.n_pages; i++) {
                if (sf.pages[i].len) {
                    (void)sf.pages[i].bytes[sf.pages[i].len - 1];
                }
            }
        }
        lh_snapfile_fini(&sf);
    }
    free(copy);
    return 0;
}
