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
import re
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
def case_modules(build, py, work):
    """`leakhound run` loads nothing into a Python program that does not ask for it: the
    modules a program sees at its start are the ones it sees without leakhound (our
    sitecustomize aside, where the interpreter has none of its own). The leakhound module
    and what it imports (ctypes, importlib.util, functools: 24 modules) came with every
    run."""
    code = "import sys; print(' '.join(sorted(sys.modules)))"
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    bare = subprocess.run([py, "-c", code], cwd=work, env=env, capture_output=True,
                          text=True, timeout=120)
    r = lh(build, "run", "-o", os.path.join(work, "m.lht"), "--", py, "-c", code, cwd=work,
           env=env)
    if bare.returncode != 0 or r.returncode != 0:
        return fail("python -c: %s %s" % (bare.stderr[-400:], r.stderr[-400:]))
    want = set(bare.stdout.split()) | {"sitecustomize"}
    got = set(r.stdout.split()) | {"sitecustomize"}
    return report_checks([(got == want, "modules loaded under leakhound run: %d more (%s), "
                           "%d fewer" % (len(got - want), " ".join(sorted(got - want)[:30]),
                                         len(want - got)), "the same as without it")])


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
def case_userframe(build, py, work):
    """Allocations the stdlib makes for the program (json.loads' documents, json.dumps'
    strings): each site is located in json, where they were made, and names the user's
    own frame beside it (report.h, lh_site_user_frame): the JSON field user_frame is the
    innermost frame of userframe.py in every such site; the text report prints it, and
    ranks the 2000 documents first (a Python program's sites rank by bytes)."""
    rep, _, trace = traced(build, py, "userframe.py", work)
    loads, dumps = site_line("userframe.py", "loads"), site_line("userframe.py", "dumps")
    fn = "__main__.%s" if minor_of(py) >= 11 else "%s"  # (co_qualname: 3.11+)
    checks, in_json = [], {loads: [0, 0], dumps: [0, 0]}
    for s in rep["sites"]:
        mine = [f for f in s["frames"] if f.get("language") == "python" and
                os.path.basename(f.get("file") or "") == "userframe.py"]
        if not mine:
            continue
        uf, loc = s.get("user_frame"), s["location"]
        want = {k: mine[0].get(k) for k in ("function", "file", "line")}
        got = {k: (uf or {}).get(k) for k in want}
        if got != want:
            checks.append((False, "site %d: user_frame %s" % (s["stack_id"], got), want))
        if "/json/" in (loc.get("file") or "") and mine[0]["line"] in in_json:
            in_json[mine[0]["line"]][0] += s["leaked_blocks"]
            in_json[mine[0]["line"]][1] = max(in_json[mine[0]["line"]][1], s["leaked_bytes"])
    checks.append((not checks, "every site with a frame of userframe.py names its innermost "
                   "one as user_frame", "all"))
    # 2000 documents: each one's body string is one block of >= 5000 bytes, made in json
    # (the decoder's scanstring, under json/decoder.py's raw_decode)
    checks.append((in_json[loads][0] >= 2000 and in_json[loads][1] >= 2000 * 5000,
                   "live blocks in json's sites called from userframe.py:%d: %d, the largest "
                   "site %d bytes" % (loads, in_json[loads][0], in_json[loads][1]),
                   ">= 2000 blocks, a site >= 10000000 bytes"))
    checks.append((in_json[dumps][0] >= 2000, "live blocks in json's sites called from "
                   "userframe.py:%d: %d" % (dumps, in_json[dumps][0]), ">= 2000"))
    # The first site: a Python program's sites rank by bytes (report.h), not with the few
    # "possibly lost" words of the interpreter's start-up first.
    text = lh(build, "report", trace, "--top", "3").stdout
    pat = (r"#1: [\d.]+ MiB \(\d+ bytes\) leaked in 2000 blocks, 2000 allocations, at "
           r"\S+/json/decoder\.py:\d+ \(called from \S*userframe\.py:%d in %s\) "
           r"\[site \d+\]" % (loads, re.escape(fn % "handle")))
    head = [l for l in text.splitlines() if l.startswith("#1: ")]
    checks.append((len(head) == 1 and re.fullmatch(pat, head[0]) is not None,
                   "report's first site: %s" % head, pat))
    checks.append(("still reachable at exit" not in text and
                   "(lost blocks first)" not in text, "the text report: no groups",
                   "no group heading"))
    return report_checks(checks)


@with_work
def case_stripped(build, py, work):
    """A stripped native library (stripped_ext.c: strip --strip-all, as distributions ship
    C extensions) allocating in a static function, called through ctypes: the site is the
    Python line; under it the static function is named "<static 0xSTART after NAME>",
    START being the function's address in the unstripped build's .symtab (the oracle) and
    NAME the nearest exported function below it (nm -D), and the exported caller by its
    .dynsym name. Before: "stripped_ext.so+0x1139"."""
    so_full = os.path.join(work, "stripped_ext_full.so")
    so = os.path.join(work, "stripped_ext.so")
    src = os.path.join(PROGS, "stripped_ext.c")
    for cmd in (["cc", "-O0", "-shared", "-fPIC", "-o", so_full, src],
                ["strip", "--strip-all", "-o", so, so_full]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return fail("%s: %s" % (" ".join(cmd), r.stderr[-800:]))
    syms = {}
    for l in subprocess.run(["nm", so_full], capture_output=True, text=True).stdout.splitlines():
        p = l.split()
        if len(p) == 3 and p[1] in "Tt":
            syms[p[2]] = int(p[0], 16)
    dyn = subprocess.run(["nm", "-D", "--defined-only", so], capture_output=True,
                         text=True).stdout
    exported = sorted((int(p[0], 16), p[2]) for p in (l.split() for l in dyn.splitlines())
                      if len(p) == 3 and p[1] == "T")
    start = syms["make_record"]
    below = [n for a, n in exported if a <= start][-1]
    want_static = "<static 0x%x after %s>" % (start, below)
    import json
    trace = os.path.join(work, "stripped.lht")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    r = lh(build, "run", "-o", trace, "--", py, os.path.join(PROGS, "stripped.py"), so,
           cwd=work, env=env)
    if r.returncode != 0:
        return fail("run: %s" % r.stderr[-800:])
    rep = json.loads(lh(build, "report", trace, "--format", "json", "--top", "0").stdout)
    line = site_line("stripped.py", "fill")
    _, _, sites = at_line(rep, "stripped.py", line)
    # (the line's other sites: the ints the calls return, the list's growth)
    sites = [s for s in sites if any(os.path.basename(f.get("module") or "") ==
                                     "stripped_ext.so" for f in s["frames"])]
    blocks = sum(s["leaked_blocks"] for s in sites)
    checks = [(blocks == 200, "stripped.py:%d live blocks made in the library: %d"
               % (line, blocks), 200)]
    shapes = []
    for s in sites:
        fr = s["frames"]
        first_py = [i for i, f in enumerate(fr) if f.get("language") == "python"][0]
        ours = [f.get("function") for f in fr[:first_py]
                if os.path.basename(f.get("module") or "") == "stripped_ext.so"]
        shapes.append((ours, fr[first_py]["line"]))
    want = [([want_static, "lh_ext_fill"], line)]
    checks.append((shapes == want, "the library's frames above the Python line: %s"
                   % shapes, want))
    text = lh(build, "report", trace).stdout
    checks.append(("    at %s (in stripped_ext.so)\n" % want_static in text,
                   "text report names the static function", want_static))
    return report_checks(checks)


def minor_of(py):
    m = re.search(r"python3\.(\d+)$", py)
    return int(m.group(1)) if m else 11


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


def python_frames(sites, functions):
    """(function, file, line) of every Python frame of every site (report json) and of
    every Python function of `report --by function --metric allocated` (all that
    allocated, freed or not; a function's row names its first frame's line)."""
    out = [(fr.get("function") or "", fr.get("file") or "", fr.get("line") or 0)
           for s in sites for fr in s["frames"] if fr.get("language") == "python"]
    out += [(f["function"], f["file"], f["line"]) for f in functions
            if not f.get("module") and (f.get("file") or "").endswith(".py")]
    return out


def frame_checks(frames, sites, want_file, want_funcs):
    """Every Python frame names a file that exists (or a frozen module), a line inside it,
    and a function whose own name (the last part of the qualified name) is defined in that
    file (`def NAME`, `async def`, `class NAME`) unless it is a module body, lambda or
    comprehension. want_file: in some site's location; want_funcs: each of these
    qualified names allocated."""
    texts = {}
    bad_line, bad_name = [], []
    named = 0
    funcs = set()
    for func, path, line in frames:
        funcs.add(func)
        if path.startswith("<frozen ") or path == "<string>":
            continue
        if path not in texts:
            try:
                with open(path, "rb") as f:
                    texts[path] = f.read().decode("utf-8", "replace")
            except OSError:
                texts[path] = None
        text = texts[path]
        if text is None or not 1 <= line <= text.count("\n") + 1:
            bad_line.append("%s:%d" % (path, line))
            continue
        name = func.rsplit(".", 1)[-1]
        if name.startswith("<") or not name:
            continue
        if not re.search(r"^\s*(async\s+def|def|class)\s+%s\b" % re.escape(name), text,
                         re.M):
            bad_name.append("%s in %s" % (func, path))
        else:
            named += 1
    at_file = sum(want_file in (s["location"].get("file") or "") for s in sites)
    missing = [f for f in want_funcs if f not in funcs]
    return [
        (not bad_line, "python frames naming a missing file or a line outside it: %d %s"
         % (len(bad_line), sorted(set(bad_line))[:5]), "none"),
        (not bad_name and named > 0, "python frames whose function is not defined in their "
         "file: %d %s (defined: %d)" % (len(bad_name), sorted(set(bad_name))[:5], named),
         "none (and some defined)"),
        (len(frames) > 0 and at_file > 0, "python frames: %d, sites at %s: %d"
         % (len(frames), want_file, at_file), "both > 0"),
        (not missing, "functions that allocated, missing: %s" % missing, "none of %s"
         % want_funcs)]


def minor(py):
    """3.X's X, from the interpreter's file name (python3.X)."""
    return int(re.search(r"3\.(\d+)$", py).group(1))


def reports(build, trace):
    """The sites of `report --format json` and the functions of `report --by function
    --metric allocated --format json`."""
    import json
    rep = lh(build, "report", trace, "--format", "json", "--top", "0")
    fns = lh(build, "report", trace, "--by", "function", "--metric", "allocated", "--format",
             "json", "--top", "0")
    if rep.returncode or fns.returncode:
        raise RuntimeError("report %s: %s %s" % (trace, rep.stderr[-500:], fns.stderr[-500:]))
    return json.loads(rep.stdout)["sites"], json.loads(fns.stdout)["functions"]


def traced_cmd(build, work, name, argv):
    """leakhound run -o work/name.lht -- argv (pymalloc left to the agent); returns the
    run's CompletedProcess, the sites and the functions (reports)."""
    trace = os.path.join(work, name + ".lht")
    env = dict(os.environ)
    env.pop("PYTHONMALLOC", None)
    r = lh(build, "run", "-o", trace, "--", *argv, cwd=work, env=env)
    if r.returncode != 0:
        raise RuntimeError("run %s: exit %d: %s" % (name, r.returncode, r.stderr[-1500:]))
    return (r,) + reports(build, trace)


@with_work
def case_stdlib(build, py, work):
    """Real Python no one here wrote, unchanged: `python -m json.tool` on a 1.5 MB file.
    Every Python frame of every site names a file that exists (or a frozen module), a line
    inside it and a function defined there; json's own code is among the sites."""
    import json
    big = os.path.join(work, "big.json")
    with open(big, "w") as f:
        json.dump([{"id": i, "name": "item%d" % i, "tags": ["a", "b", str(i)],
                    "nested": {"x": i * 0.5, "y": [i, i + 1]}} for i in range(12000)], f)
    _, sites, fns = traced_cmd(build, work, "jt", [py, "-m", "json.tool", big,
                                                   os.path.join(work, "out.json")])
    want = ["json.decoder.JSONDecoder.raw_decode" if minor(py) >= 11 else "raw_decode"]
    return report_checks(frame_checks(python_frames(sites, fns), sites, "/json/",
                                      want))


# test.test_json modules run by case_unittest (not test_tool: it starts subprocesses)
JSON_TESTS = ["test_decode", "test_dump", "test_fail", "test_recursion", "test_scanstring",
              "test_unicode"]


@with_work
def case_unittest(build, py, work):
    """`python -m unittest` on six modules of the stdlib's own test.test_json, unchanged:
    every test passes under the agent; every Python frame names an existing file, a line
    inside it and a function defined there; sites in the test files, and a test method
    and unittest's runner on the stacks."""
    if subprocess.run([py, "-c", "import test.test_json"], capture_output=True).returncode:
        print("skip: this python has no test.test_json (Debian: libpython3.11-testsuite)")
        return 77
    names = ["test.test_json." + n for n in JSON_TESTS]
    r, sites, fns = traced_cmd(build, work, "ut", [py, "-m", "unittest"] + names)
    m = re.search(r"^Ran (\d+) tests? in .*\n\n(OK.*)$", r.stderr, re.M)
    # 3.8-3.10 name a frame by co_name only; 3.11+ by module and qualified name
    want = (["test.test_json.test_decode.TestDecode.test_float", "unittest.case.TestCase.run"]
            if minor(py) >= 11 else ["test_float", "run"])
    return report_checks([(m is not None and int(m.group(1)) >= 50,
                           "unittest: %s" % (m.group(0).replace("\n", " ") if m else
                                             r.stderr[-300:]), "Ran >= 50 tests, OK")] +
                         frame_checks(python_frames(sites, fns), sites, "/test_json/",
                                      want))


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@with_work
def case_httpserver(build, py, work):
    """`python -m http.server` under `ab` (400 GETs of a 20000-byte file, 100 of the
    directory listing), stopped by Ctrl-C: every request answered; every Python frame
    names an existing file, a line inside it and a function defined there; through the
    handler's do_GET at least one allocation per request and the file's bytes per GET."""
    import signal
    import time
    import urllib.request
    if not os.access("/usr/bin/ab", os.X_OK):
        print("skip: no /usr/bin/ab (Debian apache2-utils)")
        return 77
    site = os.path.join(work, "site")
    os.mkdir(site)
    with open(os.path.join(site, "blob.bin"), "wb") as f:
        f.write(bytes(range(256)) * 78 + bytes(32))  # 20000 bytes
    port = free_port()
    trace = os.path.join(work, "hs.lht")
    env = dict(os.environ)
    env.pop("PYTHONMALLOC", None)
    # its own session: Ctrl-C (SIGINT to the group) reaches the server, as in a terminal
    p = subprocess.Popen([os.path.join(build, "bin", "leakhound"), "run", "-o", trace, "--",
                          py, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                          "--directory", site], cwd=work, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        url = "http://127.0.0.1:%d/" % port
        for _ in range(600):
            try:
                urllib.request.urlopen(url, timeout=2).read()
                break
            except OSError:
                if p.poll() is not None:
                    break
                time.sleep(0.1)
        abs_ = [subprocess.run(["/usr/bin/ab", "-n", str(n), "-c", "4", url + path],
                               capture_output=True, text=True, timeout=300).stdout
                for n, path in ((400, "blob.bin"), (100, ""))]
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=120)
    checks = []
    for n, text in zip((400, 100), abs_):
        done = re.search(r"^Complete requests:\s+(\d+)", text, re.M)
        failed = re.search(r"^Failed requests:\s+(\d+)", text, re.M)
        checks.append((done and int(done.group(1)) == n and failed and
                       int(failed.group(1)) == 0, "ab: %s complete, %s failed"
                       % (done and done.group(1), failed and failed.group(1)),
                       "%d complete, 0 failed" % n))
    if p.returncode != 0 or "Keyboard interrupt received" not in out:
        return fail("server under leakhound: exit %d, stdout %r, stderr %s"
                    % (p.returncode, out[-300:], err[-800:]))
    sites, fns = reports(build, trace)
    # run as -m http.server, the module is __main__
    do_get = "__main__.SimpleHTTPRequestHandler.do_GET" if minor(py) >= 11 else "do_GET"
    row = [f["inclusive"] for f in fns
           if f["function"] == do_get and f["file"].endswith("/http/server.py")]
    allocs = row[0]["allocations"] if row else 0
    nbytes = row[0]["allocated"] if row else 0
    checks.append((allocs >= 501 and nbytes >= 400 * 20000,
                   "allocations through %s: %d, %d bytes" % (do_get, allocs, nbytes),
                   ">= 501 (the requests and the first check) and >= 400 x 20000 bytes"))
    return report_checks(checks + frame_checks(python_frames(sites, fns), sites,
                                               "/http/server.py", [do_get]))


@with_work
def case_workers(build, py, work):
    """A pre-fork server, gunicorn-style (progs/workers.py: 3 workers forked by os.fork,
    each keeping 200 buffers of 1000 + w bytes; one ends by os._exit, two by sys.exit):
    `run` lists the 4 traces (program, pid, file); each worker's trace is readable, forked
    from the parent, with exactly 401 blocks at the worker's line (200 bytearrays and their
    buffers, the list's item array) whose bytes differ from worker 0's by 200 x w; the
    parent's trace has its own 201 blocks and nothing at the workers' line."""
    import json
    trace = os.path.join(work, "py.lht")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONMALLOC", None)
    r = lh(build, "run", "-o", trace, "--", py, os.path.join(PROGS, "workers.py"), cwd=work,
           env=env)
    if r.returncode != 0 or r.stdout != "workers done\n":
        return fail("run: exit %d, stdout %r: %s" % (r.returncode, r.stdout, r.stderr[-1500:]))
    listed = re.findall(r"^leakhound:\s+(\S+)\s+(\d+)\s+(\S+)$", r.stderr, re.M)
    checks = [(len(listed) == 4 and "leakhound: 4 traces written (program, pid, file):"
               in r.stderr and "leakhound: trace written to py.lht" in r.stderr,
               "run lists %d traces: %s" % (len(listed), listed),
               "4 (the parent's py.lht named as the program's)")]
    wline, pline = site_line("workers.py", "worker"), site_line("workers.py", "parent")
    parent_pid = None
    workers = []
    for prog, pid, path in listed:
        rep = lh(build, "report", os.path.join(work, path), "--format", "json", "--top", "0")
        if rep.returncode != 0:
            checks.append((False, "report %s: %s" % (path, rep.stderr[-300:]), "readable"))
            continue
        rep = json.loads(rep.stdout)
        summ = rep["summary"]
        if path == "py.lht":
            parent_pid = summ["pid"]
            checks.append((at_line(rep, "workers.py", pline)[0] == 201 and
                           at_line(rep, "workers.py", wline)[0] == 0,
                           "parent: live blocks at workers.py:%d %d, at :%d %d"
                           % (pline, at_line(rep, "workers.py", pline)[0], wline,
                              at_line(rep, "workers.py", wline)[0]), "201 and 0"))
        else:
            blocks, nbytes, _ = at_line(rep, "workers.py", wline)
            workers.append((summ["ppid"], summ["exit_kind"], blocks, nbytes))
    workers.sort(key=lambda w: w[3])
    base = workers[0][3] if workers else 0
    got = [(pp == parent_pid, kind, b, n - base) for pp, kind, b, n in workers]
    want = [(True, "_exit", 401, 0), (True, "exit", 401, 200), (True, "exit", 401, 400)]
    checks.append((got == want and base >= 200 * 1001,
                   "workers (forked from the parent, exit, blocks at workers.py:%d, bytes "
                   "more than worker 0's %d): %s" % (wline, base, got), "%s" % want))
    return report_checks(checks)


@with_work
def case_embed(build, _py, work):
    """A program that is not a python but embeds CPython 3.11 (embed.c, linked with
    Debian's libpython3.11) running progs/closures.py: its Python frames are seen as for
    python3 (the agent finds the interpreter in libpython): at the line of the buffers,
    1000 live blocks when it exits without finalizing, the stack the two Python frames
    only; after Py_FinalizeEx, the allocations are still there in the function table."""
    import json
    prog = os.path.join(build, "bin", "lh_pyembed")
    if not os.access(prog, os.X_OK):
        print("skip: %s was not built (Debian python3.11-dev)" % prog)
        return 77
    script = os.path.join(PROGS, "closures.py")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONMALLOC", None)
    checks = []
    for mode in ("keep", "finalize"):
        trace = os.path.join(work, "embed.%s.lht" % mode)
        r = lh(build, "run", "-o", trace, "--", prog, script, mode, cwd=work, env=env)
        if r.returncode != 0:
            return fail("run %s: exit %d: %s" % (mode, r.returncode, r.stderr[-1500:]))
        sites, fns = reports(build, trace)
        if mode == "keep":
            line = site_line("closures.py", "buffer")
            blocks, nbytes, at = at_line({"sites": sites}, "closures.py", line)
            shapes = [[(f.get("function"), f.get("line")) for f in s["frames"]] for s in at]
            want = [[("__main__.make_handler", line), ("<module>", 14)]]
            checks += [(blocks == 1000 and nbytes >= 500 * 4001,
                        "keep: closures.py:%d live at exit: %d blocks, %d bytes"
                        % (line, blocks, nbytes), "1000 blocks, >= 500 x 4001 bytes"),
                       (shapes == want, "keep: its stack: %s" % shapes, "%s" % want)]
        else:
            row = [f["inclusive"]["allocations"] for f in fns
                   if f["function"] == "__main__.make_handler" and f["file"] == script]
            checks.append((row and row[0] >= 1000, "finalize: allocations in "
                           "__main__.make_handler (closures.py): %s" % row, ">= 1000"))
    return report_checks(checks)


@with_work
def case_embed_native(build, _py, work):
    """The same program linked with libpython but running no Python (embed.c --native, as
    unbound without its python module): the agent records the interpreter's INTERP, and
    the report still ranks as for a native program: the lost block first (rank leak), then
    the larger block a global keeps and stdout's buffer (one allocation each: rank
    reachable_once). Before, any trace with the INTERP record was ranked by bytes, as a
    Python program's, and the lost block came last."""
    import json
    prog = os.path.join(build, "bin", "lh_pyembed")
    if not os.access(prog, os.X_OK):
        print("skip: %s was not built (Debian python3.11-dev)" % prog)
        return 77
    trace = os.path.join(work, "native.lht")
    r = lh(build, "run", "-o", trace, "--", prog, "--native", cwd=work)
    if r.returncode != 0:
        return fail("run: exit %d: %s" % (r.returncode, r.stderr[-1500:]))
    rep = lh(build, "report", trace, "--format", "json", "--no-default-suppressions")
    sites = json.loads(rep.stdout)["sites"]
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "embed.c")
    lines = {}
    with open(src) as f:
        for n, text in enumerate(f, 1):
            for tag in ("native_kept", "native_lost", "stdout"):
                if "SITE:" + tag in text:
                    lines[n] = tag
    got = [(lines.get(s["location"].get("line")), s.get("rank"), s["leaked_bytes"])
           for s in sites if os.path.basename(s["location"].get("file") or "") == "embed.c"]
    want = [("native_lost", "leak", 100), ("native_kept", "reachable_once", 5000),
            ("stdout", "reachable_once", 4096)]
    # The agent turns pymalloc off in both, and says so only to a python: a native program
    # that links libpython may never run Python (unbound printed the line).
    said = "PYTHONMALLOC=malloc set"
    rpy = lh(build, "run", "-o", os.path.join(work, "py.lht"), "--", "/usr/bin/python3", "-c",
             "pass", cwd=work)  # the Debian python lh_pyembed links
    return report_checks([(got == want, "embed.c's sites in the report's order: %s" % got,
                           "%s" % want),
                          (said not in r.stderr, "the native program's stderr: %r"
                           % r.stderr[-600:], "no line about PYTHONMALLOC"),
                          (rpy.returncode == 0 and said in rpy.stderr, "python -c pass: exit "
                           "%d, stderr %r" % (rpy.returncode, rpy.stderr[-600:]),
                           "exit 0 and the line about PYTHONMALLOC")])


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


@with_work
def case_startup(build, py, work):
    """Blocks CPython allocated while no Python code ran (Py_InitializeFromConfig under
    pymain_init): their site's location is the interpreter phase, never its allocator
    (PyObject_Malloc in obmalloc.c), and the C frames inside it stay in the stack."""
    rep, _, trace = traced(build, py, "cache.py", work)
    want = {"function": "pymain_init", "file": "python start-up, no script frame", "line": 0,
            "module": None, "phase": True}
    start = [s for s in rep["sites"]
             if all(s["location"].get(k) == v for k, v in want.items())]
    alloc = ("PyObject_Malloc", "PyObject_Calloc", "PyObject_Realloc", "PyMem_", "_PyMem_",
             "_PyObject_Malloc", "_PyObject_Calloc", "_PyObject_Realloc", "pymalloc_")
    wrappers = [s["location"] for s in rep["sites"]
                if (s["location"].get("function") or "").startswith(alloc) or
                (s["location"].get("file") or "").endswith("obmalloc.c")]
    text = lh(build, "report", trace, "--top", "0").stdout
    return report_checks([
        (len(start) > 0 and all(s["frames"][-1] == s["location"] for s in start),
         "%d sites located at %s" % (len(start), want), "> 0, the phase their last frame"),
        (any(f.get("function") == "Py_InitializeFromConfig"
             for s in start for f in s["frames"]),
         "the frames inside pymain_init stay", "Py_InitializeFromConfig among them"),
        (not wrappers, "sites located at CPython's allocator: %s" % wrappers[:3], "none"),
        ("    by pymain_init (python start-up, no script frame)\n" in text and
         ", at python start-up, no script frame [site " in text,
         "text report shows the phase", "by pymain_init (python start-up, no script frame)")])


@with_work
def case_sitepth(build, py, work):
    """What Python's start-up imports for a .pth file (a user site's "import json.decoder"
    line, as an installed package's .pth does): no frame of the user's runs, so each such
    site names the site module's line that ran it ("called from <frozen site>:192 in
    site.addpackage", site.py's `exec(line)`), not nothing."""
    import json
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONUSERBASE=os.path.join(work, "ub"))
    env.pop("PYTHONMALLOC", None)
    r = subprocess.run([py, "-c", "import site; print(site.getusersitepackages())"],
                       env=env, capture_output=True, text=True, timeout=60)
    usersite = r.stdout.strip()
    os.makedirs(usersite)
    with open(os.path.join(usersite, "lhtest.pth"), "w") as f:
        f.write("import json.decoder\n")
    libsite = os.path.join(os.path.dirname(os.path.dirname(py)), "lib",
                           os.path.basename(py), "site.py")
    if py.startswith("/usr/bin/"):
        libsite = "/usr/lib/%s/site.py" % os.path.basename(py)
    with open(libsite) as f:
        line = [n for n, t in enumerate(f, 1) if t.strip() == "exec(line)"][0]
    trace = os.path.join(work, "pth.lht")
    r = lh(build, "run", "-o", trace, "--", py, os.path.join(PROGS, "cache.py"), cwd=work,
           env=env)
    if r.returncode != 0:
        return fail("run: exit %d: %s" % (r.returncode, r.stderr[-1500:]))
    rep = json.loads(lh(build, "report", trace, "--format", "json", "--top", "0").stdout)
    fn = "site.addpackage" if minor(py) >= 11 else "addpackage"
    pth = [s for s in rep["sites"]
           if any((f.get("function") or "") == fn for f in s["frames"]) and
           any((f.get("file") or "").endswith("json/decoder.py") for f in s["frames"])]
    users = sorted({(u.get("function"), u.get("file"), u.get("line")) if u else None
                    for u in (s["user_frame"] for s in pth)}, key=str)
    want = [(fn, "<frozen site>" if minor(py) >= 11 else libsite, line)]
    text = lh(build, "report", trace, "--top", "0").stdout
    called = " (called from %s:%d in %s) [site " % (want[0][1], line, fn)
    return report_checks([
        (len(pth) > 0, "%d sites of the .pth file's import" % len(pth), "> 0"),
        (users == want, "their user frame: %s" % users, want),
        (called in text, "the text report names it", called)])


@with_work
def case_arenas(build, py, work):
    """pymalloc kept (LEAKHOUND_PYMALLOC=keep): 300 bytearray objects live in pymalloc's
    arenas (the program's own mappings, a root of the exit snapshot) and point to their
    2000-byte buffers, malloc blocks: the 300 buffers are still reachable, none lost (the
    words of an arena outside any block were skipped: all 300 were "definitely lost", as
    every buffer, file buffer, numpy array's data a pymalloc object held). In the python
    view of a snapshot taken while running, each object's buffer hangs under it (its
    retained size), as with PYTHONMALLOC=malloc."""
    import json
    trace = os.path.join(work, "arenas.lht")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", LEAKHOUND_PYMALLOC="keep")
    env.pop("PYTHONMALLOC", None)
    r = lh(build, "run", "-o", trace, "--snapshot-at-exit", "--", py,
           os.path.join(PROGS, "arenas.py"), cwd=work, env=env)
    if r.returncode != 0:
        return fail("run: exit %d: %s" % (r.returncode, r.stderr[-1500:]))
    rep = json.loads(lh(build, "report", trace, "--format", "json", "--top", "0").stdout)
    _, _, sites = at_line(rep, "arenas.py", site_line("arenas.py", "buffers"))
    kinds = {}
    for s in sites:
        for k, v in s["classification"].items():
            kinds[k] = kinds.get(k, 0) + v["blocks"]
    # the 300 buffers and the list's array of 300 items (2400 bytes: a malloc block too)
    want = {"definitely_lost": 0, "indirectly_lost": 0, "possibly_lost": 0,
            "still_reachable": 301}
    # the python view of the snapshot taken while running: an object in an arena, which
    # is no block, still has its buffer hanging under it (once, though two of its words,
    # ob_bytes and ob_start, point to it)
    addr = r.stdout.split()[0]
    show = lh(build, "shell", trace, "kept", "-c", "show " + addr).stdout.splitlines()
    head = "bytearray %s, 56 B, retained 2.0 KiB" % addr
    natives = [l for l in show[1:] if re.match(r"^\s+\d+\s+native\s+native 0x", l)]
    return report_checks([
        (kinds == want, "the blocks at arenas.py:%d by kind: %s" %
         (site_line("arenas.py", "buffers"), kinds), want),
        (show[:1] == [head], "show KEEP[7]: %s" % show[:1], head),
        (len(natives) == 1, "its native blocks: %s" % natives, "its buffer, once")])


@with_work
def case_interrupted(build, py, work):
    """A program stopped by Ctrl-C (an uncaught KeyboardInterrupt: CPython kills itself
    with SIGINT after its teardown, never reaching exit()): the report says it was killed
    in teardown, not "clean exit (status 0)"; sys.exit(3) still says status 3."""
    import json
    out = []
    for argv, code in (([], -2), (["3"], 3)):
        trace = os.path.join(work, "int%s.lht" % "".join(argv))
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        env.pop("PYTHONMALLOC", None)
        r = lh(build, "run", "-o", trace, "--", py, os.path.join(PROGS, "interrupted.py"),
               *argv, cwd=work, env=env)
        text = lh(build, "report", trace, "--top", "0").stdout
        js = json.loads(lh(build, "report", trace, "--format", "json", "--top", "0").stdout)
        line = [l for l in text.splitlines() if l.startswith("  exit:")]
        # each session a bytearray and its buffer, and the list's items array
        n = 100 if argv else 51
        out.append((r.returncode, line, js["summary"].get("exit_kind"),
                    expect_live(js, "interrupted.py", "session", 2 * n + 1,
                                bytes_at_least=1000 * n)[0]))
    killed = ("  exit:          killed during teardown: the main program ended, then the "
              "process was killed before its exit (by a signal; python re-raises SIGINT "
              "after an uncaught KeyboardInterrupt)")
    return report_checks([
        (out[0][1] == [killed] and out[0][2] == "killed_in_teardown",
         "Ctrl-C: %s, %s" % (out[0][1], out[0][2]), "%s, killed_in_teardown" % killed),
        (out[0][0] == 130, "Ctrl-C: leakhound run exit %d" % out[0][0], "130 (128 + SIGINT)"),
        (out[1][1] == ["  exit:          clean exit (status 3)"] and out[1][2] == "exit",
         "sys.exit(3): %s, %s" % (out[1][1], out[1][2]), "clean exit (status 3), exit"),
        (out[0][3] and out[1][3], "the sessions live at the end: 103 / 201 blocks",
         "%s" % [o[3] for o in out])])


@with_work
def case_samename(build, py, work):
    """Two modules, each with a function build() and its module body: python names a
    function without its module, so `report --by function` keyed them by name alone and
    showed one build and one <module> row for both files. Each is its own row, with its
    own file."""
    for mod, n in (("alpha", 100), ("bravo", 200)):
        with open(os.path.join(work, mod + ".py"), "w") as f:
            f.write("def build(n):\n    return [bytearray(1000) for _ in range(n)]\n\n"
                    "KEEP = build(%d)\n" % n)
    with open(os.path.join(work, "main.py"), "w") as f:
        f.write("import alpha\nimport bravo\n")
    _, _, fns = traced_cmd(build, work, "same", [py, os.path.join(work, "main.py")])
    # 3.11+ names a function with its module (alpha.build), not a module body
    rows = sorted((f["function"].split(".")[-1], os.path.basename(f.get("file") or ""))
                  for f in fns if f["function"].split(".")[-1] in ("build", "<module>") and
                  os.path.basename(f.get("file") or "") in ("alpha.py", "bravo.py"))
    want = [("<module>", "alpha.py"), ("<module>", "bravo.py"), ("build", "alpha.py"),
            ("build", "bravo.py")]
    return report_checks([(rows == want, "--by function rows of alpha.py, bravo.py: %s" % rows,
                           want)])


@with_work
def case_imports_clean(build, py, work):
    """A program that only imports (json, email.utils, http.server) loses nothing. The
    interned strings' table of CPython grows past malloc's mmap threshold, and its chunk is
    often mapped right after a module's data; the agent took such a chunk for that module's
    bss, recorded no pointer into it, and reported it "definitely lost" (207552 bytes, 5
    runs in 6). Three runs, each exactly 0 definitely and 0 indirectly lost."""
    import json
    got = []
    for k in range(3):
        trace = os.path.join(work, "imports%d.lht" % k)
        r = lh(build, "run", "-o", trace, "--", py, "-c", "import json, email.utils, http.server",
               cwd=work)
        rep = lh(build, "report", trace, "--format", "json", "--top", "0")
        if r.returncode != 0 or rep.returncode != 0:
            raise RuntimeError("run/report: %s %s" % (r.stderr[-800:], rep.stderr[-800:]))
        doc = json.loads(rep.stdout)
        ls = doc["leak_summary"]
        got.append((ls["definitely_lost"]["bytes"], ls["indirectly_lost"]["bytes"]))
    return report_checks([(got == [(0, 0)] * 3, "definitely, indirectly lost: %s" % got,
                           "[(0, 0)] * 3")])


@with_work
def case_rank(build, py, work):
    """A daemon whose dict cache, still reachable, grows by one bytes(3000) per request
    (--mark-function __main__.handle: 60 marks), beside a bytes(200000) made at start-up
    and the interpreter's own imports: the report ranks the growing cache first, with
    report --growth's figures (3033 bytes per entry and the dict's table, resized as it
    grows, at the same line), ahead of the larger sites that do not grow (issue 10)."""
    import json
    rep, _, trace = traced(build, py, "rank_cache.py", work,
                           extra=["--mark-function", "__main__.handle"])
    summ = rep["summary"]
    entry, config = site_line("rank_cache.py", "entry"), site_line("rank_cache.py", "config")
    keys = ("growth_bytes_per_mark", "grew_intervals", "intervals", "first_bytes",
            "last_bytes", "last_blocks", "trend")
    mine = [(i, s["location"].get("line"), s["leaked_bytes"], s["leaked_blocks"],
             s.get("growth") and {k: s["growth"].get(k) for k in keys})
            for i, s in enumerate(rep["sites"])
            if os.path.basename(s["location"].get("file") or "") == "rank_cache.py"]
    grows = {"growth_bytes_per_mark": 3073.319644, "grew_intervals": 59, "intervals": 59,
             "first_bytes": 0, "last_bytes": 181147, "last_blocks": 60, "trend": "growing"}
    larger = [s["leaked_bytes"] for s in rep["sites"][1:] if s["leaked_bytes"] > 184180]
    r = lh(build, "report", trace, "--growth", "--top", "1", "--format", "json")
    g = json.loads(r.stdout)["sites"] if r.returncode == 0 else []
    return report_checks([
        ((summ.get("ranked_by"), summ.get("growing_sites"), summ.get("growth_points")) ==
         (["growth", "bytes"], 1, 60), "ranked by %s, %s growing over %s marks"
         % (summ.get("ranked_by"), summ.get("growing_sites"), summ.get("growth_points")),
         "growth then bytes, 1 growing over 60 marks"),
        (mine[:1] == [(0, entry, 184180, 61, grows)], "the first site: %s" % mine[:1],
         "rank_cache.py:%d, 184180 bytes in 61 blocks, growing %s" % (entry, grows)),
        ([m[1:] for m in mine[1:2]] == [(config, 200041, 2, None)],
         "the next of the program's sites: %s" % mine[1:2],
         "rank_cache.py:%d, 200041 bytes in 2 blocks, not growing" % config),
        (len(larger) >= 2, "%d larger sites after it (the start-up buffer, an import's)"
         % len(larger), "at least 2"),
        (g[:1] and g[0]["stack_id"] == rep["sites"][0]["stack_id"] and
         {k: g[0].get(k) for k in keys} == grows, "report --growth's first site: %s"
         % (g[:1] and {k: g[0].get(k) for k in keys}), "the same site and figures")])


CASES = {"rank": case_rank, "startup": case_startup, "imports_clean": case_imports_clean, "samename": case_samename,
         "interrupted": case_interrupted, "debug_build": case_debug_build, "stdlib": case_stdlib,
         "unittest": case_unittest, "httpserver": case_httpserver,
         "workers": case_workers, "embed": case_embed, "embed_native": case_embed_native, "frames": case_frames, "old_version": case_old_version, "closures": case_closures,
         "cache": case_cache, "classattr": case_classattr, "cycles": case_cycles,
         "cext": case_cext, "mark_function": case_mark_function,
         "paths": case_paths, "modules": case_modules, "userframe": case_userframe,
         "stripped": case_stripped, "sitepth": case_sitepth, "arenas": case_arenas}


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
    if a.case not in ("old_version", "debug_build", "embed", "embed_native"):
        py = find_python(a.python)
        if not py:
            print("skip: no python %s here" % a.python)
            return 77
    return CASES[a.case](os.path.abspath(a.build), py)


if __name__ == "__main__":
    sys.exit(main())
