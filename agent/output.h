/* leakhound - SPDX-License-Identifier: MIT
 *
 * output.h: the trace file (output.c). Everything here takes or needs the writer lock
 * (lh_g.wlock); lock order is slot lock, then writer lock, then the hand-off queue's lock.
 * None of it is AS-safe; hooks reach it only through the slots (slots.h).
 */
#ifndef LH_OUTPUT_H
#define LH_OUTPUT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Reserves the compression buffer and context and opens the file (lh_g.cfg, lh_g's identity
 * must be set). opened, if not NULL, runs with the writer lock held each time a new file
 * has its header, to add what every file must repeat (the module map); it must not call
 * into the loader. Returns 0, or -1 (a failed open was said in one line). */
int lh_output_init(void (*opened)(void));

/* A process the traced line started and that stays untraced (is_descendant) names itself
 * in the run's index, so `leakhound run` can say what ran untraced. No allocation. */
void lh_output_index_untraced(void);

/* Compresses and writes one frame of records for thread tid (0: the agent's own). Opens
 * the file on first use. Writer lock held. Failures stop recording (said once). */
void lh_output_write_frame_locked(const uint8_t *raw, size_t len, uint32_t tid,
                                  uint32_t n_records, uint64_t ts_base, uint8_t flags);

/* Writes a frame of agent records (tid 0), e.g. modules or sync. Takes the writer lock. */
void lh_write_agent_frame(const uint8_t *recs, size_t len, uint32_t n_records,
                          uint64_t ts_base, uint8_t flags);
/* The same with the writer lock already held (used while opening a new file). */
void lh_write_agent_frame_locked(const uint8_t *recs, size_t len, uint32_t n_records,
                                 uint64_t ts_base);

/* Nonzero while the agent's events go into EVENTS records (record.c), zero while each gets
 * its own ALLOC or FREE record: set from how much the last full-sized frame shrank (see
 * output.c). Read by the hooks without a lock: AS-safe. */
extern atomic_int lh_output_compact;

/* Opens the file now if it is not open (lh_output_init did once; a new attach does again
 * after lh_output_after_fork). Returns 0 or -1 (said why). Takes the writer lock. */
int lh_output_open(void);
/* The same with the writer lock held (fork.c's prepare handler). */
int lh_output_open_locked(void);
/* Closes the file for good (detach): later frames are dropped, no new file is opened. */
void lh_output_close(void);

/* Takes the writer lock for good, waiting at most ms (-1 when it could not be had): the
 * process is about to die of a signal, and no frame may be cut in the middle by it.
 * AS-safe (a trylock and nanosleep). */
int lh_output_hold(int ms);

/* Fork child (and a new attach): a fresh writer lock, no file (the child opens its own on first use). */
void lh_output_after_fork(void);

#endif /* LH_OUTPUT_H */
