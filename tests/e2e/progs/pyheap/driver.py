# leakhound - SPDX-License-Identifier: MIT
"""Runs one heap case of run_pyheap.py under the agent: imports the case module (so its
globals are named `<case>.<name>`), takes the snapshots the case asks for through the
agent's lh_snapshot (ctypes), and prints what the test needs to know as `key value` lines
(object addresses are id()s: a PyObject's address in CPython).

Before each snapshot it runs the collector (unless the case wants pending garbage), then
counts the objects the collector tracks by type name, as gc.get_objects() sees them, and
writes them to <out>.<label>.counts ("name count" lines): the oracle of the 1% check,
taken in the same process just before the snapshot. (No json: its encoder's closures are
reference cycles, garbage the snapshot would see.) With closure=True it also writes
<out>.<label>.reached: the same count over everything gc.get_referents() reaches from those
objects, the untracked ones included (str, int, code, a dict of atomic values), the oracle
for the types the collector does not always track.

Usage: python driver.py CASE OUT_PREFIX [CASE_DIR]"""
import ctypes
import gc
import importlib
import sys

_snap = ctypes.CDLL(None).lh_snapshot
_snap.argtypes = [ctypes.c_char_p]


def by_type(objs):
    counts = {}
    for o in objs:
        n = type(o).__name__
        counts[n] = counts.get(n, 0) + 1
    return "".join("%s %d\n" % kv for kv in counts.items())


def type_fields():
    """The offsets of tp_flags, and of tp_mro, tp_bases and tp_dict, in this CPython's
    PyTypeObject, found by looking for their values in a class of ours (no table of
    offsets here)."""
    class Probe:
        pass
    want = {id(Probe.__mro__), id(Probe.__bases__), id(gc.get_referents(Probe.__dict__)[0])}
    words = (ctypes.c_ulong * 64).from_address(id(Probe))
    flags = [i * 8 for i in range(3, 64) if words[i] == Probe.__flags__][0]
    return flags, [i * 8 for i in range(64) if words[i] in want]


TP_FLAGS, TYPE_FIELDS = type_fields()
HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE


def is_static_type(o):
    """A type that is not a heap type, read from its struct: an attribute of a static
    type not made ready yet (3.8-3.11: one in _testcapi) would make it ready, creating
    its dict and descriptors after gc.get_objects() was counted."""
    return isinstance(o, type) and not ctypes.c_ulong.from_address(id(o) + TP_FLAGS).value & HEAPTYPE


def static_type_refs(t):
    """What a static type's own fields hold (its __mro__, __bases__, and dict where the
    type struct has one: 3.12+ keeps a builtin type's dict in the interpreter): the
    collector never visits them (a static type is not one of its objects, so
    gc.get_referents() of it is empty), but they are heap objects the snapshot finds."""
    out = []
    for off in TYPE_FIELDS:
        a = ctypes.c_void_p.from_address(id(t) + off).value
        if a:
            out.append(ctypes.cast(a, ctypes.py_object).value)
    return out


def reached(objs):
    """Every object gc.get_referents() reaches from objs, objs included (by id), and what
    static types hold (static_type_refs)."""
    seen = {id(o): o for o in objs}
    todo = list(objs)
    while todo:
        o = todo.pop()
        refs = gc.get_referents(o)
        if is_static_type(o):
            refs += static_type_refs(o)
        for r in refs:
            if id(r) not in seen:
                seen[id(r)] = r
                todo.append(r)
    return seen.values()


def snapshot(label, collect=True, closure=False):
    if collect:
        gc.collect()
    text = by_type(gc.get_objects())
    more = by_type(reached(gc.get_objects())) if closure else None
    with open("%s.%s.counts" % (sys.argv[2], label), "w") as f:
        f.write(text)
    if more is not None:
        with open("%s.%s.reached" % (sys.argv[2], label), "w") as f:
            f.write(more)
    _snap(label.encode())


def say(key, value):
    print(key, value, flush=True)


sys.path.insert(0, sys.argv[3] if len(sys.argv) > 3 else ".")
case = importlib.import_module(sys.argv[1])
case.main(snapshot, say)
