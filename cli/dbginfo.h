/* leakhound - SPDX-License-Identifier: MIT
 *
 * dbginfo.h: the separate debug info of one installed module (a Debian -dbg package:
 * /usr/lib/debug/.build-id/NN/REST.debug, or under $LEAKHOUND_DEBUG_DIR instead of
 * /usr/lib/debug), found by the module's build id and read with
 * elfutils: symbol values from its .symtab, struct sizes and member offsets from its DWARF.
 * `snapshot -p` takes every glibc offset it uses from here, never from a guess.
 *
 * The module file is the one on disk; the caller makes sure it is the one the process
 * mapped (same path, not "(deleted)"). Not thread-safe; read-only once opened.
 */
#ifndef LH_CLI_DBGINFO_H
#define LH_CLI_DBGINFO_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

typedef struct lh_dbginfo lh_dbginfo_t;

/* Opens the debug info of the module file at path. pkg names the Debian package that
 * provides it, for the message when it is missing ("libc6-dbg"). Returns 0, LH_ENOENT
 * (no debug file for this build id: "install PKG"), LH_EFORMAT (no build id, no DWARF),
 * LH_ENOMEM. */
int lh_dbginfo_open(const char *path, const char *pkg, lh_dbginfo_t **out, lh_err_t *err);
void lh_dbginfo_close(lh_dbginfo_t *d);

/* The value (link-time address, or offset in the TLS segment for a TLS symbol) of the
 * object symbol name. Returns 0 or LH_ENOENT. */
int lh_dbginfo_symbol(lh_dbginfo_t *d, const char *name, uint64_t *value);

/* The byte size of struct `name` (the first complete definition). Returns 0 or LH_ENOENT. */
int lh_dbginfo_struct_size(lh_dbginfo_t *d, const char *name, uint64_t *size);

/* A member of struct `name`: its byte offset, the byte size of its type and, for an array,
 * its element count (1 otherwise). Returns 0 or LH_ENOENT. */
int lh_dbginfo_member(lh_dbginfo_t *d, const char *strct, const char *member, uint64_t *off,
                      uint64_t *size, uint64_t *count);

/* The code address ranges (link-time [lo, hi) pairs) of the compilation unit whose source
 * file's base name is cu_base ("malloc.c"), at most max. Returns the number found (0: no
 * such unit, or it has no ranges). */
size_t lh_dbginfo_cu_ranges(lh_dbginfo_t *d, const char *cu_base, uint64_t (*out)[2],
                            size_t max);

/* The path of the debug file read ("/usr/lib/debug/.build-id/..."). */
const char *lh_dbginfo_path(const lh_dbginfo_t *d);

#endif /* LH_CLI_DBGINFO_H */
