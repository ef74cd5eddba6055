#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""What Perl frames cost (issue 12): bench/hash.pl bare, under leakhound recording perl
natively (the agent told the perl is not one it knows: LEAKHOUND_TEST_PERL_VERSION), and
under leakhound recording Perl frames, alternating, median CPU time (user + system of the
whole process tree) of --reps runs. The Perl frames' cost is compared with the cost of the
native recording they sit beside (unwind, interning, writing).

Usage: bench/perl_frames.py BUILD [--rounds N] [--unwind fp|libunwind] [--reps N]
No timing is asserted; it prints the figures.
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def cpu(argv, env):
    e = dict(os.environ)
    e.update(env)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    subprocess.run(argv, env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--rounds", default="8")
    ap.add_argument("--unwind", default="libunwind", choices=["fp", "libunwind"])
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    lh = os.path.join(a.build, "bin", "leakhound")
    work = tempfile.mkdtemp(prefix="lh_perl_frames_")
    prog = ["perl", os.path.join(HERE, "hash.pl"), a.rounds]
    runs = {"bare": [], "native": [], "perl": []}
    for _ in range(a.reps):
        runs["bare"].append(cpu(prog, {}))
        runs["native"].append(cpu([lh, "run", "-o", os.path.join(work, "n.lht"), "--unwind",
                                   a.unwind, "--"] + prog,
                                  {"LEAKHOUND_TEST_PERL_VERSION": "0.0.0"}))
        runs["perl"].append(cpu([lh, "run", "-o", os.path.join(work, "p.lht"), "--unwind",
                                 a.unwind, "--"] + prog, {}))
    med = {k: statistics.median(c for c, _ in v) for k, v in runs.items()}
    for k, v in runs.items():
        print("%-7s CPU median %.2f s (runs: %s)" % (k, med[k], " ".join("%.2f" % c for c, _ in v)))
    native, frames = med["native"] - med["bare"], med["perl"] - med["native"]
    print("hash.pl %s rounds, --unwind %s: native recording %.2f s, Perl frames %.2f s more "
          "(%.0f%% of the native recording)" % (a.rounds, a.unwind, native, frames,
                                               100.0 * frames / native if native > 0 else 0))
    shutil.rmtree(work, ignore_errors=True)  # traces and their exit snapshots
    return 0


if __name__ == "__main__":
    sys.exit(main())
