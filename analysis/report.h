/* leakhound - SPDX-License-Identifier: MIT
 *
 * report.h: the leak report model: what the views render. Built once the whole trace has
 * been replayed: the summary numbers, and the top sites (stacks with live blocks at the
 * end) by leaked bytes, each with its symbolized frames.
 *
 * The order of the sites. When the run shows growth (opts.growth: the one growth model's
 * listing, growth.h, in the order `report --growth` prints it), the sites that grow come
 * first, in that order (by bytes per mark or snapshot): what grows while the program runs
 * is where a leak is, whatever its class at exit (a cache a global still reaches, growing
 * per request, above a start-up buffer of a fixed size that was lost). Each keeps its
 * class (rank, the split's kinds). Growth means over the run's marks, else the snapshots
 * taken while it ran: without them `report --growth` infers growth from when the blocks
 * live at the end were made (survivors.h), too weak an answer to reorder the report (a
 * Python program's imports, made over the whole run, "grow" there in 4 of 20 slices and
 * would lead it). Then, and in a run without growth for every site:
 * (lh_site_rank) first the sites that may leak, then those whose
 * every block live at exit was still reachable, then the one-time still reachable ones;
 * by leaked bytes within each group. A block still reachable at exit is one the program
 * chose to keep (Valgrind does not even list them by default), and a one-time one (its
 * stack allocated once in the whole run: a stdio buffer, a pool set up at start) cannot
 * grow; such a site leading the report (libstdc++'s 71 KiB emergency exception pool, in
 * every C++ program) hides the leaks. Without the exit snapshot's split nothing is known
 * to be reachable, and only site 0 moves last: blocks allocated before the agent started
 * (a library's constructor, the loader), one-time and not the program's by construction.
 * They all stay in the totals and the LEAK SUMMARY. A trace with Python frames ranks by
 * bytes alone (site 0 last): a Python program's leaks are still reachable (the collector
 * frees cycles), and a few "possibly lost" words at its start-up must not rank above them;
 * each site's "rank" still says its group.
 *
 * Frames of the agent itself (libleakhound.so) are dropped. The "location" of a site is its
 * first frame that has a source file and is not in the C/C++ runtime (libc.so*,
 * libstdc++.so*, libgcc_s*, ld-linux*, or code inlined from /usr/include/ and
 * /usr/lib/gcc/ headers), else its first frame outside the runtime (a program without debug
 * information), else its first frame: the line a user should look at. A script
 * frame comes first: the innermost one is the location, and so is the interpreter phase of
 * an allocation that ran no script code ("perl_construct (perl start-up, no script
 * frame)", scriptstack.h). An interpreter's allocator wrapper (Perl_safesysmalloc,
 * PyObject_Malloc) is never the location when another frame exists.
 */
#ifndef LH_REPORT_H
#define LH_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "replay.h"
#include "scriptstack.h"
#include "symbolize.h"
#include "timeline.h"
#include "trace.h"

/* The group a site ranks in, first to last (see above). */
typedef enum lh_site_rank {
    LH_RANK_LEAK,      /* lost at exit, or not known to be reachable */
    LH_RANK_REACHABLE, /* every live block still reachable at exit */
    LH_RANK_ONCE,      /* still reachable (or site 0), one allocation in the whole run */
} lh_site_rank_t;

typedef struct lh_site {
    uint32_t stack_id;
    lh_stack_stats_t stats;
    lh_site_rank_t rank;
    /* Borrowed from opts.growth: the site's entry when it grows (ranked first), else NULL. */
    const lh_growth_site_t *growth;
    int has_stack;       /* the stack record was in the trace */
    lh_frame_t *frames;  /* innermost first, agent frames removed; owned by the report */
    size_t n_frames;
    long location;       /* index into frames, -1 when there are none */
    long user_frame;     /* index into frames of the user's own code that led to the
                            location (lh_site_user_frame), -1 when none: set with location */
    /* The location frames of the stacks that grew its blocks by realloc (a block keeps its
     * identity through realloc, replay.h), at most LH_SITE_MAX_GROWERS; n_grown_by may be
     * larger. Filled by lh_site_growers. */
    lh_frame_t *grown_by;
    size_t n_grown_by;
} lh_site_t;

#define LH_SITE_MAX_GROWERS 8

typedef struct lh_report {
    /* Borrowed: the trace, replay and symbolizer must outlive the report. */
    const char *trace_path;
    const lh_trace_info_t *info;
    const lh_trace_end_t *end;
    const lh_trace_stats_t *stats;
    const lh_replay_totals_t *totals;
    uint64_t start_ns;     /* agent start (INFO_CLOCK), else the first event */
    double duration_s;     /* start to END, else to the last event */
    double peak_time_s;    /* since start */
    size_t n_leak_sites;   /* stacks with live blocks */
    lh_site_t *sites;      /* the top ones: growing, then by rank group, then leaked bytes */
    int ranked_by_class;   /* the order used the exit snapshot's split (opts.split) */
    /* Borrowed, NULL when the run shows no growth: the listing that ranked the growing
     * sites first (opts.growth); n_growing of the n_leak_sites grow (not suppressed). */
    const lh_growth_t *growth;
    size_t n_growing;
    size_t n_sites;
    const lh_rss_cmp_t *rss; /* borrowed, NULL when not tracked: RSS against heap */
    /* Set by lh_report_suppress (suppress.h): what the suppression rules hid. n_leak_sites
     * then counts only the sites left. */
    size_t n_suppressed_sites;
    uint64_t suppressed_bytes, suppressed_blocks;
    /* Borrowed, NULL when the trace has no exit snapshot with contents: the lost/reachable
     * split of the blocks live at exit (leaksplit.h). */
    const struct lh_leak_split *split;
    /* A fork child seeded with its inherited heap (trace.h): the inherited blocks still
     * live at the end. They are the parent's (its trace reports them), part of the heap the
     * child started with, not the child's leaks: not counted in the sites' live figures,
     * n_leak_sites nor lh_report_leaked_*. */
    uint64_t inherited_bytes, inherited_blocks;
} lh_report_t;

/* What the report counts as leaked: the blocks live at the end, less those suppressions
 * hid and, in a fork child, those it inherited. */
static inline uint64_t
lh_report_leaked_bytes(const lh_report_t *rep)
{
    return rep->totals->heap_bytes - rep->suppressed_bytes - rep->inherited_bytes;
}

static inline uint64_t
lh_report_leaked_blocks(const lh_report_t *rep)
{
    return rep->totals->heap_blocks - rep->suppressed_blocks - rep->inherited_blocks;
}

typedef struct lh_report_opts {
    size_t top; /* sites to keep; 0: all */
    /* Borrowed, may be NULL: the built split (leaksplit.h) that ranks the sites. */
    const struct lh_leak_split *split;
    /* Borrowed, may be NULL: the growth listing (timeline.h: lh_timeline_growth, its growing
     * sites first in listing order) that ranks the growing sites first; it must outlive the
     * report. A listing in which nothing grows changes nothing. */
    const lh_growth_t *growth;
} lh_report_opts_t;

/* Builds the report. sym may be NULL (no symbolization: frames carry addresses only).
 * Returns 0, or LH_ENOMEM. Release with lh_report_fini. */
int lh_report_build(lh_report_t *rep, const lh_trace_t *t, const lh_replay_t *r,
                    lh_symbolizer_t *sym, const lh_report_opts_t *opts, lh_err_t *err);
void lh_report_fini(lh_report_t *rep);

/* Symbolizes the stack of site->stack_id into site->frames (agent frames dropped),
 * n_frames, location and has_stack, as the report does for its sites; stats are left as
 * they are. sym may be NULL. Returns 0 or LH_ENOMEM. Release with lh_site_fini. */
int lh_site_symbolize(lh_site_t *site, const lh_trace_t *t, lh_symbolizer_t *sym,
                      lh_err_t *err);
void lh_site_fini(lh_site_t *site);
/* Fills site->grown_by from the replay's growers of site->stack_id. Returns 0 or
 * LH_ENOMEM. */
int lh_site_growers(lh_site_t *site, const lh_trace_t *t, const lh_replay_t *r,
                    lh_symbolizer_t *sym, lh_err_t *err);

/* perl's SV arena slabs grow when live SVs do, whichever line made them: interpreter
 * bookkeeping, not a line to fix. In a trace with Perl frames, moves g's growing sites
 * located there after its other growing sites (a stable partition of the growing ones),
 * for every listing of what grows (report --growth, the report's order, html). sym may be
 * NULL. Returns 0 or an error. */
int lh_growth_arena_last(lh_growth_t *g, const lh_trace_t *t, lh_symbolizer_t *sym,
                         lh_err_t *err);

/* The rank group of a stack with stats s (live figures as reported), given the split (may
 * be NULL). */
lh_site_rank_t lh_site_rank(uint32_t stack_id, const lh_stack_stats_t *s,
                            const struct lh_leak_split *split);
/* The rank group's name in JSON ("leak", "reachable", "reachable_once"). */
const char *lh_site_rank_name(lh_site_rank_t r);

/* Frame classification, by the module's file name. */
int lh_frame_is_agent(const lh_frame_t *f);
int lh_frame_is_runtime(const lh_frame_t *f);
/* Index of the site location among frames, or -1 when n == 0. */
long lh_site_location(const lh_frame_t *frames, size_t n);
/* Index of the innermost Python frame in the user's own code: a file that is neither in
 * the interpreter's library (a directory .../lib/pythonX.Y/ or .../lib64/pythonX.Y/, the
 * stdlib of any prefix: sys.prefix, a venv's, pyenv's, Debian's /usr/lib/python3.11),
 * nor an installed package (.../site-packages/, .../dist-packages/), nor frozen or
 * generated code ("<frozen importlib._bootstrap>", "<string>"). An allocation the stdlib
 * or a framework made (a dict resized inside json, a task made by asyncio) is located
 * where it was made, and this names the user's line that asked for it. With no frame of
 * the user's, the innermost frame of the site module (start-up: a .pth file's import,
 * sitecustomize). -1 when none. Python; for Perl only a location in string-eval'd code
 * (below). */
long lh_site_user_frame(const lh_frame_t *frames, size_t n);
/* Whether a script frame's file is the user's own (the rule of lh_site_user_frame). */
int lh_frame_is_user_code(const lh_frame_t *f);

#endif /* LH_REPORT_H */
