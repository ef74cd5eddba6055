#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""Regenerates the fuzz seed corpus (tests/fuzz/corpus/<target>/) from a build: small real
traces and snapshot contents files of the e2e programs (written with tiny buffers, so many
frames), each also rewritten with raw (uncompressed) frames so that mutations land in
records rather than in zstd data, plus truncated and byte-flipped variants. Files named
crash-* or regress-* (fuzzer findings) are kept.

Usage: make_corpus.py --build DIR
"""

import argparse
import glob
import os
import random
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "faults"))
from run_faults import crc32c  # noqa: E402

MAX_SEED = 48 * 1024


def frames(data):
    magic = data[:8]
    info_len = struct.unpack_from("<I", data, 12)[0]
    off = 16 + info_len
    out = []
    while off + 48 <= len(data):
        h = list(struct.unpack_from("<IHBBIIIIQQII", data, off))
        hlen, clen = h[1], h[6]
        out.append((h, data[off + hlen:off + hlen + clen]))
        off += hlen + clen
    return magic, data[:16 + info_len], out


def rebuild_raw(data):
    """The same file with every zstd frame stored raw (codec 0), checksums recomputed."""
    _, head, fr = frames(data)
    parts = [head]
    for h, body in fr:
        if h[2] == 1:
            r = subprocess.run(["zstd", "-q", "-d", "-c"], input=body, stdout=subprocess.PIPE)
            if r.returncode != 0:
                return None
            body = r.stdout
            h[2] = 0
        h[5] = h[6] = len(body)
        h[7] = crc32c(body)
        hb = struct.pack("<IHBBIIIIQQ", *h[:10]) + struct.pack("<I", h[10])
        parts.append(hb + struct.pack("<I", crc32c(hb)) + body)
    return b"".join(parts)


def write(dirname, name, data):
    if data and len(data) <= MAX_SEED:
        with open(os.path.join(dirname, name), "wb") as f:
            f.write(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    agent = os.path.join(build, "lib", "libleakhound.so")
    progs = os.path.join(build, "tests", "e2e", "progs")
    work = os.path.join(build, "tests", "fuzz", "corpus-work")
    os.makedirs(work, exist_ok=True)
    for f in glob.glob(os.path.join(work, "*")):
        os.unlink(f)
    runs = [("realloc_chain", []), ("calloc", []), ("memalign", []), ("threads", []),
            ("lost_nodes", []), ("dlopen_leak", []), ("reallocarray", []), ("clean", [])]
    for i, (p, argv) in enumerate(runs):
        exe = os.path.join(progs, p)
        if not os.path.exists(exe):
            continue
        env = dict(os.environ, LD_PRELOAD=agent, LEAKHOUND_BUFFER_KB="4",
                   LEAKHOUND_OUTPUT=os.path.join(work, "%s.lht" % p),
                   LEAKHOUND_SNAPSHOT_CONTENTS="pointers" if i % 2 == 0 else "full",
                   LEAKHOUND_UNWIND="fp" if i % 3 == 0 else "libunwind")
        subprocess.run([exe] + argv, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=60, cwd=work)
    rnd = random.Random(7)
    for target, pattern in (("trace", "*.lht"), ("snapfile", "*.lhs")):
        out = os.path.join(HERE, "corpus", target)
        os.makedirs(out, exist_ok=True)
        for f in os.listdir(out):
            if not f.startswith(("crash-", "regress-")):
                os.unlink(os.path.join(out, f))
        for path in sorted(glob.glob(os.path.join(work, pattern))):
            base = os.path.basename(path).replace(".", "_")
            with open(path, "rb") as f:
                data = f.read()
            raw = rebuild_raw(data)
            write(out, base, data)
            write(out, base + "_raw", raw)
            src = raw if raw and len(raw) <= MAX_SEED else data
            if len(src) > 64:
                write(out, base + "_trunc", src[:rnd.randrange(16, len(src))])
                flipped = bytearray(src)
                for _ in range(4):
                    k = rnd.randrange(16, len(flipped))
                    flipped[k] ^= 1 << rnd.randrange(8)
                write(out, base + "_flip", bytes(flipped))
    out = os.path.join(HERE, "corpus", "args")
    os.makedirs(out, exist_ok=True)
    for i, s in enumerate(["500ms", "1.5s", "10s", "2m", "1h", "250us", "100ns", "0", "64M",
                           "512K", "10G", "1T", "4096", "0.5M", "USR2", "SIGUSR1", "RTMIN+3",
                           "none", "18446744073709551615", "9999999999999999999h", "1.",
                           ".5s", "1e9", "12345678901234567890123", "-1", "1.0000000000001s"]):
        with open(os.path.join(out, "seed%02d" % i), "w") as f:
            f.write(s)
    print("corpus written to %s" % os.path.join(HERE, "corpus"))


if __name__ == "__main__":
    main()
