#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""What periodic snapshots cost a program (issue 14.4): bench/snapcost (a heap of MB
megabytes in blocks of mixed sizes with pointers between them, working for SECONDS: writes
into a hot eighth of its blocks, frees and allocates) run bare, under the agent without
snapshots, and with `--snapshot-every 1s` in contents modes pointers and full. Modes
alternate within each repetition, so drift in machine load hits them alike.

Per mode, medians over the repetitions, all over the program's working phase:
  rate       the program's own work rate (steps per wall second)
  steps/cpu  steps per CPU second of the program's process (all its threads, user+system)
  snapshots, .lhs per snapshot, child wall (median over the snapshots: the contents
             file's birth time, when the agent creates it just before the clone, to its
             last write)
  child CPU  user+system CPU of the snapshot children per snapshot (the agent reaps them,
             so the program's getrusage(RUSAGE_CHILDREN) holds them)
  faults, program sys   minor faults and system time of the program's own process per
             snapshot, above what it takes without snapshots (per wall second): the
             copy-on-write faults it pays while a child runs
  snapshot CPU per s    (child CPU + that extra system time) per wall second, in percent:
             what the snapshots cost in CPU, whatever share of a core the program gets on a
             busy machine (the rate ratios are only meaningful on a quiet one)

Usage: snapcost.py LEAKHOUND SNAPCOST [--mb 100] [--seconds 20] [--reps 3] [--every 1s]
                   [--modes bare,agent,pointers,full] [--env NAME=VALUE ...]
                   [--variant V:NAME=VALUE ...]
A mode MODE@V runs MODE with variant V's environment on top (e.g. --variant
whole:LEAKHOUND_SNAPSHOT_DELTA=0 --modes agent,pointers,pointers@whole, or another agent
build with --variant old:LEAKHOUND_AGENT=/path/to/libleakhound.so), alternating with the
rest.
No timing is asserted; exit status 0 when every run succeeded.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile


def birth_and_mtime(path):
    """(birth, last modification) in seconds, from GNU stat (os.stat has no birth time)."""
    out = subprocess.run(["stat", "-c", "%.9W %.9Y", path], capture_output=True,
                         text=True).stdout.split()
    return float(out[0]), float(out[1])


def run_one(args, name, workdir):
    mode, _, variant = name.partition("@")
    trace = os.path.join(workdir, "t.lht")
    prog = [args.snapcost, str(args.mb), str(args.seconds)]
    if mode == "bare":
        cmd = prog
    else:
        cmd = [args.leakhound, "run", "-o", trace, "--no-snapshot-at-exit"]
        if mode != "agent":
            cmd += ["--snapshot-every", args.every, "--snapshot-contents", mode]
        cmd += ["--"] + prog
    env = dict(os.environ)
    for kv in args.env + [kv for v, _, kv in (x.partition(":") for x in args.variant)
                          if v == variant]:
        k, _, v = kv.partition("=")
        env[k] = v
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.stderr.write("%s failed (%d): %s\n" % (name, p.returncode, p.stderr[-500:]))
        return None
    f = p.stdout.split()
    r = {k: float(f[f.index(k) + 1]) for k in ("steps", "seconds", "cpu", "sys", "minflt",
                                                "children", "rate")}
    r["wall"] = r["seconds"]
    sizes, child = [], []
    for name in sorted(os.listdir(workdir)):
        path = os.path.join(workdir, name)
        if name.endswith(".lhs"):
            sizes.append(os.path.getsize(path))
            b, m = birth_and_mtime(path)
            if b > 0:
                child.append((m - b) * 1000)
        os.unlink(path)
    r["snaps"] = len(sizes)
    r["lhs"] = statistics.mean(sizes) if sizes else 0
    r["lhs_total"] = sum(sizes)
    r["child_ms"] = statistics.median(child) if child else 0
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("leakhound")
    ap.add_argument("snapcost")
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--every", default="1s")
    ap.add_argument("--modes", default="bare,agent,pointers,full")
    ap.add_argument("--env", action="append", default=[],
                    help="NAME=VALUE for every run (e.g. LEAKHOUND_SNAPSHOT_DELTA=0)")
    ap.add_argument("--variant", action="append", default=[],
                    help="V:NAME=VALUE, the environment of the modes MODE@V")
    args = ap.parse_args()
    modes = args.modes.split(",")
    res = {m: [] for m in modes}
    ok = True
    with tempfile.TemporaryDirectory(prefix="snapcost.") as d:
        for rep in range(args.reps):
            for m in modes:
                r = run_one(args, m, d)
                if r is None:
                    ok = False
                    continue
                res[m].append(r)
                print("rep %d %-14s rate %9.0f steps/cpu %9.0f sys %5.2f s minflt %7.0f "
                      "children %5.2f s snaps %2d .lhs %8.0f B child %6.1f ms"
                      % (rep + 1, m, r["rate"], r["steps"] / r["cpu"], r["sys"], r["minflt"],
                         r["children"], r["snaps"], r["lhs"], r["child_ms"]), flush=True)

    def med(m, key):
        v = [key(r) for r in res[m]]
        return statistics.median(v) if v else float("nan")

    def snaps(m):
        return m.partition("@")[0] not in ("bare", "agent")

    base = "agent" if "agent" in modes else modes[0]
    bare = "bare" if "bare" in modes else base
    # what the program's process spends in the kernel per wall second without snapshots
    base_sys = med(base, lambda r: r["sys"] / r["wall"])
    base_flt = med(base, lambda r: r["minflt"] / r["wall"])
    print()
    print("heap %d MB, %g s of work, snapshot every %s, %d reps (medians)"
          % (args.mb, args.seconds, args.every, args.reps))
    print()
    print("| mode | rate (steps/s) | vs agent | steps per CPU s | snapshots | .lhs per snapshot "
          "| child wall | child CPU | faults | program sys | snapshot CPU per s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for m in modes:
        rate = med(m, lambda r: r["rate"])
        spc = med(m, lambda r: r["steps"] / r["cpu"])
        row = [m, "%.0f" % rate, "%.3fx" % (med(base, lambda r: r["rate"]) / rate), "%.0f" % spc]
        if snaps(m):
            n = lambda r: max(r["snaps"], 1)
            child = med(m, lambda r: r["children"] / n(r) * 1000)
            extra_sys = med(m, lambda r: (r["sys"] - base_sys * r["wall"]) / n(r) * 1000)
            faults = med(m, lambda r: (r["minflt"] - base_flt * r["wall"]) / n(r))
            per_s = med(m, lambda r: (r["children"] + r["sys"] - base_sys * r["wall"])
                        / r["wall"] * 100)
            row += ["%.0f" % med(m, lambda r: r["snaps"]),
                    "%.2f MB" % (med(m, lambda r: r["lhs"]) / 1e6),
                    "%.0f ms" % med(m, lambda r: r["child_ms"]),
                    "%.1f ms" % child, "%.0f" % faults, "%.1f ms" % extra_sys, "%.1f%%" % per_s]
        else:
            row += ["-"] * 7
        print("| " + " | ".join(row) + " |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
