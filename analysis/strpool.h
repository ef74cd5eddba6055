/* leakhound - SPDX-License-Identifier: MIT
 *
 * strpool.h: strings that live as long as their owner (the names and file paths the code
 * and data symbolizers hand out): copied into chunks of 64 KiB (a longer string gets a
 * chunk of its own), never moved, freed all at once. Also a C++ name demangled into the
 * pool, which both symbolizers do. Not thread-safe; a zeroed pool ({0}) is empty.
 */
#ifndef LH_STRPOOL_H
#define LH_STRPOOL_H

#include <stddef.h>

typedef struct lh_strpool {
    struct lh_strpool_chunk *head; /* the chunk being filled, then the older ones */
} lh_strpool_t;

/* A NUL-terminated copy of s[0..len) in the pool, or NULL without memory. */
const char *lh_strpool_add(lh_strpool_t *p, const char *s, size_t len);

/* name demangled (a C++ "_Z" name that __cxa_demangle accepts; a function template's
 * return type left out) or else as it is, copied
 * into the pool; NULL for NULL or without memory. */
const char *lh_strpool_demangled(lh_strpool_t *p, const char *name);
/* The same without the parameters of a C++ function ("std::operator+<char, ...>" for
 * _ZStplIcSt11char_traitsIcESaIcEENSt7__cxx1112basic_stringIT_T0_T1_EEPKS5_RKS8_): a name
 * to find one's way by, not a signature. Other names as lh_strpool_demangled. */
const char *lh_strpool_demangled_name(lh_strpool_t *p, const char *name);

/* Frees every string of the pool and makes it empty. */
void lh_strpool_fini(lh_strpool_t *p);

#endif /* LH_STRPOOL_H */
