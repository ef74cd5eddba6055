/* leakhound - SPDX-License-Identifier: MIT
 *
 * leakhound.h: the optional API a program may call to help leakhound. Everything works
 * without it (`leakhound run -- ./prog`); with it, a program marks iterations, asks for
 * heap snapshots at the points that matter, and names the types of its blocks.
 *
 * The functions live in the agent (libleakhound.so, loaded with LD_PRELOAD). A program that
 * must also run without the agent declares them weak and calls them only when present:
 *
 *     #include <leakhound.h>
 *     #pragma weak lh_mark
 *     ...
 *     if (lh_mark) lh_mark("request");
 *
 * or defines LH_WEAK_API before including this header, which does the same for all of them.
 * All functions are thread-safe, never allocate from the program's heap, and do nothing
 * when the agent is not recording. Labels and type names are copied (up to 255 bytes).
 */
#ifndef LEAKHOUND_H
#define LEAKHOUND_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef LH_WEAK_API
#define LH_API_DECL __attribute__((weak))
#else
#define LH_API_DECL
#endif

/* An iteration or request boundary: growth is reported per mark. */
LH_API_DECL void lh_mark(const char *label);

/* A named point whose live set the analyzer can reconstruct (and compare with others). */
LH_API_DECL void lh_snapshot(const char *label);

/* Names the type of the block at ptr (which must be the start of a live heap block). */
LH_API_DECL void lh_tag(void *ptr, const char *type);

/* The agent's version string, e.g. "0.1.0". */
LH_API_DECL const char *lh_agent_version(void);

#ifdef __cplusplus
}
#endif

#endif /* LEAKHOUND_H */
