/* leakhound - SPDX-License-Identifier: MIT
 *
 * trace.h: the streaming reader of leakhound traces (.lht, see format/format.h).
 *
 * lh_trace_open() reads and checks the file header and the info block; lh_trace_next()
 * then delivers the events one by one in global time order. Frames come from per-thread
 * buffers, so events of different threads interleave out of order in the file; the reader
 * keeps a window of pending events and releases, at every SYNC(T) record, the events
 * stamped before T, sorted by (time, frame sequence, index in frame). Memory stays bounded
 * by the events between two SYNC records (about 100 ms of the traced program), plus the
 * stack and module tables, which the trace owns and fills as it reads.
 *
 * Errors name the file and the place: bad magic or a newer major version (LH_EFORMAT,
 * LH_EVERSION), a file that ends inside a frame (LH_ETRUNC), a bad frame header, payload
 * checksum or record (LH_EFORMAT). With opts.salvage, a truncated or corrupt tail ends the
 * trace instead (a warning says so) and the events before it are delivered.
 *
 * A lh_trace_t is not thread-safe; use one per thread.
 */
#ifndef LH_TRACE_H
#define LH_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "event.h"
#include "modules.h"
#include "stacks.h"

typedef struct lh_trace lh_trace_t;

typedef struct lh_trace_opts {
    int salvage;   /* accept a truncated or corrupt tail, with a warning */
    int no_parent; /* a fork child's trace: do not seed it with the inherited heap */
    int depth;     /* internal: how many fork children's traces are opening this one */
} lh_trace_opts_t;

/* From the info block. Strings are NUL-terminated copies owned by the trace ("" when not
 * recorded); numbers are 0 when not recorded. */
typedef struct lh_trace_info {
    uint16_t major, minor;
    uint64_t pid, ppid;
    int has_parent;          /* INFO_PARENT: this process was started by fork() ... */
    uint64_t parent_pid;     /* ... of this pid */
    uint64_t fork_ts_ns;     /* INFO_PARENT (minor 3): when (CLOCK_MONOTONIC); 0: not said */
    const char *parent_trace; /* the trace that holds this process's heap at that time (the
                                 parent's, or an ancestor's when the parent wrote nothing),
                                 as the agent named it; "" when none does */
    uint64_t parent_trace_pid; /* that trace's process */
    /* Set by lh_trace_open when it seeded this trace with the inherited heap: the blocks
     * live in parent_trace at fork_ts come first, as ALLOC events with their own times
     * (all before fork_ts), sites and sizes, as if this trace had recorded them. */
    int inherited;
    const char *inherited_from; /* the file they were read from */
    uint64_t inherited_blocks, inherited_bytes;
    uint64_t attach_how;     /* INFO_ATTACH: 1 `leakhound attach`, 2 `leakhound snapshot -p`;
                                0: the agent ran from the start */
    const char *exe;
    char **argv;             /* argc strings, then NULL */
    size_t argc;
    int has_clock;
    uint64_t clock_id;
    uint64_t mono_start_ns;  /* CLOCK_MONOTONIC at agent start */
    uint64_t realtime_start_ns;
    int has_agent;
    const char *agent_version;
    uint64_t unwinder;       /* LH_UNWIND_* */
    uint64_t max_depth;
    uint64_t pointer_size;
    const char *arch;
    uint64_t sample_rate_bytes;
} lh_trace_info_t;

/* The END record (the trailer), written when the process exits. */
typedef struct lh_trace_end {
    int present;             /* 0: no trailer, the process did not exit cleanly (killed?) */
    uint64_t ts_ns;
    uint64_t kind;           /* LH_EXIT_* */
    uint64_t status;
    uint64_t events, frames, dropped, pre_init_allocs; /* the agent's counters */
    int has_unwind;          /* the unwind-table counters below are present */
    uint64_t table_walks;    /* stacks walked by the agent's unwind table */
    uint64_t table_fallbacks; /* stacks it left to libunwind */
    uint64_t verify_checked, verify_mismatches; /* LEAKHOUND_UNWIND_VERIFY comparisons */
} lh_trace_end_t;

typedef struct lh_trace_stats {
    uint64_t n_frames;       /* frames read */
    uint64_t file_bytes;     /* bytes of the file consumed */
    uint64_t n_records;      /* records decoded (including stacks, modules, syncs) */
    uint64_t n_events;       /* events delivered (the two halves of a REALLOC count once) */
    uint64_t n_unknown;      /* records of unknown types, skipped */
    uint64_t n_syncs;
    uint64_t first_ts_ns;    /* of the delivered events (0 before the first) */
    uint64_t last_ts_ns;
    int salvaged;            /* a corrupt or truncated tail was dropped (opts.salvage) */
} lh_trace_stats_t;

/* Opens path and reads its header and info block. opts may be NULL (defaults). A fork
 * child's trace (INFO_PARENT with a parent trace) is seeded with the blocks live in that
 * trace at the fork (read with salvage, up to its last complete frame: its process may
 * still run; recursively for a grandchild); when that trace is missing, unreadable or of
 * another process, the child is read alone and a warning says so in one line. On success
 * *out owns the open file; release it with lh_trace_close. Returns 0, or LH_ENOENT,
 * LH_EIO, LH_EFORMAT, LH_EVERSION, LH_ETRUNC, LH_ENOMEM with a message in err. */
int lh_trace_open(const char *path, const lh_trace_opts_t *opts, lh_trace_t **out,
                  lh_err_t *err);

/* Closes the file and frees everything the trace owns (tables and strings included).
 * NULL is a no-op. */
void lh_trace_close(lh_trace_t *t);

/* The next event in time order. Returns 1 with *ev filled (its label stays valid until the
 * next call), 0 at the end of the trace, or a negative LH_E* code with a message in err;
 * after an error, every later call returns the same error. */
int lh_trace_next(lh_trace_t *t, lh_event_t *ev, lh_err_t *err);
/* The event k places after the one lh_trace_next returned last, when it is decoded and
 * ready already (NULL otherwise): a look ahead, for prefetching (its stack id is not yet
 * mapped to its site, its label not to be kept). */
const lh_event_t *lh_trace_ahead(const lh_trace_t *t, size_t k);

/* What a trace has read so far, owned by it: lh_trace_parts(t)->info and the like. */
typedef struct lh_trace_parts {
    const char *path;       /* as given to lh_trace_open */
    lh_trace_info_t info;   /* complete once lh_trace_open returned */
    lh_trace_end_t end;     /* complete only after lh_trace_next returned 0 */
    lh_trace_stats_t stats; /* so far */
    lh_modules_t modules;   /* complete only after lh_trace_next returned 0 */
    lh_stacks_t stacks;     /* complete only after lh_trace_next returned 0 */
    lh_warnings_t warnings; /* non-fatal problems found so far */
    /* The rules the program embeds for LeakSanitizer (a SUPPRESSIONS record: its
     * __lsan_default_suppressions()), NUL-terminated, or NULL; complete only after
     * lh_trace_next returned 0. */
    const char *lsan_supp;
} lh_trace_parts_t;
const lh_trace_parts_t *lh_trace_parts(const lh_trace_t *t);
/* The last name recorded for tid (NUL-terminated), or NULL. */
const char *lh_trace_thread_name(const lh_trace_t *t, uint64_t tid);
/* Interpreters the agent found in the process (INTERP records, up to 8). */
typedef struct lh_trace_interp {
    uint32_t lang;    /* LH_LANG_* */
    uint32_t status;  /* LH_INTERP_* */
    char version[32]; /* "5.36.0" */
} lh_trace_interp_t;
const lh_trace_interp_t *lh_trace_interps(const lh_trace_t *t, size_t *n);

#endif /* LH_TRACE_H */
