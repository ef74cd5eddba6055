#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""Runs one libFuzzer target for a bounded time: first every file of the seed corpus
(tests/fuzz/corpus/<target>/, including the regress-* files of past findings), then new
inputs until the time is up. New interesting inputs go to a work corpus in the build tree,
never into the repository. A crash, a leak, a sanitizer report, a timeout (10 s per input)
or an input over 2 GiB RSS fails the test, and the input is kept as
<build>/tests/fuzz/artifacts/<target>-crash-<sha1>: reproduce with `<fuzzer> FILE`; once
fixed, copy it into the corpus as regress-<what>.

Usage: run_fuzz.py --fuzzer PATH --corpus DIR --work DIR [--seconds N]
       (LH_FUZZ_SECONDS in the environment overrides --seconds: `make fuzz FUZZ_SECONDS=60`)
"""

import argparse
import os
import re
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fuzzer", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--seconds", type=int, default=20)
    args = ap.parse_args()
    secs = int(os.environ.get("LH_FUZZ_SECONDS") or args.seconds)
    name = os.path.basename(args.fuzzer)
    if not os.path.exists(args.fuzzer):
        print("SKIP %s: not built (needs clang with -fsanitize=fuzzer)" % name)
        return 77
    os.makedirs(args.work, exist_ok=True)
    artifacts = os.path.join(os.path.dirname(os.path.abspath(args.work)), "artifacts")
    os.makedirs(artifacts, exist_ok=True)
    argv = [args.fuzzer, "-max_total_time=%d" % secs, "-timeout=10", "-rss_limit_mb=2048",
            "-print_final_stats=1", "-artifact_prefix=%s/%s-" % (artifacts, name),
            args.work, args.corpus]
    print("$ " + " ".join(argv), flush=True)
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=secs + 300)
    except subprocess.TimeoutExpired:
        print("FAIL %s: did not stop after %d s" % (name, secs + 300))
        return 1
    out = p.stdout.decode(errors="replace")
    execs = re.search(r"stat::number_of_executed_units:\s*(\d+)", out)
    cov = re.findall(r"cov: (\d+) ft: (\d+) corp: (\d+)", out)
    seeds = len(os.listdir(args.corpus))
    summary = "%s: %s executions in %d s, %d seed files, coverage %s" % (
        name, execs.group(1) if execs else "?", secs, seeds,
        "cov %s ft %s corpus %s" % cov[-1] if cov else "?")
    if p.returncode != 0:
        tail = "\n".join(out.splitlines()[-60:])
        print(tail)
        print("FAIL " + summary)
        return 1
    print("ok   " + summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
