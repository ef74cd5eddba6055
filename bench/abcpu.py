#!/usr/bin/env python3
"""Paired CPU A/B of agent builds on one workload.

Usage: bench/abcpu.py [--lsan] REPS PROG [ARGS...] -- LIB_A LIB_B ...

Runs PROG bare and under each libleakhound.so (LD_PRELOAD, trace to a scratch directory),
one after the other within each repetition, REPS times, and prints the median and the
minimum of each run's CPU time (user + sys of the process and its children, from wait4)
and its ratio to the bare median, and the median wall time and its ratio. LIB@RATE runs
LIB in sampling mode (LEAKHOUND_SAMPLE_RATE=RATE). --lsan adds PROG's LeakSanitizer twin
(PROG_lsan, as bench/ builds it; LSAN_OPTIONS=exitcode=0: the workloads leak on purpose). Alternating within a repetition is what makes builds
comparable on a loaded machine, where the same run's CPU time drifts by 2x over minutes;
compare builds inside one invocation, never across two (the last lines give each build's
CPU over the first build's, repetition by repetition). Set LEAKHOUND_* in the
environment to choose the mode (LEAKHOUND_SAMPLE_RATE=524288 for sampling).
No timing is asserted anywhere: this prints numbers for bench/RESULTS.md.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def run_once(argv, env):
    t0 = time.monotonic()
    p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    if status != 0:
        sys.exit("abcpu: %s exited with status %d" % (argv[0], status))
    return ru.ru_utime + ru.ru_stime, wall


def main():
    args = sys.argv[1:]
    lsan = bool(args) and args[0] == "--lsan"
    if lsan:
        args = args[1:]
    if len(args) < 4 or "--" not in args:
        sys.exit(__doc__.strip().splitlines()[2])
    reps = int(args[0])
    cut = args.index("--")
    prog, libs = args[1:cut], args[cut + 1:]
    for lib in libs:
        if not os.path.isfile(lib.split("@")[0]):
            sys.exit("abcpu: %s: no such file" % lib)
    scratch = tempfile.mkdtemp(prefix="abcpu.")
    if lsan and not os.path.isfile(prog[0] + "_lsan"):
        sys.exit("abcpu: %s_lsan: no such file" % prog[0])
    cpu = {name: [] for name in ["bare"] + (["lsan"] if lsan else []) + libs}
    wall = {name: [] for name in cpu}
    try:
        for _ in range(reps):
            for name in cpu:
                env = dict(os.environ)
                argv = list(prog)
                if name == "lsan":
                    argv[0] += "_lsan"
                    env["LSAN_OPTIONS"] = "exitcode=0"
                elif name != "bare":
                    lib, _, rate = name.partition("@")
                    env["LD_PRELOAD"] = os.path.abspath(lib)
                    env["LEAKHOUND_OUTPUT"] = os.path.join(scratch, "t-%p.lht")
                    if rate:
                        env["LEAKHOUND_SAMPLE_RATE"] = rate
                c, w = run_once(argv, env)
                cpu[name].append(c)
                wall[name].append(w)
                for f in os.listdir(scratch):
                    os.unlink(os.path.join(scratch, f))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    bare = statistics.median(cpu["bare"])
    bare_wall = statistics.median(wall["bare"])
    print("load average %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
    for name, v in cpu.items():
        med = statistics.median(v)
        wmed = statistics.median(wall[name])
        print("%-48s CPU median %.3f s  min %.3f s  ratio %.2fx  wall median %.3f s  ratio %.2fx"
              % (name, med, min(v), med / bare if bare else float("nan"), wmed,
                 wmed / bare_wall if bare_wall else float("nan")))
    # Each later build against the first, run by run (adjacent runs of one repetition share
    # the machine's state of the moment): steadier than the ratio of two medians.
    for name in libs[1:]:
        q = sorted(c / r for c, r in zip(cpu[name], cpu[libs[0]]) if r)
        if q:
            print("%-48s / first build, per repetition: median %.3f  quartiles %.3f %.3f  "
                  "(%d of %d below 1)" % (name, statistics.median(q), q[len(q) // 4],
                                         q[(3 * len(q)) // 4], sum(x < 1 for x in q), len(q)))


if __name__ == "__main__":
    main()
