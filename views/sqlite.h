/* leakhound - SPDX-License-Identifier: MIT
 *
 * sqlite.h: the trace's aggregates (and optionally its events) as an SQLite database, for
 * ad-hoc questions in SQL. The schema, with example queries, is in docs/SQLITE.md; its
 * table and column names are a contract (columns may be added, never renamed).
 *
 * Use: lh_sqlite_open() before the pass (it creates the schema and opens a transaction);
 * with events, pass lh_sqlite_event as the collector's on_event callback; then
 * lh_sqlite_finish() writes stacks, frames, sites, functions, boundaries, live sets and RSS,
 * builds the indexes and commits. lh_sqlite_close() in every case.
 */
#ifndef LH_VIEW_SQLITE_H
#define LH_VIEW_SQLITE_H

#include "collect.h"
#include "err.h"
#include "event.h"
#include "funcs.h"

typedef struct lh_sqlite_out lh_sqlite_out_t;

/* Creates path (replacing it). Returns 0, LH_EIO or LH_ENOMEM. */
int lh_sqlite_open(const char *path, int with_events, lh_sqlite_out_t **out, lh_err_t *err);
/* lh_collect_opts_t.on_event: inserts one event (ctx is the lh_sqlite_out_t). */
int lh_sqlite_event(void *ctx, const lh_event_t *ev, lh_err_t *err);
/* Writes everything else and commits. f may be NULL (no functions table rows). */
int lh_sqlite_finish(lh_sqlite_out_t *o, lh_collect_t *c, const lh_funcs_t *f, lh_err_t *err);
void lh_sqlite_close(lh_sqlite_out_t *o);

#endif /* LH_VIEW_SQLITE_H */
