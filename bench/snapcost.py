#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""What periodic snapshots cost a program (issue 14.4): bench/snapcost (a heap of MB
megabytes in blocks of mixed sizes with pointers between them, working for SECONDS: writes
into a hot eighth of its blocks, frees and allocates) run bare, under the agent without
snapshots, and with `--snapshot-every 1s` in contents modes pointers and full. Modes
alternate within each repetition, so drift in machine load hits them alike.

Per mode, medians over the repetitions:
  rate       the program's own work rate (steps per wall second of its working phase)
  steps/cpu  steps per CPU second of the program's process (all its threads, user+system:
             the copy-on-write faults it takes while a snapshot child runs are system time)
  tree cpu   user+system CPU of the whole process tree (the snapshot children included:
             the agent reaps them, so their time is the program's children time) per step,
             relative to bare
  snaps, .lhs bytes per snapshot, child ms (median over the snapshots: the contents file's
             birth time, when the agent creates it just before the clone, to its last write)
Slowdowns are against the agent without snapshots (what the snapshots cost) and against
bare.

Usage: snapcost.py LEAKHOUND SNAPCOST [--mb 100] [--seconds 20] [--reps 3] [--every 1s]
                   [--modes bare,agent,pointers,full] [--env NAME=VALUE ...]
No timing is asserted; exit status 0 when every run succeeded.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile


def birth_and_mtime(path):
    """(birth, last modification) in seconds, from GNU stat (os.stat has no birth time)."""
    out = subprocess.run(["stat", "-c", "%.9W %.9Y", path], capture_output=True,
                         text=True).stdout.split()
    return float(out[0]), float(out[1])


def run_one(args, mode, workdir):
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
    for kv in args.env:
        k, _, v = kv.partition("=")
        env[k] = v
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.stderr.write("%s failed (%d): %s\n" % (mode, p.returncode, p.stderr[-500:]))
        return None
    f = p.stdout.split()
    r = {"steps": int(f[f.index("steps") + 1]), "wall": float(f[f.index("seconds") + 1]),
         "cpu": float(f[f.index("cpu") + 1]), "rate": float(f[f.index("rate") + 1])}
    r["tree_cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
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
                    help="NAME=VALUE for the agent runs (e.g. LEAKHOUND_SNAPSHOT_DELTA=off)")
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
                print("rep %d %-8s rate %9.0f steps/cpu %9.0f tree cpu %6.2f s snaps %2d "
                      ".lhs %8.0f B child %6.1f ms" % (rep + 1, m, r["rate"],
                                                       r["steps"] / r["cpu"], r["tree_cpu"],
                                                       r["snaps"], r["lhs"], r["child_ms"]),
                      flush=True)

    def med(m, key):
        v = [key(r) for r in res[m]]
        return statistics.median(v) if v else float("nan")

    base = "agent" if "agent" in modes else modes[0]
    bare = "bare" if "bare" in modes else base
    print()
    print("heap %d MB, %g s of work, snapshot every %s, %d reps (medians)"
          % (args.mb, args.seconds, args.every, args.reps))
    print()
    print("| mode | rate (steps/s) | vs agent | vs bare | steps per CPU s | tree CPU per step "
          "vs agent | snapshots | .lhs per snapshot | child |")
    print("|---|---|---|---|---|---|---|---|---|")
    for m in modes:
        rate = med(m, lambda r: r["rate"])
        spc = med(m, lambda r: r["steps"] / r["cpu"])
        tcps = med(m, lambda r: r["tree_cpu"] / r["steps"])
        print("| %s | %.0f | %.3fx | %.3fx | %.0f | %.3fx | %s | %s | %s |" % (
            m, rate, med(base, lambda r: r["rate"]) / rate,
            med(bare, lambda r: r["rate"]) / rate, spc,
            tcps / med(base, lambda r: r["tree_cpu"] / r["steps"]),
            "%.0f" % med(m, lambda r: r["snaps"]) if m not in ("bare", "agent") else "-",
            "%.2f MB" % (med(m, lambda r: r["lhs"]) / 1e6) if m not in ("bare", "agent")
            else "-",
            "%.0f ms" % med(m, lambda r: r["child_ms"]) if m not in ("bare", "agent")
            else "-"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
