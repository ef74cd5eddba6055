#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""End-to-end tests of growth over time: `leakhound leaks`, `report --growth`,
`report --temporary`, `counts`, `log`, the snapshot triggers (signal, period, heap growth,
exit) and `run`'s snapshot flags, on the programs in progs/ (growth_freed, transient_peak,
slow_leak, phases). Exact figures; lines come from the marker comments, as in run_e2e.py,
whose helpers this runner shares.

Usage:
  run_growth.py --build DIR --case NAME [--keep] [-v]
  run_growth.py --build DIR --all
  run_growth.py --list
Exit status: 0 pass, 1 fail, 2 usage error.
"""

import json
import math
import os
import re
import shutil
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_e2e as E  # noqa: E402  (the shared helpers: Ctx, run, markers, sites)

Failure = E.Failure


# ---------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------

def lh_json(ctx, args, what):
    """leakhound ARGS --format json, parsed; fails on a non-zero exit."""
    res = E.run(ctx, [ctx.lh] + args + ["--format", "json"])
    if res.returncode != 0:
        raise Failure("`leakhound %s` failed\n    expected: exit 0\n    got:      exit %d, "
                      "stderr: %s" % (" ".join(args), res.returncode, res.stderr.strip()[-800:]))
    try:
        return json.loads(res.stdout)
    except ValueError as e:
        raise Failure("%s: not JSON (%s): %s" % (what, e, res.stdout[:400]))


def record(ctx, prog_argv, extra=(), name="trace.lht"):
    trace = os.path.join(ctx.workdir, name)
    E.lh_run(ctx, prog_argv, out=trace, extra=list(extra))
    return trace


def site_at(sites, name):
    """The sites (of any of our JSON documents) whose allocating frame is marker `name`."""
    where = E.marker(name)
    return [s for s in sites if E.at_line(E.alloc_frame(s)[1], where)]


def fmt(s):
    keep = {k: v for k, v in s.items()
            if not isinstance(v, (list, dict)) or k == "location"}
    if isinstance(keep.get("location"), dict):
        loc = keep["location"]
        keep["location"] = "%s:%s" % (os.path.basename(loc.get("file") or "?"), loc.get("line"))
    return json.dumps(keep, sort_keys=True)


def top_is(ctx, doc, name, what):
    """The first site of doc is at marker name; returns it (or None)."""
    sites = doc.get("sites") or []
    where = E.marker(name)
    if not ctx.check(sites and E.at_line(E.alloc_frame(sites[0])[1], where),
                     what + ": top site", "%s:%d" % where,
                     "\n      ".join(fmt(s) for s in sites[:5]) or "(no sites)"):
        return None
    return sites[0]


def eq(ctx, got, want, what):
    return ctx.check(got == want, what, want, got)


def near(ctx, got, want, tol, what):
    return ctx.check(isinstance(got, (int, float)) and abs(got - want) <= tol, what,
                     "%s (+-%s)" % (want, tol), got)


def expect_error(ctx, argv, names, what, status=2):
    """One stderr line 'leakhound: ...' naming each of names; exit status `status`."""
    res = E.run(ctx, argv)
    lines = res.stderr.strip("\n").splitlines()
    ctx.check(res.returncode == status, what + ": exit status", status, res.returncode)
    if ctx.check(len(lines) == 1 and lines[0].startswith("leakhound:"), what + ": stderr",
                 "one line starting 'leakhound:'", lines[:6]):
        for n in names:
            ctx.check(n in lines[0], what + ": the message says", n, lines[0])
    ctx.check(res.stdout == "", what + ": nothing on stdout", "", res.stdout[:200])


def same_frames(ctx, a, b, what):
    strip = lambda fr: [(f.get("function"), f.get("file"), f.get("line"), f.get("module"),
                         f.get("inlined")) for f in fr or []]
    ctx.check(strip(a.get("frames")) == strip(b.get("frames")), what + ": same frames as "
              "`report`", strip(b.get("frames"))[:4], strip(a.get("frames"))[:4])


# ---------------------------------------------------------------------------------------
# (a) a list that grows while running and is freed at exit
# ---------------------------------------------------------------------------------------

def case_freed_list(ctx):
    trace = record(ctx, [ctx.prog("growth_freed")])
    rep = E.load_report(ctx, trace)
    E.expect_no_leak(ctx, rep, "freed_list_node")
    E.expect_no_leak(ctx, rep, "freed_list_churn")
    E.expect_total(ctx, rep, 0, 0)

    g = lh_json(ctx, ["report", trace, "--growth"], "report --growth")
    eq(ctx, g["summary"].get("boundaries"), "marks", "growth: boundaries")
    eq(ctx, g["summary"].get("points"), 501, "growth: points (500 'request' + 'done')")
    s = top_is(ctx, g, "freed_list_node", "report --growth")
    if s:
        eq(ctx, s.get("growth_bytes_per_mark"), 64, "growth: bytes per mark")
        eq(ctx, s.get("growth_blocks_per_mark"), 1, "growth: blocks per mark")
        eq(ctx, (s.get("grew_intervals"), s.get("intervals")), (500, 500),
           "growth: grew_intervals of intervals")
        eq(ctx, s.get("growing"), True, "growth: growing")
        eq(ctx, s.get("live_bytes", [])[:4] + s.get("live_bytes", [])[-1:],
           [0, 64, 128, 192, 32000], "growth: live bytes at marks 1-4 and 501")
        for k in E.FRAME_KEYS:
            ctx.check(all(k in f for f in s.get("frames") or [{}]), "growth frames have " + k,
                      k, (s.get("frames") or [{}])[0])
    ctx.check(not site_at(g.get("sites", []), "freed_list_churn"), "growth: churn not growing",
              "absent", [fmt(x) for x in site_at(g.get("sites", []), "freed_list_churn")])

    lk = lh_json(ctx, ["leaks", trace], "leaks")
    summ = lk["summary"]
    eq(ctx, (summ.get("boundaries"), summ.get("skip"), summ.get("intervals")),
       ("marks", 1, 499), "leaks: boundaries, skip, intervals")
    s = top_is(ctx, lk, "freed_list_node", "leaks")
    if s:
        eq(ctx, (s.get("leaked_blocks"), s.get("leaked_bytes")), (499, 31936),
           "leaks: blocks and bytes")
        eq(ctx, (s.get("leaked_intervals"), s.get("intervals")), (499, 499),
           "leaks: leaked_intervals of intervals")
        eq(ctx, (s.get("bytes_per_mark"), s.get("blocks_per_mark")), (64, 1),
           "leaks: per mark")
        eq(ctx, s.get("score"), 31936, "leaks: score (bytes x share)")
        eq(ctx, set(s.get("interval_blocks") or []), {1}, "leaks: one block per interval")
    eq(ctx, summ.get("leak_sites"), 1, "leaks: sites (the churn leaks nothing)")

    # A range by label: from the 'done'... no: from the first 'request' to 'done'.
    lk2 = lh_json(ctx, ["leaks", trace, "--from", "request#101", "--to", "done"],
                  "leaks --from request#101 --to done")
    eq(ctx, (lk2["summary"].get("from"), lk2["summary"].get("to"), lk2["summary"].get("skip"),
             lk2["summary"].get("leaked_blocks")), (100, 500, 0, 400),
       "leaks --from request#101 --to done: from, to, skip, blocks")
    lk3 = lh_json(ctx, ["leaks", trace, "--to", "#201", "--skip", "0"], "leaks --to #201")
    eq(ctx, (lk3["summary"].get("to"), lk3["summary"].get("leaked_blocks")), (200, 200),
       "leaks --to #201 --skip 0: to, blocks")

    res = E.run(ctx, [ctx.lh, "leaks", trace])
    ctx.check(res.returncode == 0 and "marks" in res.stdout and "growth_freed.c:" in res.stdout,
              "leaks text names the boundaries and the line", "marks ... growth_freed.c:N",
              res.stdout[:800])


# ---------------------------------------------------------------------------------------
# (b) a large transient peak
# ---------------------------------------------------------------------------------------

def case_transient(ctx):
    trace = record(ctx, [ctx.prog("transient_peak")])
    g = lh_json(ctx, ["report", trace, "--growth", "--top", "0"], "report --growth")
    peak = site_at(g.get("sites", []), "peak_transient")
    ctx.check(not peak, "growth: the transient peak is not growing", "absent",
              [fmt(x) for x in peak])
    s = top_is(ctx, g, "peak_steady", "report --growth")
    if s:
        eq(ctx, s.get("growth_bytes_per_mark"), 32, "growth: steady site bytes per mark")
    eq(ctx, g["summary"].get("growing_sites"), 1, "growth: growing sites")
    eq(ctx, g["summary"].get("active_sites"), 2, "growth: sites live at some mark")
    lk = lh_json(ctx, ["leaks", trace, "--top", "0"], "leaks")
    ctx.check(not site_at(lk.get("sites", []), "peak_transient"), "leaks: no block of the peak",
              "absent", [fmt(x) for x in site_at(lk.get("sites", []), "peak_transient")])
    s = top_is(ctx, lk, "peak_steady", "leaks")
    if s:
        eq(ctx, (s.get("leaked_blocks"), s.get("leaked_bytes")), (299, 9568),
           "leaks: steady site blocks and bytes")


# ---------------------------------------------------------------------------------------
# (c) a slow leak among churn
# ---------------------------------------------------------------------------------------

def case_slow_leak(ctx):
    trace = record(ctx, [ctx.prog("slow_leak")])
    rep = E.load_report(ctx, trace)
    plain = E.expect_site(ctx, rep, "slow_leak", 20, 960, allocations=20)
    E.expect_no_leak(ctx, rep, "slow_churn")

    lk = lh_json(ctx, ["leaks", trace, "--skip", "0"], "leaks --skip 0")
    eq(ctx, lk["summary"].get("intervals"), 2000, "leaks: intervals")
    s = top_is(ctx, lk, "slow_leak", "leaks --skip 0")
    if s:
        eq(ctx, (s.get("leaked_blocks"), s.get("leaked_bytes")), (20, 960),
           "leaks: blocks and bytes")
        eq(ctx, (s.get("leaked_intervals"), s.get("intervals")), (20, 2000),
           "leaks: leaked_intervals of intervals")
        eq(ctx, (s.get("bytes_per_mark"), s.get("blocks_per_mark")), (0.48, 0.01),
           "leaks: rate per mark")
        leaked_at = [i + lk["summary"]["first"] for i, n in enumerate(s["interval_blocks"]) if n]
        eq(ctx, leaked_at, list(range(99, 2000, 100)), "leaks: the intervals it leaked in")
        if plain:
            same_frames(ctx, s, plain, "leaks site")
            eq(ctx, s.get("stack_id"), plain.get("stack_id"), "leaks: stack id as in report")
    eq(ctx, lk["summary"].get("leak_sites"), 1, "leaks: only the slow leak")
    lk1 = lh_json(ctx, ["leaks", trace], "leaks")
    eq(ctx, (lk1["summary"].get("intervals"), lk1["summary"].get("leaked_blocks")), (1999, 20),
       "leaks (default --skip 1): intervals, blocks")

    g = lh_json(ctx, ["report", trace, "--growth"], "report --growth")
    s = top_is(ctx, g, "slow_leak", "report --growth")
    if s:
        eq(ctx, (s.get("grew_intervals"), s.get("intervals")), (20, 2000),
           "growth: grew_intervals of intervals")
        near(ctx, s.get("growth_bytes_per_mark"), 0.48, 0.01, "growth: bytes per mark")
        near(ctx, s.get("growth_blocks_per_mark"), 0.01, 0.0003, "growth: blocks per mark")
        if plain:
            same_frames(ctx, s, plain, "growth site")
    eq(ctx, g["summary"].get("growing_sites"), 1, "growth: only the slow leak grows")

    # The text report's site header carries the stack id that `log --site` takes.
    res = E.run(ctx, [ctx.lh, "report", trace])
    if plain:
        ctx.check("[site %d]" % plain["stack_id"] in res.stdout, "text report: [site N]",
                  "[site %d]" % plain["stack_id"], res.stdout[-600:])


# ---------------------------------------------------------------------------------------
# Snapshot triggers
# ---------------------------------------------------------------------------------------

def snapshot_leaks(ctx, trace, trigger, n_running, per_interval, name, what):
    lk = lh_json(ctx, ["leaks", trace, "--skip", "0", "--top", "0"], what + ": leaks")
    summ = lk["summary"]
    eq(ctx, summ.get("boundaries"), "snapshots", what + ": leaks uses the snapshots")
    bounds = lk.get("bounds") or []
    running = [b for b in bounds if b.get("trigger") != "exit"]
    ctx.check(all(b.get("trigger") == trigger for b in running), what + ": triggers",
              trigger, sorted({b.get("trigger") for b in running}))
    if isinstance(n_running, tuple):
        ctx.check(n_running[0] <= len(running) <= n_running[1], what + ": snapshots taken",
                  "%d..%d" % n_running, [b.get("label") for b in running])
    else:
        eq(ctx, len(running), n_running, what + ": snapshots taken")
    eq(ctx, [b.get("label") for b in bounds if b.get("trigger") == "exit"], ["exit"],
       what + ": the exit snapshot")
    s = top_is(ctx, lk, name, what + ": leaks")
    if s:
        got = [n for n in s.get("interval_blocks") or [] if n]
        eq(ctx, got, per_interval, what + ": blocks of the intervals that leaked")
    return lk


def case_snap_signal(ctx, usr1=False):
    sig = signal.SIGUSR1 if usr1 else signal.SIGUSR2
    extra = ["--snapshot-signal", "USR1"] if usr1 else []
    trace = record(ctx, [ctx.prog("phases"), "signal:%d" % sig, "4", "300"], extra=extra)
    lk = snapshot_leaks(ctx, trace, "signal", 4, [10, 10, 10], "phase_small",
                        "signal %s" % sig.name)
    eq(ctx, [b.get("label") for b in lk.get("bounds") or []],
       ["signal-1", "signal-2", "signal-3", "signal-4", "exit"], "signal: snapshot labels")
    eq(ctx, (lk["summary"].get("leaked_blocks"), lk["summary"].get("leaked_bytes")),
       (30, 3000), "signal: leaked")
    rep = E.load_report(ctx, trace)
    E.expect_no_leak(ctx, rep, "phase_small")


def case_snap_ring(ctx):
    """12 SIGUSR2 snapshots of a program that replaces blocks in a ring without pause
    (progs/snap_ring.c): the live set of each is what its copy holds, so no snapshot has a
    lost block. Before the agent held every thread's recording across the clone, the
    program's frees and allocations during the clone and until the record made 16 of 60
    such snapshots report blocks "definitely lost" (the copy held their predecessors)."""
    n = 12
    trace = record(ctx, [ctx.prog("snap_ring"), str(n)], name="ring.lht")
    rows = shell_snapshots(ctx, trace)
    eq(ctx, [r[0] for r in rows], ["signal-%d" % (i + 1) for i in range(n)] + ["exit"],
       "ring: the snapshots")
    cmds = "; ".join("use signal-%d; summary" % (i + 1) for i in range(n))
    res = E.run(ctx, [ctx.lh, "shell", trace, "exit", "-c", cmds])
    lost = re.findall(r"definitely lost: (\d+) bytes in (\d+) blocks; indirectly lost: "
                      r"(\d+) bytes in (\d+) blocks; possibly lost: (\d+) bytes", res.stdout)
    eq(ctx, len(lost), n, "ring: a leak summary per signal snapshot")
    eq(ctx, [i + 1 for i, v in enumerate(lost) if v != ("0",) * 5], [],
       "ring: the signal snapshots with lost blocks")


def shell_snapshots(ctx, trace):
    """The rows of the shell's `snapshots`: (label, trigger, live blocks, bytes, contents)."""
    res = E.run(ctx, [ctx.lh, "shell", trace, "exit", "-c", "snapshots"])
    if res.returncode != 0:
        raise Failure("`leakhound shell %s -c snapshots` failed: exit %d, %s"
                      % (trace, res.returncode, res.stderr.strip()[-800:]))
    rows = []
    for ln in res.stdout.splitlines()[1:]:
        f = ln.lstrip("* ").split()
        if len(f) == 11:
            rows.append((f[1], f[2], int(f[5]), f[6] + " " + f[7], f[10]))
    return rows


def case_snap_signal_exit(ctx, how="exit"):
    """raise(SIGUSR2) then exit (or _exit) at once: the signal snapshot is in the trace,
    before the exit snapshot, with its contents file and the program's 7 kept blocks live."""
    trace = record(ctx, [ctx.prog("signal_exit"), str(int(signal.SIGUSR2)), how],
                   name="sigexit.lht")
    base = trace[:-len(".lht")]
    ctx.check(os.path.isfile(base + ".snap1.lhs") and os.path.getsize(base + ".snap1.lhs") > 0,
              "%s: the signal snapshot's contents file" % how, base + ".snap1.lhs",
              sorted(os.listdir(ctx.workdir)))
    # The program's only blocks are its 7 kept ones of 123 bytes, live at both snapshots.
    eq(ctx, shell_snapshots(ctx, trace),
       [("signal-1", "signal", 7, "861 B", "pointers"), ("exit", "exit", 7, "861 B", "pointers")],
       "%s: the shell's snapshots (label, trigger, live blocks and bytes, contents)" % how)


def case_snap_race(ctx, rounds=3):
    """A thread takes snapshots in a loop (and the ticker every 1 ms) while main returns;
    each capture takes 300 ms more (LEAKHOUND_TEST_SNAPSHOT_CHILD_DELAY_MS). When `leakhound
    run` returns, every snapshot the trace lists with contents opens whole in the shell
    (before: a capture starting after the exit path had waited for the children, or a slot
    the ticker's reap cleared under a new child, left a file without its END record)."""
    env = dict(os.environ, LEAKHOUND_TEST_SNAPSHOT_CHILD_DELAY_MS="300",
               LEAKHOUND_SNAPSHOT_EVERY_MS="1")
    for k in range(rounds):
        trace = os.path.join(ctx.workdir, "race%d.lht" % k)
        res = E.run(ctx, [ctx.lh, "run", "-o", trace, "--", ctx.prog("snap_race"), "3"],
                    env=env)
        eq(ctx, res.returncode, 0, "race %d: exit status of run (stderr: %s)"
           % (k, res.stderr.strip()[-400:]))
        rows = shell_snapshots(ctx, trace)
        ctx.check(any(r[0] == "exit" for r in rows), "race %d: the exit snapshot" % k,
                  "listed", rows)
        whole = 0
        for label, _trigger, _n, _bytes, contents in rows:
            if contents == "none":
                continue
            res = E.run(ctx, [ctx.lh, "shell", trace, label, "-c", "count"])
            ok = res.returncode == 0 and "capture was interrupted" not in res.stderr
            ctx.check(ok, "race %d: snapshot %s opens whole" % (k, label), "exit 0",
                      "%d: %s" % (res.returncode, res.stderr.strip()[-400:]))
            whole += ok
        ctx.check(whole >= 1, "race %d: snapshots with contents" % k, ">= 1", whole)
        # The slow capture writes a frame before it sleeps: between records (before, it
        # cut a pointer record in two, and the exit snapshot had no graph to read).
        res = E.run(ctx, [ctx.lh, "report", trace])
        ctx.check(res.returncode == 0 and "leak summary:  definitely lost:" in res.stdout
                  and "no leak summary" not in res.stderr, "race %d: the report's leak "
                  "summary from the exit snapshot" % k, "a leak summary",
                  (res.stdout + res.stderr)[-600:])


def case_snap_child_maps(ctx):
    """A snapshot child's memory stays as it listed it at its start: the child logs how
    many of those mappings are gone at its end (LEAKHOUND_TEST_SNAPSHOT_CHILD_MAPS). Before,
    its compressor's first frame freed the workspace the parent's warm-up had made (a
    munmap in the child), and a header word read there later killed the child with SIGSEGV
    (python 3.12 and 3.13 snapshot children in CI: files of 1 frame, no END)."""
    for mode in ("pointers", "full"):
        trace = os.path.join(ctx.workdir, "maps-%s.lht" % mode)
        env = dict(os.environ, LEAKHOUND_TEST_SNAPSHOT_CHILD_MAPS="1",
                   LEAKHOUND_SNAPSHOT_CONTENTS=mode)
        res = E.run(ctx, [ctx.lh, "run", "-o", trace, "--", ctx.prog("growing_list")],
                    env=env)
        eq(ctx, res.returncode, 0, "%s: exit status of run (stderr: %s)"
           % (mode, res.stderr.strip()[-400:]))
        got = [l for l in res.stderr.splitlines() if "mappings gone in the child" in l]
        eq(ctx, got, ["<lh>: snapshot 1: mappings gone in the child: 0"],
           "%s: the exit snapshot's child unmapped nothing it had listed" % mode)


def case_reg_race(ctx, rounds=20):
    """Snapshots (clones) and forks while the ticker holds the registry of the agent's
    mappings (LEAKHOUND_TEST_REG_HOLD_MS=5, sampled every 1 ms): every child, snapshot or
    forked, gets it unlocked and whole (before: a child inherited it locked and spun
    forever in its first map or unmap; seen as e2e.graph.delta_wp_off hanging)."""
    trace = os.path.join(ctx.workdir, "reg.lht")
    env = dict(os.environ, LEAKHOUND_TEST_REG_HOLD_MS="5", LEAKHOUND_RSS_MS="1")
    res = E.run(ctx, [ctx.lh, "run", "-o", trace, "--", ctx.prog("reg_race"), str(rounds)],
                env=env, timeout=90)
    eq(ctx, (res.returncode, res.stdout.strip()), (0, "rounds %d" % rounds),
       "exit status and output of reg_race (stderr: %s)" % res.stderr.strip()[-400:])
    rows = shell_snapshots(ctx, trace)
    eq(ctx, [r[0] for r in rows], ["p"] * rounds + ["exit"], "the parent's snapshots")
    eq(ctx, sorted(set(r[4] for r in rows)), ["pointers"], "every one with contents")


def case_snap_signal_n(ctx, n=5):
    """n SIGUSR2 sent from outside to a running program: n snapshots signal-1..n (each
    signal is sent once the previous snapshot's contents file exists, so that the kernel
    does not merge two pending signals into one). The time from kill() to the contents
    file is printed, not asserted."""
    import subprocess
    trace = os.path.join(ctx.workdir, "sign.lht")
    argv = [ctx.lh, "run", "-o", trace, "--", ctx.prog("signal_exit"),
            str(int(signal.SIGUSR2)), "wait"]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True, cwd=ctx.workdir)
    try:
        line = p.stdout.readline().decode().split()
        if len(line) != 2 or line[0] != "ready":
            raise Failure("signal_exit did not say 'ready PID': %r" % line)
        pid = int(line[1])
        base = trace[:-len(".lht")]
        took = []
        for k in range(1, n + 1):
            t0 = time.monotonic()
            os.kill(pid, signal.SIGUSR2)
            path = "%s.snap%d.lhs" % (base, k)
            while not os.path.exists(path):
                if time.monotonic() - t0 > 120:
                    raise Failure("snapshot %d: no %s 120 s after the signal" % (k, path))
                time.sleep(0.001)
            took.append((time.monotonic() - t0) * 1000)
        print("kill() to contents file, ms: %s" % " ".join("%.1f" % t for t in took))
        os.kill(pid, signal.SIGTERM)
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    eq(ctx, p.returncode, 0, "exit status of leakhound run (stderr: %s)" % err.decode()[-400:])
    eq(ctx, [r[:3] for r in shell_snapshots(ctx, trace)],
       # 7 kept blocks and stdout's buffer (the program said "ready" on it)
       [("signal-%d" % k, "signal", 8) for k in range(1, n + 1)] + [("exit", "exit", 8)],
       "snapshots of %d signals (label, trigger, live blocks)" % n)


def case_snap_period(ctx):
    # The first period snapshot comes 200-300 ms after the agent starts: start at 800 ms.
    trace = record(ctx, [ctx.prog("phases"), "sleep", "4", "800", "800"],
                   extra=["--snapshot-every", "200ms"])
    lk = snapshot_leaks(ctx, trace, "period", (8, 40), [10, 10, 10, 10], "phase_small",
                        "--snapshot-every 200ms")
    eq(ctx, (lk["summary"].get("leaked_blocks"), lk["summary"].get("leaked_bytes")),
       (40, 4000), "period: leaked")
    labels = [b.get("label") for b in lk.get("bounds") or [] if b.get("trigger") == "period"]
    ctx.check(all(re.fullmatch(r"period-\d+ms", x) for x in labels), "period: labels",
              "period-<ms>ms", labels[:5])


def case_snap_growth(ctx):
    trace = record(ctx, [ctx.prog("phases"), "grow", "4", "400"],
                   extra=["--snapshot-on-growth", "1M"])
    lk = snapshot_leaks(ctx, trace, "growth", 4, [48, 48, 48], "phase_big",
                        "--snapshot-on-growth 1M")
    eq(ctx, (lk["summary"].get("leaked_blocks"), lk["summary"].get("leaked_bytes")),
       (3 * 49, 3 * (3 << 19)), "growth trigger: leaked (3 phases of 1.5 MiB in 49 blocks)")
    tail = site_at(lk.get("sites") or [], "phase_big_tail")
    eq(ctx, [[n for n in s.get("interval_blocks") or [] if n] for s in tail], [[1, 1, 1]],
       "growth trigger: the 768 KiB block of each phase")
    labels = [b.get("label") for b in lk.get("bounds") or [] if b.get("trigger") == "growth"]
    ctx.check(all(re.fullmatch(r"growth-\d+", x) for x in labels), "growth: labels",
              "growth-<heap bytes>", labels)


def case_snap_exit_off(ctx):
    def snaps(trace):
        doc = lh_json(ctx, ["log", trace, "--limit", "0"], "log")
        return [e.get("label") for e in doc.get("events") or [] if e.get("event") == "snapshot"]
    on = record(ctx, [ctx.prog("phases"), "sleep", "1", "0"], name="on.lht")
    eq(ctx, snaps(on), ["exit"], "default: the exit snapshot")
    for flags in (["--no-snapshot-at-exit"], ["--snapshot-at-exit", "off"]):
        off = record(ctx, [ctx.prog("phases"), "sleep", "1", "0"], extra=flags, name="off.lht")
        eq(ctx, snaps(off), [], " ".join(flags) + ": no snapshot")


def case_snap_replace(ctx):
    """`run -o X` twice: the second run replaces X and the snapshot files the first wrote
    beside it (X.snap1.lhs, not X.snap1.lhs.1) and the shell's index files of the old run;
    files that only share the prefix stay."""
    argv = [ctx.prog("signal_exit"), str(int(signal.SIGUSR2)), "exit"]
    keep = ["sig.snapshot-notes.txt", "sig.snap1.lhsx", "sig.snapx.lhs", "sig.lht.lhxx",
            "sig.lht.1lhx", "sig.lht.x.lhx"]
    for name in keep:
        with open(os.path.join(ctx.workdir, name), "w") as f:
            f.write("not a snapshot\n")
    trace = record(ctx, argv, name="sig.lht")
    first = sorted(os.listdir(ctx.workdir))
    eq(ctx, [n for n in first if n.startswith("sig.")],
       sorted(keep + ["sig.lht", "sig.snap1.lhs", "sig.snap2.lhs"]), "first run: files")
    # The shell's index files (docs/FORMAT.md, "Snapshot index files") belong to the trace.
    E.run(ctx, [ctx.lh, "shell", trace, "exit", "-c", "summary"])
    index = ["sig.lht.lhx", "sig.lht.2.lhx"]
    eq(ctx, [n for n in index if os.path.isfile(os.path.join(ctx.workdir, n))], index,
       "the shell wrote its index beside the trace")
    record(ctx, argv, name="sig.lht")
    eq(ctx, sorted(n for n in os.listdir(ctx.workdir) if n.startswith("sig.")),
       sorted(keep + ["sig.lht", "sig.snap1.lhs", "sig.snap2.lhs"]),
       "second run: the same files, the old snapshots replaced")
    eq(ctx, shell_snapshots(ctx, trace),
       [("signal-1", "signal", 7, "861 B", "pointers"), ("exit", "exit", 7, "861 B", "pointers")],
       "second run: its snapshots read back")


def case_snap_fork(ctx):
    """Snapshots taken by a forked child (fork, no exec) have their contents files, named
    after the child's trace and numbered from 1 in it; the parent's are unchanged."""
    trace = os.path.join(ctx.workdir, "fs.lht")
    res = E.lh_run(ctx, [ctx.prog("fork_snap")], out=trace)
    m = re.search(r"child (\d+)", res.stdout)
    if not ctx.check(m is not None, "fork_snap: child pid printed", "child PID", res.stdout):
        return
    child = "fs.lht.%s" % m.group(1)
    eq(ctx, sorted(os.listdir(ctx.workdir)),
       sorted(["fs.lht", "fs.snap1.lhs", "fs.snap2.lhs", child, child + ".snap1.lhs",
               child + ".snap2.lhs", child + ".snap3.lhs"]),
       "files: each trace's snapshots numbered from 1 beside it")
    eq(ctx, shell_snapshots(ctx, trace),
       [("parent", "api", 4, "400 B", "pointers"), ("exit", "exit", 4, "400 B", "pointers")],
       "parent: snapshots")
    # The child's trace is seeded with the heap it inherited (analysis/trace.h): the
    # parent's 4 blocks of 100 bytes live at the fork are in each of its snapshots.
    eq(ctx, shell_snapshots(ctx, os.path.join(ctx.workdir, child)),
       [("child-1", "api", 10, "1.6 KiB", "pointers"),
        ("child-2", "api", 8, "1.2 KiB", "pointers"), ("exit", "exit", 8, "1.2 KiB", "pointers")],
       "child: snapshots with contents")


# ---------------------------------------------------------------------------------------
# counts, log, temporary, rss
# ---------------------------------------------------------------------------------------

def case_counts(ctx):
    trace = record(ctx, [ctx.prog("growth_freed")])
    c = lh_json(ctx, ["counts", trace], "counts")
    eq(ctx, (c["summary"].get("by"), c["summary"].get("points")), ("site", 501),
       "counts: by, points")
    groups = c.get("groups") or []
    if ctx.check(groups, "counts: groups", "at least one", groups):
        top = groups[0]
        ctx.check(E.at_line(E.alloc_frame(top)[1], E.marker("freed_list_node")),
                  "counts: top group", "%s:%d" % E.marker("freed_list_node"), fmt(top))
        eq(ctx, top.get("final_blocks"), 500, "counts: final")
        eq(ctx, top.get("counts", [])[:3] + top.get("counts", [])[-1:], [0, 1, 2, 500],
           "counts: at marks 1-3 and 501")
        eq(ctx, set(top.get("deltas", [])[1:]), {1}, "counts: +1 per mark")
    cf = lh_json(ctx, ["counts", trace, "--by", "function"], "counts --by function")
    groups = cf.get("groups") or []
    eq(ctx, [(g.get("function"), g.get("final_blocks")) for g in groups[:1]],
       [("log_request", 500)], "counts --by function: top")
    res = E.run(ctx, [ctx.lh, "counts", trace, "--rows", "5"])
    ctx.check(res.returncode == 0 and "500 (+1)" in res.stdout and "log_request" in res.stdout,
              "counts text", "a '500 (+1)' cell and log_request", res.stdout[:1200])


def case_log(ctx):
    trace = record(ctx, [ctx.prog("growth_freed")])
    g = lh_json(ctx, ["report", trace, "--growth"], "report --growth")
    sid = g["sites"][0]["stack_id"]
    doc = lh_json(ctx, ["log", trace, "--site", str(sid), "--limit", "3"], "log --site")
    eq(ctx, (doc["summary"].get("matched"), doc["summary"].get("shown")), (1000, 3),
       "log --site: matched (500 mallocs, 500 frees), shown")
    evs = doc.get("events") or []
    eq(ctx, [(e.get("event"), e.get("site")) for e in evs], [("malloc", sid)] * 3,
       "log --site: the first events")
    times = [e.get("time_s") for e in evs]
    eq(ctx, times, sorted(times), "log: time order")
    ctx.check(str(sid) in (doc.get("sites") or {}), "log: the site's frames", sid,
              list(doc.get("sites") or {}))
    if evs:
        addr = evs[0]["address"]
        d2 = lh_json(ctx, ["log", trace, "--addr", addr, "--limit", "0"], "log --addr")
        mine = [e for e in d2.get("events") or []]
        ctx.check(mine and all(e.get("address") == addr for e in mine), "log --addr: only it",
                  addr, [e.get("address") for e in mine][:5])
        frees = [e for e in mine if e.get("event") == "free"]
        ctx.check(any(e.get("freed_site") == sid and e.get("freed_size") == 64 for e in frees),
                  "log --addr: the free names the block", "freed_site %d, 64 B" % sid,
                  [fmt(e) for e in frees][:3])
        res = E.run(ctx, [ctx.lh, "log", trace, "--addr", addr])
        ctx.check(res.returncode == 0 and "at log_request (" in res.stdout and "frees 64 B" in
                  res.stdout, "log text: stack of the malloc, and the free",
                  "'at log_request (...)' and 'frees 64 B'", res.stdout[:1200])
    expect_error(ctx, [ctx.lh, "log", trace, "--addr", "zebra"], ["zebra"], "log --addr zebra")


def case_temporary(ctx):
    trace = record(ctx, [ctx.prog("slow_leak")])
    t = lh_json(ctx, ["report", trace, "--temporary", "--threshold", "1s"],
                "report --temporary --threshold 1s")
    s = top_is(ctx, t, "slow_churn", "report --temporary")
    if s:
        eq(ctx, (s.get("temporary_blocks"), s.get("allocations")), (40000, 40000),
           "temporary: blocks of the churn site")
    ctx.check(not site_at(t.get("sites", []), "slow_leak"), "temporary: not the leak", "absent",
              [fmt(x) for x in site_at(t.get("sites", []), "slow_leak")])
    eq(ctx, t["summary"].get("threshold_ns"), 1000000000, "temporary: threshold")
    t1 = lh_json(ctx, ["report", trace, "--temporary"], "report --temporary")
    eq(ctx, t1["summary"].get("threshold_ns"), 1000000, "temporary: default threshold 1 ms")
    s = top_is(ctx, t1, "slow_churn", "report --temporary (1 ms)")
    if s:
        ctx.check(39000 <= s.get("temporary_blocks", 0) <= 40000, "temporary (1 ms): blocks",
                  "39000..40000", s.get("temporary_blocks"))
    expect_error(ctx, [ctx.lh, "report", trace, "--temporary", "--threshold", "soon"],
                 ["soon"], "--threshold soon")


def case_rss(ctx):
    trace = record(ctx, [ctx.prog("phases"), "mmap", "4", "150"],
                   extra=["--rss-interval", "20ms"])
    rep = E.load_report(ctx, trace)
    rss = rep["summary"].get("rss")
    if ctx.check(isinstance(rss, dict), "report: summary.rss", "an object", rss):
        eq(ctx, rss.get("outside_heap"), True, "mmap: RSS outside the heap")
        ctx.check(rss.get("last_bytes", 0) - rss.get("first_bytes", 0) >= 30 << 20,
                  "mmap: RSS growth", ">= 30 MiB", rss)
    res = E.run(ctx, [ctx.lh, "report", trace])
    ctx.check("memory outside malloc" in res.stdout and "RSS grew" in res.stdout,
              "text: RSS grew ... memory outside malloc", "the RSS line", res.stdout[:1500])
    heap = record(ctx, [ctx.prog("phases"), "grow", "4", "150"],
                  extra=["--rss-interval", "20ms"], name="heap.lht")
    rep = E.load_report(ctx, heap)
    rss = rep["summary"].get("rss") or {}
    eq(ctx, rss.get("outside_heap"), False, "heap growth: RSS explained by the heap")
    off = record(ctx, [ctx.prog("phases"), "grow", "2", "150"],
                 extra=["--rss-interval", "0"], name="off.lht")
    eq(ctx, E.load_report(ctx, off)["summary"].get("rss"), None, "--rss-interval 0: no RSS")


# ---------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------

def case_bad_labels(ctx):
    trace = record(ctx, [ctx.prog("growth_freed")])
    lh = ctx.lh
    expect_error(ctx, [lh, "leaks", trace, "--from", "nosuch"],
                 ["--from 'nosuch'", "'request' (500)", "'done' (1)"], "leaks --from nosuch")
    expect_error(ctx, [lh, "leaks", trace, "--to", "nosuch"], ["--to 'nosuch'", "'request'"],
                 "leaks --to nosuch")
    expect_error(ctx, [lh, "leaks", trace, "--to", "request#9999"], ["request#9999"],
                 "leaks --to request#9999")
    expect_error(ctx, [lh, "leaks", trace, "--from", "done", "--to", "request"],
                 ["empty range"], "leaks --from done --to request")
    expect_error(ctx, [lh, "leaks", trace, "--skip", "600"], ["--skip 600"], "leaks --skip 600")
    expect_error(ctx, [lh, "leaks", trace, "--use", "sideways"], ["sideways"], "leaks --use")
    expect_error(ctx, [lh, "report", trace, "--growth", "--temporary"], ["one at a time"],
                 "report --growth --temporary")


def case_no_marks(ctx):
    trace = record(ctx, [ctx.prog("clean")])
    # report --growth judges the survivors instead (case_survivors): clean leaves none
    doc = lh_json(ctx, ["report", trace, "--growth"], "report --growth without marks")
    if doc is not None:
        eq(ctx, (doc["summary"].get("boundaries"), doc["summary"].get("active_sites"),
                 doc["sites"]), ("slices", 0, []), "report --growth of a clean program")
    for args in (["leaks", trace], ["counts", trace]):
        expect_error(ctx, [ctx.lh] + args, ["no marks and no snapshots", "--snapshot-every"],
                     " ".join(args[:1] + args[2:]) + " of a trace without marks")
    expect_error(ctx, [ctx.lh, "leaks", trace, "--use", "snapshots"], ["no marks"],
                 "leaks --use snapshots of a trace without marks")


def case_survivors(ctx):
    """No marks and no snapshots while it ran (a server loaded, then stopped): report
    --growth slices the run by its allocations and judges the blocks still live at the end
    by when they were made. The leak grows; the bounded cache, whose newest 100 of 200
    entries are live, the one-time step, the per-thread buffers and the string grown by
    realloc do not."""
    trace = record(ctx, [ctx.prog("growth_kinds"), "survivors"])
    doc = lh_json(ctx, ["report", trace, "--growth"], "report --growth")
    if doc is None:
        return
    summ = doc["summary"]
    eq(ctx, summ.get("boundaries"), "slices", "boundaries of a trace without marks")
    eq(ctx, summ.get("points"), 21, "points (20 shares of the allocations)")
    eq(ctx, [b["label"] for b in doc["bounds"]][:3], ["0%", "5%", "10%"], "point labels")
    names = [site_name(s) for s in doc["sites"]]
    eq(ctx, names, ["gk_leak"], "the growing sites")
    if doc["sites"]:
        s = doc["sites"][0]
        eq(ctx, (s["last_blocks"], s["last_bytes"], s["trend"]), (200, 9600, "growing"),
           "gk_leak: blocks, bytes, class")
    res = E.run(ctx, [ctx.lh, "report", trace, "--growth"])
    ctx.check(res.returncode == 0 and "21 slices (fewer than two marks or snapshots" in res.stdout,
              "report --growth (text) says what its points are",
              "'21 slices (fewer than two marks or snapshots ...'", res.stdout[:400] + res.stderr[-400:])
    # the HTML page's growth table: the same one growing site (the one growth model)
    page = os.path.join(ctx.workdir, "page.html")
    res = E.run(ctx, [ctx.lh, "html", trace, "-o", page])
    html = open(page).read() if res.returncode == 0 and os.path.exists(page) else ""
    table = html.split('id="growth-table"', 1)[1].split("</table>", 1)[0] if html else ""
    rows = re.findall(r"<tr><td class=\"n\">", table)
    ctx.check("each of the 21 slices" in html and len(rows) == 1 and gk_line("gk_leak") in table,
              "html: the growth table over the slices, one row at gk_leak",
              "21 slices, 1 row, " + gk_line("gk_leak"),
              "%d rows; %s" % (len(rows), table[:600] or res.stderr[-400:]))


def case_run_bad_flags(ctx):
    lh = ctx.lh
    prog = ctx.prog("clean")
    for flags, name in ((["--snapshot-every", "10parsecs"], "10parsecs"),
                        (["--snapshot-every", "5"], "'5'"),
                        (["--snapshot-every", "500us"], "500us"),
                        (["--rss-interval", "-5ms"], "-5ms"),
                        (["--snapshot-signal", "KILL"], "KILL"),
                        (["--snapshot-signal", "SIGFOO"], "SIGFOO"),
                        (["--snapshot-on-growth", "12Q"], "12Q"),
                        (["--snapshot-on-growth", "1.5"], "1.5"),
                        (["--snapshot-at-exit", "maybe"], "maybe")):
        expect_error(ctx, [lh, "run"] + flags + ["--", prog], [name], "run " + " ".join(flags))
    expect_error(ctx, [lh, "run", "--snapshot-every"], ["needs a value"],
                 "run --snapshot-every (no value)")
    ctx.check(not E.trace_files(ctx.workdir), "no trace from refused runs", [],
              E.trace_files(ctx.workdir))
    # Good values are accepted and reach the agent.
    trace = record(ctx, [prog], extra=["--snapshot-every", "1.5s", "--snapshot-on-growth",
                                       "64M", "--snapshot-signal", "SIGUSR1", "--rss-interval",
                                       "50ms", "--snapshot-at-exit", "on"])
    E.load_report(ctx, trace)

# ---------------------------------------------------------------------------------------
# One growth model (issue 10): every view names the same growing sites, with the same
# figures, and tells step, saturation and peak apart (progs/growth_kinds.c)
# ---------------------------------------------------------------------------------------

GK_SITES = ("gk_leak", "gk_string", "gk_step", "gk_thread", "gk_cache", "gk_peak")
GK_CLASS = {"gk_leak": {"growing"}, "gk_string": {"growing"}, "gk_step": {"step"},
            "gk_thread": {"step", "saturated"}, "gk_cache": {"saturated"},
            "gk_peak": {"peak"}}


def gk_line(name):
    return "%s:%d" % E.marker(name)


def gk_name_of(basename_line):
    for n in GK_SITES + ("gk_append",):
        if gk_line(n) == basename_line:
            return n
    return None


def site_name(s):
    fr = E.alloc_frame(s)[1] or {}
    return gk_name_of("%s:%s" % (os.path.basename(fr.get("file") or ""), fr.get("line")))


def views_agree(ctx, trace, tag, slopes, classes, points, over):
    """report --growth, counts, leaks, the SQLite export, html, plot and report --by function
    name the same growing sites of trace with the same figures: slopes {site: bytes per
    point} for the growing ones, classes {site: allowed trends} for every site of ours;
    points of kind over (marks or snapshots) up to the end of the main work."""
    unit = over[:-1]
    g = lh_json(ctx, ["report", trace, "--growth", "--top", "0"], tag + "report --growth")
    growing = {site_name(s): s for s in g.get("sites") or [] if s.get("growing")}
    eq(ctx, sorted(growing), sorted(slopes), tag + "report --growth: the growing sites")
    eq(ctx, {n: s.get("growth_bytes_per_mark") for n, s in growing.items()}, slopes,
       tag + "report --growth: bytes per " + unit)
    eq(ctx, {n: s.get("trend") for n, s in growing.items()}, {n: "growing" for n in slopes},
       tag + "report --growth: trend")
    eq(ctx, g["summary"].get("points"), points, tag + "report --growth: points")
    # counts: every one of our sites, classified
    c = lh_json(ctx, ["counts", trace, "--top", "0"], tag + "counts")
    got = {site_name(gr): gr.get("trend") for gr in c.get("groups") or [] if site_name(gr)}
    for n in classes:
        ctx.check(got.get(n) in classes[n], tag + "counts: class of %s" % n, classes[n],
                  got.get(n))
    # leaks: the sites it lists carry the same classes
    lk = lh_json(ctx, ["leaks", trace, "--top", "0"], tag + "leaks")
    got = {site_name(s): s.get("trend") for s in lk.get("sites") or [] if site_name(s)}
    ctx.check(all(got.get(n) == "growing" for n in slopes)
              and all(got[n] in classes[n] for n in got),
              tag + "leaks: classes of the sites it lists", "%s growing; " % ", ".join(slopes) +
              ", ".join("%s %s" % (n, "|".join(sorted(classes[n]))) for n in classes), got)
    # SQLite: sites.trend and growth_bytes_per_mark, the same figures
    db = os.path.join(ctx.workdir, tag.strip(": ") + ".db")
    if os.path.exists(db):
        os.unlink(db)
    res = E.run(ctx, [ctx.lh, "export", trace, "--sqlite", db, "--quiet"])
    sqlite3 = shutil.which("sqlite3")
    if res.returncode == 0 and sqlite3:
        q = E.run(ctx, [sqlite3, "-separator", "|", db, "SELECT file, line, trend, "
                        "growth_bytes_per_mark FROM sites WHERE trend IS NOT NULL"])
        rows = {}
        for line in q.stdout.splitlines():
            f, ln, trend, gr = line.split("|")
            n = gk_name_of("%s:%s" % (os.path.basename(f), ln))
            if n:
                rows[n] = (trend, float(gr))
        for n in classes:
            ctx.check(n in rows and rows[n][0] in classes[n], tag + "sqlite: trend of %s" % n,
                      classes[n], rows.get(n))
        eq(ctx, {n: v[1] for n, v in rows.items() if v[0] == "growing"}, slopes,
           tag + "sqlite: growth_bytes_per_mark of the growing sites")
    else:
        ctx.fail(tag + "export --sqlite (and sqlite3)", "exit 0", res.stderr[-300:])
    # html: the growth table lists exactly the growing sites, with the same slopes
    page = os.path.join(ctx.workdir, tag.strip(": ") + ".html")
    res = E.run(ctx, [ctx.lh, "html", trace, "-o", page, "--quiet"])
    if ctx.check(res.returncode == 0, tag + "html", "exit 0", res.stderr[-300:]):
        with open(page) as f:
            text = f.read()
        table = text[text.index('id="growth-table"'):]
        table = table[:table.index("</table>")]
        rows = re.findall(r'<tr><td class="n">([^<]*)</td>.*?(growth_kinds\.c:\d+)', table)
        eq(ctx, sorted((gk_name_of(loc), sl) for sl, loc in rows),
           sorted((n, "+%d B/%s" % (v, unit)) for n, v in slopes.items()),
           tag + "html: growth table")
    # plot: the legend says which sites grow
    svg = os.path.join(ctx.workdir, tag.strip(": ") + ".svg")
    res = E.run(ctx, [ctx.lh, "plot", trace, "-o", svg, "--x", "marks", "--top", "8",
                      "--quiet"])
    if ctx.check(res.returncode == 0, tag + "plot", "exit 0", res.stderr[-300:]):
        with open(svg) as f:
            legend = re.findall(r"(growth_kinds\.c:\d+) \(max [^,)]*, (\w+)\)", f.read())
        got = {gk_name_of(loc): cls for loc, cls in legend}
        eq(ctx, sorted(n for n, cls in got.items() if cls == "growing"), sorted(slopes),
           tag + "plot legend: the growing sites")
        for n in classes:
            ctx.check(got.get(n) in classes[n], tag + "plot legend: class of %s" % n,
                      classes[n], got.get(n))
    # report --by function --metric growth: the same boundaries, the growing sites' slopes
    # summed (the other sites do not grow and count 0)
    fg = lh_json(ctx, ["report", trace, "--by", "function", "--metric", "growth"],
                 tag + "report --by function --metric growth")
    eq(ctx, (fg.get("growth_points"), fg.get("growth_over"), fg["total"].get("growth")),
       (points, over, sum(slopes.values())),
       tag + "report --by function: points, kind, total growth")
    # report (at exit): the growing sites still live there first, in report --growth's
    # order, with its figures (a growing site freed in teardown is not in it)
    rep = E.load_report(ctx, trace)
    live = {site_name(s) for s in rep["sites"]}
    order = [site_name(s) for s in g["sites"] if s.get("growing") and site_name(s) in live]
    eq(ctx, [(site_name(s), (s.get("growth") or {}).get("growth_bytes_per_mark"))
             for s in rep["sites"][:len(order) + 1]],
       [(n, slopes[n]) for n in order] + [(site_name(rep["sites"][len(order)]), None)]
       if len(rep["sites"]) > len(order) else [(n, slopes[n]) for n in order],
       tag + "report: the growing sites first, in report --growth's order")
    return g, lk


def case_consistency(ctx):
    trace = record(ctx, [ctx.prog("growth_kinds"), "marks"])
    g, lk = views_agree(ctx, trace, "", {"gk_leak": 48.0, "gk_string": 32.0}, GK_CLASS, 200,
                        "marks")
    eq(ctx, g["summary"].get("end_before_teardown"), False, "report --growth: end")
    eq(ctx, lk["summary"].get("to_before_teardown"), False, "leaks: no teardown with marks")
    # report at exit: the appended string is one object at the line that created it
    rep = E.load_report(ctx, trace)
    if rep:
        E.expect_site(ctx, rep, "gk_string", 1, 16 + 200 * 32, grown_by=["gk_append"])
        E.expect_no_leak(ctx, rep, "gk_append")
        E.expect_site(ctx, rep, "gk_leak", 200, 200 * 48)
    # the same agreement over periodic snapshots, three of them taken during teardown
    trace = record(ctx, [ctx.prog("growth_kinds"), "teardown"], name="teardown.lht")
    g, lk = views_agree(ctx, trace, "teardown: ", {"gk_leak": 480.0},
                        {"gk_leak": {"growing"}}, 10, "snapshots")
    eq(ctx, (g["summary"].get("end_before_teardown"), lk["summary"].get("to_before_teardown")),
       (True, True), "teardown: report --growth and leaks end before teardown")
    with open(os.path.join(ctx.workdir, "teardown.html")) as f:
        text = f.read()
    ctx.check("each of the 10 snapshots, up to the last before teardown (the heap fell over "
              "the 3 after it)" in text, "teardown: html says which end it chose",
              "'each of the 10 snapshots, up to the last before teardown ...'",
              re.findall(r"Live bytes per site[^<]*", text))


def case_teardown(ctx):
    trace = record(ctx, [ctx.prog("growth_kinds"), "teardown"])
    lk = lh_json(ctx, ["leaks", trace], "leaks")
    summ = lk["summary"]
    eq(ctx, (summ.get("to_before_teardown"), summ.get("to")), (True, 9),
       "leaks: the default end is snapshot #10, before the 3 teardown snapshots")
    top = top_is(ctx, lk, "gk_leak", "leaks (periodic snapshots during teardown)")
    if top:
        eq(ctx, (top.get("leaked_blocks"), top.get("leaked_bytes"), top.get("trend")),
           (80, 80 * 48, "growing"), "leaks: the leak in intervals #2..#9 (one skipped)")
    g = lh_json(ctx, ["report", trace, "--growth"], "report --growth")
    eq(ctx, (g["summary"].get("points"), g["summary"].get("all_points"),
             g["summary"].get("end_before_teardown")), (10, 13, True), "report --growth: end")
    top = top_is(ctx, g, "gk_leak", "report --growth (teardown)")
    if top:
        eq(ctx, (top.get("trend"), top.get("growth_bytes_per_mark")), ("growing", 480.0),
           "report --growth: the leak grows 480 B per snapshot")
    # Growth measured over snapshots is per snapshot in every view that writes a slope.
    for args in (["report", "--by", "function", "--metric", "growth"],
                 ["tree", "--metric", "growth"],
                 ["flamegraph", "--metric", "growth", "-o", "-"]):
        res = E.run(ctx, [ctx.lh, args[0], trace] + args[1:])
        slopes = re.findall(r"[+-][0-9.]+ [KMG]?i?B/(mark|snapshot)", res.stdout)
        ctx.check(res.returncode == 0 and slopes and set(slopes) == {"snapshot"},
                  " ".join(args) + ": growth per snapshot", "only /snapshot",
                  (res.returncode, sorted(set(slopes)), res.stderr[-200:]))
    res = E.run(ctx, [ctx.lh, "leaks", trace])
    ctx.check("the last before teardown" in res.stdout, "leaks text: says which end it chose",
              "'the last before teardown'", res.stdout[:800])
    # The 13 snapshots (no marks) as the x axis: the axis says "snapshot". In time (plot
    # and html), where the ticks come in quick succession, no two snapshot labels overlap.
    for args, what in ((["plot", "--x", "marks"], "plot --x marks"), (["plot"], "plot"),
                       (["html"], "html")):
        out = os.path.join(ctx.workdir, "td-%s.out" % "-".join(args))
        res = E.run(ctx, [ctx.lh, args[0], trace, "-o", out, "--quiet"] + args[1:])
        if not ctx.check(res.returncode == 0, what, "exit 0", res.stderr[-300:]):
            continue
        with open(out) as f:
            text = f.read()
        if "--x" in args:
            eq(ctx, re.findall(r'<text class="s"[^>]*>(snapshot|mark|time since start)</text>',
                               text), ["snapshot"], "%s: the x axis is labelled snapshot" % what)
            continue
        labels = label_boxes(text)
        ctx.check(len(labels) >= 2, "%s: snapshot labels drawn" % what, ">= 2", len(labels))
        eq(ctx, label_overlaps(labels), [], "%s: no two snapshot labels overlap" % what)


def case_one_snapshot(ctx):
    """One snapshot taken while running, then exit: `leaks` ends at the exit snapshot and
    says so (it said "empty range" before), with the 20 blocks kept after the snapshot."""
    trace = record(ctx, [ctx.prog("growth_kinds"), "once"])
    lk = lh_json(ctx, ["leaks", trace], "leaks")
    summ = lk["summary"]
    eq(ctx, (summ.get("from"), summ.get("to"), summ.get("intervals")), (0, 1, 1),
       "leaks: one interval, from snapshot 'mid' to the exit snapshot")
    top = top_is(ctx, lk, "gk_leak", "leaks (one running snapshot)")
    if top:
        eq(ctx, (top.get("leaked_blocks"), top.get("leaked_bytes")), (20, 20 * 48),
           "leaks: the 20 blocks kept after the snapshot")
    res = E.run(ctx, [ctx.lh, "leaks", trace])
    ctx.check(res.returncode == 0 and "the range ends at the exit snapshot" in res.stdout,
              "leaks text: exit 0 and says the range ends at the exit snapshot",
              "exit 0, 'the range ends at the exit snapshot'",
              "exit %d: %s" % (res.returncode, (res.stdout + res.stderr)[:600]))


def label_boxes(svg):
    """The rotated mark/snapshot labels of a plot: (x, y, angle in degrees, font px)."""
    return [(float(x), float(y), float(a), float(px)) for x, y, a, px in re.findall(
        r'<text x="([\d.]+)" y="([\d.]+)" transform="rotate\(-([\d.]+) [^)]*\)" '
        r'style="font-size:([\d.]+)px', svg)]


def label_overlaps(labels):
    """Pairs of neighbouring parallel labels whose baselines are closer than a line of
    their font, measured across the text (dx * sin(angle) for labels on one row)."""
    bad = []
    labels = sorted(labels)
    for (x0, y0, a0, f0), (x1, y1, a1, f1) in zip(labels, labels[1:]):
        across = (x1 - x0) * math.sin(math.radians(a0)) - (y1 - y0) * math.cos(math.radians(a0))
        if y0 == y1 and a0 == a1 and abs(across) < max(f0, f1):
            bad.append((x0, x1))
    return bad



# ---------------------------------------------------------------------------------------
# The report's order: what grows first (rank_cache.c)
# ---------------------------------------------------------------------------------------

RC_SITES = ("rc_entry", "rc_lost", "rc_possible", "rc_workers", "rc_buckets")


def rc_name(s):
    fr = E.alloc_frame(s)[1] or {}
    for n in RC_SITES:
        if E.at_line(fr, E.marker(n)):
            return n
    return "%s:%s" % (os.path.basename(fr.get("file") or "?"), fr.get("line"))


def rc_rows(rep):
    """(site, leaked bytes, blocks, rank, the kinds the exit snapshot found) per site."""
    rows = []
    for s in rep["sites"]:
        kinds = {k: v["bytes"] for k, v in (s.get("classification") or {}).items()
                 if v.get("bytes")}
        rows.append((rc_name(s), s.get("leaked_bytes"), s.get("leaked_blocks"), s.get("rank"),
                     kinds))
    return rows


# Every view's order without growth: lost blocks first, then the reachable, then the
# reachable allocated once; by bytes within each group.
RC_BY_CLASS = [("rc_lost", 65536, 1, "leak", {"definitely_lost": 65536}),
               ("rc_possible", 16384, 1, "leak", {"possibly_lost": 16384}),
               ("rc_workers", 16384, 8, "reachable", {"still_reachable": 16384}),
               ("rc_buckets", 2048, 1, "reachable_once", {"still_reachable": 2048})]
RC_ENTRY = ("rc_entry", 400 * 96, 400, "reachable", {"still_reachable": 400 * 96})


def case_rank(ctx):
    """A daemon whose leak is a cache still reachable at exit, one 96-byte entry per request,
    beside a 64 KiB buffer lost at start-up: the growing cache is the first site of `report`
    (text and JSON), `report --growth`, `leaks` and html's table, ahead of the lost start-up
    blocks, which still say they are definitely lost. Without growth over marks or snapshots,
    today's order."""
    trace = record(ctx, [ctx.prog("rank_cache")])
    rep = E.load_report(ctx, trace)
    summ = rep["summary"]
    eq(ctx, (summ.get("ranked_by"), summ.get("growing_sites"), summ.get("growth_boundaries"),
             summ.get("growth_points")), (["growth", "class", "bytes"], 1, "marks", 400),
       "report: ranked by growth, then class, then bytes: 1 site grows over 400 marks")
    eq(ctx, rc_rows(rep), [RC_ENTRY] + RC_BY_CLASS, "report: the growing cache first")
    gr = rep["sites"][0].get("growth") or {}
    eq(ctx, {k: gr.get(k) for k in ("growing", "trend", "growth_bytes_per_mark",
                                    "growth_blocks_per_mark", "grew_intervals", "intervals",
                                    "first_bytes", "last_bytes", "last_blocks")},
       {"growing": True, "trend": "growing", "growth_bytes_per_mark": 96,
        "growth_blocks_per_mark": 1, "grew_intervals": 399, "intervals": 399,
        "first_bytes": 0, "last_bytes": 399 * 96, "last_blocks": 399},
       "report: the cache's growth, as report --growth gives it")
    eq(ctx, [s.get("growth") for s in rep["sites"][1:]], [None] * 4,
       "report: the other sites do not grow")
    # report --growth and leaks name the same site first, with the same figures
    g = lh_json(ctx, ["report", trace, "--growth"], "report --growth")
    top = top_is(ctx, g, "rc_entry", "report --growth")
    if top:
        eq(ctx, {k: top.get(k) for k in gr}, gr, "report --growth: the same figures")
    lk = lh_json(ctx, ["leaks", trace], "leaks")
    top = top_is(ctx, lk, "rc_entry", "leaks")
    if top:
        eq(ctx, (top.get("trend"), top.get("leaked_blocks"), top.get("leaked_bytes")),
           ("growing", 398, 398 * 96), "leaks: the cache, every counted interval")
    # --top cuts after the order
    rep2 = lh_json(ctx, ["report", trace, "--top", "2"], "report --top 2")
    eq(ctx, [rc_name(s) for s in rep2["sites"]], ["rc_entry", "rc_lost"],
       "report --top 2: the growing cache, then the lost buffer")
    # the text says which rule ranked the list, and keeps the classes
    res = E.run(ctx, [ctx.lh, "report", trace])
    text = res.stdout
    loc = lambda n: "rank_cache.c:%d" % E.marker(n)[1]
    for line in ("5 sites: the 1 growing first, by bytes per mark (report --growth), then by "
                 "leaked bytes (lost blocks first):",
                 "-- growing over the run's 400 marks:",
                 "-- not growing:",
                 "-- still reachable at exit (the program kept them):",
                 "    kind: 400 still reachable (37.5 KiB)",
                 "    growth: +96 B per mark (+1.00 blocks), grows in 399 of 399 intervals; "
                 "0 B -> 37.4 KiB; growing (z 8.03)",
                 "    kind: 1 definitely lost (64.0 KiB)"):
        ctx.check(line in text.splitlines(), "report text: a line", line, text[-2500:])
    heads = re.findall(r"^#(\d+): .* at \S*?(rank_cache\.c:\d+)", text, re.M)
    eq(ctx, heads, [(str(i + 1), loc(n)) for i, n in
                    enumerate(["rc_entry", "rc_lost", "rc_possible", "rc_workers",
                               "rc_buckets"])], "report text: the order")
    order = [text.find(x) for x in ("-- growing over", "#1: ", "-- not growing:", "#2: ",
                                    "-- still reachable at exit (the", "#4: ")]
    eq(ctx, order, sorted(order), "report text: the groups in order")
    # html: the sites table in the same order, the growing one marked
    page = os.path.join(ctx.workdir, "rank.html")
    res = E.run(ctx, [ctx.lh, "html", trace, "-o", page, "--quiet"])
    if ctx.check(res.returncode == 0, "html", "exit 0", res.stderr[-300:]):
        with open(page) as f:
            html = f.read()
        table = html[html.index('id="sites-table"'):]
        table = table[:table.index("</table>")]
        rows = re.findall(r'<tr><td class="n">(\d+)</td><td class="n">([^<]*)<.*?</td><td>'
                          r'(<b>growing</b> )?<details>.*?(rank_cache\.c:\d+)', table)
        eq(ctx, [(r[0], r[1], bool(r[2]), r[3]) for r in rows],
           [("1", "37.5 KiB", True, loc("rc_entry")), ("2", "64.0 KiB", False, loc("rc_lost")),
            ("3", "16.0 KiB", False, loc("rc_workers")),
            ("4", "16.0 KiB", False, loc("rc_possible")),
            ("5", "2.0 KiB", False, loc("rc_buckets"))],
           "html: the sites table, the growing cache first (then by bytes: html has no "
           "exit-snapshot classes)")
        ctx.check("<h2>Top sites: growing first, then by leaked bytes</h2>" in html,
                  "html: the heading says the order", "Top sites: growing first, ...",
                  re.findall(r'<section id="sites"><h2>[^<]*', html))

    # suppressing the growing site gives the order without growth, and says so
    supp = os.path.join(ctx.workdir, "cache.supp")
    with open(supp, "w") as f:
        f.write("leak:cache_put\n")
    rep = E.load_report(ctx, trace, extra=["--suppressions", supp])
    eq(ctx, (rep["summary"].get("ranked_by"), "growing_sites" in rep["summary"], rc_rows(rep)),
       (["class", "bytes"], False, RC_BY_CLASS), "the cache suppressed: by class")

    # The same daemon without lh_mark: report --growth slices the run by its allocations
    # (survivors.h) and finds the cache growing, but the report does not reorder on that
    # inference (report.h): by class, as before.
    trace = record(ctx, [ctx.prog("rank_cache"), "400", "nomarks"], name="nomarks.lht")
    g = lh_json(ctx, ["report", trace, "--growth"], "nomarks: report --growth")
    eq(ctx, g["summary"].get("boundaries"), "slices", "nomarks: report --growth over slices")
    top_is(ctx, g, "rc_entry", "nomarks: report --growth")
    rep = E.load_report(ctx, trace)
    eq(ctx, (rep["summary"].get("ranked_by"), "growing_sites" in rep["summary"], rc_rows(rep)),
       (["class", "bytes"], False, RC_BY_CLASS[:2] + [RC_ENTRY] + RC_BY_CLASS[2:]),
       "nomarks: the report by class")

    # No growth (no request, too few allocations to slice): today's order and words.
    trace = record(ctx, [ctx.prog("rank_cache"), "0", "nomarks"], name="none.lht")
    rep = E.load_report(ctx, trace)
    eq(ctx, (rep["summary"].get("ranked_by"), "growing_sites" in rep["summary"],
             ["growth" in s for s in rep["sites"]], rc_rows(rep)),
       (["class", "bytes"], False, [False] * 4, RC_BY_CLASS), "no growth: by class, as before")
    res = E.run(ctx, [ctx.lh, "report", trace])
    ctx.check("\n4 sites by leaked bytes (lost blocks first):\n" in res.stdout
              and "grow" not in res.stdout.split("\n", 1)[1], "no growth: the text as before",
              "'4 sites by leaked bytes (lost blocks first):', nothing about growth",
              res.stdout[-1500:])


CASES = {
    "survivors": case_survivors,
    "one_snapshot": case_one_snapshot,
    "freed_list": case_freed_list,
    "transient": case_transient,
    "slow_leak": case_slow_leak,
    "snap_signal": case_snap_signal,
    "snap_signal_usr1": lambda ctx: case_snap_signal(ctx, usr1=True),
    "snap_signal_exit": case_snap_signal_exit,
    "snap_signal__exit": lambda ctx: case_snap_signal_exit(ctx, how="_exit"),
    "snap_signal_n": case_snap_signal_n,
    "snap_period": case_snap_period,
    "snap_race": case_snap_race,
    "snap_child_maps": case_snap_child_maps,
    "snap_ring": case_snap_ring,
    "reg_race": case_reg_race,
    "snap_growth": case_snap_growth,
    "snap_exit_off": case_snap_exit_off,
    "snap_replace": case_snap_replace,
    "snap_fork": case_snap_fork,
    "counts": case_counts,
    "log": case_log,
    "temporary": case_temporary,
    "rss": case_rss,
    "bad_labels": case_bad_labels,
    "no_marks": case_no_marks,
    "run_bad_flags": case_run_bad_flags,
    "consistency": case_consistency,
    "teardown": case_teardown,
    "rank": case_rank,
}


def main():
    return E.cases_main('growth', CASES, __doc__)


if __name__ == "__main__":
    sys.exit(main())
