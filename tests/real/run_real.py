#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""Real programs under leakhound: perl, python3 and sqlite3 run a real workload once bare
and once under `leakhound run`. The traced run must not change what the program does
(same stdout, same exit status) and its trace must load. Whether the figures are sane:
leaked_blocks <= total_allocations, and leaked_blocks is exactly allocations - frees
(reallocs count as neither; frees of blocks the trace never saw are counted apart).

Usage: run_real.py --build DIR --program perl|python3|sqlite3 [--unwind fp|libunwind]
                   [--keep] [-v]
Exit status: 0 pass, 1 fail, 77 the program is not installed (CTest: skipped).
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 300


def workload(name, workdir):
    """argv, extra environment and stdin file of each real workload."""
    if name == "perl":
        return ["/usr/bin/perl", os.path.join(HERE, "workload.pl")], {}, None
    if name == "python3":
        # The system interpreter, not a pyenv shim (a shell script that would exec it).
        return (["/usr/bin/python3", "-S", os.path.join(HERE, "workload.py")],
                {"PYTHONMALLOC": "malloc", "PYTHONHASHSEED": "0"}, None)
    if name == "sqlite3":
        db = os.path.join(workdir, "orders.db")
        return ["/usr/bin/sqlite3", db], {}, os.path.join(HERE, "workload.sql")
    raise SystemExit("run_real: unknown program %r" % name)


def run(argv, env, stdin_path, cwd, verbose):
    if verbose:
        print("$ " + " ".join(argv))
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    try:
        p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=stdin, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
        try:
            out, err = p.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            raise SystemExit("run_real: timed out after %d s: %s" % (TIMEOUT, " ".join(argv)))
    finally:
        if stdin_path:
            stdin.close()
    return p.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--program", required=True, choices=["perl", "python3", "sqlite3"])
    ap.add_argument("--unwind", choices=["fp", "libunwind"])
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    lh = os.path.join(build, "bin", "leakhound")
    name = args.program
    for need in (lh, os.path.join(build, "lib", "libleakhound.so")):
        if not os.path.exists(need):
            print("FAIL real.%s: %s is missing (build it first)" % (name, need))
            return 1

    base = os.path.join(build, "tests", "real", "work")
    os.makedirs(base, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix=name + ".", dir=base)
    failures = []

    def check(cond, what, expected, got):
        if not cond:
            failures.append("%s\n    expected: %s\n    got:      %s" % (what, expected, got))
        return cond

    bare_dir = os.path.join(workdir, "bare")
    traced_dir = os.path.join(workdir, "traced")
    os.mkdir(bare_dir)
    os.mkdir(traced_dir)
    argv, extra_env, stdin_path = workload(name, bare_dir)
    if not os.path.exists(argv[0]):
        print("SKIP real.%s: %s is not installed" % (name, argv[0]))
        return 77
    env = dict(os.environ, **extra_env)
    env.pop("LD_PRELOAD", None)

    t0 = time.monotonic()
    rc_bare, out_bare, err_bare = run(argv, env, stdin_path, bare_dir, args.verbose)
    t_bare = time.monotonic() - t0
    check(rc_bare == 0 and out_bare, "bare run of the workload", "exit 0 with output",
          "exit %d, stderr %s" % (rc_bare, err_bare[-500:]))

    argv, _, _ = workload(name, traced_dir)  # same workload, its own files
    trace = os.path.join(workdir, "trace.lht")
    lh_argv = [lh, "run", "-o", trace]
    if args.unwind:
        lh_argv += ["--unwind", args.unwind]
    t0 = time.monotonic()
    rc_lh, out_lh, err_lh = run(lh_argv + ["--"] + argv, env, stdin_path, traced_dir,
                                args.verbose)
    t_lh = time.monotonic() - t0
    check(rc_lh == rc_bare, "exit status under leakhound", rc_bare,
          "%d, stderr %s" % (rc_lh, err_lh[-500:]))
    if not check(out_lh == out_bare, "stdout under leakhound is the bare stdout",
                 "%d bytes: %r" % (len(out_bare), out_bare[:200]),
                 "%d bytes: %r" % (len(out_lh), out_lh[:200])):
        pass
    check("leakhound: trace written to" in err_lh, "stderr of leakhound run",
          "leakhound: trace written to ...", err_lh.strip()[-300:])

    summ = None
    if os.path.exists(trace):
        rc, out, err = run([lh, "report", trace, "--format", "json", "--top", "10"], None,
                           None, workdir, args.verbose)
        if check(rc == 0, "leakhound report --format json", "exit 0",
                 "exit %d: %s" % (rc, err[-500:])):
            try:
                rep = json.loads(out)
                summ = rep["summary"]
            except (ValueError, KeyError) as e:
                check(False, "report is JSON with a summary", "JSON", "%s: %r" % (e, out[:300]))
        rc, out, err = run([lh, "report", trace, "--top", "3"], None, None, workdir,
                           args.verbose)
        check(rc == 0 and out.strip(), "leakhound report (text)", "exit 0 and a report",
              "exit %d: %s" % (rc, err[-300:]))
    else:
        check(False, "trace file", trace, "missing")

    if summ is not None:
        n_alloc = summ.get("total_allocations", -1)
        n_free = summ.get("total_frees", -1)
        n_leak = summ.get("leaked_blocks", -1)
        check(n_alloc >= 10000, "total_allocations of a real workload", ">= 10000", n_alloc)
        check(0 <= n_leak <= n_alloc, "leaked_blocks <= total_allocations",
              "0..%d" % n_alloc, n_leak)
        # Reallocs count as neither and unmatched frees (of blocks allocated before the
        # agent started) are counted apart, so the live set at exit is exactly this.
        check(n_alloc - n_free == n_leak, "allocations - frees == leaked_blocks",
              n_alloc - n_free, "%d (unmatched_frees %s)" % (n_leak, summ.get("unmatched_frees")))
        check(summ.get("clean_exit") is True, "summary.clean_exit", True,
              summ.get("clean_exit"))
        check(os.path.basename(summ.get("program") or "").startswith(name.rstrip("3")),
              "summary.program", name, summ.get("program"))
        print("real.%s: %d allocations, %d frees, %d reallocs; allocations - frees = %d, "
              "leaked_blocks = %d (%s bytes); %s events, trace %d bytes; bare %.2f s, "
              "traced %.2f s"
              % (name, n_alloc, n_free, summ.get("total_reallocs", -1), n_alloc - n_free,
                 n_leak, summ.get("leaked_bytes"), summ.get("total_events"),
                 os.path.getsize(trace), t_bare, t_lh))
        for s in (rep.get("sites") or [])[:3]:
            fr = (s.get("frames") or [{}])[0]
            print("  top site: %s B in %s blocks at %s (%s:%s) in %s"
                  % (s.get("leaked_bytes"), s.get("leaked_blocks"), fr.get("function"),
                     os.path.basename(fr.get("file") or "?"), fr.get("line"),
                     os.path.basename(fr.get("module") or "?")))

    if failures:
        print("FAIL real.%s (files kept in %s)" % (name, workdir))
        for f in failures:
            print("  - " + f)
        return 1
    print("ok   real.%s" % name)
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
