/* leakhound - SPDX-License-Identifier: MIT
 *
 * hugepages.c: transparent huge pages under large arrays (hugepages.h).
 */
#include "hugepages.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define HUGE_SIZE ((uintptr_t)2 << 20)


/* The length of a mapping of bytes: whole huge pages. */
static size_t
map_len(size_t bytes)
{
    return (bytes + HUGE_SIZE - 1) & ~(HUGE_SIZE - 1);
}

void *
lh_hugepages_calloc(size_t bytes)
{
    if (bytes < LH_HUGEPAGES_MIN) {
        return calloc(bytes ? bytes : 1, 1);
    }
    size_t len = map_len(bytes);
    if (len < bytes || len + HUGE_SIZE < len) {
        return NULL;
    }
    /* One huge page more than needed, then the unaligned head and tail given back. */
    uint8_t *m = mmap(NULL, len + HUGE_SIZE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        return NULL;
    }
    uintptr_t a = ((uintptr_t)m + HUGE_SIZE - 1) & ~(HUGE_SIZE - 1);
    size_t head = a - (uintptr_t)m;
    if (head) {
        munmap(m, head);
    }
    if (HUGE_SIZE - head) {
        munmap((uint8_t *)a + len, HUGE_SIZE - head);
    }
    lh_hugepages_hint((void *)a, len);
    return (void *)a;
}

void
lh_hugepages_free(void *p, size_t bytes)
{
    if (!p) {
        return;
    }
    if (bytes < LH_HUGEPAGES_MIN) {
        free(p);
    } else {
        munmap(p, map_len(bytes));
    }
}
