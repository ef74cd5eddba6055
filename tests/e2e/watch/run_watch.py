#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""End-to-end tests of `leakhound watch`: targets with a known per-request growth, driven
through a FIFO (a request is one byte written to it: the load command is `printf x > FIFO`),
checked on the verdict, the exit status and the slope.

No timing assertions: the only clock-dependent case (time_python_leak) checks the verdict
and the sign of the slope.

Usage:
  run_watch.py --build DIR [--progs DIR] --case NAME [-v]
  run_watch.py --list
Exit status: 0 pass, 1 fail, 2 usage error.
"""

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time

KIB = 1024
PER_REQUEST = 256 * KIB  # what watch_leaky and the leaking python keep per request
SLOPE_TOLERANCE = 0.20
CMD_TIMEOUT = 50  # seconds, for any one command

# python3 serving the same FIFO protocol; argv[1] FIFO, argv[2] "leak" or "clean".
PY_SERVER = r"""
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
keep = []
while True:
    for _ in os.read(fd, 64):
        block = b"x" * 262144
        if sys.argv[2] == "leak":
            keep.append(block)
        del block
"""

# python3 leaking 256 KiB every 100 ms on its own (time mode).
PY_TIMED_LEAK = r"""
import time
keep = []
while True:
    keep.append(b"x" * 262144)
    time.sleep(0.1)
"""


class Failure(Exception):
    pass


class Ctx:
    def __init__(self, build, progs, workdir, verbose):
        self.lh = os.path.join(build, "bin", "leakhound")
        self.progs = progs
        self.workdir = workdir
        self.verbose = verbose
        self.failures = []

    def prog(self, name):
        return os.path.join(self.progs, name)

    def fifo(self, name="req"):
        path = os.path.join(self.workdir, name)
        os.mkfifo(path)
        return path

    def check(self, cond, what, expected, got):
        if not cond:
            self.failures.append("%s\n    expected: %s\n    got:      %s" % (what, expected, got))
        return cond

    def watch(self, args):
        cmd = [self.lh, "watch"] + args
        if self.verbose:
            print("$ " + " ".join(shlex.quote(a) for a in cmd), file=sys.stderr)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=CMD_TIMEOUT, text=True)
        if self.verbose:
            sys.stderr.write(p.stdout + p.stderr + "exit %d\n" % p.returncode)
        return p

    def watch_json(self, args):
        p = self.watch(["--format", "json"] + args)
        try:
            doc = json.loads(p.stdout)
        except ValueError as e:
            raise Failure("output is not JSON (%s):\n%s\nstderr:\n%s" % (e, p.stdout, p.stderr))
        return p, doc


def load_args(fifo, rounds=10):
    return ["--load", "printf x > %s" % shlex.quote(fifo), "--rounds", str(rounds)]


def check_verdict(ctx, p, doc, verdict, status):
    ctx.check(doc["verdict"] == verdict, "verdict", verdict,
              "%s (%s)" % (doc["verdict"], doc["reason"]))
    ctx.check(p.returncode == status, "exit status", status, p.returncode)
    ctx.check(isinstance(doc["reason"], str) and len(doc["reason"]) > 10, "a reason in words",
              "a sentence", doc["reason"])


def check_slope(ctx, doc, want):
    slope = doc["slope_bytes_per_load"]
    ok = slope is not None and abs(slope - want) <= SLOPE_TOLERANCE * want
    ctx.check(ok, "slope within %d%% of the true growth per request" % (SLOPE_TOLERANCE * 100),
              "%.0f B/load" % want, slope)
    ctx.check(doc["ci95_low"] <= slope <= doc["ci95_high"], "slope inside its CI",
              "ci95_low <= slope <= ci95_high", (doc["ci95_low"], slope, doc["ci95_high"]))
    print("measured: slope %.0f B/load (CI %.0f .. %.0f), R^2 %.4f, verdict %s"
          % (slope, doc["ci95_low"], doc["ci95_high"], doc["r2"], doc["verdict"]))


def check_samples(ctx, doc, n):
    s = doc["samples"]
    ctx.check(len(s) == n, "number of samples", n, len(s))
    for i, smp in enumerate(s):
        for key in ("round", "loads", "rss_bytes", "pss_bytes", "t_s"):
            ctx.check(key in smp, "sample %d has %s" % (i, key), key, sorted(smp))
        ctx.check(smp["rss_bytes"] > 0, "sample %d RSS" % i, "> 0", smp["rss_bytes"])
    if doc["mode"] == "load":
        loads = [smp["loads"] for smp in s]
        per = doc["load"]["per_round"]
        ctx.check(loads == [i * per for i in range(len(s))], "loads so far", "0, n, 2n, ...",
                  loads)


def print_fit(doc):
    key = "slope_bytes_per_load" if doc["mode"] == "load" else "slope_bytes_per_second"
    if doc[key] is not None:
        print("measured: %s %.0f (CI %.0f .. %.0f), R^2 %.4f, verdict %s"
              % (key, doc[key], doc["ci95_low"], doc["ci95_high"], doc["r2"], doc["verdict"]))
    else:
        print("measured: no fit, verdict %s" % doc["verdict"])


# ---------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------

def case_leaky(ctx):
    """Text report of the leaky server: verdict leak, exit 1, the table and the reason."""
    fifo = ctx.fifo()
    p = ctx.watch(load_args(fifo) + ["--", ctx.prog("watch_leaky"), fifo])
    ctx.check(p.returncode == 1, "exit status", 1, p.returncode)
    lines = p.stdout.splitlines()
    verdict = [l for l in lines if l.startswith("verdict: ")]
    ctx.check(len(verdict) == 1 and verdict[0].startswith("verdict: leak: memory grew"),
              "verdict line", "verdict: leak: memory grew ...", verdict)
    ctx.check(any(l.startswith("growth (rss): +") and "per load" in l for l in lines),
              "growth line", "growth (rss): +... per load", p.stdout)
    header = [l for l in lines if l.split()[:2] == ["round", "loads"]]
    ctx.check(len(header) == 1, "table header", "round loads RSS PSS ...", p.stdout)
    rows = [l for l in lines if len(l.split()) >= 6 and l.split()[0].isdigit()
            and l.split()[1].isdigit()]
    ctx.check(len(rows) == 11, "table rows (baseline + 10 rounds)", 11, len(rows))
    print(p.stdout)


def case_leaky_json(ctx):
    fifo = ctx.fifo()
    p, doc = ctx.watch_json(load_args(fifo) + ["-n", "2", "--", ctx.prog("watch_leaky"), fifo])
    check_verdict(ctx, p, doc, "leak", 1)
    check_samples(ctx, doc, 11)
    check_slope(ctx, doc, PER_REQUEST)
    ctx.check(doc["target"]["started"] is True and doc["target"]["exited"] is False,
              "target", "started, not exited", doc["target"])
    ctx.check(doc["load"]["per_round"] == 2 and doc["load"]["failures"] == 0, "load",
              "2 per round, no failures", doc["load"])


def processes_with(text):
    """Pids of live processes whose command line contains text."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open("/proc/%s/stat" % d) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(int(d))
    return found


def case_child_leak(ctx):
    """The leak is in a child of the started command: the tree is summed, and stopping the
    target stops the child too."""
    fifo = ctx.fifo()
    script = "%s %s; true" % (shlex.quote(ctx.prog("watch_leaky")), shlex.quote(fifo))
    p, doc = ctx.watch_json(load_args(fifo) + ["--", "/bin/sh", "-c", script])
    check_verdict(ctx, p, doc, "leak", 1)
    check_samples(ctx, doc, 11)
    check_slope(ctx, doc, PER_REQUEST)
    n_procs = [smp["n_processes"] for smp in doc["samples"]]
    ctx.check(all(n == 2 for n in n_procs), "processes counted", "2 each time", n_procs)
    left = processes_with(fifo)
    ctx.check(not left, "the child was stopped with its parent", "no process", left)


def case_pss(ctx):
    fifo = ctx.fifo()
    p, doc = ctx.watch_json(load_args(fifo, 6) + ["--metric", "pss", "--",
                                                  ctx.prog("watch_leaky"), fifo])
    ctx.check(doc["metric"] == "pss", "metric", "pss", doc["metric"])
    check_verdict(ctx, p, doc, "leak", 1)
    check_slope(ctx, doc, PER_REQUEST)


def case_interrupt(ctx):
    """SIGINT mid-watch: the samples so far are analysed and the target is stopped."""
    fifo = ctx.fifo()
    cmd = [ctx.lh, "watch", "--format", "json"] + load_args(fifo, 1000) + \
        ["--", ctx.prog("watch_leaky"), fifo]
    w = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(2.0)
    w.send_signal(signal.SIGINT)
    out, err = w.communicate(timeout=CMD_TIMEOUT)
    doc = json.loads(out)
    note = doc["target"]["exit_note"] or ""
    ctx.check(note.startswith("interrupted after round "), "note", "interrupted after round N",
              note)
    ctx.check(w.returncode in (1, 2), "exit status", "1 (leak) or 2 (too few samples)",
              w.returncode)
    ctx.check(doc["verdict"] == ("leak" if w.returncode == 1 else "inconclusive"),
              "verdict matches the status", w.returncode, doc["verdict"])
    left = processes_with(fifo)
    ctx.check(not left, "the target was stopped", "no process", left)
    print_fit(doc)


def case_clean(ctx):
    fifo = ctx.fifo()
    p, doc = ctx.watch_json(load_args(fifo) + ["--", ctx.prog("watch_clean"), fifo])
    check_verdict(ctx, p, doc, "no leak", 0)
    check_samples(ctx, doc, 11)
    print_fit(doc)


def case_python_leak(ctx):
    fifo = ctx.fifo()
    p, doc = ctx.watch_json(load_args(fifo, 8) +
                            ["--", sys.executable, "-c", PY_SERVER, fifo, "leak"])
    check_verdict(ctx, p, doc, "leak", 1)
    check_samples(ctx, doc, 9)
    check_slope(ctx, doc, PER_REQUEST)


def case_python_clean(ctx):
    fifo = ctx.fifo()
    p, doc = ctx.watch_json(load_args(fifo, 8) +
                            ["--", sys.executable, "-c", PY_SERVER, fifo, "clean"])
    check_verdict(ctx, p, doc, "no leak", 0)
    check_samples(ctx, doc, 9)
    print_fit(doc)


def exit_midwatch(ctx, prog, verdict, status):
    """The server exits after its 7th request: 1 warm-up + rounds 1..6, so round 5 is the
    last sample; the rest is analysed."""
    fifo = ctx.fifo()
    p, doc = ctx.watch_json(load_args(fifo) + ["--", ctx.prog(prog), fifo, str(256 * KIB), "7"])
    pid = doc["target"]["pid"]
    note = "process %d exited with status 0 after round 5" % pid
    ctx.check(doc["target"]["exited"] is True and doc["target"]["exit_note"] == note,
              "exit note", note, doc["target"])
    ctx.check(note in p.stderr, "message on stderr", note, p.stderr)
    check_samples(ctx, doc, 6)
    check_verdict(ctx, p, doc, verdict, status)
    print_fit(doc)


def case_exit_midwatch(ctx):
    exit_midwatch(ctx, "watch_leaky", "leak", 1)


def case_exit_midwatch_clean(ctx):
    exit_midwatch(ctx, "watch_clean", "no leak", 0)


def case_pid(ctx):
    """-p: a process leakhound did not start is watched, then left running."""
    fifo = ctx.fifo()
    srv = subprocess.Popen([ctx.prog("watch_clean"), fifo])
    try:
        time.sleep(0.3)
        p, doc = ctx.watch_json(["-p", str(srv.pid)] + load_args(fifo, 6))
        check_verdict(ctx, p, doc, "no leak", 0)
        check_samples(ctx, doc, 7)
        ctx.check(doc["target"]["pid"] == srv.pid and doc["target"]["started"] is False
                  and doc["target"]["command"] is None, "target", "pid %d, not started" % srv.pid,
                  doc["target"])
        ctx.check(srv.poll() is None, "the -p process still runs", "running",
                  "exited %s" % srv.returncode)
        print_fit(doc)
    finally:
        srv.kill()
        srv.wait()


def case_time_clean(ctx):
    fifo = ctx.fifo()
    p, doc = ctx.watch_json(["--interval", "200ms", "--duration", "2s", "--",
                             ctx.prog("watch_clean"), fifo])
    check_verdict(ctx, p, doc, "no leak", 0)
    ctx.check(doc["mode"] == "time" and doc["load"] is None, "mode", "time", doc["mode"])
    ctx.check("slope_bytes_per_second" in doc, "slope per second", "present", sorted(doc))
    ctx.check(len(doc["samples"]) >= 5, "samples", ">= 5", len(doc["samples"]))
    print_fit(doc)


def case_time_python_leak(ctx):
    p, doc = ctx.watch_json(["--interval", "250ms", "--duration", "3s", "--",
                             sys.executable, "-c", PY_TIMED_LEAK])
    check_verdict(ctx, p, doc, "leak", 1)
    slope = doc["slope_bytes_per_second"]
    ctx.check(slope is not None and slope > 0, "slope per second", "> 0", slope)
    print_fit(doc)


def case_load_fails(ctx):
    """A load command that always fails must not pass as "no leak"."""
    fifo = ctx.fifo()
    p, doc = ctx.watch_json(["--load", "exit 7", "--rounds", "4", "--",
                             ctx.prog("watch_clean"), fifo])
    check_verdict(ctx, p, doc, "inconclusive", 2)
    ctx.check("all 5 load commands failed" in doc["reason"], "reason",
              "all 5 load commands failed", doc["reason"])
    ctx.check(doc["load"]["failures"] == 5, "failures", 5, doc["load"]["failures"])
    ctx.check("warning: the load command exited with a non-zero status" in p.stderr,
              "warning on stderr", "one warning", p.stderr)


def one_line_error(ctx, p, what, contains=None):
    err = p.stderr.splitlines()
    ctx.check(p.returncode == 3, "%s: exit status" % what, 3, p.returncode)
    ctx.check(len(err) == 1 and err[0].startswith("leakhound: "), "%s: one-line error" % what,
              "leakhound: ...", p.stderr)
    if contains:
        ctx.check(contains in p.stderr, "%s: message" % what, contains, p.stderr)
    ctx.check(p.stdout == "", "%s: nothing on stdout" % what, "", p.stdout)


def case_start_fails(ctx):
    p = ctx.watch(["--load", "true", "--", "/nonexistent/prog"])
    one_line_error(ctx, p, "missing program", "cannot run '/nonexistent/prog'")


def case_badinput(ctx):
    cases = [
        (["-p", "2147483647", "--load", "true"], "no such process"),
        (["-p", "0"], "-p"),
        (["--load", "true"], "which process"),
        ([], "which process"),
        (["--"], "which process"),
        (["--interval", "0", "--", "true"], "watch: --interval: expected a duration from 1ns "
         "to 168h (such as 500ms, 10s or 1.5m), got '0'"),
        (["--interval", "1x", "--", "true"], "--interval"),
        (["--duration", "-1s", "--", "true"], "--duration"),
        (["--rounds", "-1", "--load", "true", "--", "true"], "--rounds"),
        (["--rounds", "0", "--load", "true", "--", "true"], "--rounds"),
        (["-n", "0", "--load", "true", "--", "true"], "-n"),
        (["--rounds", "3", "--", "true"], "need --load"),
        (["--load", "true", "--interval", "1s", "--", "true"], "only without --load"),
        (["--load", "", "--", "true"], "option '--load' needs a value"),  # opts.h's message
        (["--format", "xml", "--", "true"], "--format: expected text or json"),  # opts.h
        (["--metric", "vsz", "--", "true"], "--metric: expected rss or pss"),
        (["--threshold", "12Q", "--", "true"], "watch: --threshold: expected a size of at least "
         "1 (such as 512K, 64M or 1G), got '12Q'"),
        (["--bogus", "--", "true"], "unknown option"),
        (["--rounds"], "needs a value"),
        (["-p", "1", "--", "true"], "not both"),
    ]
    for args, contains in cases:
        p = ctx.watch(args)
        one_line_error(ctx, p, "watch %s" % " ".join(args), contains)


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build")
    ap.add_argument("--progs")
    ap.add_argument("--case")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    if a.list:
        print("\n".join(sorted(CASES)))
        return 0
    if not a.build or a.case not in CASES:
        ap.print_usage(sys.stderr)
        print("cases: " + " ".join(sorted(CASES)), file=sys.stderr)
        return 2
    progs = a.progs or os.path.join(a.build, "tests", "e2e", "watch")
    with tempfile.TemporaryDirectory(prefix="lh-watch-") as work:
        ctx = Ctx(os.path.abspath(a.build), progs, work, a.verbose)
        try:
            CASES[a.case](ctx)
        except Failure as e:
            ctx.failures.append(str(e))
        except subprocess.TimeoutExpired as e:
            ctx.failures.append("timed out: %s" % e)
    if ctx.failures:
        print("FAIL %s:\n  %s" % (a.case, "\n  ".join(ctx.failures)))
        return 1
    print("PASS %s" % a.case)
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
