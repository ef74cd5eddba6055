/* leakhound - SPDX-License-Identifier: MIT
 *
 * strpool.c: the string pool of strpool.h.
 */
#include "strpool.h"

#include <stdlib.h>
#include <string.h>

/* From libstdc++ (C linkage): the Itanium C++ ABI demangler. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

#define CHUNK 65536

struct lh_strpool_chunk {
    struct lh_strpool_chunk *next;
    size_t used, cap;
    char data[];
};

const char *
lh_strpool_add(lh_strpool_t *p, const char *s, size_t len)
{
    struct lh_strpool_chunk *c = p->head;
    if (!c || c->cap - c->used < len + 1) {
        size_t cap = len + 1 > CHUNK ? len + 1 : CHUNK;
        if (!(c = malloc(sizeof *c + cap))) {
            return NULL;
        }
        c->next = p->head;
        c->used = 0;
        c->cap = cap;
        p->head = c;
    }
    char *r = c->data + c->used;
    memcpy(r, s, len);
    r[len] = '\0';
    c->used += len + 1;
    return r;
}

const char *
lh_strpool_demangled(lh_strpool_t *p, const char *name)
{
    if (!name) {
        return NULL;
    }
    if (name[0] == '_' && name[1] == 'Z') {
        int status = -1;
        char *d = __cxa_demangle(name, NULL, NULL, &status);
        if (d && status == 0) {
            const char *r = lh_strpool_add(p, d, strlen(d));
            free(d);
            return r;
        }
        free(d);
    }
    return lh_strpool_add(p, name, strlen(name));
}

void
lh_strpool_fini(lh_strpool_t *p)
{
    while (p->head) {
        struct lh_strpool_chunk *next = p->head->next;
        free(p->head);
        p->head = next;
    }
}
