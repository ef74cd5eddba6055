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


# ----------------------------------------------------------------------------------------
# Programs under `leakhound run`, sites read from `report --format json`.

def site_line(prog, tag):
    """The line of the '# SITE:tag' comment in progs/prog."""
    with open(os.path.join(PROGS, prog)) as f:
        for n, text in enumerate(f, 1):
            if "# SITE:" + tag in text:
                return n
    raise KeyError(tag)


def lh(build, *args, cwd=None, env=None):
    return subprocess.run([os.path.join(build, "bin", "leakhound")] + list(args), cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=600)


def traced(build, py, prog, work, extra=()):
    """Runs progs/prog under leakhound; returns (report json, run stderr) or raises."""
    import json
    trace = os.path.join(work, prog + ".lht")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONMALLOC", None)
    r = lh(build, "run", "-o", trace, *extra, "--", py, os.path.join(PROGS, prog), cwd=work,
           env=env)
    if r.returncode != 0:
        raise RuntimeError("run %s: exit %d: %s" % (prog, r.returncode, r.stderr[-1500:]))
    rep = lh(build, "report", trace, "--format", "json", "--top", "0")
    if rep.returncode != 0:
        raise RuntimeError("report %s: %s" % (trace, rep.stderr[-1500:]))
    return json.loads(rep.stdout), r.stderr, trace


def at_line(rep, prog, line):
    """Live blocks, live bytes and sites at progs/prog:line (the site = the Python line)."""
    blocks = nbytes = 0
    sites = []
    for s in rep["sites"]:
        loc = s["location"]
        if (loc.get("language") == "python" and loc.get("line") == line and
                os.path.basename(loc.get("file") or "") == prog):
            blocks += s["leaked_blocks"]
            nbytes += s["leaked_bytes"]
            sites.append(s)
    return blocks, nbytes, sites


def expect_live(rep, prog, tag, blocks, nbytes=None, bytes_at_least=None):
    line = site_line(prog, tag)
    got_b, got_n, _ = at_line(rep, prog, line)
    ok = got_b == blocks and (nbytes is None or got_n == nbytes) and \
        (bytes_at_least is None or got_n >= bytes_at_least)
    what = "%s:%d live at exit: %d blocks, %d bytes" % (prog, line, got_b, got_n)
    want = "%d blocks%s%s" % (blocks, ", %d bytes" % nbytes if nbytes is not None else "",
                              ", >= %d bytes" % bytes_at_least if bytes_at_least else "")
    return ok, what, want


def with_work(fn):
    def run_case(build, py):
        import tempfile
        import shutil
        work = tempfile.mkdtemp(prefix="lh-python-")
        try:
            return fn(build, py, work)
        except RuntimeError as e:
            return fail(str(e))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    run_case.__doc__ = fn.__doc__
    return run_case


def report_checks(checks):
    bad = [(what, want) for ok, what, want in checks if not ok]
    for what, want in bad:
        print("FAIL: %s (expected %s)" % (what, want))
    if not bad:
        for _, what, _ in checks:
            print("ok: " + what)
    return 1 if bad else 0


@with_work
def case_closures(build, py, work):
    """A module-level list of 500 closures, each keeping a bytearray(4000): at the line
    that made them, 1000 live blocks (object + buffer), >= 500 x 4001 bytes."""
    rep, _, _ = traced(build, py, "closures.py", work)
    return report_checks([expect_live(rep, "closures.py", "buffer", 1000,
                                      bytes_at_least=500 * 4001)])


@with_work
def case_cache(build, py, work):
    """A dict cache without eviction, 700 keys: at the line that fills it, the 700 strings
    and the dict's current table: 701 live blocks."""
    rep, _, _ = traced(build, py, "cache.py", work)
    return report_checks([expect_live(rep, "cache.py", "value", 701,
                                      bytes_at_least=700 * 3000)])


@with_work
def case_classattr(build, py, work):
    """300 Connection objects kept by the class attribute Connection.pool: at the line of
    their payload, 300 blocks of bytes(3000) (3033 bytes each: 300 x 3033)."""
    rep, _, _ = traced(build, py, "classattr.py", work)
    return report_checks([expect_live(rep, "classattr.py", "payload", 300, 300 * 3033)])


@with_work
def case_cycles(build, py, work):
    """A loop whose only garbage is reference cycles the collector frees: nothing at its
    line is live at exit, while the module's own lines are (frames were recorded)."""
    rep, _, _ = traced(build, py, "cycles.py", work)
    any_line = sum(s["leaked_blocks"] for s in rep["sites"]
                   if os.path.basename(s["location"].get("file") or "") == "cycles.py")
    return report_checks([expect_live(rep, "cycles.py", "blob", 0, 0),
                          (any_line > 0, "cycles.py has live blocks at other lines: %d"
                           % any_line, "> 0")])


@with_work
def case_cext(build, py, work):
    """A C extension allocating: sqlite3.connect's memory is allocated by libsqlite3 called
    from _sqlite3; the site is the Python line, and its stack shows the extension's C
    frames under that line, without the interpreter's own frames."""
    try:
        subprocess.run([py, "-c", "import sqlite3"], check=True, capture_output=True)
    except subprocess.CalledProcessError:
        print("skip: this python has no _sqlite3")
        return 77
    rep, _, _ = traced(build, py, "cext.py", work)
    line = site_line("cext.py", "connect")
    blocks, _, sites = at_line(rep, "cext.py", line)
    checks = [(blocks > 0, "cext.py:%d live blocks: %d" % (line, blocks), "> 0")]
    shapes = []
    for s in sites:
        fr = s["frames"]
        mods = [os.path.basename(f.get("module") or "") for f in fr]
        funcs = [f.get("function") or "" for f in fr]
        py_at = [i for i, f in enumerate(fr) if f.get("language") == "python"]
        if not py_at:
            continue
        first_py = py_at[0]
        native = mods[:first_py]
        shapes.append((any(m.startswith("libsqlite3") for m in native),
                       any(m.startswith("_sqlite3") for m in native),
                       "_PyEval_EvalFrameDefault" in funcs))
    good = [x for x in shapes if x[0] and x[1] and not x[2]]
    checks.append((bool(good) and all(not x[2] for x in shapes),
                   "sites at cext.py:%d with libsqlite3 and _sqlite3 frames above the Python "
                   "line, no interpreter frame: %d of %d" % (line, len(good), len(shapes)),
                   "at least one, and no interpreter frame in any"))
    return report_checks(checks)


@with_work
def case_mark_function(build, py, work):
    """run --mark-function pyapp.handle: 25 calls (through the module, a table filled at
    import, a method) are 25 marks; each call leaves 3 bytearrays (6 blocks) at its line,
    so the live count there grows by exactly 6 from one mark to the next, plus the one item
    array of the list they are appended to (allocated by the first call, reallocated
    in place of itself at the same line)."""
    import json
    rep, _, trace = traced(build, py, "marks.py", work, extra=["--mark-function",
                                                              "pyapp.handle"])
    r = lh(build, "counts", trace, "--format", "json", "--use", "marks", "--top", "0")
    if r.returncode != 0:
        return fail("counts: " + r.stderr[-800:])
    c = json.loads(r.stdout)
    labels = [b["label"] for b in c["bounds"]]
    line = site_line("pyapp.py", "handle")
    per_mark = [0] * len(labels)
    for g in c["groups"]:
        loc = g["location"]
        if os.path.basename(loc.get("file") or "") == "pyapp.py" and loc.get("line") == line:
            for i, n in enumerate(g["counts"]):
                per_mark[i] += n
    checks = [(labels == ["pyapp.handle"] * 25, "marks: %d labelled %s" % (len(labels),
               sorted(set(labels))), "25 labelled pyapp.handle"),
              (per_mark == [0] + [6 * i + 1 for i in range(1, 25)],
               "live blocks at pyapp.py:%d per mark: %s" % (line, per_mark),
               "0, 7, 13, ... 145"),
              expect_live(rep, "pyapp.py", "handle", 151)]
    return report_checks(checks)


@with_work
def case_stdlib(build, py, work):
    """Real Python no one here wrote, unchanged: `python -m json.tool` on a 1.5 MB file.
    Every Python frame of every site names a file that exists (or a frozen module) and a
    line inside it; json's own code is among the sites."""
    import json
    big = os.path.join(work, "big.json")
    with open(big, "w") as f:
        json.dump([{"id": i, "name": "item%d" % i, "tags": ["a", "b", str(i)],
                    "nested": {"x": i * 0.5, "y": [i, i + 1]}} for i in range(12000)], f)
    trace = os.path.join(work, "jt.lht")
    env = dict(os.environ)
    env.pop("PYTHONMALLOC", None)
    r = lh(build, "run", "-o", trace, "--", py, "-m", "json.tool", big,
           os.path.join(work, "out.json"), cwd=work, env=env)
    if r.returncode != 0:
        return fail("run: exit %d: %s" % (r.returncode, r.stderr[-1500:]))
    rep = lh(build, "report", trace, "--format", "json", "--top", "0")
    if rep.returncode != 0:
        return fail("report: " + rep.stderr[-800:])
    lines_of = {}
    bad = []
    n_frames = 0
    json_sites = 0
    for s in json.loads(rep.stdout)["sites"]:
        for fr in s["frames"]:
            if fr.get("language") != "python":
                continue
            n_frames += 1
            path, line = fr.get("file") or "", fr.get("line") or 0
            if path.startswith("<frozen ") or path == "<string>":
                continue
            if path not in lines_of:
                try:
                    with open(path, "rb") as f:
                        lines_of[path] = f.read().count(b"\n") + 1
                except OSError:
                    lines_of[path] = 0
            if not (1 <= line <= lines_of[path]):
                bad.append("%s:%d" % (path, line))
        loc = s["location"]
        if "/json/" in (loc.get("file") or ""):
            json_sites += 1
    return report_checks([
        (not bad, "python frames naming a missing file or a line outside it: %d %s"
         % (len(bad), sorted(set(bad))[:5]), "none"),
        (n_frames > 0 and json_sites > 0, "python frames: %d, sites in json/: %d"
         % (n_frames, json_sites), "both > 0")])


def case_debug_build(build, _py):
    """A debug build of CPython (Debian python3.11-dbg: Py_DEBUG): one line naming it,
    native frames only, the program's own output unchanged."""
    py = "/usr/bin/python3.11-dbg"
    if not os.access(py, os.X_OK):
        print("skip: %s is not installed (Debian python3.11-dbg)" % py)
        return 77
    probe = os.path.join(build, "lib", "liblh_pyprobe.so")
    env = dict(os.environ, LD_PRELOAD=probe, LEAKHOUND_PYMALLOC="keep")
    r = subprocess.run([py, "-c", "import os; os.getppid(); print('done')"], env=env,
                       capture_output=True, text=True, timeout=120)
    ver = subprocess.run([py, "-c", "import platform; print(platform.python_version())"],
                         capture_output=True, text=True).stdout.strip()
    want = ["py: native %s python %s is a debug build (Py_DEBUG): recording native frames "
            "only" % (ver, ver), "--"]
    if r.returncode != 0 or r.stdout != "done\n" or r.stderr.splitlines() != want:
        return fail("exit %d, stdout %r, stderr %r (expected %r)" % (r.returncode, r.stdout,
                                                                     r.stderr, want))
    print("ok: " + want[0])
    return 0


@with_work
def case_paths(build, py, work):
    """One line allocating through several paths in CPython (dict, keys table, strings,
    list, its items): one site at that line, holding what the --native sites at that line
    (one per path) add up to; and no two sites with Python frames show the same stack."""
    import json
    rep, _, trace = traced(build, py, "paths.py", work)
    nat = lh(build, "report", trace, "--format", "json", "--top", "0", "--native")
    if nat.returncode != 0:
        raise RuntimeError("report --native %s: %s" % (trace, nat.stderr[-1500:]))
    line = site_line("paths.py", "store")
    blocks, nbytes, sites = at_line(rep, "paths.py", line)
    n_blocks, n_bytes, n_sites = at_line(json.loads(nat.stdout), "paths.py", line)
    seen = {}
    for s in rep["sites"]:
        if any(f.get("language") for f in s["frames"]):
            key = json.dumps([[f.get(k) for k in ("function", "file", "line", "module",
                                                   "inlined", "language")] +
                              [None if f.get("function") and f.get("file") else f.get("offset")]
                              for f in s["frames"]])
            seen.setdefault(key, []).append(s["stack_id"])
    dup = [v for v in seen.values() if len(v) > 1]
    return report_checks([
        (len(n_sites) >= 3, "--native: %d sites at paths.py:%d" % (len(n_sites), line),
         ">= 3 (the paths through CPython)"),
        (len(sites) == 1, "%d site at paths.py:%d" % (len(sites), line), "1"),
        ((blocks, nbytes) == (n_blocks, n_bytes) and blocks >= 400,
         "its %d blocks, %d bytes" % (blocks, nbytes),
         "the --native sites' sum: %d blocks, %d bytes" % (n_blocks, n_bytes)),
        (not dup, "sites with Python frames and the same displayed stack: %s" % dup[:3],
         "none")])


CASES = {"debug_build": case_debug_build, "stdlib": case_stdlib, "frames": case_frames, "old_version": case_old_version, "closures": case_closures,
         "cache": case_cache, "classattr": case_classattr, "cycles": case_cycles,
         "cext": case_cext, "mark_function": case_mark_function,
         "paths": case_paths}


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
    if a.case not in ("old_version", "debug_build"):
        py = find_python(a.python)
        if not py:
            print("skip: no python %s here" % a.python)
            return 77
    return CASES[a.case](os.path.abspath(a.build), py)


if __name__ == "__main__":
    sys.exit(main())
