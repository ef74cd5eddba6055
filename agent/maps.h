/* leakhound - SPDX-License-Identifier: MIT
 *
 * maps.h: the module map (maps.c). lh_maps_scan calls dl_iterate_phdr, which takes the
 * loader's lock: never call it with an agent lock held.
 */
#ifndef LH_MAPS_H
#define LH_MAPS_H

#include <stddef.h>
#include <stdint.h>

/* Reserves the module table. Returns 0 or -1 (no memory). At init. */
int lh_maps_init(void);
/* Writes MODULE records for modules loaded or unloaded since the last scan; force: scan
 * even when the loader's counters did not move. Guard held, no agent lock held. */
void lh_maps_scan(int force);
/* How many module loads the scans have seen so far (grows with each dlopen seen). */
uint64_t lh_maps_loads(void);
/* Repeats every known module into a new file: the output's opener (writer lock held, no
 * loader calls). */
void lh_maps_emit_all_locked(void);
/* fn runs after a scan that found modules loaded since the last one, in the scanning
 * thread (a hook with the guard held, or the ticker), with no agent lock held. The attach
 * front-end patches modules that libc loaded by itself (NSS, iconv) this way. */
void lh_maps_set_listener(void (*fn)(void));
/* The executable PT_LOAD segment that holds addr: [*lo, *hi) and its module's path (""
 * for the main program) in path (len bytes, may be NULL). Returns 1, or 0 when no module
 * holds addr. No allocation; takes the loader's lock (dl_iterate_phdr): at start-up. */
int lh_maps_text_segment(uintptr_t addr, uintptr_t *lo, uintptr_t *hi, char *path,
                         size_t len);
/* Fork child: modules are written again into the child's own file. */
void lh_maps_after_fork(void);

#endif /* LH_MAPS_H */
