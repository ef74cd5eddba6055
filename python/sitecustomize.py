# leakhound - SPDX-License-Identifier: MIT
"""Put on PYTHONPATH by `leakhound run`: applies the run's Python options (the functions of
--mark-function) in every Python the run starts, then runs the sitecustomize this one hides
(Debian's, a virtualenv's, the user's), if any, as Python would have.

It imports nothing the interpreter has not loaded already unless --mark-function asks for
the leakhound module (which needs ctypes): the heap a leak hunt looks at must be the
program's, not 24 more modules (ctypes, importlib.util, functools, ...) of ours."""


def _leakhound_setup():
    import os
    import sys
    # Both are loaded before site runs: the import system itself, frozen into CPython.
    import _frozen_importlib
    import _frozen_importlib_external
    here = os.path.dirname(os.path.abspath(__file__))
    if os.environ.get("LEAKHOUND_MARK_FUNCTION"):
        try:
            import leakhound
            leakhound._from_environment()
        except Exception as e:  # never break the program for a tracing aid
            sys.stderr.write("<lh>: leakhound module: %s\n" % e)
    # The next sitecustomize on the path, after this directory.
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = _frozen_importlib_external.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = _frozen_importlib.module_from_spec(spec)
        sys.modules["sitecustomize"] = module
        spec.loader.exec_module(module)


_leakhound_setup()
del _leakhound_setup
