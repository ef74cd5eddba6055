#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""Sampling mode end to end: `leakhound run --sample-rate 8K` on a program with known
totals; the report's estimates must be within 10% of the truth (the leaked 32 MiB, from
malloc, calloc and realloc, give about 4,000 samples, a relative standard deviation near
2%, so 10% is over four of them),
marked as estimates, from a fraction of the events."""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def exit_snapshot_contents(lh, prog, d):
    """A sampled run takes its exit snapshot without contents unless asked: the graph of a
    sampled trace has only the sampled blocks, so contents would call reachable blocks
    lost (agent/recorder.c). Asked for, they are written as in a full run."""
    fails = []
    for name, flags, want in (("default", [], "none"),
                              ("asked", ["--snapshot-contents", "pointers"], "pointers")):
        sub = os.path.join(d, name)
        os.mkdir(sub)
        trace = os.path.join(sub, "t.lht")
        r = subprocess.run([lh, "run", "--sample-rate", "8K"] + flags + ["-o", trace, "--", prog],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            return ["run %s exited %d: %s" % (name, r.returncode, r.stderr)]
        lhs = sorted(f for f in os.listdir(sub) if f.endswith(".lhs"))
        want_lhs = [] if want == "none" else ["t.snap1.lhs"]
        r = subprocess.run([lh, "shell", trace, "-c", "snapshots"], capture_output=True,
                           text=True, timeout=120)
        rows = [l.split() for l in r.stdout.splitlines() if l.split()[:1] == ["*"]]
        got = (lhs, [(x[2], x[3], x[-1]) for x in rows])
        exp = (want_lhs, [("exit", "exit", want)])
        print("exit snapshot, contents %-8s files %s, snapshots %s %s"
              % (name, got[0], got[1], "ok" if got == exp else "FAIL (want %s)" % (exp,)))
        if got != exp:
            fails.append("exit snapshot contents (%s)" % name)
    return fails


def ticker_policy(lh, build, d):
    """No agent thread in a single-threaded sampled program, its own thread serving a
    signal's snapshot at its next sampled event, and the ticker once it has a thread
    (agent/ticker.c, progs/sampled_ticker.c)."""
    prog = os.path.join(build, "tests", "e2e", "progs", "sampled_ticker")
    trace = os.path.join(d, "ticker.lht")
    r = subprocess.run([lh, "run", "--sample-rate", "8K", "-o", trace, "--", prog],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return ["run sampled_ticker exited %d: %s" % (r.returncode, r.stderr)]
    fails = []
    want = "agent threads: 0 single-threaded, 1 after a thread"
    got = r.stdout.strip()
    print("%-60s %s" % (got, "ok" if got == want else "FAIL (want %r)" % want))
    if got != want:
        fails.append("agent threads")
    r = subprocess.run([lh, "shell", trace, "-c", "snapshots"], capture_output=True,
                       text=True, timeout=120)
    rows = [l.lstrip("* ").split() for l in r.stdout.splitlines()]
    rows = [x for x in rows if x and x[0].isdigit()]
    # The exit snapshot's live blocks are the C library's (stdio, the thread), not counted.
    got = [(x[1], x[5] if x[1] != "exit" else "-") for x in rows]
    want = [("signal-1", "9"), ("exit", "-")]
    print("snapshots (label, live blocks) %-30s %s"
          % (got, "ok" if got == want else "FAIL (want %s)" % (want,)))
    if got != want:
        fails.append("signal snapshot served by the program's thread")
    return fails


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    a = ap.parse_args()
    lh = os.path.join(a.build, "bin", "leakhound")
    prog = os.path.join(a.build, "tests", "e2e", "progs", "sampled")
    fails = []
    with tempfile.TemporaryDirectory() as d:
        sizes = {}
        reps = {}
        for mode, flags in (("full", []), ("sampled", ["--sample-rate", "8K"])):
            trace = os.path.join(d, mode + ".lht")
            r = subprocess.run([lh, "run", "--no-snapshot-at-exit", "-o", trace] + flags +
                               ["--", prog], capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                print("FAIL: run %s exited %d: %s" % (mode, r.returncode, r.stderr))
                return 1
            sizes[mode] = os.path.getsize(trace)
            r = subprocess.run([lh, "report", "--format", "json", trace], capture_output=True,
                               text=True, timeout=120)
            if r.returncode != 0:
                print("FAIL: report %s exited %d: %s" % (mode, r.returncode, r.stderr))
                return 1
            reps[mode] = json.loads(r.stdout)["summary"]
        full, smp = reps["full"], reps["sampled"]

        def close(what, got, want, tol=0.10):
            ok = want and abs(got - want) <= tol * want
            print("%-28s full %-12d sampled %-12d %s" % (what, want, got, "ok" if ok else "FAIL"))
            if not ok:
                fails.append(what)

        # The program's own allocations dominate; libc adds a handful. A sampled trace has
        # no REALLOC records: a realloc is the free of the old block and the
        # allocation of the new one (recorder.c), so its allocations are the full trace's
        # plus its reallocs.
        close("total_allocations", smp["total_allocations"],
              full["total_allocations"] + full["total_reallocs"])
        close("total_allocated_bytes", smp["total_allocated_bytes"],
              full["total_allocated_bytes"])
        close("leaked_bytes", smp["leaked_bytes"], full["leaked_bytes"])
        if full["total_allocated_bytes"] < (200000 * 1000 + 4000 * 4096 + 50000 * 2000 +
                                            50000 * (100 + 3000) + 1000 * 8192 +
                                            1000 * (64 + 8192)):
            fails.append("the full trace misses allocations")
        if full["leaked_bytes"] < 4000 * 4096 + 2 * 1000 * 8192:
            fails.append("the full trace misses leaked blocks")
        if smp.get("estimated") is not True or full.get("estimated") is not False:
            fails.append("estimated flags: full %r sampled %r" % (full.get("estimated"),
                                                                  smp.get("estimated")))
        print("events recorded: full %d, sampled %d; trace bytes: full %d, sampled %d"
              % (full["total_events"], smp["total_events"], sizes["full"], sizes["sampled"]))
        if smp["total_events"] * 5 > full["total_events"]:
            fails.append("the sampled run recorded too many events")
        fails += exit_snapshot_contents(lh, prog, d)
        fails += ticker_policy(lh, a.build, d)
    if fails:
        print("FAIL: " + "; ".join(fails))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
