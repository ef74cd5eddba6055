/* leakhound - SPDX-License-Identifier: MIT
 *
 * sitecanon.h: one site per displayed stack.
 *
 * A recorded stack id names a (whole native stack, script frames) pair, but a stack with
 * script frames is displayed without the interpreter's own frames (scriptstack.h), so one
 * Perl or Python line reached through several interpreter paths (hash value, key, arena)
 * is many stack ids with one displayed stack. The canonical id of a stack is the first id
 * (in the order asked) whose displayed stack is the same; the trace reader delivers events
 * with it (trace.c), so every figure, view, export and `--site N` sees one site per line.
 *
 * Perl code compiled by string evals is keyed without the eval's number ("(eval N)"): a
 * line that evals a new string each time is one site, not one per eval.
 *
 * Only stacks with script frames are mapped, and only when the interpreter's frames are
 * hidden (not `--native`): a purely native stack is always its own site, as before.
 *
 * Cost: one symbolization of each stack with script frames (cached by the symbolizer), a
 * key of its displayed frames and one hash entry per distinct displayed stack.
 */
#ifndef LH_SITECANON_H
#define LH_SITECANON_H

#include <stdint.h>

#include "err.h"
#include "modules.h"
#include "stacks.h"

typedef struct lh_sitecanon lh_sitecanon_t;

/* Creates an empty map symbolizing over mods (which must outlive it); exe_path as in
 * lh_sym_opts_t. Returns 0 or LH_ENOMEM. */
int lh_sitecanon_new(const lh_modules_t *mods, const char *exe_path, lh_sitecanon_t **out,
                     lh_err_t *err);
void lh_sitecanon_free(lh_sitecanon_t *c);

/* The canonical id of stack id in stacks (id itself for a native or unknown stack, or
 * with `--native`). Returns 0 with *out set, or LH_ENOMEM. Not thread-safe. */
int lh_sitecanon_map(lh_sitecanon_t *c, const lh_stacks_t *stacks, uint32_t id, uint32_t *out,
                     lh_err_t *err);

#endif /* LH_SITECANON_H */
