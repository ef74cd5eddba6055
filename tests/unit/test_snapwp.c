/* leakhound - SPDX-License-Identifier: MIT
 *
 * test_snapwp.c: the written-pages tracking of delta snapshots (agent/snapwp.c) without
 * LD_PRELOAD: the union of range lists, then the whole protocol on a mapping of this
 * process, with forked children in the snapshot child's place: which pages each child is
 * told are unwritten, exactly, across writes before and after the clone, MADV_DONTNEED, a
 * child that does not commit, a mapping replaced in place and one unmapped after the clone.
 * Skipped (not failed) where the kernel has no PAGEMAP_SCAN or userfaultfd.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "snapwp.h"

#define PAGES 40
#define PG 4096u

static void
test_union(void **state)
{
    (void)state;
    const lh_wp_range_t a[] = {{0, 10}, {20, 30}, {50, 60}};
    const lh_wp_range_t b[] = {{5, 12}, {30, 35}, {40, 45}, {59, 70}};
    lh_wp_range_t out[8];
    size_t n = lh_snapwp_union(a, 3, b, 4, out, 8);
    assert_int_equal(n, 4);
    const lh_wp_range_t want[] = {{0, 12}, {20, 35}, {40, 45}, {50, 70}};
    assert_memory_equal(out, want, sizeof want);
    assert_int_equal(lh_snapwp_union(a, 3, NULL, 0, out, 8), 3);
    assert_memory_equal(out, a, sizeof a);
    assert_int_equal(lh_snapwp_union(NULL, 0, NULL, 0, out, 8), 0);
    assert_int_equal(lh_snapwp_union(a, 3, b, 4, out, 3), (size_t)-1); /* too small */
}

static uint8_t *area; /* PAGES pages with a PROT_NONE page either side: one maps line */

/* What a snapshot child is told: forks, waits for go (after the parent's writes that come
 * after the clone), then sends one byte per page, 1 = known unwritten, and ends with
 * commit. Before the fork, the parent marks (as lh_snapshot_take_at does). */
static void
child_view(char clean[PAGES], int commit, void (*after_clone)(void))
{
    int marked = lh_snapwp_mark();
    assert_int_equal(marked, 1);
    int to_child[2], from_child[2];
    assert_int_equal(pipe(to_child), 0);
    assert_int_equal(pipe(from_child), 0);
    pid_t parent = getpid();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char go;
        if (read(to_child[0], &go, 1) != 1) {
            _exit(2);
        }
        char out[PAGES];
        memset(out, 0, sizeof out);
        if (lh_snapwp_begin(marked, parent)) {
            lh_snapwp_region((uintptr_t)area, (uintptr_t)area + PAGES * PG);
            lh_snapwp_check();
            for (int i = 0; i < PAGES; i++) {
                uintptr_t a = (uintptr_t)area + (uintptr_t)i * PG;
                out[i] = (char)lh_snapwp_clean(a, a + PG);
            }
        }
        lh_snapwp_end(commit);
        _exit(write(from_child[1], out, PAGES) == PAGES ? 0 : 3);
    }
    if (after_clone) {
        after_clone();
    }
    assert_int_equal(write(to_child[1], "g", 1), 1);
    assert_int_equal(read(from_child[0], clean, PAGES), PAGES);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(to_child[0]);
    close(to_child[1]);
    close(from_child[0]);
    close(from_child[1]);
}

/* The pages a child was told are unwritten, as a string of 0/1 (first = page 0). */
static void
expect_clean(const char clean[PAGES], const char *want)
{
    char got[PAGES + 1];
    for (int i = 0; i < PAGES; i++) {
        got[i] = clean[i] ? '1' : '0';
    }
    got[PAGES] = '\0';
    assert_string_equal(got, want);
}

static void
write_page_30(void)
{
    area[30 * PG] ^= 1;
}

static void
unmap_last_ten(void)
{
    assert_int_equal(munmap(area + 30 * PG, 10 * PG), 0);
}

/* A mapping the kernel does not track yet: 1, all written (and the child registers it);
 * 2, registered since: every page reads as written once; 3, nothing written: all clean. */
static void
first_three(void)
{
    char c[PAGES];
    const char *none = "0000000000000000000000000000000000000000";
    child_view(c, 1, NULL);
    expect_clean(c, none);
    child_view(c, 1, NULL);
    expect_clean(c, none);
    child_view(c, 1, NULL);
    expect_clean(c, "1111111111111111111111111111111111111111");
}

static void
test_protocol(void **state)
{
    (void)state;
    if (lh_snapwp_prepare() != 0) {
        skip(); /* no PAGEMAP_SCAN (Linux < 6.7) or no userfaultfd here */
    }
    uint8_t *m = mmap(NULL, (PAGES + 2) * PG, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    assert_int_equal(mprotect(m, PG, PROT_NONE), 0);
    assert_int_equal(mprotect(m + (PAGES + 1) * PG, PG, PROT_NONE), 0);
    area = m + PG;
    memset(area, 7, PAGES * PG);
    char c[PAGES];
    const char *none = "0000000000000000000000000000000000000000";

    /* 1-3 */
    first_three();
    /* 4: pages 3 and 10 written, 20 zapped before the mark, 30 written after the clone;
     * this child does not commit. */
    area[3 * PG] = 1;
    area[10 * PG + 100] = 2;
    assert_int_equal(madvise(area + 20 * PG, PG, MADV_DONTNEED), 0);
    child_view(c, 0, write_page_30);
    expect_clean(c, "1110111111011111111101111111110111111111");
    /* 5: its table was not committed: what it was told is still written, and 30 too. */
    child_view(c, 1, NULL);
    expect_clean(c, "1110111111011111111101111111110111111111");
    /* 6: committed at 5; page 20 (zapped) has no page yet: still written; the rest clean. */
    child_view(c, 1, NULL);
    expect_clean(c, "1111111111111111111101111111111111111111");
    /* 7-9: the whole mapping replaced by a new one in place (same maps line): the kernel
     * does not track it, then does. */
    assert_true(mmap(area, PAGES * PG, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED);
    memset(area, 9, PAGES * PG);
    first_three(); /* 7-9 */
    /* 10: the last ten pages unmapped after the clone (the child still has them, and the
     * kernel no longer tracks them): the mapping is not what it was, all written. */
    child_view(c, 1, unmap_last_ten);
    expect_clean(c, none);
    munmap(m, 31 * PG);
    munmap(m + 41 * PG, PG);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_union),
        cmocka_unit_test(test_protocol),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
