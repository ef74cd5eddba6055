/* leakhound - SPDX-License-Identifier: MIT
 *
 * fuzz_trace.c: libFuzzer target for the trace reader (analysis/trace.c and the format
 * decoder under it): open, read every event (strict, then with salvage), and touch the
 * tables a reader exposes at the end. The input is a whole .lht file; frame checksums
 * are fixed up first (fuzz_common.h) so that mutations reach the records.
 */
#include "fuzz_common.h"

#include "trace.h"

static void
read_all(const char *path, int salvage)
{
    lh_trace_opts_t opts = {.salvage = salvage};
    lh_trace_t *t = NULL;
    lh_err_t err;
    if (lh_trace_open(path, &opts, &t, &err) != 0) {
        return;
    }
    const lh_trace_info_t *in = &lh_trace_parts(t)->info;
    size_t sum = strlen(in->exe);
    for (size_t i = 0; i < in->argc; i++) {
        sum += strlen(in->argv[i]);
    }
    lh_event_t ev;
    uint64_t n = 0;
    while (lh_trace_next(t, &ev, &err) == 1) {
        n++;
        (void)lh_trace_thread_name(t, ev.tid);
    }
    lh_trace_close(t);
    (void)sum;
    (void)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    memcpy(copy, data, size);
    crc_fixup(copy, size);
    const char *path = fuzz_file(copy, size);
    read_all(path, 0);
    read_all(path, 1);
    free(copy);
    return 0;
}
