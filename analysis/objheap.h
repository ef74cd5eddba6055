/* leakhound - SPDX-License-Identifier: MIT
 *
 * objheap.h: the language object heap of a snapshot: the objects of a Perl or Python
 * interpreter (SVs, PyObjects) decoded OFFLINE from the snapshot's contents, as one generic
 * labelled graph that the shell's commands (count --by type, largest, identify, roots,
 * diff, unreachable) use the same way for every language. Issues 12 and 13.
 *
 * Where it comes from. A heap snapshot (heapgraph.h) holds the live native blocks and, in
 * contents mode `full`, the bytes of the heap and of the modules' data/bss. A language
 * decoder (objheap_perl.c, objheap_python.c) locates its interpreter through a module
 * symbol (PL_curinterp in libperl, _PyRuntime in libpython or the executable) read with
 * lh_objheap_symbol(), reads interpreter memory with lh_objheap_read() (never anything of
 * the target: no interpreter code runs, in the target or in its snapshot child), walks the
 * object space (perl: the SV arena chain; CPython: the GC lists and what they reach) using
 * struct layouts compiled from the headers found at build time, and fills the graph with
 * the builder calls below. A decoder checks the interpreter's version in the snapshot
 * against the one it was built for; a mismatch is not an error but a one-line `note`
 * ("perl 5.38.2 in the snapshot, this leakhound decodes 5.36.0: native view only") and no
 * objects.
 *
 * Nodes. Index space of the graph, as in refgraph.h:
 *   [0, n_objs)                    the objects, sorted by address;
 *   [n_objs, n_objs + n_ext)       native blocks that objects point to without owning them
 *                                  (an XS module's struct behind an IV, a C extension's
 *                                  buffer), and the native blocks only those reach: they
 *                                  "hang under" their object;
 *   [n_objs + n_ext, .. + n_roots) the interpreter's roots (below);
 *   the last one                   refgraph's virtual super-root.
 * An object's size_bytes is what freeing it alone would return: its head, its body and the
 * buffers it owns (a PV's string buffer, an array's element vector, a hash's bucket array,
 * entries and unshared keys, a dict's table, a list's item vector). The native malloc blocks
 * behind those (whole blocks, or a share of an arena) are listed per object (own_*), so the
 * native view can tell "part of the Perl heap" from "lost".
 *
 * Types. Every object has a kind: the language's base type ("SCALAR(PV)", "SCALAR(IV)",
 * "REF", "ARRAY", "HASH", "CODE", "GLOB", "IO", "REGEXP", "FORMAT", "INVLIST", "LVALUE",
 * "OBJECT"; CPython: the type's tp_name, "dict", "list", "function") and may have a class:
 * the blessed package (perl) or, for instances of classes defined in Python, the class's
 * qualified name. lh_objheap_type() is the class when set, else the kind: the table of
 * Devel::Gladiator / Devel::Leak::Object / objgraph.
 *
 * Edges (holder -> held), each with a kind and a label:
 *   LH_OBJEDGE_ELEM     `[3]`        array / list / tuple element (label: the index)
 *   LH_OBJEDGE_KEY      `{key}`      hash value under key (perl), dict value ['key'] (py)
 *   LH_OBJEDGE_REF      `->`         the referent of a reference (perl RV)
 *   LH_OBJEDGE_PAD      `my $x`      a sub's (or the main program's) lexical, by name
 *   LH_OBJEDGE_GLOB     `{HASH}`     a glob's slot: SCALAR ARRAY HASH CODE IO FORM EGV
 *   LH_OBJEDGE_CAPTURE  `$x`         a closure's captured variable (perl: the closure's own
 *                                    pad entry outside its sub's; py: a cell of __closure__)
 *   LH_OBJEDGE_MAGIC    `magic 'P'`  a magic's object (tied, backrefs, ext/XS magic)
 *   LH_OBJEDGE_ATTR     `.attr`      an attribute (py __dict__ entry or slot, perl: unused)
 *   LH_OBJEDGE_INTERNAL `stash`      interpreter structure: "stash", "padlist", "outside",
 *                                    "sv of HE", "ob_type", ... (label says which)
 *   LH_OBJEDGE_NATIVE   `native`     an object (or an ext block) -> a native block it does
 *                                    not own
 *   LH_OBJEDGE_XS       `XS struct`  perl: a blessed string whose buffer is an XS module's C
 *                                    struct -> an SV the struct holds (an EV watcher's
 *                                    callback), shown as " -> XS struct -> CODE"
 * LH_OBJEDGE_WEAK on an edge marks a reference that does not keep its target alive (a
 * weakened RV, GvSTASH, CvOUTSIDE of a closure prototype, a weakref): shown by `identify`,
 * left out of reachability, dominators and retained sizes.
 *
 * Roots and names. The graph's roots are what the interpreter itself holds: perl's symbol
 * table (PL_defstash), the main program's CV and pad, the argument stack, the mortals (tmps
 * stack), the interpreter's own SVs (PL_strtab, PL_sv_undef and friends); CPython's module
 * table (sys.modules), frames, thread states. Package variables and lexicals are NOT roots
 * of their own, or the symbol table's path would stop dominating them: they are reached
 * through stash -> glob -> slot and pad -> entry edges, and carry a NAME as Devel::MAT
 * names them: `%MyApp::SESSION_CACHE`, `$main::LOG`, `&MyApp::handle`, `*MyApp::x` (the
 * glob), `my @queue in main`, `my %seen in MyApp::handle`; CPython: `app._handlers`,
 * `frame of handle() local 'buf'`. The shell's `roots` ranks named objects (and the real
 * roots) by retained size, and `identify` starts a path at the nearest name:
 *   %MyApp::SESSION_CACHE{"5f3a"} -> HASH -> {rendered} -> SCALAR(PV)
 *
 * Analyses: the graph is a refgraph (n_blocks = n_objs + n_ext, LH_EDGE_INTERIOR never
 * set): classification (reachable; "definitely"/"indirectly lost" here mean: no path from
 * any root, i.e. reference cycles nothing reaches, with refgraph's clique leaders), the
 * dominator tree and retained sizes.
 *
 * Memory: per object 40 bytes (lh_obj_t) plus refgraph's 13 bytes per node and 8 bytes per
 * edge, plus 24 bytes per stored labelled edge and the interned strings (one copy of each
 * distinct hash key, pad name, class). Not thread-safe; immutable after lh_objheap_open.
 */
#ifndef LH_OBJHEAP_H
#define LH_OBJHEAP_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "heapgraph.h"
#include "refgraph.h"

/* Same values as format.h's LH_LANG_* of script frames. */
enum lh_objlang {
    LH_OBJLANG_NONE = 0,
    LH_OBJLANG_PERL = 1,
    LH_OBJLANG_PYTHON = 2,
};

enum lh_objedge_kind {
    LH_OBJEDGE_ELEM = 1,
    LH_OBJEDGE_KEY = 2,
    LH_OBJEDGE_REF = 3,
    LH_OBJEDGE_PAD = 4,
    LH_OBJEDGE_GLOB = 5,
    LH_OBJEDGE_CAPTURE = 6,
    LH_OBJEDGE_MAGIC = 7,
    LH_OBJEDGE_ATTR = 8,
    LH_OBJEDGE_INTERNAL = 9,
    LH_OBJEDGE_NATIVE = 10,
    LH_OBJEDGE_XS = 11,
};
#define LH_OBJEDGE_WEAK 0x01u /* lh_objedge_t.flags */

enum lh_objname_kind {
    LH_OBJNAME_GLOBAL = 1,  /* a package variable, a module global */
    LH_OBJNAME_LEXICAL = 2, /* a pad entry of a sub or of the main program, a frame local */
};

enum lh_objroot_kind {
    LH_OBJROOT_SYMTAB = 1,  /* the symbol table / module table */
    LH_OBJROOT_MAIN = 2,    /* the main program's code and its lexicals */
    LH_OBJROOT_STACK = 3,   /* the argument stack, frames being executed */
    LH_OBJROOT_MORTAL = 4,  /* temporaries awaiting the end of the statement */
    LH_OBJROOT_INTERP = 5,  /* other interpreter-held objects */
    LH_OBJROOT_HELD = 6,    /* held by what the decoder does not read (a reference count
                               higher than the references found): a path's last resort */
};

/* lh_objheap_t.blk_owner[] values besides an object index. */
#define LH_OBJOWN_NONE UINT32_MAX    /* not part of the language heap */
#define LH_OBJOWN_ARENA (UINT32_MAX - 1) /* an arena / interpreter structure: shared storage,
                                           alive as long as the interpreter */

typedef struct lh_obj {
    uint64_t addr;       /* the object's address (SV head, PyObject *) */
    uint64_t size_bytes; /* head + body + owned buffers */
    uint32_t kind;       /* strs index: "HASH", "SCALAR(PV)", "dict" */
    uint32_t cls;        /* strs index: blessed package / Python class; 0: none */
    uint32_t name;       /* strs index of its first name (names[]); 0: unnamed */
    uint32_t stack_id;   /* allocation stack of its first owned block (0: none): the line
                            that created it when the trace records script frames */
    uint32_t detail;     /* strs index: what the object is, shown where a path passes it
                            ("function on_error (app.py:11)"); 0: none */
} lh_obj_t;

typedef struct lh_objedge {
    uint32_t dst;        /* node index (object or ext) */
    uint8_t kind;        /* lh_objedge_kind */
    uint8_t flags;       /* LH_OBJEDGE_WEAK */
    uint16_t pad_;
    uint64_t label;      /* ELEM: the index; others: strs index (0: no label) */
} lh_objedge_t;

typedef struct lh_objname {
    uint32_t node;
    uint8_t kind;        /* lh_objname_kind */
    uint32_t name;       /* strs index */
} lh_objname_t;

typedef struct lh_objroot {
    uint8_t kind;        /* lh_objroot_kind */
    uint32_t name;       /* strs index: "the symbol table", "the main program", ... */
    uint64_t first, n;   /* its targets: root_dst[first .. first + n) (node indices) */
} lh_objroot_t;

typedef struct lh_objheap {
    lh_heapgraph_t *hg;  /* borrowed: the snapshot it was decoded from */
    uint8_t lang;        /* lh_objlang; NONE: no interpreter found (n_objs == 0) */
    char version[32];    /* interpreter version found in the snapshot ("5.36.0") */
    char note[512];      /* one line for the user when decoding stopped short, else "" */
    int needs_full;      /* the note is that the snapshot lacks full contents (the CLI
                            says which option records them) */
    uint8_t claim_only;  /* opened for lh_objheap_claim alone (lh_objheap_open_for) */
    uint8_t collector_off; /* python: why the collector never frees the unreachable
                              cycles, so they are the leak (pyheap.h's lh_pycollector: 1
                              gc.disable(), 2 gc.set_threshold(0)); 0: it runs, or perl */

    lh_obj_t *objs;      /* n_objs, sorted by addr */
    uint32_t n_objs;
    uint32_t *ext;       /* n_ext: heapgraph block index of ext node n_objs + i */
    uint32_t n_ext;
    uint64_t *node_size; /* n_objs + n_ext: sizes for the refgraph */

    uint64_t *eoff;      /* n_objs + n_ext + 1: edges of v are edges[eoff[v] .. eoff[v+1]) */
    lh_objedge_t *edges;
    uint64_t n_edges;

    lh_objroot_t *roots; /* node n_objs + n_ext + i is roots[i] */
    uint32_t n_roots;
    uint32_t *root_dst;

    lh_objname_t *names; /* sorted by node */
    size_t n_names;

    uint64_t *own_off;   /* n_objs + 1: own_blk[own_off[v] .. own_off[v+1]) */
    uint32_t *own_blk;   /* heapgraph block indices owned by object v */
    uint32_t *blk_owner; /* hg->n_blocks: object index, LH_OBJOWN_ARENA or LH_OBJOWN_NONE */

    char **strs;         /* interned strings; strs[0] = "" */
    uint32_t n_strs;

    lh_refgraph_t g;     /* classified, with dominators and retained sizes */
    uint64_t n_unreachable, unreachable_bytes; /* objects no root reaches */

    void *build_;        /* builder state (NULL after lh_objheap_open returns) */
} lh_objheap_t;

/* ---------------------------------------------------------------------------------------
 * Users (the shell)
 * ------------------------------------------------------------------------------------- */

/* Decodes the language heap of hg's current snapshot: tries each decoder (perl, python) on
 * the snapshot's modules. Returns 0 with *out set (release with lh_objheap_free); when no
 * interpreter is found, or its version/build is not the one this leakhound decodes, or the
 * snapshot's contents are not `full`, *out is still set with lang/note telling why and no
 * objects (the caller shows the note and stays in the native view). Returns LH_ENOMEM, or
 * LH_EFORMAT when interpreter memory is inconsistent beyond what a decoder skips (a
 * message names the snapshot file and the address). hg must outlive *out. */
int lh_objheap_open(lh_heapgraph_t *hg, lh_objheap_t **out, lh_err_t *err);

/* What a caller reads of the heap (lh_objheap_open_for). LH_OBJHEAP_CLAIM: only what
 * lh_objheap_claim needs (the objects, which blocks they own, their strong edges and
 * roots, which nodes are reachable): a decoder may leave out edge labels and kinds (weak
 * edges stay weak), the objects' kinds, classes, details and names and the roots' names,
 * and no dominators are computed. The report's leak summary reads nothing else; on
 * python3 the labels alone (dict keys as Python writes them, attribute names) were a
 * third of the decoding. */
enum lh_objheap_what {
    LH_OBJHEAP_ALL = 0,
    LH_OBJHEAP_CLAIM = 1,
};
/* lh_objheap_open for what (lh_objheap_what). */
int lh_objheap_open_for(lh_heapgraph_t *hg, int what, lh_objheap_t **out, lh_err_t *err);
void lh_objheap_free(lh_objheap_t *oh);

/* The native view of a language heap: the malloc blocks that make up the objects (an
 * SV's string buffer, a hash's buckets, SV and body arenas, the interpreter struct) are not
 * leaks of their own. Reclassifies them in oh->hg (g.cls, class_blocks, class_bytes): a
 * block owned by a reachable object, interpreter storage (LH_OBJOWN_ARENA), and every
 * block those reach through the block graph (interior pointers too: op slabs, pad names,
 * regex programs, an XS struct) unless it belongs to an unreachable object, become "still
 * reachable"; the blocks of unreachable objects keep their class. Returns the number of
 * blocks reclassified (0 also when out of memory). Idempotent. */
uint32_t lh_objheap_claim(lh_objheap_t *oh);

/* The object at or containing addr (its head: [addr, addr + head size) is not tracked, so
 * only the exact start), or LH_NODE_NONE. */
uint32_t lh_objheap_find(const lh_objheap_t *oh, uint64_t addr);
/* The class when set, else the kind ("MyApp::Session", "HASH"); ext nodes: the native
 * block's type (heapgraph). */
const char *lh_objheap_type(const lh_objheap_t *oh, uint32_t node);
/* A node as "HASH 0x55d0c0a012a0" / "%MyApp::CACHE (HASH 0x...)" / a root's name. */
const char *lh_objheap_node_name(const lh_objheap_t *oh, uint32_t node, char *buf,
                                 size_t len);
/* An edge's label in the language's syntax: `{"5f3a"}`, `[3]`, `->`, `my $x`, `{HASH}`,
 * `.attr`, `['key']`, `closure $x`, `magic 'P'`. */
const char *lh_objheap_edge_label(const lh_objheap_t *oh, const lh_objedge_t *e, char *buf,
                                  size_t len);
/* The names of node v: names[*first .. *first + count). Returns the count. */
size_t lh_objheap_names(const lh_objheap_t *oh, uint32_t v, size_t *first);

/* A shortest path from a named object or a root to v, following strong edges only (one
 * from a LH_OBJROOT_HELD root only when no other exists: `my $dbh` says more than "held
 * outside Perl data" about a DBI handle its 6000 statement handles also hold from C):
 * *start is the named object or the root node, path[0..n) the edges taken (pointers into
 * oh->edges), at most max: a longer path keeps its first max / 2 edges and its last ones,
 * with one NULL between them for the hops left out. Returns n (0 when v itself is named or a root), or -1 when
 * nothing reaches v (an unreachable cycle), or LH_ENOMEM. */
int lh_objheap_path(const lh_objheap_t *oh, uint32_t v, uint32_t *start,
                    const lh_objedge_t **path, size_t max);

/* Every nearest holder of v, shortest path first: the named objects and roots that a search
 * backwards from v along strong edges reaches without passing another name (as
 * lh_objheap_path, whose first holder this is; a LH_OBJROOT_HELD root only when there is
 * no other). What `identify` shows when more than one variable keeps v alive (an
 * IO::Async loop held by `my $loop` and by $IO::Async::Loop::ONE_TRUE_LOOP): undefining
 * one of them frees nothing. Calls fn(arg, start, path, n) for each of the first limit
 * holders (path: the scratch array, max edges, valid during the call; n = 0 when v itself
 * is named or a root: its one holder, or, when its names are all frame variables
 * (LH_OBJNAME_LEXICAL) and limit > 1, its first, then the holders a search from v finds
 * past the frame's own reference: what keeps it alive once the frame returns). Returns how many were found (at most limit), -1
 * when nothing reaches v, or LH_ENOMEM. */
typedef void lh_objheap_holder_fn(void *arg, uint32_t start, const lh_objedge_t *const *path,
                                  int n);
int lh_objheap_holders(const lh_objheap_t *oh, uint32_t v, size_t limit,
                       const lh_objedge_t **path, size_t max, lh_objheap_holder_fn *fn,
                       void *arg);

/* What a plain scalar object v holds, for `show`: a string quoted with its length, an
 * integer, a number (perl; Devel::MAT's `show` prints them). Returns 1 with buf set, 0 when
 * v is no such object (an aggregate, a reference, undef, a Python object). */
int lh_objheap_value(const lh_objheap_t *oh, uint32_t v, char *buf, size_t len);

/* A shortest reference cycle through v, following strong edges: path[0..n) the edges from
 * v back to v (path[0] leaves v, path[n - 1] arrives at it), written up to max. What keeps
 * an unreachable object alive (`identify`): a Perl closure stored on the object it
 * captures, a parent and child that refer to each other. Returns n, -1 when v is on no
 * cycle, or LH_ENOMEM. */
int lh_objheap_cycle(const lh_objheap_t *oh, uint32_t v, const lh_objedge_t **path,
                     size_t max);

/* The native bytes that hang under each object: ext nodes (native blocks no object owns:
 * a numpy array's data, an lxml document's libxml2 tree, an XS module's struct) whose
 * nearest dominator that is not an ext node is that object, so that freeing the object is
 * what frees them. out[v] for v < n_objs (calloc'd; the caller frees it); *total (may be
 * NULL): all ext bytes, those under no object (held from a root or by several objects'
 * common holder that is a root) included. Needs oh->g's dominators. Returns 0 or
 * LH_ENOMEM. */
int lh_objheap_native_under(const lh_objheap_t *oh, uint64_t **out, uint64_t *total);

/* ---------------------------------------------------------------------------------------
 * Decoders (objheap_perl.c, objheap_python.c): reading the snapshot, filling the graph
 * ------------------------------------------------------------------------------------- */

/* Copies len bytes of the target's memory at addr from the snapshot's pages. Returns 0, or
 * -1 when any byte is not in the snapshot (not captured, not mode full). */
int lh_objheap_read(const lh_objheap_t *oh, uint64_t addr, void *dst, size_t len);
/* The run-time address of symbol names[k] (a data or function symbol, .symtab or .dynsym)
 * in the first module whose path's basename starts with module_prefix ("libperl.so", ""
 * for any), for the first k of the n_names that a module defines (lh_datasym_find: one
 * pass over the symbol tables). Returns that k (*addr set), or -1 when none is found. */
int lh_objheap_symbol(const lh_objheap_t *oh, const char *module_prefix,
                      const char *const *names, int n_names, uint64_t *addr);

/* Adds an object; kind and cls are copied (cls may be NULL). Returns its builder index
 * (>= 0; valid for the calls below, objects are renumbered by address at the end), or
 * LH_ENOMEM. Adding the same address twice is LH_EINVAL. */
int64_t lh_objheap_add(lh_objheap_t *oh, uint64_t addr, uint64_t size_bytes, const char *kind,
                       const char *cls);
/* An edge from object src (builder index) to whatever is at dst_addr, resolved at the end:
 * an object starting there, else a live native block containing it (kind becomes NATIVE
 * unless the block is owned by an object, then the edge goes to its owner), else dropped.
 * label_str is copied (may be NULL); for ELEM label_idx is the index. */
int lh_objheap_add_edge(lh_objheap_t *oh, int64_t src, uint64_t dst_addr, int kind, int flags,
                        const char *label_str, uint64_t label_idx);
/* A name for an object (builder index). */
int lh_objheap_add_name(lh_objheap_t *oh, int64_t obj, int kind, const char *name);
/* What object obj (builder index) is, for paths: a Python function's name and line
 * ("function on_error (app.py:11)"). Copied. Returns 0, LH_EINVAL, LH_ENOMEM. */
int lh_objheap_set_detail(lh_objheap_t *oh, int64_t obj, const char *detail);
/* A root holding the object at dst_addr (roots with the same kind and name are merged). */
int lh_objheap_add_root(lh_objheap_t *oh, int kind, const char *name, uint64_t dst_addr);
/* Object obj (builder index) owns the native block containing addr (its buffer); obj -1:
 * interpreter storage (LH_OBJOWN_ARENA: SV arenas, body arenas, the interpreter struct).
 * Unknown addresses (not in a live block) are ignored: bodies may live in arenas. */
int lh_objheap_own(lh_objheap_t *oh, int64_t obj, uint64_t addr);

/* The builder without a decoder (tests, and decoders run by hand): lh_objheap_begin makes
 * an empty heap of language lang over hg for the calls above (release with
 * lh_objheap_free); lh_objheap_end resolves it as lh_objheap_open does at its end (nodes by
 * address, edges, names, roots, ownership, the refgraph). Returns 0 or LH_ENOMEM. */
int lh_objheap_begin(lh_heapgraph_t *hg, int lang, lh_objheap_t **out, lh_err_t *err);
int lh_objheap_end(lh_objheap_t *oh, lh_err_t *err);

/* Decoder entry points, called by lh_objheap_open in turn. Each returns 1 when it found its
 * interpreter (and filled oh, or set oh->note), 0 when the snapshot has none, or LH_E*. */
int lh_objheap_perl_decode(lh_objheap_t *oh, lh_err_t *err);
int lh_objheap_python_decode(lh_objheap_t *oh, lh_err_t *err);
/* lh_objheap_value of the perl scalar at addr. */
int lh_objheap_perl_value(const lh_objheap_t *oh, uint64_t addr, char *buf, size_t len);

#endif /* LH_OBJHEAP_H */
