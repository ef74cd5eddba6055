#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""The agent's two forms of EVENTS records (format minor 4; agent/record.c, output.c) end
to end: bench/churn_nofp's frames hardly compress, so its events go in long EVENTS records
(far fewer records than events); bench/leaky_server_nofp's compress 2x, so after its
first frame each event gets a record of its own. Either way the report's totals are the
programs' exact ones (both are deterministic: fixed seeds, fixed request mix).
In churn's long-match mode only every 8th full frame is compressed with its literals (the
probe, whose gain decides the mode); the others come out of zstd no smaller and are written
raw: a run of 80000 pairs (14 full frames) shows that pattern frame by frame.
Usage: run_events.py --build BUILD"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

CASES = (
    # program, argument, form, exact totals of `report --format json`
    ("churn_nofp", "30000", "long",
     {"total_allocations": 30002, "total_frees": 30001, "total_reallocs": 0,
      "total_allocated_bytes": 8044338, "leaked_bytes": 4096, "leaked_blocks": 1,
      "unmatched_frees": 0, "dropped_events": 0}),
    ("churn_nofp", "80000", "probe",
     {"total_allocations": 80002, "total_frees": 80001, "total_reallocs": 0,
      "total_allocated_bytes": 21226170, "leaked_bytes": 4096, "leaked_blocks": 1,
      "unmatched_frees": 0, "dropped_events": 0}),
    ("leaky_server_nofp", "30000", "one",
     {"total_allocations": 329924, "total_frees": 329893, "total_reallocs": 47999,
      "total_allocated_bytes": 50383153, "leaked_bytes": 5776, "leaked_blocks": 31,
      "unmatched_frees": 0, "dropped_events": 0}),
)


def thread_frames(path):
    """(codec, raw length, compressed length, records) of each thread frame, from the frame
    headers (format.h)."""
    with open(path, "rb") as f:
        d = f.read()
    off = 16 + struct.unpack_from("<I", d, 12)[0]
    out = []
    while off + 48 <= len(d):
        magic, hlen, codec, _flags, tid, raw, comp = struct.unpack_from("<IHBBIII", d, off)
        if magic != 0x3146484C:
            break
        if tid:
            out.append((codec, raw, comp, struct.unpack_from("<I", d, off + 40)[0]))
        off += hlen + comp
    return out


def records_in_frames(path):
    """Records counted by the frame headers (uncompressed) of thread frames."""
    return sum(f[3] for f in thread_frames(path))


def full_frames(path):
    """(codec, raw length, compressed length) of the thread frames of 16 KiB or more."""
    return [f[:3] for f in thread_frames(path) if f[1] >= 16384]


def probe_pattern(path):
    """'' when full frames 1, 9, 17, ... shrank 1.1x or more (zstd with literals) and the
    others were written raw (codec 0), else what differs."""
    frames = full_frames(path)
    if len(frames) < 10:
        return "only %d full frames" % len(frames)
    for i, (codec, raw, comp) in enumerate(frames):
        if i % 8 == 0:
            if codec != 1 or comp * 11 > raw * 10:
                return "frame %d (a probe): codec %d, %d -> %d bytes" % (i + 1, codec, raw, comp)
        elif codec != 0 or comp != raw:
            return "frame %d: codec %d, %d -> %d bytes, not raw" % (i + 1, codec, raw, comp)
    return ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    a = ap.parse_args()
    lh = os.path.join(a.build, "bin", "leakhound")
    fails = []
    with tempfile.TemporaryDirectory(prefix="lh_events.") as d:
        for prog, arg, form, want in CASES:
            trace = os.path.join(d, prog + ".lht")
            r = subprocess.run([lh, "run", "-o", trace, "--", os.path.join(a.build, "bench", prog),
                                arg], capture_output=True, text=True, timeout=300)
            if r.returncode != 0:
                fails.append("%s: run exited %d: %s" % (prog, r.returncode, r.stderr.strip()))
                continue
            r = subprocess.run([lh, "report", "--format", "json", trace], capture_output=True,
                               text=True, timeout=300)
            if r.returncode != 0:
                fails.append("%s: report exited %d: %s" % (prog, r.returncode, r.stderr.strip()))
                continue
            s = json.loads(r.stdout)["summary"]
            got = {k: s.get(k) for k in want}
            ok = got == want
            print("%-18s totals %s" % (prog, "ok" if ok else "FAIL: %s, want %s" % (got, want)))
            if not ok:
                fails.append("%s: totals" % prog)
            events = s["total_events"]
            recs = records_in_frames(trace)
            # Long records: about 20 events each. One per record: nearly every event has
            # its own (only the first frame, written before any frame was compressed, and
            # the other records change the count a little).
            good = recs * 5 < events if form != "one" else recs * 10 > events * 9
            print("%-18s %d records for %d events (%s records expected) %s"
                  % (prog, recs, events, form, "ok" if good else "FAIL"))
            if not good:
                fails.append("%s: form of the records" % prog)
            if form == "probe":
                why = probe_pattern(trace)
                print("%-18s frames with literals every 8th: %s" % (prog, why or "ok"))
                if why:
                    fails.append("%s: %s" % (prog, why))
    if fails:
        print("FAIL: " + "; ".join(fails))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
