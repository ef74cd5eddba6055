/* leakhound - SPDX-License-Identifier: MIT
 *
 * args.c: option value parsing shared by the subcommands.
 */
#include <errno.h>
#include <stdlib.h>

#include "cmd.h"

int
lh_cli_parse_uint(const char *opt, const char *s, unsigned long lo, unsigned long hi,
                  unsigned long *out, lh_err_t *err)
{
    char *end = NULL;
    errno = 0;
    unsigned long v = (s && *s >= '0' && *s <= '9') ? strtoul(s, &end, 10) : 0;
    if (!s || !end || *end || errno || v < lo || v > hi) {
        return lh_err_set(err, LH_EINVAL, "%s: expected a number from %lu to %lu, got '%s'", opt,
                          lo, hi, s ? s : "");
    }
    *out = v;
    return 0;
}
