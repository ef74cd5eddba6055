/* leakhound - SPDX-License-Identifier: MIT
 *
 * fuzz_args.c: libFuzzer target for the CLI's value parsers (cli/args.c): durations
 * ("1.5s"), sizes ("64M"), signals ("USR2"), bounded numbers. The input, NUL-terminated,
 * is given to each. Checked properties: a parser that accepts returns a value a second
 * parse of the same text reproduces.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) {
        return 0;
    }
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    uint64_t a = 0, b = 0;
    if (lh_parse_duration_ns(s, &a) == 0 && (lh_parse_duration_ns(s, &b) != 0 || a != b)) {
        abort();
    }
    if (lh_parse_size_bytes(s, &a) == 0 && (lh_parse_size_bytes(s, &b) != 0 || a != b)) {
        abort();
    }
    (void)lh_parse_signal(s);
    unsigned long v = 0;
    lh_err_t err;
    (void)lh_cli_parse_uint("--fuzz", s, 1, 1000000, &v, &err);
    free(s);
    return 0;
}
