/* leakhound - SPDX-License-Identifier: MIT
 *
 * strpool.c: the string pool of strpool.h.
 */
#include "strpool.h"

#include <stdint.h>
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

/* Whether the word ending just before d[end] is an operator's (operator new, operator
 * bool: the space is the name's own; operator< <int>: the space sets its template
 * arguments apart). */
static int
after_operator(const char *d, size_t end)
{
    size_t b = end;
    while (b > 0 && d[b - 1] != ' ' && d[b - 1] != ':') {
        b--;
    }
    return end - b >= 8 && strncmp(d + b, "operator", 8) == 0;
}

/* A function template's demangled name starts with its return type: "std::shared_ptr<std::
 * enable_if<!std::is_array<Session>::value, Session>::type> std::make_shared<Session>()".
 * Returns where the name itself starts (Valgrind and gdb show make_shared<Session>), or 0
 * when there is no return type or the name is not understood (operator< and friends,
 * whose brackets do not pair): the name runs back from the parameters' '(' to the first
 * space outside every <>, () and []. */
/* Index of the '(' that opens a demangled function name's parameters, or SIZE_MAX (not a
 * function, or brackets that do not pair). */
static size_t
params_open(const char *d)
{
    size_t close = strlen(d);
    while (close > 0 && d[close - 1] != ')') { /* " const", " [clone .cold]" */
        close--;
    }
    long depth = 0;
    size_t i = close; /* d[i - 1] is the parameters' ')' */
    while (i > 0) {
        char c = d[--i];
        depth += c == ')' ? 1 : c == '(' ? -1 : 0;
        if (depth == 0) {
            return i;
        }
    }
    return SIZE_MAX;
}

static size_t
name_start(const char *d)
{
    size_t i = params_open(d);
    long depth = 0;
    if (i == SIZE_MAX) {
        return 0;
    }
    while (i > 0) {
        char c = d[--i];
        depth += (c == '>' || c == ')' || c == ']') ? 1 : (c == '<' || c == '(' || c == '[') ? -1 : 0;
        if (depth < 0) {
            return 0;
        }
        if (depth == 0 && c == ' ' && !after_operator(d, i)) {
            return i + 1;
        }
    }
    return 0;
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
            size_t from = name_start(d);
            const char *r = lh_strpool_add(p, d + from, strlen(d + from));
            free(d);
            return r;
        }
        free(d);
    }
    return lh_strpool_add(p, name, strlen(name));
}

const char *
lh_strpool_demangled_name(lh_strpool_t *p, const char *name)
{
    const char *d = lh_strpool_demangled(p, name);
    size_t open = d && name[0] == '_' && name[1] == 'Z' ? params_open(d) : SIZE_MAX;
    return open == SIZE_MAX || open == 0 ? d : lh_strpool_add(p, d, open);
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
