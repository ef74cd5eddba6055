/* leakhound - SPDX-License-Identifier: MIT
 *
 * pyheap.h: the CPython heap of a snapshot, decoded offline from the process's memory
 * (procimage.h: the snapshot's pages in contents mode `full`, the modules' files). No
 * interpreter code runs: the decoder finds _PyRuntime by symbol in the python executable
 * or libpython, checks the version (Py_Version, else the module's name) against the
 * per-version layouts of pyoffsets.h, and reads:
 *
 *   - every interpreter, its thread states and their live frames;
 *   - every object on the collector's generation lists (GC-tracked objects) and, through
 *     the references of the types it knows (dict, list, tuple, set, function, cell, bound
 *     method, module, type, collections.deque (its chain of blocks; known by its name),
 *     instances of user classes: __dict__, managed values, slots,
 *     the frames of generators, coroutines and frame objects that are not running),
 *     the objects they reach that the collector does not track (str, int, bytes, ...),
 *     and, conservatively, the words of a C module's state and of the C fields of types
 *     it does not know (static or heap: _sre.Pattern, an Exception's args);
 *   - references with their Python meaning as edge labels: "['key']", "[('10.0.0.7', 443)]"
 *     (dict: a key of str, int or a small tuple of them as Python writes it), "[3]"
 *     (list, tuple), ".name" (attribute, slot, function and type fields), "{}" (set),
 *     ".cr_frame.f_locals['buf']" (a suspended coroutine's local; 3.8-3.10: ".cr_frame"
 *     to its frame object, then ".f_locals['buf']"), ".f_stack[0]" (its value stack);
 *   - roots named as a Python developer names them: module globals ("app._handlers", one
 *     root per global), class attributes ("app.Connection.pool"), frame locals
 *     ("handle() local 'buf'"), sys.modules and the interpreter's dicts, C statics (a word
 *     of a module's data holding an object: "C static <symbol> (<module>)"), and, last,
 *     objects whose reference count is higher than the references found to them
 *     ("referenced from C": held by C code or a C stack).
 *
 * The edges a module dict holds to its globals (and a class dict to its attributes) are
 * the root edges of those globals: they are not repeated as object edges, so a global
 * retains what only it reaches.
 *
 * Unreachable ("garbage"): the collector's own rule, offline: for the tracked objects,
 * references counted from other tracked objects (through the references the decoder knows
 * as the type's tp_traverse visits them) are subtracted from the reference counts; what a
 * remaining count, a named root or an unknown type's fields do not reach is a cycle the
 * collector will free at its next run: garbage, not a leak (unless the collector is off:
 * gc.disable() or gc.set_threshold(0), then it is never freed; lh_pyheap_t.collector).
 * Types the decoder does not
 * know (C extension types) keep what they point to alive (their fields are scanned
 * conservatively for known objects; such edges are labelled "+0x18" and never subtracted).
 *
 * Memory: ~48 bytes per object plus 8 per edge and the labels (interned). Not thread-safe.
 */
#ifndef LH_PYHEAP_H
#define LH_PYHEAP_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "procimage.h"
#include "pyoffsets.h"

enum lh_pyobj_flags {
    LH_PYOBJ_GC = 1,       /* on a collector generation list */
    LH_PYOBJ_GARBAGE = 2,  /* in (or only reached from) a cycle the collector will free */
    LH_PYOBJ_CREF = 4,     /* its reference count exceeds the references found to it */
    LH_PYOBJ_FROZEN = 8,   /* on the permanent generation (gc.freeze(); not in
                              gc.get_objects()) */
};

/* Whether automatic collection runs in the snapshot's (main) interpreter: when it does
 * not, the unreachable cycles are never freed (unless the program calls gc.collect()):
 * they are the leak, not garbage on its way out. */
enum lh_pycollector {
    LH_PYGC_RUNS = 0,
    LH_PYGC_DISABLED = 1,  /* gc.disable(): the state's `enabled` is 0 */
    LH_PYGC_THRESHOLD0 = 2 /* gc.set_threshold(0): generation 0's threshold is 0 */
};

typedef struct lh_pyobj {
    uint64_t addr;         /* the PyObject (after the GC header for tracked types) */
    uint64_t size;         /* struct + items + GC header + owned buffers (list items, dict
                              keys and values, set table) */
    uint64_t refcnt;
    uint64_t buf[2];       /* buffers it owns (0: none): a list's items, a dict's keys
                              and values, a set's table */
    uint32_t type;         /* index into types[] */
    uint32_t flags;        /* lh_pyobj_flags */
} lh_pyobj_t;

typedef struct lh_pytype {
    uint64_t addr;
    char *name;            /* tp_name: "dict", "function", "Connection" */
    char *module;          /* a heap type's __module__ ("app"), or NULL */
    uint32_t obj;          /* the type's own object index, or UINT32_MAX */
} lh_pytype_t;

/* How an edge was found; the collector's rule subtracts COUNTED and NAMESPACE edges. */
enum lh_pyedge_kind {
    LH_PYEDGE_SCANNED = 0,   /* a word of a type the decoder does not know ("+0x18") */
    LH_PYEDGE_COUNTED = 1,   /* a reference the type's tp_traverse visits */
    LH_PYEDGE_NAMESPACE = 2, /* a module's or class's dict -> a global / class attribute
                                (the value also has a GLOBAL or CLASSATTR root) */
    LH_PYEDGE_WEAK = 3,      /* a weak reference's referent: does not keep it alive */
    LH_PYEDGE_NAME = 4,      /* a field tp_traverse does not visit (a class's __name__) */
};

enum lh_pyroot_kind {
    LH_PYROOT_GLOBAL = 1,  /* a module global: "app._handlers" */
    LH_PYROOT_CLASSATTR,   /* a class attribute: "app.Connection.pool" */
    LH_PYROOT_LOCAL,       /* a frame's local: "handle() local 'buf'" */
    LH_PYROOT_INTERP,      /* sys.modules, the sys and builtins dicts */
    LH_PYROOT_CSTATIC,     /* a C global or static of a module */
    LH_PYROOT_CREF,        /* referenced from C (unexplained reference counts) */
};

typedef struct lh_pyroot {
    uint8_t kind;          /* lh_pyroot_kind */
    char *name;
    uint32_t obj;          /* the object it holds */
} lh_pyroot_t;

typedef struct lh_pyheap {
    char version[32];      /* "3.11" */
    const lh_pyoffsets_t *off;
    lh_pyobj_t *objs;      /* sorted by address */
    uint32_t n_objs;
    lh_pytype_t *types;
    uint32_t n_types;
    /* edges in CSR form: objects i's are [eoff[i], eoff[i+1]) */
    uint64_t *eoff;
    uint32_t *edst;
    uint32_t *elabel;      /* index into labels[] */
    uint8_t *ecount;       /* lh_pyedge_kind */
    uint64_t n_edges;
    char **labels;
    uint32_t n_labels;
    lh_pyroot_t *roots;
    uint32_t n_roots;
    char warning[256];     /* a partial decode: what was skipped ("" when none) */
    uint8_t collector;     /* lh_pycollector: whether the collector ever frees garbage */
} lh_pyheap_t;

/* Decodes the CPython heap in pi. Returns 0 (*out set; release with lh_pyheap_free);
 * LH_ENOENT when the process has no CPython (no _PyRuntime symbol); LH_EVERSION with the
 * one line to show ("python 3.14 is not known to this leakhound: native view only") for an
 * unknown version or a debug or free-threaded build; LH_EFORMAT when the interpreter state
 * cannot be read; LH_ENOMEM. */
typedef struct lh_pyheap_opts {
    /* Names the C variable holding a word of a module's data ("state", "cache") and its
     * extent [*start, *start + *size), or returns NULL; used for C-static roots. */
    const char *(*data_symbol)(void *ctx, uint64_t addr, uint64_t *start, uint64_t *size);
    void *ctx;
    const lh_snapfile_t *sf; /* the regions: which words are module data */
    int no_labels;           /* the caller reads no edge label: every edge gets labels[0],
                                "" (the dict keys, attribute and member names are not read
                                for them); the objects, edges and roots are the same */
} lh_pyheap_opts_t;

int lh_pyheap_decode(lh_procimage_t *pi, const lh_pyheap_opts_t *opts, lh_pyheap_t **out,
                     lh_err_t *err);
void lh_pyheap_free(lh_pyheap_t *ph);

/* A short description of an object into buf: "function <lambda> (app.py:31)", "list",
 * "str 'abc'", "Connection". */
const char *lh_pyheap_describe(lh_procimage_t *pi, const lh_pyheap_t *ph, uint32_t obj,
                               char *buf, size_t len);

#endif /* LH_PYHEAP_H */
