/* leakhound - SPDX-License-Identifier: MIT
 *
 * snapwp.h: which pages the program wrote since the last complete delta snapshot, from the
 * kernel rather than by reading them: userfaultfd's asynchronous write protection
 * (UFFD_FEATURE_WP_ASYNC, Linux 6.7+: a write to a protected page just clears the
 * protection, no thread waits) and the PAGEMAP_SCAN ioctl of /proc/PID/pagemap, which lists
 * the pages written since they were last protected and protects them again in one walk.
 * Soft-dirty bits do the same job where the kernel has them; many do not (this one's
 * pagemap bit 55 is always 0).
 *
 * Who does what (every snapshot child that may skip pages owns the delta table, snapdelta.h,
 * from before its clone to its end):
 * - the parent, just before the clone (lh_snapwp_mark): PAGEMAP_SCAN over the registered
 *   memory reports the pages written since the previous mark and protects them again; it
 *   adds them to a shared list A, "written since the table's snapshot". A child that
 *   commits its table empties A (its table is newer than the mark before its clone: every
 *   later write shows at the next mark); one that fails leaves A as it is.
 * - the child (lh_snapwp_begin, lh_snapwp_region, lh_snapwp_check): for each anonymous
 *   mapping it scans, reads the parent's pagemap without protecting (pages written between
 *   the mark and now, which includes the clone: what the child sees); a mapping the kernel
 *   does not track (never registered, or made since: EPERM) is all written, and is
 *   registered for the next snapshot; a mapping no longer in the parent's maps as it was
 *   (unmapped, moved, split since the clone: its writes may never show) is all written.
 *   Pages not present at that moment (zapped by MADV_DONTNEED, never touched) count as
 *   written: the mark protects written pages only (protecting pages never touched would
 *   fill their ranges with page tables of markers, which every clone copies).
 * - lh_snapwp_clean answers, page by page in increasing address order, whether a page is
 *   known unwritten since the table's snapshot.
 *
 * When the kernel has no such ioctl, userfaultfd is not allowed, the program uses its own
 * userfaultfd on that memory, or anything fails, every page counts as written: the snapshot
 * reads everything, as without this module. A program that registers memory the agent
 * registered (its UFFDIO_REGISTER gets EBUSY) has it: lh_snapwp_yield, from the ioctl
 * shim. lh_snapwp_prepare and lh_snapwp_mark run in the parent under the capture lock (raw
 * system calls, agent memory); lh_snapwp_yield in any thread of the parent; the others in
 * the child only (AS-safe, no malloc, no locks).
 */
#ifndef LH_SNAPWP_H
#define LH_SNAPWP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct lh_wp_range {
    uint64_t lo, hi;
} lh_wp_range_t;

/* Once per process (a forked copy makes its own): the userfaultfd, the pagemap descriptor
 * and the lists. 0, or -1 when this kernel or process cannot (then nothing is skipped). */
int lh_snapwp_prepare(void);

/* Parent, just before the clone of a child that owns the delta table: the mark (see
 * above). Returns 1 when the mark is complete, 0 when the child must read everything. */
int lh_snapwp_mark(void);

/* Child: starts; marked is what lh_snapwp_mark returned before its clone, pid the parent.
 * Returns 1 when pages may be skipped. */
int lh_snapwp_begin(int marked, pid_t pid);
/* Child: one anonymous mapping [lo, hi) of the scan, in increasing order. */
void lh_snapwp_region(uintptr_t lo, uintptr_t hi);
/* Child: after the last region; checks the parent's maps and merges the lists. */
void lh_snapwp_check(void);
/* Child: 1 when [lo, hi) (inside one region) is known unwritten; increasing order. */
int lh_snapwp_clean(uintptr_t lo, uintptr_t hi);
/* Child: its table was committed (ok) or not. */
void lh_snapwp_end(int committed);

/* A program's own ioctl(fd, request, arg) failed with EBUSY. When it is a UFFDIO_REGISTER
 * of memory the agent registered (a userfaultfd allows one registration per mapping), the
 * agent lets go of that memory, registers nothing more from then on (snapshots read what
 * they cannot track, as always), and returns 1: the caller makes its call again. 0
 * otherwise. Any thread of the process; raw system calls, no malloc, no locks. */
int lh_snapwp_yield(int fd, unsigned long request, const void *arg);

/* The union of two sorted lists of disjoint ranges into out (cap ranges), touching ranges
 * merged; returns the count, or (size_t)-1 when out is too small. Pure; AS-safe. */
size_t lh_snapwp_union(const lh_wp_range_t *a, size_t na, const lh_wp_range_t *b, size_t nb,
                       lh_wp_range_t *out, size_t cap);

#endif /* LH_SNAPWP_H */
