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
 * One child at a time uses the table (an atomic owner word, which the parent sets before
 * the clone); a capture that starts while another child holds it is written whole. A forked process never uses its parent's table (shared
 * across fork): its first capture maps its own. The sums are 64-bit hashes, not checksums against an adversary: two
 * different contents with the same sum would show the older one (about 2^-64 per piece).
 *
 * lh_snapdelta_prepare, _reserve, _assign and _reaped run in the parent; every other function
 * runs in the snapshot child only (raw system calls, no locks, no malloc: AS-safe).
 */
#ifndef LH_SNAPDELTA_H
#define LH_SNAPDELTA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "snapwp.h"

#define LH_SNAPDELTA_HOMES 16
/* Below this, a word is taken for a number, never for an address (lh_snapdelta_seen_t). */
#define LH_SNAPDELTA_STRAY_LO 0x10000u

/* What the scan of one piece found besides its sum: whether its contents would read the
 * same under other target ranges (lh_snapdelta_targets). */
typedef struct lh_snapdelta_seen {
    int empty; /* nothing to write (mode pointers: no pointer words) */
    int hdr;   /* header words were noted for it: always read (they lie in other pages) */
    int stray; /* a word in [LH_SNAPDELTA_STRAY_LO, 2^57) outside the targets (mode full:
                  such a word that is 8 mod 16): a pointer word, or a header note, if a
                  mapping appears there */
    uint64_t tmin, tmax; /* least and greatest pointer word; tmin > tmax: none */
} lh_snapdelta_seen_t;

/* Maps the shared table once per process (MAP_SHARED, agent memory; a forked copy maps
 * its own); 0, or -1 when it cannot (the files are then whole). */
int lh_snapdelta_prepare(void);

/* Parent, before the clone of snapshot number: reserves the table for its child; 1, or 0
 * when another child holds it (this snapshot is then written whole). */
int lh_snapdelta_reserve(unsigned number);
/* Parent, after that clone: the table is child's (or free again when the clone failed). */
void lh_snapdelta_assign(unsigned number, pid_t child);

/* Takes the table reserved for snapshot number of process pid in contents mode. Returns 1
 * when this snapshot keeps sums (and may refer to earlier files), 0 when it is written
 * whole. */
int lh_snapdelta_begin(pid_t pid, int mode, unsigned number);

/* The ranges pointer words are recorded into (sorted; hi's low bit: a heap range, whose
 * header words are kept). A word's meaning depends on them: a piece is skipped unread
 * (lh_snapdelta_skip) only when no word of it can mean something else than under the
 * previous table's ranges (no stray word if a range was added, no pointer word between
 * its tmin and tmax into a range that went). */
void lh_snapdelta_targets(const lh_wp_range_t *t, size_t n);

/* Before reading the next piece: 1 when it is the previous table's piece unchanged, known
 * unwritten (snapwp.h) without being read, and may be referred to as it was (the caller
 * reads and writes nothing for it); 0 when the caller reads it and calls
 * lh_snapdelta_piece. A piece whose scan noted header words (hdr) is always read: those
 * words are written each time, and lie in other pages. */
int lh_snapdelta_skip(uintptr_t addr, uint32_t len);
/* Tests: the piece lh_snapdelta_skip just took unread, read anyway, has this sum and these
 * flags (what the previous table says). */
int lh_snapdelta_verify(uint64_t sum, const lh_snapdelta_seen_t *seen);

/* Sum of n words, seeded with the piece's length. */
uint64_t lh_snapdelta_sum(const uint64_t *w, size_t n, uint64_t seed);

/* The next piece, in increasing address order: returns 1 when its contents are stored,
 * unchanged, in an earlier file (the caller writes nothing for it), 0 when the caller
 * writes them. seen->empty: the caller writes nothing for this piece anyway (no pointer
 * words): it is never referred to. */
int lh_snapdelta_piece(uintptr_t addr, uint32_t len, uint64_t sum, const lh_snapdelta_seen_t *seen);

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
