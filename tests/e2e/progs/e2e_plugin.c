/* leakhound - SPDX-License-Identifier: MIT
 *
 * e2e_plugin.c (e2e): the library dlopen_leak loads, calls and unloads, three times.
 * plugin_run(n) leaks n records of 200 bytes from make_record(); the report must still
 * name make_record and this file after the library is gone.
 */
#include <stdlib.h>
#include <string.h>

int plugin_run(int n);

typedef struct record {
    char data[200];
} record_t;

static record_t *g_records[64];

static record_t *
make_record(int i)
{
    record_t *r = malloc(sizeof(*r)); /* LEAK: plugin_record */
    if (r != NULL) {
        memset(r->data, i, sizeof(r->data));
    }
    return r;
}

int
plugin_run(int n)
{
    int made = 0;
    for (int i = 0; i < n && i < 64; i++) {
        g_records[i] = make_record(i);
        made += g_records[i] != NULL;
    }
    return made;
}
