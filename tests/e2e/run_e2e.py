#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""End-to-end tests: run small programs with known answers under `leakhound run`, load
`leakhound report --format json` and check exact figures.

Each case runs in its own process with a timeout (libuv's runner habit). Expected lines
are never hard-coded: an allocating line carries a marker comment, `/* LEAK: name */` for
a line whose blocks leak, `/* SITE: name */` for one whose blocks must all be freed, and
the runner greps the source for it. Figures are compared by site: the site whose
allocating frame (frame 0, or for C++ the first frame after operator new) is that line.

Usage:
  run_e2e.py --build DIR --case NAME [--unwind fp|libunwind|table] [--keep] [-v]
  run_e2e.py --build DIR --all [--unwind ...]     every case, one after the other
  run_e2e.py --list                                the case names (for CMake)
Exit status: 0 pass, 1 fail, 2 usage error.
"""

import argparse
import json
import os
import re
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROG_SRC = os.path.join(HERE, "progs")
CMD_TIMEOUT = 60  # seconds, for any one command


# ---------------------------------------------------------------------------------------
# Failures: collected, then printed with what was expected and what came out.
# ---------------------------------------------------------------------------------------

class Failure(Exception):
    pass


class Skip(Exception):
    """A case that cannot run here (a missing tool, a forbidden syscall): exit 77."""
    pass


SKIP = 77  # CTest's SKIP_RETURN_CODE for every runner


def run_named_case(build, group, name, fn, keep, verbose):
    """Runs one case of a runner in its own scratch directory under the build: 0 passed,
    1 failed (files kept), SKIP. Prints one line "ok|FAIL|skip group.name"."""
    base = os.path.join(build, "tests", "e2e", "work")
    os.makedirs(base, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix=group + "." + name + ".", dir=base)
    ctx = Ctx(build, "fp", workdir, verbose)
    t0 = time.monotonic()
    try:
        fn(ctx)
    except Skip as e:
        print("skip %s.%s: %s" % (group, name, e))
        shutil.rmtree(workdir, ignore_errors=True)
        return SKIP
    except Failure as e:
        ctx.failures.append(str(e))
    dt = time.monotonic() - t0
    if ctx.failures:
        print("FAIL %s.%s (%.1f s; files kept in %s)" % (group, name, dt, workdir))
        for f in ctx.failures:
            print("  - " + f)
        return 1
    print("ok   %s.%s (%.1f s)" % (group, name, dt))
    if not keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


def cases_main(group, cases, doc, needs=()):
    """The command line every case runner shares: --build B (--case NAME | --all) [--keep]
    [--list] [-v]. Exit 0 when every case run passed, 1 when one failed, SKIP when all were
    skipped or a program in needs is not on PATH."""
    ap = argparse.ArgumentParser(description=(doc or group).split("\n")[0])
    ap.add_argument("--build")
    ap.add_argument("--case")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if args.list:
        print("\n".join(cases))
        return 0
    if not args.build or not (args.case or args.all):
        ap.error("--build and --case (or --all) are required")
    if args.case and args.case not in cases:
        ap.error("unknown case %r (see --list)" % args.case)
    for prog in needs:
        if shutil.which(prog) is None:
            print("skip: no %s on PATH" % prog)
            return SKIP
    build = os.path.abspath(args.build)
    names = list(cases) if args.all else [args.case]
    results = [run_named_case(build, group, n, cases[n], args.keep, args.verbose)
               for n in names]
    if args.all:
        print("%d of %d passed" % (results.count(0), len(results)))
    if 1 in results:
        return 1
    return SKIP if all(r == SKIP for r in results) else 0


class Ctx:
    """One case run: the build, the unwinder, a scratch directory and the failures."""

    def __init__(self, build, unwind, workdir, verbose):
        self.build = build
        self.unwind = unwind
        self.workdir = workdir
        self.verbose = verbose
        self.failures = []
        self.lh = os.path.join(build, "bin", "leakhound")
        self.progs = os.path.join(build, "tests", "e2e", "progs")

    def fail(self, what, expected, got):
        self.failures.append("%s\n    expected: %s\n    got:      %s" % (what, expected, got))

    def check(self, cond, what, expected, got):
        if not cond:
            self.fail(what, expected, got)
        return cond

    def log(self, msg):
        if self.verbose:
            print(msg)

    def prog(self, name):
        return os.path.join(self.progs, name)


# ---------------------------------------------------------------------------------------
# Markers
# ---------------------------------------------------------------------------------------

_marker_cache = {}


def marker(name):
    """(basename, line) of the source line marked LEAK: name or SITE: name."""
    if not _marker_cache:
        pat = re.compile(r"(?:/\*|//)\s*(?:LEAK|SITE):\s*([A-Za-z0-9_]+)")
        for fn in sorted(os.listdir(PROG_SRC)):
            if not os.path.isfile(os.path.join(PROG_SRC, fn)):
                continue  # a directory of a case's own files (progs/pyheap)
            with open(os.path.join(PROG_SRC, fn), encoding="utf-8") as f:
                for n, text in enumerate(f, 1):
                    m = pat.search(text)
                    if m:
                        if m.group(1) in _marker_cache:
                            raise SystemExit("run_e2e: marker %s used twice" % m.group(1))
                        _marker_cache[m.group(1)] = (fn, n)
    if name not in _marker_cache:
        raise SystemExit("run_e2e: no marker %r in %s" % (name, PROG_SRC))
    return _marker_cache[name]


# ---------------------------------------------------------------------------------------
# Running things
# ---------------------------------------------------------------------------------------

def run(ctx, argv, cwd=None, timeout=CMD_TIMEOUT, env=None):
    """Runs argv in its own session; on timeout kills the whole group and fails."""
    ctx.log("$ " + " ".join(argv))
    p = subprocess.Popen(argv, cwd=cwd or ctx.workdir, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True, env=env,
                         preexec_fn=lambda: os.umask(0o022))
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        raise Failure("timed out after %d s: %s\n  stdout: %s\n  stderr: %s"
                      % (timeout, " ".join(argv), out.decode(errors="replace")[-2000:],
                         err.decode(errors="replace")[-2000:]))
    res = subprocess.CompletedProcess(argv, p.returncode, out.decode(errors="replace"),
                                      err.decode(errors="replace"))
    ctx.log("  -> exit %d\n  stdout: %s\n  stderr: %s"
            % (res.returncode, res.stdout[-1500:], res.stderr[-1500:]))
    return res


def lh_run(ctx, prog_argv, out=None, extra=(), cwd=None, expect_status=0, written=None):
    """leakhound run [-o out] --unwind U extra -- prog_argv; checks the exit status and the
    'trace written' line (naming out, or written when the program's trace is another file).
    Returns the CompletedProcess."""
    argv = [ctx.lh, "run"]
    if out is not None:
        argv += ["-o", out]
    if ctx.unwind:
        argv += ["--unwind", ctx.unwind]
    argv += list(extra) + ["--"] + prog_argv
    env = None
    if ctx.unwind == "table":
        # Every stack the table gives is also unwound by libunwind and compared; the agent
        # says so on stderr when they differ.
        env = dict(os.environ, LEAKHOUND_UNWIND_VERIFY="1")
    res = run(ctx, argv, cwd=cwd, env=env)
    if ctx.unwind == "table":
        bad = [ln for ln in res.stderr.splitlines() if "differs from libunwind" in ln]
        ctx.check(not bad, "stacks of the unwind table against libunwind's", "no difference",
                  bad[:4])
    if expect_status is not None:
        ctx.check(res.returncode == expect_status, "exit status of `leakhound run -- %s`"
                  % os.path.basename(prog_argv[0]), expect_status,
                  "%d (stderr: %s)" % (res.returncode, res.stderr.strip()[-800:]))
    if out is not None and expect_status is not None:
        want = "leakhound: trace written to "
        lines = [ln for ln in res.stderr.splitlines() if ln.startswith(want)]
        name = written or os.path.basename(out)
        ctx.check(any(os.path.basename(ln[len(want):].strip()) == name for ln in lines),
                  "stderr line 'leakhound: trace written to FILE'", want + name,
                  lines or res.stderr.strip()[-400:])
    return res


def load_report(ctx, trace, extra=(), killed=False):
    """leakhound report TRACE --format json; the parsed report, or a Failure. killed: the
    program was killed, and a kill in the middle of a frame write leaves a truncated last
    frame, which `--salvage` reads up to (docs/RELIABILITY.md): the one error tolerated."""
    res = run(ctx, [ctx.lh, "report", trace, "--format", "json", "--top", "100000"]
              + list(extra))
    if killed and res.returncode == 1 and re.search(r": truncated at offset \d+ \(frame \d+ "
                                                    r"incomplete\); \d+ events before it "
                                                    r"\(--salvage", res.stderr):
        ctx.log("truncated last frame (killed mid-write): " + res.stderr.strip())
        res = run(ctx, [ctx.lh, "report", trace, "--format", "json", "--top", "100000",
                        "--salvage"] + list(extra))
    if res.returncode != 0:
        raise Failure("`leakhound report %s --format json` failed\n    expected: exit 0\n"
                      "    got:      exit %d, stderr: %s"
                      % (trace, res.returncode, res.stderr.strip()[-1000:]))
    try:
        rep = json.loads(res.stdout)
    except ValueError as e:
        raise Failure("report for %s is not JSON (%s): %s" % (trace, e, res.stdout[:500]))
    for key in ("summary", "sites"):
        if key not in rep:
            raise Failure("report for %s has no %r: keys %s" % (trace, key, list(rep)))
    check_consistency(ctx, rep, trace)
    return rep


# The report's JSON contract (see the CLI's `report --format json`).
SUMMARY_KEYS = ("program", "argv", "pid", "duration_s", "total_events", "total_allocations",
                "total_frees", "total_reallocs", "peak_bytes", "peak_time_s", "leaked_bytes",
                "leaked_blocks", "clean_exit", "exit_kind")
SITE_KEYS = ("leaked_bytes", "leaked_blocks", "allocations", "allocated_bytes", "frames")
FRAME_KEYS = ("function", "file", "line", "module", "inlined")


def check_consistency(ctx, rep, trace):
    """Checks that hold for every report: the site sums add up to the summary."""
    summ = rep["summary"]
    sites = rep["sites"]
    for key in SUMMARY_KEYS:
        ctx.check(key in summ, "summary of %s has %s" % (os.path.basename(trace), key),
                  key, sorted(summ))
    for s in sites[:50]:
        missing = [k for k in SITE_KEYS if k not in s]
        missing += ["frames[].%s" % k for f in s.get("frames") or [] for k in FRAME_KEYS
                    if k not in f]
        if not ctx.check(not missing, "site keys", "all of the contract's", missing[:5]):
            break
    if "leaked_bytes" in summ:
        ctx.check(sum(s.get("leaked_bytes", 0) for s in sites) == summ["leaked_bytes"],
                  "sum of sites' leaked_bytes == summary.leaked_bytes", summ["leaked_bytes"],
                  sum(s.get("leaked_bytes", 0) for s in sites))
    if "leaked_blocks" in summ and "total_allocations" in summ:
        ctx.check(0 <= summ["leaked_blocks"] <= summ["total_allocations"]
                  + summ.get("total_reallocs", 0),
                  "leaked_blocks <= allocations", "<= %d" % summ["total_allocations"],
                  summ["leaked_blocks"])
    # report.h: when the run shows growth, the growing sites first, in report --growth's
    # order (bytes per point descending, perl's SV arena after the others); then by rank
    # group (the leaks, still reachable, one-time still reachable), then leaked bytes
    # descending; a Perl or Python program's sites by bytes, site 0 last (its leaks are all
    # still reachable)
    groups = {"leak": 0, "reachable": 1, "reachable_once": 2}
    script = any(f.get("language") in ("perl", "python") for s in sites
                 for f in s.get("frames") or [])
    n_grow = 0
    while n_grow < len(sites) and sites[n_grow].get("growth"):
        n_grow += 1
    ctx.check(not [s for s in sites[n_grow:] if s.get("growth")],
              "the growing sites come first", "all %d before the others" % n_grow,
              [i for i, s in enumerate(sites) if s.get("growth")][:20])
    ranked_by = summ.get("ranked_by") or []
    ctx.check(("growth" in ranked_by) == bool(n_grow) and
              summ.get("growing_sites", 0) == n_grow, "summary: ranked_by and growing_sites "
              "say the growing sites", n_grow, (ranked_by, summ.get("growing_sites")))
    arena = lambda s: (s.get("location") or {}).get("function", "").startswith("perl SV arena")
    order = [(arena(s), -s["growth"]["growth_bytes_per_mark"]) for s in sites[:n_grow]]
    ctx.check(order == sorted(order), "growing sites by bytes per point (report --growth)",
              "descending, perl's arena last", order[:20])
    sites = sites[n_grow:]
    if script:
        order = [(s.get("stack_id") == 0, -s.get("leaked_bytes", 0)) for s in sites]
        ctx.check(order == sorted(order), "a script's sites ordered by leaked bytes",
                  "descending bytes, site 0 last", order[:20])
    else:
        order = [(groups.get(s.get("rank"), -1), -s.get("leaked_bytes", 0)) for s in sites]
        ctx.check(order == sorted(order), "sites ordered by rank group, then leaked bytes",
                  "ascending group, descending bytes", order[:20])
    ctx.check(all(s.get("rank") in groups for s in sites), "every site has a rank group",
              sorted(groups), sorted({s.get("rank") for s in sites}, key=str))


# ---------------------------------------------------------------------------------------
# Sites
# ---------------------------------------------------------------------------------------

def is_operator_new(fn):
    fn = fn or ""
    return "operator new" in fn or fn.startswith(("_Znw", "_Zna"))


def fmt_frame(fr):
    return "%s (%s:%s)%s" % (fr.get("function") or "??", os.path.basename(fr.get("file") or "?"),
                             fr.get("line") or "?", " [inlined]" if fr.get("inlined") else "")


def fmt_site(s, depth=6):
    fr = s.get("frames") or []
    return ("%s B in %s blocks (%s allocs): %s" %
            (s.get("leaked_bytes"), s.get("leaked_blocks"), s.get("allocations"),
             " <- ".join(fmt_frame(f) for f in fr[:depth]) or "(no frames)"))


def alloc_frame(site):
    """(index, frame) of the user's allocating frame: frame 0, or the first frame after
    operator new for C++."""
    frames = site.get("frames") or []
    i = 0
    while i < len(frames) and is_operator_new(frames[i].get("function")):
        i += 1
    return (i, frames[i]) if i < len(frames) else (None, None)


def at_line(frame, where):
    return (frame is not None and os.path.basename(frame.get("file") or "") == where[0]
            and frame.get("line") == where[1])


def sites_at(rep, name):
    where = marker(name)
    return [s for s in rep["sites"] if at_line(alloc_frame(s)[1], where)]


def expect_site(ctx, rep, name, blocks, nbytes, allocations=None, cxx=False, function=None,
                module=None, label="", grown_by=None):
    """Exactly one site allocates at marker `name`, with these leak figures (and, with
    grown_by, exactly these lines grew its blocks by realloc, in order of first use)."""
    where = marker(name)
    found = sites_at(rep, name)
    what = "%ssite %s at %s:%d" % (label, name, where[0], where[1])
    top = "\n      ".join(fmt_site(s) for s in rep["sites"][:8]) or "(no sites)"
    if len(found) != 1:
        ctx.fail(what + ": number of sites", "1 site with %d B in %d blocks" % (nbytes, blocks),
                 "%d sites; report's top sites:\n      %s" % (len(found), top))
        return None
    s = found[0]
    got = "%s B in %s blocks" % (s.get("leaked_bytes"), s.get("leaked_blocks"))
    ctx.check(s.get("leaked_bytes") == nbytes and s.get("leaked_blocks") == blocks,
              what + ": leaked", "%d B in %d blocks" % (nbytes, blocks), got)
    if allocations is not None:
        ctx.check(s.get("allocations") == allocations, what + ": allocations", allocations,
                  s.get("allocations"))
    idx, fr = alloc_frame(s)
    frames = s.get("frames") or []
    if cxx:
        ctx.check(idx == 1 and is_operator_new(frames[0].get("function")),
                  what + ": frame 0 is operator new, frame 1 the user line",
                  "operator new <- %s:%d" % where,
                  " <- ".join(fmt_frame(f) for f in frames[:4]))
    else:
        ctx.check(idx == 0, what + ": frame 0 is the allocating line", "%s:%d" % where,
                  " <- ".join(fmt_frame(f) for f in frames[:4]))
    if function is not None:
        ctx.check(fr.get("function") == function, what + ": function", function,
                  fr.get("function"))
    if module is not None:
        ctx.check(module in os.path.basename(fr.get("module") or ""), what + ": module",
                  "*%s*" % module, fr.get("module"))
    if grown_by is not None:
        want = ["%s:%d" % marker(n) for n in grown_by]
        got = ["%s:%s" % (os.path.basename(f.get("file") or "?"), f.get("line"))
               for f in s.get("grown_by") or []]
        ctx.check(got == want and s.get("grown_by_sites") == len(want),
                  what + ": grown by realloc at", want, got)
    return s


def expect_no_leak(ctx, rep, name, label=""):
    """No leaking site allocates at marker `name` (such sites may be listed with 0)."""
    where = marker(name)
    for s in sites_at(rep, name):
        ctx.check(s.get("leaked_bytes", 0) == 0 and s.get("leaked_blocks", 0) == 0,
                  "%ssite %s at %s:%d must not leak" % (label, name, where[0], where[1]),
                  "0 B in 0 blocks", fmt_site(s))


def expect_only(ctx, rep, sources, names, label=""):
    """Every leaking site whose allocating frame is in one of our sources is one of the
    expected markers: catches leaks attributed to the wrong line."""
    allowed = {marker(n) for n in names}
    for s in rep["sites"]:
        if not s.get("leaked_bytes") and not s.get("leaked_blocks"):
            continue
        _, fr = alloc_frame(s)
        if fr is None:
            continue
        base = os.path.basename(fr.get("file") or "")
        if base in sources and (base, fr.get("line")) not in allowed:
            ctx.fail("%sunexpected leak attributed to our code" % label,
                     "leaks only at " + ", ".join("%s:%d" % a for a in sorted(allowed)),
                     fmt_site(s))


def expect_total(ctx, rep, nbytes, blocks, label=""):
    summ = rep["summary"]
    ctx.check(summ.get("leaked_bytes") == nbytes and summ.get("leaked_blocks") == blocks,
              label + "summary leaked", "%d B in %d blocks" % (nbytes, blocks),
              "%s B in %s blocks; sites:\n      %s"
              % (summ.get("leaked_bytes"), summ.get("leaked_blocks"),
                 "\n      ".join(fmt_site(s) for s in rep["sites"][:8])))


def expect_program(ctx, rep, prog, label=""):
    got = rep["summary"].get("program") or ""
    ctx.check(os.path.basename(got) == prog, label + "summary.program", prog, got)


def trace_files(d):
    # Traces only: snapshot contents files (*.lhs) sit beside them.
    return sorted(f for f in os.listdir(d) if ".lht" in f and not f.endswith(".lhs"))


def check_mode(ctx, path):
    mode = stat.S_IMODE(os.lstat(path).st_mode)
    ctx.check(mode == 0o600, "mode of %s (umask 022)" % os.path.basename(path), "0600",
              "%04o" % mode)


# ---------------------------------------------------------------------------------------
# Simple cases: one program, one trace, a table of expected sites
# ---------------------------------------------------------------------------------------

# name: (program, sources, [(marker, blocks, bytes, extra kwargs)], [markers that must not
#        leak], exact summary total (bytes, blocks) or None, summary figures: an int is a
#        minimum, a one-element tuple an exact value)
SIMPLE = {
    "lost_nodes": ("lost_nodes", ["lost_nodes.c"],
                   [("lost_node", 4, 192, {"allocations": 10, "function": "node_new"})],
                   [], (192, 4),
                   {"total_allocations": (10,), "total_frees": (6,), "peak_bytes": (480,)}),
    "growing_list": ("growing_list", ["growing_list.c"],
                     [("grow_item", 100, 6400, {"allocations": 100, "function": "list_push"}),
                      ("grow_head", 1, 24, {"allocations": 1, "function": "list_new"})],
                     [], (6424, 101), {"total_allocations": (101,), "peak_bytes": (6424,)}),
    "dlopen_leak": ("dlopen_leak", ["dlopen_leak.c", "e2e_plugin.c"],
                    [("plugin_record", 6, 1200, {"allocations": 6, "function": "make_record",
                                                 "module": "e2e_plugin"})],
                    [], None, {}),
    "threads": ("threads", ["threads.c"],
                [("thread_block", 10, 2560, {"allocations": 10, "function": "worker"})],
                ["thread_churn"], None, {"total_allocations": 8010}),
    "realloc_chain": ("realloc_chain", ["realloc_chain.c"],
                      [("chain_malloc", 1, 5000,
                        {"grown_by": ["chain_r1", "chain_grow", "chain_final"]}),
                       ("realloc_null", 1, 48, {})],
                      ["chain_final", "chain_r1", "chain_grow"], (5048, 2),
                      {"total_reallocs": 3}),
    "reallocarray": ("reallocarray", ["reallocarray.c"],
                     [("reallocarray_new", 1, 120, {}),
                      ("reallocarray_seed", 1, 360, {"grown_by": ["reallocarray_grow"]})],
                     ["reallocarray_grow"], (480, 2), {}),
    "calloc": ("calloc", ["calloc.c"],
               [("calloc_leak", 3, 504, {"allocations": 3})],
               ["calloc_freed"], (504, 3), {"total_allocations": 53, "total_frees": 50}),
    "memalign": ("memalign", ["memalign.c"],
                 [("posix_memalign", 1, 100, {}), ("aligned_alloc", 1, 256, {}),
                  ("memalign", 1, 72, {}), ("valloc", 1, 300, {}), ("pvalloc", 1, 8192, {})],
                 ["posix_memalign_freed"], (8920, 5), {"total_allocations": 25}),
    "cxx_new": ("cxx_new", ["cxx_new.cpp"],
                [("cxx_new", 2, 80, {"allocations": 2, "cxx": True}),
                 ("cxx_new_array", 1, 100, {"allocations": 1, "cxx": True})],
                ["cxx_deleted"], None, {}),
    "underscore_exit": ("underscore_exit", ["underscore_exit.c"],
                        [("before_exit", 4, 308, {"allocations": 4})],
                        ["churn_before_exit"], (308, 4), {"total_allocations": 104}),
    "signal_malloc": ("signal_malloc", ["signal_malloc.c"],
                      [("in_handler", 5, 320, {"allocations": 5, "function": "on_usr1"})],
                      ["handler_churn", "handler_bin", "main_churn"], None, {}),
    "clean": ("clean", ["clean.c"], [], [], (0, 0),
              {"total_allocations": (2006,), "total_frees": (2006,), "total_reallocs": (2,)}),
}


def case_simple(ctx, name):
    prog, sources, leaks, no_leaks, total, minimums = SIMPLE[name]
    trace = os.path.join(ctx.workdir, "trace.lht")
    lh_run(ctx, [ctx.prog(prog)], out=trace)
    rep = load_report(ctx, trace)
    expect_program(ctx, rep, prog)
    for mk, blocks, nbytes, kw in leaks:
        expect_site(ctx, rep, mk, blocks, nbytes, **kw)
    for mk in no_leaks:
        expect_no_leak(ctx, rep, mk)
    expect_only(ctx, rep, sources, [m[0] for m in leaks])
    if total is not None:
        expect_total(ctx, rep, *total)
    summ = rep["summary"]
    for key, want in minimums.items():
        if isinstance(want, tuple):
            ctx.check(summ.get(key) == want[0], "summary.%s" % key, want[0], summ.get(key))
        else:
            ctx.check(isinstance(summ.get(key), int) and summ[key] >= want,
                      "summary.%s" % key, ">= %d" % want, summ.get(key))
    if name == "lost_nodes":
        check_text_report(ctx, trace)
    if name == "growing_list":
        res = run(ctx, [ctx.lh, "report", trace, "--format", "json", "--top", "1"])
        try:
            n_sites = len(json.loads(res.stdout)["sites"])
        except (ValueError, KeyError):
            n_sites = None
        ctx.check(res.returncode == 0 and n_sites == 1, "report --top 1 lists one site",
                  "exit 0, 1 site", "exit %d, %s sites" % (res.returncode, n_sites))
    if name == "underscore_exit":
        ctx.log("exit_kind for _exit: %r, clean_exit %r" % (summ.get("exit_kind"),
                                                            summ.get("clean_exit")))
        ctx.check("exit" in str(summ.get("exit_kind", "")).lower()
                  and str(summ.get("exit_kind")).lower() not in ("exit", "normal"),
                  "summary.exit_kind after _exit(0)", "an _exit kind", summ.get("exit_kind"))
    elif name in ("clean", "lost_nodes"):
        ctx.check(summ.get("clean_exit") is True, "summary.clean_exit", True,
                  summ.get("clean_exit"))
    if name == "clean":
        ctx.check(summ.get("total_events", 0) >= 4014, "summary.total_events",
                  ">= 4014", summ.get("total_events"))
    check_mode(ctx, trace)


# ---------------------------------------------------------------------------------------
# Cases with their own shape
# ---------------------------------------------------------------------------------------

def check_text_report(ctx, trace):
    """The text report: a summary, then Valgrind-style at/by lines per site."""
    res = run(ctx, [ctx.lh, "report", trace])
    where = marker("lost_node")
    at = re.compile(r"^\s*at node_new \((?:.*/)?%s:%d\)" % (re.escape(where[0]), where[1]),
                    re.M)
    by = re.compile(r"^\s*by main \((?:.*/)?lost_nodes\.c:\d+\)", re.M)
    ctx.check(res.returncode == 0 and at.search(res.stdout) and by.search(res.stdout),
              "text report", "'at node_new (%s:%d)' then 'by main (lost_nodes.c:N)'" % where,
              "exit %d:\n%s" % (res.returncode, res.stdout[:1200]))
    ctx.check("192" in res.stdout, "text report mentions the 192 leaked bytes", "192",
              res.stdout[:600])


def parse_fork_stdout(ctx, out):
    m = re.search(r"parent (\d+) child (\d+)", out)
    if not m:
        raise Failure("fork_leak did not print its pids\n    expected: 'parent P child C'\n"
                      "    got:      %r" % out)
    return int(m.group(1)), int(m.group(2))


def check_fork_traces(ctx, parent_trace, child_trace, ppid, cpid):
    srcs = ["fork_leak.c"]
    rep = load_report(ctx, parent_trace)
    expect_site(ctx, rep, "parent_leak", 3, 333, allocations=3, label="parent trace: ")
    expect_no_leak(ctx, rep, "child_leak", label="parent trace: ")
    expect_only(ctx, rep, srcs, ["parent_leak"], label="parent trace: ")
    ctx.check(rep["summary"].get("pid") == ppid, "parent trace: summary.pid", ppid,
              rep["summary"].get("pid"))
    crep = load_report(ctx, child_trace)
    expect_site(ctx, crep, "child_leak", 5, 1110, allocations=5, label="child trace: ")
    expect_no_leak(ctx, crep, "parent_leak", label="child trace: ")
    expect_only(ctx, crep, srcs, ["child_leak"], label="child trace: ")
    ctx.check(crep["summary"].get("pid") == cpid, "child trace: summary.pid", cpid,
              crep["summary"].get("pid"))
    check_mode(ctx, parent_trace)
    check_mode(ctx, child_trace)


def case_fork(ctx):
    """-o FILE: the parent writes FILE, the forked child FILE.<childpid>."""
    trace = os.path.join(ctx.workdir, "trace.lht")
    res = lh_run(ctx, [ctx.prog("fork_leak")], out=trace)
    ppid, cpid = parse_fork_stdout(ctx, res.stdout)
    want = sorted(["trace.lht", "trace.lht.%d" % cpid])
    got = trace_files(ctx.workdir)
    if not ctx.check(got == want, "trace files after fork", want, got):
        return
    check_fork_traces(ctx, trace, trace + ".%d" % cpid, ppid, cpid)


def case_fork_default(ctx):
    """Default names: leakhound.<prog>.<pid>.lht for the parent and the child."""
    res = lh_run(ctx, [ctx.prog("fork_leak")])
    ppid, cpid = parse_fork_stdout(ctx, res.stdout)
    pname = "leakhound.fork_leak.%d.lht" % ppid
    cname = "leakhound.fork_leak.%d.lht" % cpid
    got = trace_files(ctx.workdir)
    if not ctx.check(got == sorted([pname, cname]), "trace files after fork (default names)",
                     sorted([pname, cname]), got):
        return
    ctx.check("leakhound: trace written to" in res.stderr and pname in res.stderr,
              "stderr names the parent's trace", "leakhound: trace written to ..." + pname,
              res.stderr.strip()[-400:])
    check_fork_traces(ctx, os.path.join(ctx.workdir, pname), os.path.join(ctx.workdir, cname),
                      ppid, cpid)


def case_fork_inherit(ctx):
    """A pre-fork server's worker: the child's trace is read as if the heap it inherited had
    been recorded in it (analysis/trace.h). fork_inherit's parent allocates 100 blocks of 64
    bytes and forks; the child frees 50 of them, leaks 7 blocks of 300 bytes and exits.
    Read alone (without the parent's trace) its 50 frees were unmatched."""
    trace = os.path.join(ctx.workdir, "fi.lht")
    res = lh_run(ctx, [ctx.prog("fork_inherit")], out=trace)
    _, cpid = parse_fork_stdout(ctx, res.stdout)
    child = "%s.%d" % (trace, cpid)
    rep = load_report(ctx, child)
    summ = rep["summary"]
    got = {k: summ.get(k) for k in ("unmatched_frees", "total_frees", "total_allocations")}
    ctx.check(got == {"unmatched_frees": 0, "total_frees": 50, "total_allocations": 107},
              "child: every free of an inherited block matches its allocation in the parent",
              "0 unmatched, 50 frees, 107 allocations (100 inherited + 7)", got)
    # Its leaks are its own: the 50 inherited blocks still live at exit are the parent's
    # (the heap it started with), said apart, not counted.
    expect_site(ctx, rep, "inherit_child_leak", 7, 2100, allocations=7, label="child: ")
    expect_no_leak(ctx, rep, "inherit_table", label="child: ")
    got = {k: summ.get(k) for k in ("leaked_bytes", "leaked_blocks", "leak_sites")}
    got["inherited"] = summ.get("inherited", {})
    got["inherited"].pop("fork_time_s", None)
    want = {"leaked_bytes": 2100, "leaked_blocks": 7, "leak_sites": 1,
            "inherited": {"from": trace, "blocks": 100, "bytes": 6400, "live_blocks": 50,
                          "live_bytes": 3200}}
    ctx.check(got == want, "child: leaked (its own) and inherited", want, got)
    text = run(ctx, [ctx.lh, "report", child]).stdout
    line = "  inherited:     6.2 KiB (6400 bytes) in 100 blocks live at the fork, from %s; " \
        "50 blocks (3200 bytes) still live, not counted above" % trace
    ctx.check(line in text.splitlines(), "child: text report's inherited line", line,
              text[:1200])
    # The parent's trace gone: the child alone, said in one line.
    os.rename(trace, trace + ".away")
    res = run(ctx, [ctx.lh, "report", child, "--format", "json"])
    warn = [l for l in res.stderr.splitlines() if "inherited heap" in l]
    ctx.check(res.returncode == 0 and len(warn) == 1 and "analyzed alone" in warn[0]
              and trace in warn[0], "child without its parent's trace: one line",
              "exit 0, 'inherited heap not read (%s: ...): analyzed alone'" % trace,
              "exit %d, %r" % (res.returncode, res.stderr.strip()[-600:]))
    alone = json.loads(res.stdout)["summary"] if res.returncode == 0 else {}
    got = {k: alone.get(k) for k in ("unmatched_frees", "leaked_bytes", "inherited")}
    ctx.check(got == {"unmatched_frees": 50, "leaked_bytes": 2100, "inherited": None},
              "child read alone", "50 unmatched frees, 2100 bytes leaked, nothing inherited",
              got)


def case_fork_chain(ctx):
    """A grandchild's trace is seeded through its parent's, itself seeded from the
    grandparent's: fork_chain's grandchild frees 10 blocks of 64 bytes the grandparent
    allocated and 10 of 96 its parent did (whose file the agent opened at the fork so that
    the grandchild could name it): 0 unmatched frees (read alone: 20)."""
    trace = os.path.join(ctx.workdir, "fc.lht")
    res = lh_run(ctx, [ctx.prog("fork_chain")], out=trace)
    m = re.search(r"child (\d+) grandchild (\d+)", res.stdout)
    if not ctx.check(m is not None, "fork_chain's pids", "child C grandchild G", res.stdout):
        return
    mid, leaf = "%s.%s" % (trace, m.group(1)), "%s.%s" % (trace, m.group(2))
    got = []
    for t in (mid, leaf):
        s = load_report(ctx, t)["summary"]
        inh = s.get("inherited") or {}
        got.append((s.get("total_frees"), s.get("unmatched_frees"), inh.get("from"),
                    inh.get("blocks"), inh.get("bytes"), inh.get("live_blocks")))
    want = [(0, 0, trace, 10, 640, 10), (20, 0, mid, 20, 1600, 0)]
    ctx.check(got == want, "child and grandchild: (frees, unmatched, inherited from, blocks, "
              "bytes, still live)", want, got)


def case_exec_nofollow(ctx):
    """With --no-follow-exec the exec'd program runs untraced: one trace, the parent's."""
    trace = os.path.join(ctx.workdir, "trace.lht")
    res = lh_run(ctx, [ctx.prog("exec_parent")], out=trace, extra=["--no-follow-exec"],
                 expect_status=3)
    ctx.check("exec_child: preload=no" in res.stdout, "exec'd program's LD_PRELOAD",
              "exec_child: preload=no", res.stdout.strip())
    got = trace_files(ctx.workdir)
    if not ctx.check(got == ["trace.lht"], "trace files (no trace for the exec'd program)",
                     ["trace.lht"], got):
        return
    rep = load_report(ctx, trace)
    expect_program(ctx, rep, "exec_parent")
    expect_site(ctx, rep, "before_exec", 2, 128, allocations=2)
    expect_no_leak(ctx, rep, "exec_child")
    ctx.check("exec" in str(rep["summary"].get("exit_kind", "")).lower(),
              "summary.exit_kind of a process that called execve", "exec",
              rep["summary"].get("exit_kind"))


def case_exec_follow(ctx):
    """With --follow-exec the exec'd program is traced too (its own trace file)."""
    trace = os.path.join(ctx.workdir, "trace.lht")
    res = lh_run(ctx, [ctx.prog("exec_parent")], out=trace, extra=["--follow-exec"],
                 expect_status=3, written="trace.lht.1")
    ctx.check("exec_child: preload=yes" in res.stdout, "exec'd program's LD_PRELOAD",
              "exec_child: preload=yes", res.stdout.strip())
    files = trace_files(ctx.workdir)
    ctx.log("trace files: %s" % files)
    if not ctx.check(len(files) >= 2, "trace files with --follow-exec",
                     "the parent's and the exec'd program's", files):
        return
    reps = {f: load_report(ctx, os.path.join(ctx.workdir, f)) for f in files}
    by_prog = {}
    for f, rep in reps.items():
        by_prog.setdefault(os.path.basename(rep["summary"].get("program") or ""), []).append(f)
    if not ctx.check(len(by_prog.get("exec_parent", [])) == 1
                     and len(by_prog.get("exec_child", [])) == 1,
                     "one trace per program", "exec_parent: 1, exec_child: 1", by_prog):
        return
    prep = reps[by_prog["exec_parent"][0]]
    crep = reps[by_prog["exec_child"][0]]
    expect_site(ctx, prep, "before_exec", 2, 128, allocations=2, label="exec_parent trace: ")
    expect_no_leak(ctx, prep, "exec_child", label="exec_parent trace: ")
    expect_site(ctx, crep, "exec_child", 3, 144, allocations=3, label="exec_child trace: ")
    expect_no_leak(ctx, crep, "before_exec", label="exec_child trace: ")
    for f in files:
        check_mode(ctx, os.path.join(ctx.workdir, f))


def expect_snapshot_graph(ctx, trace, lost_line, count_total):
    """`leakhound shell TRACE` loads the exit snapshot's contents (the graph line is not
    "none"), says lost_line (exactly) and `count` ends with count_total (a string, or a
    compiled pattern the line must match whole)."""
    res = run(ctx, [ctx.lh, "shell", trace, "-c", "summary"])
    lines = res.stdout.splitlines()
    graph = [ln for ln in lines if ln.startswith("graph: ")]
    ctx.check(res.returncode == 0 and len(graph) == 1 and not graph[0].startswith("graph: none"),
              "shell %s summary: the exit snapshot's contents load" % os.path.basename(trace),
              "graph: N roots, ...", graph or res.stderr.strip()[-400:])
    if lost_line is not None:
        ctx.check(lost_line in lines, "shell summary: what the snapshot lost", lost_line, lines)
    res = run(ctx, [ctx.lh, "shell", trace, "-c", "count"])
    last = res.stdout.strip().splitlines()[-1:] or [""]
    ok = last[0] == count_total if isinstance(count_total, str) else \
        count_total.fullmatch(last[0]) is not None
    ctx.check(ok, "shell count: its total line", getattr(count_total, "pattern", count_total),
              last[0])
    return lines


C_LOST = ("definitely lost: 144 bytes in 3 blocks; indirectly lost: 0 bytes in 0 blocks; "
          "possibly lost: 0 bytes in 0 blocks; still reachable: 0 bytes in 0 blocks")


def case_exec_wrapper(ctx):
    """By default a wrapper is seen through (issue 13): a shell script that runs a command
    of its own ($(...): a child) and then execs the program. The script's trace and its
    child's are removed (run says so in one line), and the program's trace is moved to the
    name asked for (-o) with its exit snapshot's contents file, which still loads: the
    trace holds the program's leak and not the script's."""
    script = os.path.join(ctx.workdir, "wrapper.sh")
    with open(script, "w") as f:
        f.write('#!/bin/sh\nword=$(/bin/echo child)\nexec "$@"\n')
    os.chmod(script, 0o755)
    trace = os.path.join(ctx.workdir, "trace.lht")
    res = lh_run(ctx, [script, ctx.prog("exec_child")], out=trace, expect_status=3)
    ctx.check("exec_child: preload=yes" in res.stdout, "the program behind the wrapper is "
              "traced", "exec_child: preload=yes", res.stdout.strip())
    got = sorted(os.listdir(ctx.workdir))
    want = ["trace.lht", "trace.snap1.lhs", "wrapper.sh"]
    ctx.check(got == want, "files: the program's trace and its snapshot, under the name "
              "asked for; no wrapper's trace", want, got)
    removed = [ln for ln in res.stderr.splitlines() if "removed" in ln]
    ctx.check(len(removed) == 1 and re.match(
        r"^leakhound: removed 2 traces of the wrappers \((sh|dash)\) and their own child "
        r"processes \(before the program was exec'd\)$", removed[0]) is not None,
        "run's line about the wrappers' traces", "removed 2 traces of the wrappers (sh) ...",
        removed or res.stderr.strip()[-600:])
    ctx.check(not any(ln.startswith("leakhound:   ") for ln in res.stderr.splitlines()),
              "no list of traces: one is left", "no list", res.stderr.strip()[-600:])
    ctx.check(not any("not traced" in ln for ln in res.stderr.splitlines()),
              "no line about untraced programs: the wrapper's $(echo) is the wrapper's",
              "none", res.stderr.strip()[-600:])
    rep = load_report(ctx, trace)
    expect_program(ctx, rep, "exec_child")
    expect_site(ctx, rep, "exec_child", 3, 144, allocations=3)
    expect_snapshot_graph(ctx, trace, C_LOST, "total 3 blocks, 144 B in 1 group")


def case_exec_untraced(ctx):
    """A shell script that runs its programs as children (no exec: the usual start script)
    is the traced program, and its children are not traced by default. run says so in one
    line, naming each program once (`true` runs twice), so whoever traced the script knows
    its work ran untraced and how to trace it; with --follow-exec the children have traces
    and the line is gone."""
    script = os.path.join(ctx.workdir, "start.sh")
    with open(script, "w") as f:
        f.write('#!/bin/sh\n/bin/true\n%s\n/bin/true\n' % ctx.prog("exec_child"))
    os.chmod(script, 0o755)
    trace = os.path.join(ctx.workdir, "trace.lht")
    res = lh_run(ctx, [script], out=trace)
    got = [ln for ln in res.stderr.splitlines() if "not traced" in ln]
    want = ["leakhound: sh started 3 programs that were not traced (true, exec_child); "
            "leakhound run --follow-exec traces them too"]
    ctx.check(got == want, "run's line about the script's untraced programs", want,
              got or res.stderr.strip()[-600:])
    got = trace_files(ctx.workdir)
    ctx.check(got == ["trace.lht"], "trace files: the script's", ["trace.lht"], got)
    for f in trace_files(ctx.workdir):
        os.unlink(os.path.join(ctx.workdir, f))
    res = lh_run(ctx, [script], out=trace, extra=["--follow-exec"])
    got = [ln for ln in res.stderr.splitlines() if "not traced" in ln]
    ctx.check(got == [], "with --follow-exec: no such line", [], got)
    progs = sorted(ln.split()[1] for ln in res.stderr.splitlines()
                   if ln.startswith("leakhound:   "))
    want = ["exec_child", "sh", "true", "true"]
    ctx.check(progs == want, "with --follow-exec: the traces listed", want, progs)


def case_exec_wrapper_fork(ctx):
    """A wrapper script exec'ing a pre-fork server (fork_inherit): the program's trace is
    moved from trace.lht.1 to trace.lht, and its worker's trace, which names its parent as
    trace.lht.1, still reads the inherited heap from it (the ".1" the agent added dropped,
    the same exe required): 0 unmatched frees, 100 blocks inherited from trace.lht."""
    script = os.path.join(ctx.workdir, "wrapper.sh")
    with open(script, "w") as f:
        f.write('#!/bin/sh\nexec "$@"\n')
    os.chmod(script, 0o755)
    trace = os.path.join(ctx.workdir, "trace.lht")
    res = lh_run(ctx, [script, ctx.prog("fork_inherit")], out=trace)
    _, cpid = parse_fork_stdout(ctx, res.stdout)
    child = "%s.%d" % (trace, cpid)
    got = trace_files(ctx.workdir)
    want = sorted(["trace.lht", os.path.basename(child)])
    ctx.check(got == want, "trace files: the program's, as asked, and its worker's", want, got)
    res = run(ctx, [ctx.lh, "report", child, "--format", "json"])
    summ = json.loads(res.stdout)["summary"] if res.returncode == 0 else {}
    inh = summ.get("inherited") or {}
    got = (summ.get("unmatched_frees"), inh.get("from"), inh.get("blocks"), inh.get("bytes"))
    want = (0, trace, 100, 6400)
    ctx.check(got == want and "inherited heap not read" not in res.stderr,
              "worker: (unmatched frees, inherited from, blocks, bytes)", want,
              "%s %s" % (got, res.stderr.strip()[-400:]))


def case_exec_env_perl(ctx):
    """A `#!/usr/bin/env perl` script run with -o FILE: env's trace is removed and the
    Perl program's is FILE (not FILE.1), its exit snapshot (mode full) loading through the
    shell: `count` totals the perl objects the summary counts."""
    if not shutil.which("perl"):
        raise Skip("no perl on PATH")
    script = os.path.join(ctx.workdir, "p.pl")
    with open(script, "w") as f:
        f.write('#!/usr/bin/env perl\nmy @keep = map { "x" x 100 } 1 .. 50;\nprint "ok\\n";\n')
    os.chmod(script, 0o755)
    trace = os.path.join(ctx.workdir, "app.lht")
    res = run(ctx, [ctx.lh, "run", "-o", trace, "--", "./p.pl"])
    ctx.check(res.returncode == 0 and res.stdout == "ok\n", "run ./p.pl", "exit 0, ok",
              "exit %d, %r: %s" % (res.returncode, res.stdout, res.stderr[-600:]))
    lines = res.stderr.splitlines()
    want = ["leakhound: removed 1 trace of the wrappers (env) and their own child processes "
            "(before the program was exec'd)", "leakhound: trace written to app.lht"]
    ctx.check(lines[-2:] == want, "run's last lines", want, lines)
    got = sorted(os.listdir(ctx.workdir))
    want = ["app.lht", "app.snap1.lhs", "p.pl"]
    ctx.check(got == want, "files: the Perl program's trace and snapshot, as asked", want, got)
    rep = load_report(ctx, trace)
    expect_program(ctx, rep, "perl")
    ctx.check(rep["summary"].get("argv") == ["perl", "./p.pl"], "summary.argv",
              ["perl", "./p.pl"], rep["summary"].get("argv"))
    res = run(ctx, [ctx.lh, "shell", trace, "-c", "summary"])
    m = re.search(r"^perl [0-9.]+ heap: (\d+) objects, [0-9.]+ [KM]?i?B;", res.stdout, re.M)
    if not ctx.check(m is not None, "shell summary: the perl heap read from the contents",
                     "perl V heap: N objects, ...", res.stdout.strip()[-600:]):
        return
    groups = len(re.findall(r"^\s+\d+\s+\d+\s", run(ctx, [ctx.lh, "shell", trace, "-c",
                                                             "count"]).stdout, re.M))
    # The count's bytes are its groups' sum, rounded apart from the summary's: the objects.
    expect_snapshot_graph(ctx, trace, None, re.compile(r"total %s perl objects, [0-9.]+ KiB "
                                                       r"in %d groups" % (m.group(1), groups)))


def case_renamed_trace(ctx):
    """A trace renamed by hand with its snapshot file (X.lht -> Y.lht, X.snap1.lhs ->
    Y.snap1.lhs) still loads that snapshot: the name stored in the trace is gone, the
    reader takes the same suffix after the trace's current stem."""
    old = os.path.join(ctx.workdir, "x.lht")
    lh_run(ctx, [ctx.prog("exec_child")], out=old, expect_status=3)
    new = os.path.join(ctx.workdir, "y.lht")
    os.rename(old, new)
    os.rename(os.path.join(ctx.workdir, "x.snap1.lhs"), os.path.join(ctx.workdir, "y.snap1.lhs"))
    expect_snapshot_graph(ctx, new, C_LOST, "total 3 blocks, 144 B in 1 group")


def case_exec_reexec(ctx):
    """A server that forks its worker and then re-executes itself as the worker's master
    (haproxy -W) is no wrapper: by default the run keeps the worker's trace (a fork child
    of the first image, running the program itself) beside the two images' traces, lists
    all three, and the worker's trace holds its own leak (3 x 96 B) with the first image's
    block as inherited, not as the worker's. The worker's fork time is the fork's: a block
    the parent freed right after the fork, before the child first ran, is still the
    worker's to free."""
    trace = os.path.join(ctx.workdir, "trace.lht")
    res = lh_run(ctx, [ctx.prog("reexec_master")], out=trace, written="trace.lht.1")
    files = trace_files(ctx.workdir)
    workers = [f for f in files if f not in ("trace.lht", "trace.lht.1")]
    if not ctx.check(len(files) == 3 and len(workers) == 1 and
                     re.match(r"^trace\.lht\.\d{2,}$", workers[0]) is not None,
                     "trace files: the first image's, the master's and the worker's",
                     "trace.lht, trace.lht.1, trace.lht.<worker pid>", files):
        return
    ctx.check("removed" not in res.stderr, "no trace removed", "no 'removed' line",
              res.stderr.strip()[-600:])
    if os.geteuid() == 0:
        # seteuid(nobody) and back made the first image reserve two contents files; its
        # exec removed them, unused
        left = sorted(f for f in os.listdir(ctx.workdir) if f.startswith("trace.snap"))
        ctx.check(left == [], "the first image's unused snapshot files removed at its exec",
                  [], left)
    listing = [ln.split() for ln in res.stderr.splitlines() if ln.startswith("leakhound:   ")]
    ctx.check(sorted(row[3] for row in listing if len(row) == 4) == files,
              "run lists the three traces", files, res.stderr.strip()[-600:])
    first = load_report(ctx, trace)
    expect_site(ctx, first, "reexec_first", 1, 40, allocations=1, label="first image: ")
    master = load_report(ctx, os.path.join(ctx.workdir, "trace.lht.1"))
    expect_site(ctx, master, "reexec_master", 2, 48, allocations=2, label="master: ")
    worker = load_report(ctx, os.path.join(ctx.workdir, workers[0]))
    expect_site(ctx, worker, "reexec_worker", 3, 288, allocations=3, label="worker: ")
    expect_no_leak(ctx, worker, "reexec_first", label="worker: ")
    expect_no_leak(ctx, worker, "reexec_shared", label="worker: ")
    ctx.check(worker["summary"].get("unmatched_frees") == 0, "worker: its free of the block "
              "the first image freed right after the fork matches the inherited block",
              "0 unmatched frees", worker["summary"].get("unmatched_frees"))
    ctx.check(worker["summary"].get("pid") == int(workers[0].rsplit(".", 1)[1]),
              "worker trace: summary.pid", workers[0].rsplit(".", 1)[1],
              worker["summary"].get("pid"))


def busy_worker_until(ctx, argv, pidfile, delay, send, what):
    """Starts argv (`leakhound run ... -- busy_worker --pidfile PIDFILE`) in its own
    session, waits for busy_worker's pid file, lets it work `delay` seconds, calls
    send(run's Popen, busy_worker's pid) and waits (30 s at most) for run to return.
    Returns (returncode, stderr text, busy_worker's pid)."""
    ctx.log("$ " + " ".join(argv))
    p = subprocess.Popen(argv, cwd=ctx.workdir, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while not os.path.exists(pidfile):
            if p.poll() is not None or time.monotonic() > deadline:
                out, err = p.communicate()
                raise Failure("busy_worker did not start\n    expected: a pid file\n"
                              "    got:      exit %s, stderr: %s"
                              % (p.returncode, err.decode(errors="replace")[-800:]))
            time.sleep(0.01)
        with open(pidfile) as f:
            pid = int(f.read())
        time.sleep(delay)
        send(p, pid)
        out, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise Failure("leakhound run did not return within 30 s of " + what)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    err = err.decode(errors="replace")
    ctx.log("leakhound run exit %s; stderr: %s" % (p.returncode, err))
    return p.returncode, err, pid


def case_sigkill(ctx):
    """SIGKILL after > 200 ms of work: the trace written so far must load."""
    trace = os.path.join(ctx.workdir, "trace.lht")
    pidfile = os.path.join(ctx.workdir, "pid")
    argv = [ctx.lh, "run", "-o", trace, "--unwind", ctx.unwind, "--",
            ctx.prog("busy_worker"), "--pidfile", pidfile]
    rc, _, _ = busy_worker_until(ctx, argv, pidfile, 0.4,
                                 lambda p, pid: os.kill(pid, signal.SIGKILL),
                                 "its program's SIGKILL")
    ctx.check(rc in (137, -9), "exit status of leakhound run when its program is "
              "SIGKILLed", "137 (or killed by SIGKILL)", rc)
    if not ctx.check(os.path.exists(trace), "trace exists after SIGKILL", trace,
                     trace_files(ctx.workdir)):
        return
    rep = load_report(ctx, trace, killed=True)
    summ = rep["summary"]
    ctx.check(summ.get("clean_exit") is False, "summary.clean_exit after SIGKILL", False,
              summ.get("clean_exit"))
    ctx.check(summ.get("total_allocations", 0) >= 1000, "allocations recorded before SIGKILL",
              ">= 1000", summ.get("total_allocations"))
    found = sites_at(rep, "busy_leak")
    if ctx.check(len(found) == 1, "busy_leak site after SIGKILL", "1 site",
                 [fmt_site(s) for s in rep["sites"][:5]]):
        s = found[0]
        ctx.check(s["leaked_blocks"] >= 1 and s["leaked_bytes"] == 32 * s["leaked_blocks"],
                  "busy_leak figures", "n blocks of 32 B, n >= 1", fmt_site(s))


def case_sigterm_run(ctx):
    """SIGTERM to `leakhound run` itself (a service manager stopping it, `kill` of the pid
    the user sees) reaches the program, and run waits for it and reports its end: the
    program is not left running without anyone to wait for it."""
    trace = os.path.join(ctx.workdir, "trace.lht")
    pidfile = os.path.join(ctx.workdir, "pid")
    argv = [ctx.lh, "run", "-o", trace, "--", ctx.prog("busy_worker"), "--pidfile", pidfile]
    # to leakhound run, not to the program
    rc, err, pid = busy_worker_until(ctx, argv, pidfile, 0.3,
                                     lambda p, pid: os.kill(p.pid, signal.SIGTERM),
                                     "its SIGTERM")
    try:  # the program is ours to reap only through run: gone, or a zombie at most
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        state = "gone"
    if state != "gone":
        os.kill(pid, signal.SIGKILL)
    ctx.check(state in ("gone", "Z"), "the program after SIGTERM to leakhound run",
              "gone", "still running (state %s)" % state)
    ctx.check(rc == 143, "exit status of leakhound run (the program's: SIGTERM)", 143, rc)
    ctx.check("killed by signal 15" in err, "run says how the program ended",
              "'killed by signal 15' on stderr", err[-400:])
    rep = load_report(ctx, trace, killed=True)
    summ = rep["summary"]
    ctx.check(summ.get("clean_exit") is False, "summary.clean_exit after SIGTERM", False,
              summ.get("clean_exit"))
    ctx.check(len(sites_at(rep, "busy_leak")) == 1, "busy_leak site in the trace", "1 site",
              [fmt_site(s) for s in rep["sites"][:5]])


def case_sigusr2_run(ctx):
    """`kill -USR2` of the pid a user sees (`leakhound run`'s: `$!` of the script that
    started it) is the snapshot signal meant for the program: it must reach it (run died of
    the default action: no snapshot, the program left running with nobody to wait for it,
    the trace never finished), and run waits on, as after a SIGTERM."""
    trace = os.path.join(ctx.workdir, "trace.lht")
    pidfile = os.path.join(ctx.workdir, "pid")
    snap = os.path.join(ctx.workdir, "trace.snap1.lhs")
    argv = [ctx.lh, "run", "-o", trace, "--", ctx.prog("busy_worker"), "--pidfile", pidfile]

    def usr2_then_term(p, pid):
        os.kill(p.pid, signal.SIGUSR2)  # to leakhound run, not to the program
        deadline = time.monotonic() + 20
        while not os.path.exists(snap) and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        ctx.check(p.poll() is None, "leakhound run after a SIGUSR2 to it", "still running",
                  "exited %s" % p.returncode)
        time.sleep(0.2)  # the snapshot file is complete once the agent listed it
        os.kill(p.pid, signal.SIGTERM)

    rc, err, pid = busy_worker_until(ctx, argv, pidfile, 0.3, usr2_then_term,
                                     "its SIGUSR2 and SIGTERM")
    try:
        os.kill(pid, 0)
        os.kill(pid, signal.SIGKILL)
        ctx.fails.append("the program after SIGUSR2 and SIGTERM to leakhound run\n"
                         "    expected: gone\n    got:      still running")
    except ProcessLookupError:
        pass
    ctx.check(rc == 143, "exit status of leakhound run (the program's: SIGTERM)", 143, rc)
    res = run(ctx, [ctx.lh, "shell", trace, "-c", "snapshots"])
    labels = re.findall(r"^\*?\s+\d+\s+(\S+)\s+\S+\s+\d", res.stdout, re.M)
    ctx.check(labels[:1] == ["signal-1"], "the SIGUSR2 sent to run took the program's "
              "snapshot", "first snapshot 'signal-1'", res.stdout.strip()[-600:] or
              res.stderr.strip()[-600:])


def case_depth(ctx):
    """--depth 2 caps the recorded stacks; the allocating line is still right."""
    trace = os.path.join(ctx.workdir, "trace.lht")
    lh_run(ctx, [ctx.prog("lost_nodes")], out=trace, extra=["--depth", "2"])
    rep = load_report(ctx, trace)
    expect_site(ctx, rep, "lost_node", 4, 192, allocations=10)
    for s in rep["sites"]:
        n = len([f for f in s.get("frames") or [] if not f.get("inlined")])
        ctx.check(1 <= n <= 2, "frames per site with --depth 2", "1..2", fmt_site(s, 10))
    full = os.path.join(ctx.workdir, "full.lht")
    lh_run(ctx, [ctx.prog("lost_nodes")], out=full)
    frep = load_report(ctx, full)
    s = sites_at(frep, "lost_node")
    ctx.check(len(s) == 1 and len(s[0].get("frames") or []) >= 3,
              "without --depth the stack goes deeper (node_new <- main <- libc start)",
              ">= 3 frames", [fmt_site(x, 10) for x in s])


def case_relinc(ctx):
    """A leak in an inline function of a header found through a relative -I: the frame's
    file is the header's absolute path (the relative directory joined to the compilation
    directory, as Valgrind gives it), not 'relinc/relinc.h', at the line of its malloc."""
    trace = os.path.join(ctx.workdir, "trace.lht")
    lh_run(ctx, [ctx.prog("relinc")], out=trace)
    rep = load_report(ctx, trace)
    header = os.path.join(ctx.build, "tests", "e2e", "relinc", "relinc.h")
    with open(os.path.join(PROG_SRC, "relinc", "relinc.h"), encoding="utf-8") as f:
        line = [n for n, text in enumerate(f, 1) if "/* the leak */" in text][0]
    sites = [s for s in rep["sites"] if s["leaked_bytes"] == 321]
    frames = [f for s in sites for f in s.get("frames") or []
              if f.get("function") == "relinc_make"]
    got = [(s["leaked_blocks"], f.get("file"), f.get("line"), f.get("inlined"))
           for s in sites for f in frames]
    ctx.check(got == [(1, header, line, True)] and os.path.isfile(header),
              "the 321-byte leak's relinc_make frame: blocks, file, line, inlined",
              [(1, header, line, True)], got)


def case_preload_obstacle(ctx):
    """A program LD_PRELOAD cannot reach: run says why in one line instead of only "no
    trace was written". A static binary (found on PATH, and behind a script's #! line) and
    a set-user-ID copy of a dynamic one; a dynamic program is the control."""
    src = os.path.join(ctx.workdir, "st.c")
    with open(src, "w") as f:
        f.write("#include <stdlib.h>\nint main(void){return malloc(10) == NULL;}\n")
    static = os.path.join(ctx.workdir, "static_prog")
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc or subprocess.run([cc, "-static", "-o", static, src],
                                capture_output=True).returncode != 0:
        raise Skip("cannot link a static program here (no libc.a)")
    script = os.path.join(ctx.workdir, "wrapper.sh")
    with open(script, "w") as f:
        f.write("#!%s\n" % static)
    os.chmod(script, 0o755)
    trace = os.path.join(ctx.workdir, "t.lht")
    env = dict(os.environ, PATH=ctx.workdir + ":" + os.environ.get("PATH", ""))
    for argv, shown in ((["static_prog"], static), ([script], static)):
        res = run(ctx, [ctx.lh, "run", "-o", trace, "--"] + argv, env=env)
        want = "leakhound: no trace was written: %s is statically linked" % shown
        ctx.check(res.returncode == 1 and want in res.stderr and not os.path.exists(trace),
                  "run %s: exit 1, says why, no trace" % argv[0], want,
                  "exit %d: %s" % (res.returncode, res.stderr.strip()[-300:]))
    if os.geteuid() == 0 and not os.statvfs(ctx.workdir).f_flag & os.ST_NOSUID:
        suid = os.path.join(ctx.workdir, "suid_true")
        shutil.copy("/bin/true", suid)
        os.chown(suid, 65534, 65534)
        os.chmod(suid, 0o4755)
        res = run(ctx, [ctx.lh, "run", "-o", trace, "--", suid])
        want = "%s is set-user-ID: the loader runs it in secure mode" % suid
        ctx.check(want in res.stderr, "run of a set-user-ID program says why", want,
                  res.stderr.strip()[-300:])
    res = run(ctx, [ctx.lh, "run", "-o", trace, "--", "/bin/true"])
    ctx.check(res.returncode == 0 and os.path.exists(trace) and "no trace" not in res.stderr,
              "control: a dynamic program is traced", "exit 0, trace written",
              "exit %d: %s" % (res.returncode, res.stderr.strip()[-300:]))


def unwind_counts(ctx, trace):
    """(table walks, libunwind fallbacks, checked, differed) from the report's 'unwinding:'
    line, or a Failure."""
    res = run(ctx, [ctx.lh, "report", trace, "--top", "1"])
    m = re.search(r"unwinding: +(\d+) stacks by the unwind table, (\d+) by libunwind .*?"
                  r"(\d+) checked against libunwind, (\d+) differed", res.stdout)
    if res.returncode != 0 or not m:
        raise Failure("`leakhound report %s` has no 'unwinding:' line with the checks: %s"
                      % (trace, (res.stdout + res.stderr)[-1500:]))
    return tuple(int(x) for x in m.groups())


def case_unwind_verify(ctx):
    """The unwind table's stacks equal libunwind's on code without frame pointers: deep
    recursion (1-200 frames, SP- and FP-based frames, a large frame), four threads, a
    library loaded by dlopen, 100 frames of over 64 KiB; a handler that mallocs is left to
    libunwind (signal frame).
    Every stack is compared (LEAKHOUND_UNWIND_VERIFY, set by lh_run): zero differ."""
    ctx.unwind = "table"
    trace = os.path.join(ctx.workdir, "trace.lht")
    res = lh_run(ctx, [ctx.prog("unwind_nofp"), ctx.progs], out=trace)
    ctx.check(res.stdout.strip() == "done 1", "unwind_nofp output", "done 1", res.stdout)
    walks, fallbacks, checked, differed = unwind_counts(ctx, trace)
    rep = load_report(ctx, trace)
    allocs = rep["summary"]["total_allocations"]
    # 400 recursions on the main thread and 400 on each of 4 threads (one allocation at
    # the bottom each), 50 signals, 300 library calls i % 60 deep (one allocation per level
    # on the way back plus one at the bottom).
    want = 400 + 4 * 400 + 100 + 50 + sum(i % 60 + 1 for i in range(300))
    ctx.check(allocs >= want, "allocations recorded", ">= %d" % want, allocs)
    ctx.check(differed == 0, "stacks that differ from libunwind's", 0, differed)
    ctx.check(walks > 1000, "stacks walked by the table", "> 1000", walks)
    # Exactly the 50 signal handlers' stacks go to libunwind (signal frames); any other
    # fallback means the table stopped expressing a frame it should (as when the agent's
    # entry points were realigned and their frames became DW_CFA expressions, or when a
    # CFA offset over 64 KiB did not fit a rule: 51 then, shape_huge's first stack, the
    # stack cache recognising its 99 others).
    ctx.check(fallbacks == 50, "stacks left to libunwind (the 50 signals)", 50, fallbacks)
    # Every stack the table gave or the stack cache recognised was checked: all but the
    # ones libunwind made (and the few allocations of the C library before main).
    ctx.check(checked >= allocs - fallbacks - 50, "stacks checked", ">= %d"
              % (allocs - fallbacks - 50), checked)


def case_rss_agent(ctx):
    """The RSS the report compares with the heap is the program's, not the agent's: a
    program that frees every block, from 2^17 different stacks, has no "memory outside
    malloc" (the agent's table of those stacks alone is over 50 MiB; the bare program's
    peak RSS is 1 MiB)."""
    ctx.unwind = "fp"
    trace = os.path.join(ctx.workdir, "trace.lht")
    lh_run(ctx, [ctx.prog("rss_agent")], out=trace)
    res = run(ctx, [ctx.lh, "report", trace])
    rss = [ln.strip() for ln in res.stdout.splitlines() if "RSS" in ln]
    m = re.match(r"RSS:\s+\S+ \S+ -> \S+ \S+ \(([+-])(\d+(?:\.\d+)?) (B|KiB|MiB|GiB)\) "
                 r"while the heap went 0 B -> 0 B \(\+0 B\), first to last of \d+ samples$",
                 rss[0] if rss else "")
    if not ctx.check(m is not None and len(rss) == 1, "the RSS line, and no other",
                     "RSS: A -> B (+N) while the heap went 0 B -> 0 B (+0 B)...", rss):
        return
    grew = float(m.group(2)) * {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[
        m.group(3)] * (1 if m.group(1) == "+" else -1)
    ctx.check(grew < 8 * (1 << 20), "RSS growth without the agent's memory", "< 8 MiB",
              rss[0])


def flip_build_id(ctx, path):
    """Changes the last byte of the GNU build-id of the ELF file at path, in place."""
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    if not ctx.check(m is not None, "build-id of %s" % path, "one", out[-400:]):
        return
    want = bytes.fromhex(m.group(1))
    with open(path, "rb") as f:
        data = bytearray(f.read())
    at = data.find(want)
    ctx.check(at >= 0 and data.find(want, at + 1) < 0, "the build-id's bytes, once", 1, at)
    data[at + len(want) - 1] ^= 0xff
    with open(path, "wb") as f:
        f.write(bytes(data))


def case_agent_changed(ctx):
    """A report on a trace whose program changed since the run warns about the program;
    leakhound installed anew since the run changes no frame shown (the agent's are cut
    from every stack) and is not warned about."""
    agent = os.path.join(ctx.workdir, "libleakhound.so")
    shutil.copy(os.path.join(ctx.build, "lib", "libleakhound.so"), agent)
    prog = os.path.join(ctx.workdir, "lost_nodes")
    shutil.copy(ctx.prog("lost_nodes"), prog)
    trace = os.path.join(ctx.workdir, "trace.lht")
    env = dict(os.environ, LD_PRELOAD=agent, LEAKHOUND_OUTPUT=trace)
    res = run(ctx, [prog], env=env)
    if not ctx.check(res.returncode == 0 and os.path.exists(trace), "run with the copied agent",
                     "exit 0 and a trace", "%d %s" % (res.returncode, res.stderr[-400:])):
        return
    before = run(ctx, [ctx.lh, "report", trace])
    flip_build_id(ctx, agent)
    flip_build_id(ctx, prog)
    after = run(ctx, [ctx.lh, "report", trace, "--no-symbol-cache"])
    warned = [ln for ln in after.stderr.splitlines() if "differs from the traced one" in ln]
    ctx.check(len(warned) == 1 and prog + ": build-id" in warned[0],
              "build-id warnings: the program's only", "1, about " + prog, warned)
    ctx.check(after.stdout == before.stdout, "the report, agent and program changed",
              "the same as before", after.stdout[-800:])


def case_mode0600(ctx):
    """The trace is created 0600 whatever the umask, -o or default name."""
    trace = os.path.join(ctx.workdir, "trace.lht")
    lh_run(ctx, [ctx.prog("clean")], out=trace)
    if os.path.exists(trace):
        check_mode(ctx, trace)
    sub = os.path.join(ctx.workdir, "default")
    os.mkdir(sub)
    lh_run(ctx, [ctx.prog("clean")], cwd=sub)
    files = trace_files(sub)
    if ctx.check(len(files) == 1 and re.fullmatch(r"leakhound\.clean\.\d+\.lht", files[0]),
                 "default trace name", "leakhound.clean.<pid>.lht", files):
        check_mode(ctx, os.path.join(sub, files[0]))


def case_symlink(ctx):
    """A symlink planted at the output path is not followed."""
    target = os.path.join(ctx.workdir, "precious.txt")
    with open(target, "w") as f:
        f.write("precious\n")
    os.chmod(target, 0o644)
    link = os.path.join(ctx.workdir, "trace.lht")
    os.symlink(target, link)
    res = lh_run(ctx, [ctx.prog("clean")], out=link, expect_status=None)
    with open(target) as f:
        content = f.read()
    ctx.check(content == "precious\n", "symlink target untouched", "'precious\\n'",
              repr(content[:80]))
    ctx.check(stat.S_IMODE(os.stat(target).st_mode) == 0o644, "symlink target mode",
              "0644", "%04o" % stat.S_IMODE(os.stat(target).st_mode))
    ctx.check(0 <= res.returncode < 128, "leakhound run with a planted symlink",
              "exit 0, or a clean failure (0 < status < 128)", res.returncode)
    if res.returncode != 0:
        lines = [ln for ln in res.stderr.splitlines() if ln.startswith("leakhound:")]
        ctx.check(len(lines) >= 1, "a failed run explains itself", "a 'leakhound:' line",
                  res.stderr.strip()[-400:])
    m = re.search(r"^leakhound: trace written to (.*)$", res.stderr, re.M)
    if m:
        written = m.group(1).strip()
        ctx.check(not os.path.islink(written), "the trace it claims to have written is not "
                  "the planted symlink", "a regular file", written)
        if os.path.isfile(written) and not os.path.islink(written):
            load_report(ctx, written)
            check_mode(ctx, written)


# ---------------------------------------------------------------------------------------
# Bad input: damaged traces and bad command lines
# ---------------------------------------------------------------------------------------

def frames_of(data):
    """[(offset, end)] of the frames of a trace, from the file and frame headers."""
    if len(data) < 16:
        raise Failure("base trace shorter than its header")
    info_len = struct.unpack_from("<I", data, 12)[0]
    off = 16 + info_len
    out = []
    while off + 48 <= len(data):
        magic, hlen = struct.unpack_from("<IH", data, off)
        comp_len = struct.unpack_from("<I", data, off + 16)[0]
        if magic != 0x3146484C:
            raise Failure("base trace: no frame magic at offset %d" % off)
        end = off + hlen + comp_len
        out.append((off, end, hlen))
        off = end
    if off != len(data):
        raise Failure("base trace: %d stray bytes after the last frame" % (len(data) - off))
    return out


def base_trace(ctx):
    trace = os.path.join(ctx.workdir, "base.lht")
    lh_run(ctx, [ctx.prog("busy_worker"), "--iterations", "200000"], out=trace)
    with open(trace, "rb") as f:
        data = f.read()
    frames = frames_of(data)
    ctx.log("base trace: %d bytes, %d frames" % (len(data), len(frames)))
    if len(frames) < 3:
        raise Failure("base trace has %d frames; need at least 3 to cut" % len(frames))
    return trace, data, frames


def write_copy(ctx, name, data):
    path = os.path.join(ctx.workdir, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def expect_one_error(ctx, argv, names=None, what=""):
    """Exactly one stderr line, starting 'leakhound:', naming `names`; 0 < exit < 128."""
    res = run(ctx, argv)
    lines = res.stderr.strip("\n").splitlines()
    ctx.check(0 < res.returncode < 128, what + ": exit status", "1..127 (no crash)",
              res.returncode)
    ok = ctx.check(len(lines) == 1 and lines[0].startswith("leakhound:"),
                   what + ": stderr", "exactly one line starting 'leakhound:'", lines[:10])
    if ok and names:
        ctx.check(names in lines[0], what + ": the message names it", names, lines[0])
    return res


def case_badinput(ctx, what):
    lh = ctx.lh
    if what == "missing":
        path = os.path.join(ctx.workdir, "no-such-trace.lht")
        expect_one_error(ctx, [lh, "report", path], "no-such-trace.lht", "missing file")
        return
    if what == "unknown_command":
        expect_one_error(ctx, [lh, "frobnicate"], "frobnicate", "leakhound frobnicate")
        return
    if what == "run_bad_unwind":
        expect_one_error(ctx, [lh, "run", "--unwind", "sideways", "--", ctx.prog("clean")],
                         "sideways", "run --unwind sideways")
        ctx.check(not trace_files(ctx.workdir), "no trace from a refused run", [],
                  trace_files(ctx.workdir))
        return
    if what == "record_opts":
        # run and attach check what the agent records by one rule, with one message each,
        # and attach checks before it looks for the process (pid 2147483647 is none).
        bad = [(["--depth", "0"], "--depth: expected a number from 1 to 256, got '0'"),
               (["--unwind", "sideways"], "CMD: unknown unwinder 'sideways' (table, libunwind "
                "or fp)"),
               (["--sample-rate", "2X"], "CMD: --sample-rate: expected a size of at most 1T "
                "(such as 512K, 64M or 1G), got '2X'"),
               (["--snapshot-every", "500us"], "CMD: --snapshot-every 500us: the agent counts "
                "in milliseconds; use at least 1ms (or 0 for off)"),
               (["--snapshot-every", "25h"], "CMD: --snapshot-every: expected a duration of at "
                "most 24h (such as 500ms, 10s or 1.5m), got '25h'")]
        for opt, msg in bad:
            for cmd, argv in (("run", [lh, "run"] + opt + ["--", ctx.prog("clean")]),
                              ("attach", [lh, "attach", "-p", "2147483647"] + opt)):
                res = run(ctx, argv)
                ctx.check(res.returncode == 2, " ".join(argv[1:]) + ": exit status", 2,
                          res.returncode)
                want = "leakhound: " + msg.replace("CMD", cmd) + "\n"
                ctx.check(res.stderr == want, " ".join(argv[1:]) + ": stderr", want, res.stderr)
        ctx.check(not trace_files(ctx.workdir), "no trace from a refused run", [],
                  trace_files(ctx.workdir))
        return
    if what == "run_missing_prog":
        missing = os.path.join(ctx.workdir, "no-such-program")
        expect_one_error(ctx, [lh, "run", "--", missing], "no-such-program",
                         "run of a program that does not exist")
        return
    if what == "empty":
        path = write_copy(ctx, "empty.lht", b"")
        expect_one_error(ctx, [lh, "report", path], "empty.lht", "empty file")
        return
    trace, data, frames = base_trace(ctx)
    if what == "bogus_flag":
        expect_one_error(ctx, [lh, "report", trace, "--bogus-flag"], "bogus-flag",
                         "report --bogus-flag")
        return
    mid = frames[len(frames) // 2]
    if what in ("truncated", "truncated_salvage"):
        cut = mid[0] + mid[2] + (mid[1] - mid[0] - mid[2]) // 2  # inside the payload
        path = write_copy(ctx, "truncated.lht", data[:cut])
        if what == "truncated":
            expect_one_error(ctx, [lh, "report", path], "truncated.lht",
                             "trace cut mid-frame at byte %d" % cut)
        else:
            rep = load_report(ctx, path, extra=["--salvage"])
            ctx.check(rep["summary"].get("clean_exit") is False, "salvaged: clean_exit",
                      False, rep["summary"].get("clean_exit"))
            ctx.check(rep["summary"].get("total_events", 0) > 0, "salvaged: events",
                      "> 0", rep["summary"].get("total_events"))
        return
    if what == "flipped_byte":
        first = frames[0]
        pos = first[0] + first[2] + (first[1] - first[0] - first[2]) // 2
        b = bytearray(data)
        b[pos] ^= 0x5A
        path = write_copy(ctx, "flipped.lht", bytes(b))
        expect_one_error(ctx, [lh, "report", path], "flipped.lht",
                         "payload byte %d flipped" % pos)
        return
    if what == "bad_magic":
        path = write_copy(ctx, "badmagic.lht", b"LHTRACX\0" + data[8:])
        expect_one_error(ctx, [lh, "report", path], "badmagic.lht", "wrong magic")
        return
    if what == "major99":
        path = write_copy(ctx, "major99.lht", data[:8] + struct.pack("<H", 99) + data[10:])
        expect_one_error(ctx, [lh, "report", path], "major99.lht", "major version 99")
        return
    if what == "frame_boundary":
        path = write_copy(ctx, "boundary.lht", data[:mid[0]])
        rep = load_report(ctx, path)
        summ = rep["summary"]
        ctx.check(summ.get("clean_exit") is False, "cut at a frame boundary: clean_exit",
                  False, summ.get("clean_exit"))
        ctx.check(summ.get("total_events", 0) > 0, "cut at a frame boundary: events",
                  "> 0", summ.get("total_events"))
        res = run(ctx, [lh, "report", path])
        ctx.check(res.returncode == 0, "text report of a trace cut at a frame boundary",
                  "exit 0", "%d: %s" % (res.returncode, res.stderr.strip()[-300:]))
        said = (res.stdout + res.stderr).lower()
        ctx.check("trailer" in said, "the text report says the trace has no trailer",
                  "a mention of the missing trailer", (res.stdout + res.stderr)[:600])
        return
    raise SystemExit("run_e2e: unknown bad-input case %r" % what)


# ---------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------

SPECIAL = {
    "relinc": case_relinc,
    "preload_obstacle": case_preload_obstacle,
    "fork": case_fork,
    "fork_default": case_fork_default,
    "fork_inherit": case_fork_inherit,
    "fork_chain": case_fork_chain,
    "exec_nofollow": case_exec_nofollow,
    "exec_follow": case_exec_follow,
    "exec_wrapper": case_exec_wrapper,
    "exec_untraced": case_exec_untraced,
    "exec_reexec": case_exec_reexec,
    "exec_env_perl": case_exec_env_perl,
    "exec_wrapper_fork": case_exec_wrapper_fork,
    "renamed_trace": case_renamed_trace,
    "sigkill": case_sigkill,
    "depth": case_depth,
    "mode0600": case_mode0600,
    "sigterm_run": case_sigterm_run,
    "sigusr2_run": case_sigusr2_run,
    "symlink": case_symlink,
    "unwind_verify": case_unwind_verify,
    "rss_agent": case_rss_agent,
    "agent_changed": case_agent_changed,
}
BADINPUT = ["truncated", "truncated_salvage", "flipped_byte", "bad_magic", "major99", "empty",
            "missing", "bogus_flag", "unknown_command", "frame_boundary", "run_bad_unwind",
            "run_missing_prog", "record_opts"]


def all_cases():
    return list(SIMPLE) + list(SPECIAL)


def run_case(build, name, unwind, keep, verbose):
    """True passed, False failed, None skipped (Skip: something this machine lacks)."""
    label = "%s.%s" % (name, unwind) if unwind else name
    base = os.path.join(build, "tests", "e2e", "work")
    os.makedirs(base, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix=label + ".", dir=base)
    ctx = Ctx(build, unwind, workdir, verbose)
    for need in (ctx.lh, os.path.join(build, "lib", "libleakhound.so"), ctx.progs):
        if not os.path.exists(need):
            print("FAIL %s: %s is missing (build it first)" % (label, need))
            return False
    t0 = time.monotonic()
    try:
        if name in SIMPLE:
            case_simple(ctx, name)
        elif name in SPECIAL:
            SPECIAL[name](ctx)
        elif name.startswith("badinput."):
            case_badinput(ctx, name[len("badinput."):])
        else:
            raise SystemExit("run_e2e: unknown case %r (see --list)" % name)
    except Skip as e:
        print("skip %s: %s" % (label, e))
        shutil.rmtree(workdir, ignore_errors=True)
        return None
    except Failure as e:
        ctx.failures.append(str(e))
    dt = time.monotonic() - t0
    if ctx.failures:
        print("FAIL %s (%.1f s; files kept in %s)" % (label, dt, workdir))
        for f in ctx.failures:
            print("  - " + f)
        return False
    print("ok   %s (%.1f s)" % (label, dt))
    if not keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", help="build directory (with bin/leakhound, lib/, tests/e2e/progs)")
    ap.add_argument("--case", help="case name, e.g. lost_nodes or badinput.truncated")
    ap.add_argument("--all", action="store_true", help="run every case")
    ap.add_argument("--unwind", choices=["fp", "libunwind", "table"],
                    help="unwinder for leakhound run")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    ap.add_argument("--list", action="store_true", help="print the case names")
    ap.add_argument("-v", "--verbose", action="store_true", help="show commands and output")
    args = ap.parse_args()
    if args.list:
        print("\n".join(all_cases()))
        print("\n".join("badinput." + b for b in BADINPUT))
        return 0
    if not args.build or not (args.case or args.all):
        ap.error("--build and --case (or --all) are required")
    build = os.path.abspath(args.build)
    if args.all:
        names = [(c, u) for u in ([args.unwind] if args.unwind else ["fp", "libunwind", "table"])
                 for c in all_cases()] + [("badinput." + b, None) for b in BADINPUT]
        results = [run_case(build, c, u, args.keep, args.verbose) for c, u in names]
        print("%d of %d passed, %d skipped" % (results.count(True), len(results),
                                               results.count(None)))
        return 1 if False in results else 0
    unwind = args.unwind
    if not args.case.startswith("badinput.") and unwind is None:
        unwind = "fp"
    ok = run_case(build, args.case, unwind, args.keep, args.verbose)
    return SKIP if ok is None else 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
