/* leakhound - SPDX-License-Identifier: MIT
 *
 * config.h: the agent's settings (config.c), read from LEAKHOUND_* once, at init.
 */
#ifndef LH_CONFIG_H
#define LH_CONFIG_H

#include <stddef.h>
#include <sys/types.h>

#include "agent.h"

/* Reads LEAKHOUND_* into cfg. Returns 0, or -1 when the agent must stay off (setuid
 * process). Not AS-safe: at init. */
int lh_config_load(lh_config_t *cfg);
/* The same from vars, NAME=VALUE lines of the same LEAKHOUND_* names (the attach command's
 * settings; the environment of the process is not read). Returns 0, or -1 (too long). */
int lh_config_parse(lh_config_t *cfg, const char *vars);
/* Expands %p and %e of the output pattern into out (len bytes). No allocation. */
void lh_config_expand(const lh_config_t *cfg, pid_t pid, const char *prog, char *out, size_t len);

#endif /* LH_CONFIG_H */
