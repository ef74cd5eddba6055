# leakhound - SPDX-License-Identifier: MIT
"""Marks and snapshots from Python code, for programs run under leakhound.

    import leakhound
    leakhound.mark("request")      # an iteration boundary: growth is reported per mark
    leakhound.snapshot("warm")     # a heap snapshot the analyzer can compare with others

The functions call the agent's C API (lh_mark, lh_snapshot: include/leakhound.h) through
the process's global symbol namespace, where LD_PRELOAD put them. Without the agent (or
without ctypes) they do nothing and cost one check: a program may keep its calls in
production. `leakhound run` puts this directory on PYTHONPATH.

mark_function("app.handle") makes every call of that function a mark (what
`leakhound run --mark-function app.handle` does).
"""

import os
import sys

__all__ = ["active", "mark", "snapshot", "mark_function"]

_mark = None
_snapshot = None


def _bind():
    global _mark, _snapshot
    try:
        import ctypes
        process = ctypes.CDLL(None)
        mark_fn = process.lh_mark
        snapshot_fn = process.lh_snapshot
    except (ImportError, OSError, AttributeError):
        return
    for fn in (mark_fn, snapshot_fn):
        fn.argtypes = [ctypes.c_char_p]
        fn.restype = None
    _mark, _snapshot = mark_fn, snapshot_fn


_bind()


def active():
    """True when the leakhound agent is loaded in this process."""
    return _mark is not None


def _label(label):
    return str(label).encode("utf-8", "replace")[:255]


def mark(label="mark"):
    """An iteration or request boundary (lh_mark)."""
    if _mark is not None:
        _mark(_label(label))


def snapshot(label="snapshot"):
    """A heap snapshot at this point (lh_snapshot)."""
    if _snapshot is not None:
        _snapshot(_label(label))


# ----------------------------------------------------------------------------------------
# mark_function: each call of a named function is a mark.
#
# The name is the function's module and qualified name ("app.handle",
# "app.Handler.handle"); for the main script, its file name stands for "__main__"
# (`python3 app.py`: "app.handle" or "__main__.handle"). Every call counts, whatever
# reference it goes through (a route table filled at import, a bound method), because the
# call itself is observed, not an attribute replaced:
# - CPython 3.12+: sys.monitoring PY_START. The callback returns DISABLE for every other
#   code object, so after their first call they cost nothing more.
# - Before 3.12: a profile function (sys.setprofile, threading.setprofile) seeing "call"
#   events; every call of every function pays for it, so use it on workloads where that is
#   acceptable. A generator's resumption is not a call.

_targets = {}  # full name -> label
_decided = {}  # code object -> label or None (profile path)


def _names(code, module_name, filename):
    qual = getattr(code, "co_qualname", code.co_name)
    yield module_name + "." + qual
    if module_name == "__main__" and filename:
        stem = os.path.splitext(os.path.basename(filename))[0]
        yield stem + "." + qual
    # Before 3.11 a code object knows only its own name: match the last component.
    if not hasattr(code, "co_qualname"):
        for full in list(_targets):
            if full.rsplit(".", 1)[-1] == code.co_name and full.startswith(module_name + "."):
                yield full
            if (module_name == "__main__" and filename and
                    full.startswith(os.path.splitext(os.path.basename(filename))[0] + ".") and
                    full.rsplit(".", 1)[-1] == code.co_name):
                yield full


def _match(code, frame_globals):
    module_name = frame_globals.get("__name__", "") if frame_globals is not None else ""
    for name in _names(code, module_name, code.co_filename):
        if name in _targets:
            return _targets[name]
    return None


def _install_monitoring():
    mon = sys.monitoring
    tool = None
    for t in (mon.PROFILER_ID, 4, 3):  # 4, 3: ids free for tools without a fixed role
        if mon.get_tool(t) is None:
            tool = t
            break
    if tool is None:
        return False
    mon.use_tool_id(tool, "leakhound")

    def on_start(code, offset):
        label = _match(code, sys._getframe(1).f_globals)
        if label is None:
            return mon.DISABLE
        mark(label)
        return None

    mon.register_callback(tool, mon.events.PY_START, on_start)
    mon.set_events(tool, mon.events.PY_START)
    return True


_GENERATOR_FLAGS = 0x20 | 0x80 | 0x200  # CO_GENERATOR, CO_COROUTINE, CO_ASYNC_GENERATOR


def _install_profile():
    import threading

    def on_event(frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        try:
            label = _decided[code]
        except KeyError:
            label = _decided[code] = _match(code, frame.f_globals)
        if label is None:
            return
        if code.co_flags & _GENERATOR_FLAGS and frame.f_lasti > 0:
            return  # a resumption
        mark(label)

    sys.setprofile(on_event)
    threading.setprofile(on_event)
    return True


def mark_function(*names):
    """Every later call of each named function is a mark labelled with its name."""
    if not active():
        return
    first = not _targets
    for name in names:
        name = name.strip()
        if name:
            _targets[name] = name
    _decided.clear()
    if first and _targets:
        if hasattr(sys, "monitoring"):
            _install_monitoring() or _install_profile()
        else:
            _install_profile()


def _from_environment():
    spec = os.environ.get("LEAKHOUND_MARK_FUNCTION", "")
    if spec:
        mark_function(*spec.split(","))
