/* leakhound - SPDX-License-Identifier: MIT
 *
 * symcache.h: the on-disk symbol cache, one file per module, so that a later report of a
 * trace of the same program does not read the module's DWARF again (on Debian's python3,
 * decompressing libc6-dbg's DWARF alone was a third of a report).
 *
 * A module's file holds what the symbolizer (symbolize.h) found for each file address it
 * was asked about: the frames (function, source file, line, inlined) at that address. The
 * file is named by the module's build id, or, for a module without one, by a hash of its
 * path, size and modification time (checked again on reading). It also records a
 * fingerprint of the debug information the symbolizer could have used (the module file's
 * size, and the size, time and inode of each separate debug file libdwfl looks for: the
 * build-id path under /usr/lib/debug, the .gnu_debuglink candidates and debuginfod's cache),
 * so installing or removing a -dbg package makes the file stale: it is then rebuilt.
 *
 * Where: $LEAKHOUND_CACHE_DIR, else $XDG_CACHE_HOME/leakhound, else ~/.cache/leakhound;
 * created 0700 when missing, and used only when it is a directory (not a symlink) owned by
 * the effective user and closed to group and others. Files are written 0600 under a
 * temporary name and renamed. A file that is corrupt, truncated, of another version, not
 * owned by the user, or made for another module is ignored (and replaced on the next save).
 * docs/FORMAT.md describes the file. Not thread-safe.
 */
#ifndef LH_SYMCACHE_H
#define LH_SYMCACHE_H

#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdwfl.h>

typedef struct lh_symcache lh_symcache_t;

/* One frame of an address (symbolize.h's lh_frame_t, without what the trace gives). */
typedef struct lh_symcache_frame {
    const char *function; /* NULL when unknown */
    const char *file;     /* NULL when unknown */
    uint32_t line;
    uint32_t inlined;
} lh_symcache_frame_t;

/* Turns the cache off for this process (`--no-symbol-cache`), or on again. */
void lh_symcache_set_enabled(int on);

/* The cache directory in use, creating it if needed; NULL when the cache is off or the
 * directory is missing, unsafe or unusable. Decided once per process. */
const char *lh_symcache_dir(void);

/* The cache of the module file path, opened in libdwfl as mod: loads the module's cache
 * file if there is a valid one. suffix names the kind of file: ".sym" for the code
 * symbolizer's frames, ".vars" for datasym.c's table of variables (each "frame" is a
 * variable's declaration file, at the variable's file address), ".dsym" for datasym.c's
 * answers of the symbol table (docs/FORMAT.md). NULL when the cache is
 * off, the module cannot be keyed or memory is short (the caller then works without). */
lh_symcache_t *lh_symcache_open(const char *path, Dwfl_Module *mod, const char *suffix);

/* Whether a valid file was loaded (or merged) for this module: a ".vars" table is written
 * whole, so a loaded one is complete. */
int lh_symcache_loaded(const lh_symcache_t *c);

/* Calls fn for every cached address, in no particular order. */
void lh_symcache_each(const lh_symcache_t *c,
                      void (*fn)(void *ctx, uint64_t offset, const lh_symcache_frame_t *frames,
                                 uint32_t n),
                      void *ctx);

/* The frames cached for file address offset: their count (>= 1) with *frames set, or 0.
 * Frames and strings stay valid until lh_symcache_free. */
int lh_symcache_get(lh_symcache_t *c, uint64_t offset, const lh_symcache_frame_t **frames);

/* Records the n frames of offset, to be written by lh_symcache_save. The strings are not
 * copied: they must stay valid until lh_symcache_save/free. Out of memory: not recorded. */
void lh_symcache_put(lh_symcache_t *c, uint64_t offset, const lh_symcache_frame_t *frames,
                     uint32_t n);

/* Writes the module's file when addresses were added since it was loaded, merged with
 * what the file holds now (another process may have written it). Failures are silent: the
 * cache is only an accelerator. */
void lh_symcache_save(lh_symcache_t *c);

void lh_symcache_free(lh_symcache_t *c);

#endif /* LH_SYMCACHE_H */
