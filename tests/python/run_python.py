#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""Python frames end to end (issue 13), one case per process, on one CPython.

  run_python.py --build BUILD --case CASE [--python VERSION]

VERSION is "debian" (/usr/bin/python3.11) or a minor version ("3.12": the newest pyenv
install of it). Exit 0 = pass, 1 = fail (with the difference), 77 = that Python is absent.
"""
import argparse
import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROGS = os.path.join(HERE, "progs")


def find_python(version):
    """The interpreter binary itself (never a shim), or None."""
    if version == "debian":
        p = "/usr/bin/python3.11"
        return p if os.access(p, os.X_OK) else None
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found = sorted(glob.glob(os.path.join(root, "versions", version + ".*", "bin",
                                          "python" + version)),
                   key=lambda p: [int(x) for x in p.split("/versions/")[1].split("/")[0]
                                  .split(".") if x.isdigit()])
    return found[-1] if found else None


def fail(msg):
    print("FAIL: " + msg)
    return 1


def case_frames(build, py):
    """Every Python frame the reader returns, at nine points (functions, methods, a
    comprehension and a lambda, a generator, a coroutine, a non-ASCII name, 40-deep
    recursion, a second thread, exec), equals sys._getframe's view of the same frames."""
    probe = os.path.join(build, "lib", "liblh_pyprobe.so")
    env = dict(os.environ, LD_PRELOAD=probe, PYTHONDONTWRITEBYTECODE="1",
               LEAKHOUND_PYMALLOC="keep")
    r = subprocess.run([py, os.path.join(PROGS, "frames.py")], env=env,
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return fail("exit %d: %s" % (r.returncode, r.stderr[-2000:]))
    err = r.stderr.splitlines()
    if not err or not err[0].startswith("py: recorded "):
        return fail("reader did not start: %r" % err[:1])
    got = err[1:]
    want = r.stdout.splitlines()
    if want.count("--") != 9:
        return fail("the program made %d probes, not 9" % want.count("--"))
    if got != want:
        import difflib
        return fail("reader differs from sys._getframe:\n" +
                    "\n".join(difflib.unified_diff(want, got, "python", "reader",
                                                   lineterm="")))
    print("ok: %d frames at 9 probes equal" % (len(want) - 9))
    return 0


def case_old_version(build, _py):
    """A CPython the table does not describe (pyenv 3.7, 3.6, 2.7): one line naming the
    version, native frames only, the program's own output unchanged."""
    probe = os.path.join(build, "lib", "liblh_pyprobe.so")
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    olds = []
    for v in ("3.7", "3.6", "2.7"):
        found = glob.glob(os.path.join(root, "versions", v + ".*", "bin", "python" + v))
        if found:
            olds.append((v, sorted(found)[-1]))
    if not olds:
        print("skip: no CPython older than 3.8 here")
        return 77
    for v, py in olds:
        env = dict(os.environ, LD_PRELOAD=probe, LEAKHOUND_PYMALLOC="keep")
        r = subprocess.run([py, "-c", "import os; os.getppid(); print('done')"], env=env,
                           capture_output=True, text=True, timeout=60)
        want = ("py: native %s python %s is not known to this leakhound (3.8 to 3.13 are): "
                "recording native frames only" % (v, v))
        lines = r.stderr.splitlines()
        if r.returncode != 0 or r.stdout != "done\n" or lines != [want, "--"]:
            return fail("%s: exit %d, stdout %r, stderr %r" % (py, r.returncode, r.stdout,
                                                               r.stderr))
    print("ok: %s" % ", ".join(v for v, _ in olds))
    return 0


CASES = {"frames": case_frames, "old_version": case_old_version}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--case")
    ap.add_argument("--python", default="debian")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        print("\n".join(CASES))
        return 0
    if a.case not in CASES:
        print("unknown case %r" % a.case)
        return 2
    py = None
    if a.case != "old_version":
        py = find_python(a.python)
        if not py:
            print("skip: no python %s here" % a.python)
            return 77
    return CASES[a.case](os.path.abspath(a.build), py)


if __name__ == "__main__":
    sys.exit(main())
