/* leakhound - SPDX-License-Identifier: MIT
 *
 * snapdelta.h: what changed since the previous snapshot, so a contents file (.lhs) writes
 * only that and refers to earlier files for the rest (docs/FORMAT.md, BASE and SAME).
 *
 * The snapshot child cuts the memory it scans into pieces (a page, or the part of a page
 * inside one region) and gives each piece's sum (lh_snapdelta_sum over what it would write:
 * the page's bytes in mode full, its pointer words in mode pointers). A table of the
 * previous snapshot's pieces (address, length, sum, and the snapshot whose file stores the
 * contents: its "home") lives in a shared mapping, made by the parent at its first capture:
 * each child reads the last complete table and writes the next one beside it, and only a
 * child whose file was written whole makes its table the last one. A piece whose sum did not
 * change is referred to in the file that stores it, never through a chain: a reader opens at
 * most LH_SNAPDELTA_HOMES - 1 earlier files, and each piece is written again at least every
 * LH_SNAPDELTA_HOMES snapshots (one in that many of the unchanged pieces in each, spread by
 * address), so every file older than that can be deleted.
 *
 * One child at a time uses the table (an atomic owner word); a capture that starts while
 * another runs is written whole. A forked process never uses its parent's table (shared
 * across fork): its first capture maps its own. The sums are 64-bit hashes, not checksums against an adversary: two
 * different contents with the same sum would show the older one (about 2^-64 per piece).
 *
 * lh_snapdelta_prepare and lh_snapdelta_reaped run in the parent; every other function
 * runs in the snapshot child only (raw system calls, no locks, no malloc: AS-safe).
 */
#ifndef LH_SNAPDELTA_H
#define LH_SNAPDELTA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LH_SNAPDELTA_HOMES 16

/* Maps the shared table once per process (MAP_SHARED, agent memory; a forked copy maps
 * its own); 0, or -1 when it cannot (the files are then whole). */
int lh_snapdelta_prepare(void);

/* Takes the table for snapshot number of process pid in contents mode. Returns 1 when
 * this snapshot keeps sums (and may refer to earlier files), 0 when it is written whole. */
int lh_snapdelta_begin(pid_t pid, int mode, unsigned number);

/* Sum of n words, seeded with the piece's length. */
uint64_t lh_snapdelta_sum(const uint64_t *w, size_t n, uint64_t seed);

/* The next piece, in increasing address order: returns 1 when its contents are stored,
 * unchanged, in an earlier file (the caller writes nothing for it), 0 when the caller
 * writes them. empty: the caller writes nothing for this piece anyway (no pointer words):
 * it is never referred to. */
int lh_snapdelta_piece(uintptr_t addr, uint32_t len, uint64_t sum, int empty);

/* The earlier files this snapshot refers to: the i-th (from 0) in *number and *name;
 * returns 0 past the last. */
int lh_snapdelta_base(int i, unsigned *number, const char **name);

/* The pieces referred to in file number, one by one from *pos (start at 0): returns 0
 * past the last. */
int lh_snapdelta_next_ref(unsigned number, size_t *pos, uintptr_t *addr, uint32_t *len);

/* Parent: a capture child was reaped; if it died holding the table, the table is free
 * again (its last complete state stands: a child only commits a whole file). */
void lh_snapdelta_reaped(pid_t child);

/* Ends the child's use of the table: when ok (the file, named name, was written whole), its
 * table becomes the one the next snapshot compares against. */
void lh_snapdelta_end(int ok, const char *name);

#endif /* LH_SNAPDELTA_H */
