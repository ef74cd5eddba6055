/* leakhound - SPDX-License-Identifier: MIT
 *
 * st_edge.c (stress): the corners of the malloc API, each in a function of its own, each
 * counted. posix_memalign/aligned_alloc/memalign with large alignments (4096, 64 KiB,
 * 2 MiB: checked), realloc(NULL, n) (an allocation), realloc(p, 0) (a free: glibc frees
 * p and returns NULL), malloc(0) and calloc(0, n) (valid unique pointers), and calls that
 * must fail with their errno unchanged by the agent: malloc(SIZE_MAX/2), calloc overflow,
 * realloc to a huge size (p stays valid and is freed later: no free may be recorded for
 * it), posix_memalign with a bad alignment (EINVAL) or a huge size (ENOMEM).
 *
 * Output: one line per check ("errno malloc_huge 12 ..."), which must be the same with and
 * without the agent, and "COUNT <function> allocs=.. frees=.. reallocs=..".
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static int g_bad;

static void
expect(int cond, const char *what)
{
    if (!cond) {
        printf("FAILED %s\n", what);
        g_bad++;
    }
}

NOINLINE static void
st_aligned(void)
{
    static const size_t aligns[] = {4096, 65536, 2u << 20};
    long allocs = 0, frees = 0;
    for (int round = 0; round < 50; round++) {
        for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
            size_t al = aligns[i];
            void *p = NULL;
            expect(posix_memalign(&p, al, 100 + (size_t)round) == 0 && p, "posix_memalign");
            expect(((uintptr_t)p & (al - 1)) == 0, "posix_memalign alignment");
            void *q = aligned_alloc(al, al * 2);
            expect(q && ((uintptr_t)q & (al - 1)) == 0, "aligned_alloc alignment");
            void *r = memalign(al, 64);
            expect(r && ((uintptr_t)r & (al - 1)) == 0, "memalign alignment");
            allocs += 3;
            free(p);
            free(q);
            free(r);
            frees += 3;
        }
    }
    printf("COUNT st_aligned allocs=%ld frees=%ld reallocs=0\n", allocs, frees);
}

NOINLINE static void
st_realloc_edges(void)
{
    long allocs = 0, frees = 0, reallocs = 0;
    for (int i = 0; i < 200; i++) {
        char *p = realloc(NULL, 64 + (size_t)i); /* an allocation (kind realloc) */
        expect(p != NULL, "realloc(NULL, n)");
        allocs++;
        memset(p, 1, 64);
        char *q = realloc(p, 4096); /* a realloc */
        expect(q != NULL, "realloc grow");
        reallocs++;
        errno = 0;
        char *r = realloc(q, 0); /* glibc: frees q, returns NULL */
        expect(r == NULL, "realloc(p, 0) returns NULL");
        frees++;
    }
    printf("COUNT st_realloc_edges allocs=%ld frees=%ld reallocs=%ld\n", allocs, frees,
           reallocs);
}

NOINLINE static void
st_zero(void)
{
    long allocs = 0, frees = 0;
    void *v[100];
    for (int i = 0; i < 100; i++) {
        v[i] = (i & 1) ? malloc(0) : calloc(0, 16);
        expect(v[i] != NULL, "malloc(0)/calloc(0, n) gives a pointer");
        allocs++;
    }
    for (int i = 1; i < 100; i++) {
        expect(v[i] != v[i - 1], "malloc(0) pointers are unique");
    }
    for (int i = 0; i < 100; i++) {
        free(v[i]);
        frees++;
    }
    free(NULL); /* a no-op: nothing recorded */
    printf("COUNT st_zero allocs=%ld frees=%ld reallocs=0\n", allocs, frees);
}

NOINLINE static void
st_failing(void)
{
    long allocs = 0, frees = 0;
    /* volatile: the compiler must neither warn about nor fold the impossible sizes */
    volatile size_t huge = SIZE_MAX / 2, quarter = SIZE_MAX / 4;
    errno = 0;
    void *p = malloc(huge);
    printf("errno malloc_huge %s %d\n", p ? "non-NULL" : "NULL", errno);
    errno = 0;
    p = calloc(quarter, 8);
    printf("errno calloc_overflow %s %d\n", p ? "non-NULL" : "NULL", errno);
    char *keep = malloc(100);
    allocs++;
    strcpy(keep, "still here");
    errno = 0;
    p = realloc(keep, huge);
    int e = errno;
    if (p) {
        keep = p; /* not expected */
    }
    printf("errno realloc_huge %s %d kept '%s'\n", p ? "non-NULL" : "NULL", e, keep);
    int rc = posix_memalign(&p, 3, 64);
    printf("errno posix_memalign_bad_alignment rc %d\n", rc);
    rc = posix_memalign(&p, 4096, huge);
    printf("errno posix_memalign_huge rc %d\n", rc);
    errno = 0;
    p = aligned_alloc(4096, huge);
    printf("errno aligned_alloc_huge %s %d\n", p ? "non-NULL" : "NULL", errno);
    free(keep); /* the realloc failed: this is the only free of keep */
    frees++;
    printf("COUNT st_failing allocs=%ld frees=%ld reallocs=0\n", allocs, frees);
}

int
main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    st_aligned();
    st_realloc_edges();
    st_zero();
    st_failing();
    return g_bad ? 1 : 0;
}
