/* leakhound - SPDX-License-Identifier: MIT
 *
 * stripped_ext.c: a native library for stripped.py, built and then stripped by the test
 * (strip --strip-all: no debug information, no .symtab; .dynsym and .eh_frame stay), the
 * way a C extension comes from a distribution. The allocation happens in a static
 * function, which only the call frame information and the exported function before it
 * can name.
 */
#include <stdlib.h>
#include <string.h>

void *lh_ext_first(size_t n);
void *lh_ext_fill(size_t n);

/* exported, before the static function in the file (and in .text, built -O0) */
void *
lh_ext_first(size_t n)
{
    return calloc(1, n);
}

static __attribute__((noinline)) void *
make_record(size_t n)
{
    char *p = malloc(n);
    if (p) {
        memset(p, 'r', n);
    }
    return p;
}

void *
lh_ext_fill(size_t n)
{
    return make_record(n);
}
