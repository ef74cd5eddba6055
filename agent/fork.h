/* leakhound - SPDX-License-Identifier: MIT
 *
 * fork.h: what fork does to a recording (fork.c). The parent holds the writer lock across
 * the fork; the child gets fresh locks, empty buffers, counters at zero, its own trace file
 * (opened when it first has something to write) and its own ticker.
 */
#ifndef LH_FORK_H
#define LH_FORK_H

/* Registers the pthread_atfork handlers, once per process. Not AS-safe: at init. */
void lh_fork_install(void);

#endif /* LH_FORK_H */
