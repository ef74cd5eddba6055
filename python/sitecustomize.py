# leakhound - SPDX-License-Identifier: MIT
"""Put on PYTHONPATH by `leakhound run`: applies the run's Python options (the functions of
--mark-function) in every Python the run starts, then runs the sitecustomize this one hides
(Debian's, a virtualenv's, the user's), if any, as Python would have."""


def _leakhound_setup():
    import os
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        import leakhound
        leakhound._from_environment()
    except Exception as e:  # never break the program for a tracing aid
        sys.stderr.write("<lh>: leakhound module: %s\n" % e)
    # The next sitecustomize on the path, after this directory.
    import importlib.machinery
    import importlib.util
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        sys.modules["sitecustomize"] = module
        spec.loader.exec_module(module)


_leakhound_setup()
del _leakhound_setup
