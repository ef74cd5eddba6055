#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""Signal-to-snapshot latency: `leakhound run` on bench/siglat (a heap of MB megabytes),
then N SIGUSR2 sent from outside, one at a time; for each, the time from kill() until the
snapshot's contents file (created by the agent when it starts the capture) exists.

Usage: siglat.py LEAKHOUND SIGLAT [MB] [N]
"""
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    lh, prog = sys.argv[1], sys.argv[2]
    mb = sys.argv[3] if len(sys.argv) > 3 else "100"
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 20
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "t.lht")
        p = subprocess.Popen([lh, "run", "-o", trace, "--", prog, mb], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
        pid = int(p.stdout.readline().split()[1])
        took = []
        for k in range(1, n + 1):
            t0 = time.monotonic()
            os.kill(pid, signal.SIGUSR2)
            path = os.path.join(d, "t.snap%d.lhs" % k)
            while not os.path.exists(path):
                time.sleep(0.0002)
            took.append((time.monotonic() - t0) * 1000)
            time.sleep(0.15)  # let the capture child finish: no overlap between captures
        os.kill(pid, signal.SIGTERM)
        p.wait()
    took.sort()
    print("heap %s MB, %d signals: kill() to snapshot, ms: median %.1f, min %.1f, max %.1f"
          % (mb, n, statistics.median(took), took[0], took[-1]))


if __name__ == "__main__":
    main()
