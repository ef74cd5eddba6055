/* leakhound - SPDX-License-Identifier: MIT
 *
 * history.h: the raw event history of a trace, filtered: every allocation and free that
 * touched one address, that belongs to one site, or that one thread made, in time order.
 *
 * Like the timeline, a history is a consumer of the one pass (stream.h): it sees each event
 * after the replay applied it, so that a free can name the block it ended (size, site, age) although the
 * FREE record itself only holds an address. A free matches --site when the block it ended
 * was allocated there. Memory: the replay, plus the first `limit` matching entries; later
 * matches are only counted. Not thread-safe.
 */
#ifndef LH_HISTORY_H
#define LH_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "event.h"
#include "replay.h"
#include "stream.h"

typedef struct lh_hist_filter {
    int has_addr;
    uint64_t addr;     /* ALLOC/FREE of it, REALLOC from or to it */
    int has_site;
    uint32_t site;     /* blocks allocated at this stack id, and their frees */
    int has_tid;
    uint32_t tid;
    size_t limit;      /* entries kept; 0: no limit */
} lh_hist_filter_t;

typedef struct lh_hist_entry {
    uint64_t ts_ns;
    uint32_t tid;
    uint8_t type;       /* LH_REC_ALLOC, FREE, REALLOC, MARK, SNAPSHOT */
    uint8_t half;       /* REALLOC: LH_HALF_* */
    uint8_t kind;       /* ALLOC: LH_AK_*; SNAPSHOT: LH_SNAP_* */
    uint64_t addr;      /* as in lh_event_t */
    uint64_t old_addr;
    uint64_t size;
    uint32_t stack_id;
    int has_block;      /* the event ended a live block: */
    uint64_t block_size;
    uint32_t block_stack;
    uint64_t block_age_ns;
    char *label;        /* MARK, SNAPSHOT: NUL-terminated copy; else NULL */
} lh_hist_entry_t;

typedef struct lh_history {
    lh_hist_filter_t f;
    lh_hist_entry_t *v;
    size_t n, cap;
    uint64_t n_matched;  /* including the ones past the limit */
} lh_history_t;

void lh_history_init(lh_history_t *h, const lh_hist_filter_t *f);
void lh_history_fini(lh_history_t *h);
/* The history as a consumer of the one pass (stream.h): keeps the events that match. */
lh_consumer_t lh_history_consumer(lh_history_t *h);

#endif /* LH_HISTORY_H */
