/* leakhound - SPDX-License-Identifier: MIT
 *
 * heapgraph.h: "why is it still alive": one heap snapshot of a trace with its reference
 * graph. Opening it reads the trace once (the live set at the chosen SNAPSHOT record:
 * address, size, stack, time, lh_tag type; a snapshot chosen by label needs the list of
 * snapshots first, and a second read) and then the snapshot's contents file (.lhs,
 * snapfile.h). A caller that reads the trace for more than the graph runs the graph as a
 * consumer of its own pass instead (lh_heapgraph_begin). Then:
 *
 *   - maps every pointer word to its holder: the live block containing the word, or a root
 *     (module data/bss: the global variable it falls in, by symbol; a thread's stack), and
 *     its target: the live block containing the value (its start: a strong edge; inside
 *     it: an interior edge). Words in heap memory outside every live block (freed memory,
 *     allocator metadata) are ignored, and so is a block's last word when it runs past the
 *     size asked for (the chunk's slack: stale bytes; Valgrind reads only whole words);
 *   - builds the reference graph (refgraph.h), classifies the blocks as Valgrind does and
 *     computes the dominator tree and retained sizes;
 *   - types the blocks: lh_tag name, else the C++ class of a vtable pointer in the first
 *     word, else (left to callers) the allocating function.
 *
 * Interior-pointer heuristics (Valgrind's, on by default as there; opts.heuristics): an
 * interior pointer that matches one of these shapes counts as a start pointer, so the
 * block is reachable rather than possibly lost:
 *   stdstring            24 bytes into a block whose first words are a length <= a capacity,
 *                        with capacity + 25 <= size (libstdc++'s reference-counted string);
 *   length64             8 bytes into a block whose first 8 bytes hold its size - 8
 *                        (sqlite3MemMalloc);
 *   newarray             8 bytes into a block whose first word is a count n > 0 of elements
 *                        of equal size: n divides size - 8 (new[] of objects with
 *                        destructors);
 *   multipleinheritance  8-byte aligned, inside a block whose first word and the word
 *                        pointed at are both vtable pointers (a second base class).
 * The words read are the block's pointer words and the WORDS records of the contents file.
 *
 * Default snapshot: the exit snapshot (the last one taken at exit) if any, else the last.
 * A snapshot without contents (mode none, or a missing file) still gives the live set:
 * has_graph is 0, no_graph_why says what is missing and no_graph_code why (the CLI, which
 * owns the option names, adds how to capture it).
 *
 * Memory per live block: 32 bytes of block data, 8 of retained size, 4 of idom, 1 of
 * class, plus the CSR edges (8 bytes per edge with the reverse index) and the words kept
 * (16 bytes each: those held by a live block or a root). Not thread-safe.
 */
#ifndef LH_HEAPGRAPH_H
#define LH_HEAPGRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "datasym.h"
#include "err.h"
#include "refgraph.h"
#include "report.h"
#include "snapfile.h"
#include "stream.h"
#include "symbolize.h"
#include "trace.h"

/* One SNAPSHOT record of the trace. */
typedef struct lh_snapinfo {
    uint64_t number;       /* the agent's snapshot number (0: not recorded) */
    char *label;
    uint8_t trigger;       /* LH_SNAP_* */
    uint8_t mode;          /* LH_CONTENTS_* (none when the record has no contents file) */
    uint64_t ts_ns;
    uint64_t pause_ns;
    char *file;            /* contents file name (in the trace's directory), or NULL */
    uint64_t live_blocks, live_bytes; /* the trace's live set at that time */
} lh_snapinfo_t;

typedef struct lh_hblock {
    uint64_t addr, size, ts_ns;
    uint32_t stack_id;
    uint32_t type;         /* index into types[] (0: none) */
} lh_hblock_t;

enum lh_root_kind {
    LH_ROOT_DATA = 1,      /* a global or static variable (or unnamed module data) */
    LH_ROOT_STACK = 2,     /* a thread's stack */
    LH_ROOT_TLS = 3,       /* a thread's TLS, descriptor, DTV or specific data */
    LH_ROOT_MAPPED = 4,    /* memory the program mapped itself (mmap), where no block lies */
};

typedef struct lh_hroot {
    uint8_t kind;          /* lh_root_kind */
    char *name;            /* "g_emitter", "[stack of thread 1234 'worker']",
                              "[tls of thread 1234]", "[specific data of thread 1234]",
                              "[mmap 0x7f0c2a400000]" */
    char *file;            /* declaration file of a variable, or NULL */
    char *module;          /* the module's path (data roots), or NULL */
    uint64_t start;        /* symbol or region start */
} lh_hroot_t;

enum lh_heuristic {
    LH_HEUR_STDSTRING = 1,
    LH_HEUR_LENGTH64 = 2,
    LH_HEUR_NEWARRAY = 4,
    LH_HEUR_MULTIPLEINHERITANCE = 8,
    LH_HEUR_ALL = 15,
    LH_HEUR_NONE = 0x100, /* in lh_heapgraph_opts_t: none (0 there is the default, all) */
};

/* Why a snapshot has no graph. */
typedef enum lh_graph_why {
    LH_GRAPH_BUILT = 0,
    LH_GRAPH_NO_CONTENTS,  /* recorded without contents (mode none, or no file) */
    LH_GRAPH_UNREADABLE,   /* the contents file is truncated, corrupt or missing */
    LH_GRAPH_NOT_ASKED,    /* the caller asked for the live set only (opts.no_graph) */
} lh_graph_why_t;

typedef struct lh_heapgraph {
    char *trace_path;
    lh_trace_t *trace;     /* read to its end: module and stack tables complete */
    int trace_borrowed;    /* 1: the caller's pass owns it (lh_heapgraph_finish) */
    struct lh_hgpass *pass; /* the capture's state, until lh_heapgraph_finish */
    int no_graph;          /* opts.no_graph */
    lh_snapfile_ahead_t *ahead; /* the exit snapshot's contents, guessed, read meanwhile */
    lh_snapinfo_t *snaps;
    size_t n_snaps;
    size_t cur;            /* the chosen snapshot */
    uint64_t epoch;        /* module epoch at the snapshot */
    uint64_t attach_how;   /* the trace's INFO_ATTACH (trace.h); also kept in the index */

    lh_hblock_t *blocks;   /* the live set at the snapshot, by address */
    uint32_t n_blocks;
    uint64_t live_bytes;
    char **types;          /* interned type names; types[0] unused */
    uint32_t n_types;
    size_t cap_types;

    int has_graph;
    char no_graph_why[600];
    lh_graph_why_t no_graph_code; /* the reason, for the caller's advice (which option
                                     records contents is the CLI's to say) */
    lh_snapfile_t sf;      /* words: only those held by a live block or a root */
    lh_hroot_t *roots;     /* node n_blocks + i is roots[i] */
    uint32_t n_roots;
    size_t cap_roots;
    uint64_t *root_woff;   /* n_roots + 1: root_words[root_woff[i] ..] are root i's words */
    uint32_t *root_words;  /* indices into sf.words */
    lh_refgraph_t g;
    uint64_t class_blocks[LH_CLASS_COUNT], class_bytes[LH_CLASS_COUNT];
    uint64_t n_words_ignored; /* words looked at and dropped: outside the live blocks and roots */
    unsigned heuristics;   /* LH_HEUR_* bits in use */
    uint8_t *via_heur;     /* per block: heuristics that accepted a pointer into it */
    uint8_t *start_ref;    /* per block: 1 when a start pointer refers to it */
    uint64_t heur_blocks[4], heur_bytes[4]; /* reachable only via each heuristic (by bit) */

    lh_symbolizer_t *sym;
    lh_datasym_t *ds;
    lh_site_t **sites;     /* symbolized sites by stack id, on demand */
    size_t n_sites;
    char **fn_labels;      /* by stack id, on demand: a nameless location's module+offset */
    size_t n_fn_labels;
} lh_heapgraph_t;

typedef struct lh_heapgraph_opts {
    const char *snapshot;  /* a spec (boundary.h; a bare "3" is "#3", the 3rd snapshot of
                              the trace); NULL: the default */
    long index;            /* >= 0: the snapshot at this index (0-based), overrides
                              snapshot; -1: not given; LH_HG_EXIT_CONTENTS: the last exit
                              snapshot recorded with contents, none when there is none */
    int salvage;           /* accept a truncated trace (lh_trace_opts_t.salvage) */
    int no_graph;          /* the live set and the snapshot list only */
    unsigned heuristics;   /* LH_HEUR_* bits, LH_HEUR_NONE, or 0: the default (all) */
} lh_heapgraph_opts_t;

#define LH_HG_EXIT_CONTENTS (-2)

/* Opens the trace at path and builds the graph of one snapshot. Returns 0 (*out set,
 * release with lh_heapgraph_free), or LH_E* with a one-line message: the trace's errors,
 * LH_EINVAL for a trace without snapshots or an unknown snapshot selector, the contents
 * file's errors (a truncated or corrupt .lhs is an error naming the file, not a silently
 * smaller graph). */
int lh_heapgraph_open(const char *path, const lh_heapgraph_opts_t *opts, lh_heapgraph_t **out,
                      lh_err_t *err);
void lh_heapgraph_free(lh_heapgraph_t *hg);
/* The raw pages of the snapshot's contents (mode full) into hg->sf.pages when hg has none
 * (a graph loaded from its index keeps only the pointer words), for what reads the
 * target's bytes afterwards (lh_objheap_read: `show` printing a string). Returns 0 (also
 * when the snapshot has no full contents) or LH_E* with err set. */
int lh_heapgraph_load_pages(lh_heapgraph_t *hg, lh_err_t *err);

/* The graph as a consumer of a pass the caller runs (stream.h), so that a command reads the
 * trace once: lh_heapgraph_begin (opts.snapshot is not read here: it needs the whole list;
 * opts.index or the exit snapshot), the consumer in the pass, then, when
 * lh_heapgraph_captured says the snapshot was met, lh_heapgraph_finish with the pass's
 * trace (borrowed: it must outlive hg) builds what lh_heapgraph_open does. Release with
 * lh_heapgraph_free in every case. Errors as lh_heapgraph_open's. */
int lh_heapgraph_begin(const char *path, const lh_heapgraph_opts_t *opts, lh_heapgraph_t **out,
                       lh_err_t *err);
lh_consumer_t lh_heapgraph_consumer(lh_heapgraph_t *hg);
int lh_heapgraph_captured(const lh_heapgraph_t *hg);
int lh_heapgraph_finish(lh_heapgraph_t *hg, lh_trace_t *t, lh_err_t *err);

/* Resolves a snapshot selector against the snapshot list by boundary.h's one rule (for_to:
 * as an end or a single point), a bare number N taken as "#N" when no snapshot is labelled
 * N: returns its index, or -1. */
long lh_heapgraph_find_snapshot(const lh_snapinfo_t *snaps, size_t n, const char *sel,
                                int for_to);

/* The live block containing addr (start or inside; a zero-size block only at its start),
 * or LH_NODE_NONE. */
uint32_t lh_heapgraph_block_at(const lh_heapgraph_t *hg, uint64_t addr);

/* The symbolized site of a stack id (cached; never NULL, frames may be empty on error). */
const lh_site_t *lh_heapgraph_site(lh_heapgraph_t *hg, uint32_t stack_id);
/* The site's location as "function (file:line)" or what is known, into buf. */
const char *lh_heapgraph_site_str(lh_heapgraph_t *hg, uint32_t stack_id, char *buf,
                                  size_t len);
/* The site's function (a location without a name, in a program without symbols: its
 * module and offset, "git+0x2898c6"; "?" without memory), or, when its stack has none, what
 * is known of the block: stack 0
 * (no stack recorded) is "(before the agent started)" under `run`, "(before leakhound
 * attached)" after `attach`, "(no stack)" in a `snapshot -p` (no agent ever ran); another
 * stack without a location "(stack not recorded)". */
const char *lh_heapgraph_site_function(lh_heapgraph_t *hg, uint32_t stack_id);
/* A block's type: its tag or vtable class, else its allocating function. */
const char *lh_heapgraph_type(lh_heapgraph_t *hg, uint32_t block);
/* The name of a node (a block's "0x... (type)", a root's name) into buf. */
const char *lh_heapgraph_node_name(lh_heapgraph_t *hg, uint32_t node, char *buf, size_t len);

/* Parses a heuristics list: "all", "none" or a comma-separated list of names into *out
 * (LH_HEUR_* bits, LH_HEUR_NONE for none). Returns 0, or LH_EINVAL naming the bad word. */
int lh_heuristics_parse(const char *s, unsigned *out, lh_err_t *err);
/* The name of one heuristic bit ("stdstring", ...), or "?". */
const char *lh_heuristic_name(unsigned bit);
/* The heuristic in use (one LH_HEUR_* bit) that accepts value, a pointer inside block, as
 * a reference to it; 0 when none does. */
unsigned lh_heapgraph_heuristic(const lh_heapgraph_t *hg, uint32_t block, uint64_t value);

/* The pointer words inside a block: sf.words[*first .. *first + count), by address.
 * Returns the count. (A root's words: root_words[root_woff[r] .. root_woff[r + 1]).) */
size_t lh_heapgraph_block_words(const lh_heapgraph_t *hg, uint32_t block, size_t *first);

#endif /* LH_HEAPGRAPH_H */
