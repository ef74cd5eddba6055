#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""Faults and security: what happens to the target and to the trace when things go wrong.

Cases (faults.<case>):
  sigkill      the target is killed with SIGKILL at random moments (5 runs): the trace
               loads, says the exit was not clean, and holds every allocation the program
               had completed 500 ms before the kill (it writes its own counter every 10 ms).
  diskfull     the trace goes to a 512 KiB tmpfs (root; skipped where mount is refused):
               the target exits normally with its normal output and the agent says
               exactly once that it stopped recording; what was written loads (--salvage).
  unwritable   the output cannot be created (a path under a regular file; a directory the
               user cannot write, as nobody): the target is unaffected, one message.
  dirgone      the output directory is removed while the target runs (and the target
               forks afterwards): the target keeps running correctly.
  hostile      the analyzer on hostile files (frame headers announcing 60 MiB payloads, a
               zstd bomb, an info block claiming huge counts, absurd stack ids, ...): a
               clear one-line error or a report, never a crash, bounded memory (ulimit -v)
               and time.
  modes        every file the agent creates (fork children's traces, snapshot contents
               files) is 0600, and a symlink planted where a snapshot file will go is not
               followed (e2e.mode0600/e2e.symlink cover the main trace).
  setuid       a setuid-root program run by nobody with the agent preloaded (AT_SECURE):
               the agent stays off and writes nothing where the environment says.
  contents     snapshot contents: in mode `pointers` a secret string in a live heap block
               does not appear in the .lhs file (frames decompressed with zstd(1)); in
               mode `full` it does; in mode `none` there is no .lhs file.

Usage: run_faults.py --build DIR --case NAME [--keep] [-v] [--runs N] [--seed S]
Exit status: 0 pass, 1 fail, 77 skipped (not root, mount refused, ...).
"""

import argparse
import os
import random
import re
import resource
import shutil
import signal
import stat
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "stress"))
import harness as H  # noqa: E402

STOPPED = "recording stopped"


def prog(ctx):
    return os.path.join(ctx.build, "tests", "faults", "fault_prog")


def preload_env(ctx, output, extra=None):
    env = H.clean_env({"LD_PRELOAD": ctx.agent, "LEAKHOUND_OUTPUT": output})
    env.update(extra or {})
    return env


def agent_lines(stderr):
    return [ln for ln in stderr.splitlines() if "<lh>" in ln]


def report_json(ctx, trace, salvage=False, timeout=120):
    extra = ["--salvage"] if salvage else []
    return H.report(ctx, trace, extra, timeout=timeout)


def site_blocks(rep, function):
    """Blocks still live at the sites whose allocating frame is function."""
    n = 0
    for s in rep.get("sites") or []:
        fr = (s.get("frames") or [{}])[0]
        if fr.get("function") == function:
            n += s.get("leaked_blocks", 0)
    return n


# ---------------------------------------------------------------------------------------
# SIGKILL at random points
# ---------------------------------------------------------------------------------------

def case_sigkill(ctx, args):
    rnd = random.Random(args.seed)
    ctx.figure("sigkill: seed %d (--seed to replay)" % args.seed)
    worst_ms = 0.0
    salvaged = 0
    for run in range(args.runs):
        d = ctx.path("run%d" % run)
        os.mkdir(d)
        trace = os.path.join(d, "trace.lht")
        counter = os.path.join(d, "counter")
        delay = 0.5 + rnd.uniform(0.3, 1.5)   # from the first counter line
        p = H.start(ctx, [prog(ctx), "counter", counter, "10"], cwd=d,
                    env=preload_env(ctx, trace))
        # The delay counts from the program's first counter line, not from the fork: on a
        # loaded machine the start alone can take longer than the shortest delay.
        started = time.monotonic() + 30
        while time.monotonic() < started and p.poll() is None and not (
                os.path.exists(counter) and os.path.getsize(counter) > 0):
            time.sleep(0.01)
        time.sleep(delay)
        kill_ns = time.monotonic_ns()
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        ctx.check(p.returncode == -signal.SIGKILL, "run %d: the target died of SIGKILL" % run,
                  -signal.SIGKILL, p.returncode)
        marks = []
        with open(counter) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2:
                    marks.append((int(parts[0]), int(parts[1])))
        # What the program had surely allocated 500 ms before the kill: five flush periods,
        # the slack a machine with ten runnable threads per core needs to run the ticker.
        before = [n for n, t in marks if t <= kill_ns - 500_000_000]
        if not ctx.check(before, "run %d: counter lines older than 500 ms" % run,
                         "some (killed after %.2f s)" % delay, marks[:3]):
            continue
        must = before[-1]
        rep = report_json(ctx, trace)
        if rep is None:
            # Killed inside a write: the file ends inside a frame. It must then load with
            # --salvage (FORMAT.md: truncated), and still hold what was flushed.
            ctx.failures.pop()
            salvaged += 1
            rep = report_json(ctx, trace, salvage=True)
            if rep is None:
                continue
        summ = rep["summary"]
        H.check_totals(ctx, trace, summ, clean_exit=False)
        have = site_blocks(rep, "fk_alloc")
        ctx.check(have >= must, "run %d (killed after %.2f s): fk_alloc blocks in the trace"
                  % (run, delay), ">= %d (completed 500 ms before the kill)" % must, have)
        # At most 100 blocks per loop turn, and each turn sleeps 1 ms: an upper bound on
        # what was allocated after the last counter line.
        last_n, last_t = marks[-1]
        bound = last_n + 100 * (int((kill_ns - last_t) / 1e6) + 2)
        ctx.check(have <= bound, "run %d: no more blocks than were allocated" % run,
                  "<= %d" % bound, have)
        # How much was lost: the newest counter line the trace covers, against the kill.
        covered = [t for n, t in marks if n <= have]
        lost_ms = (kill_ns - covered[-1]) / 1e6 if covered else float("inf")
        worst_ms = max(worst_ms, lost_ms)
        ctx.figure("sigkill run %d: killed after %.3f s; %d blocks in the trace, %d counted "
                   "500 ms before, %d at the last counter line; trace covers up to %.0f ms "
                   "before the kill%s" % (run, delay, have, must, marks[-1][0], lost_ms,
                                          " (salvaged)" if summ.get("salvaged") else ""))
    ctx.figure("sigkill: %d kills survived; at most the last %.0f ms before a kill was lost; "
               "%d traces needed --salvage" % (args.runs, worst_ms, salvaged))


# ---------------------------------------------------------------------------------------
# Disk full, unwritable output, directory removed
# ---------------------------------------------------------------------------------------

def bare_and_traced(ctx, argv, output, env_extra=None, timeout=120, user=None):
    pre = user or []
    bare = H.run(ctx, pre + argv, timeout=timeout, env=H.clean_env(env_extra))
    lh = H.run(ctx, pre + argv, timeout=timeout, env=preload_env(ctx, output, env_extra))
    ctx.check(lh.returncode == bare.returncode == 0, "exit status with the agent", "0 (bare %s)"
              % bare.returncode, "%s: %s" % (lh.returncode, lh.stderr[-400:]))
    ctx.check(lh.stdout == bare.stdout, "stdout with the agent is the bare stdout", bare.stdout,
              lh.stdout)
    return lh


def case_diskfull(ctx, args):
    if os.geteuid() != 0:
        print("SKIP faults.diskfull: mounting a small tmpfs needs root")
        return H.SKIP
    mnt = ctx.path("full")
    os.mkdir(mnt)
    m = H.run(ctx, ["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", mnt], timeout=30)
    if m.returncode != 0:
        ctx.failures.clear()
        print("SKIP faults.diskfull: mount -t tmpfs refused here (%s)" % m.stderr.strip())
        return H.SKIP
    ctx.cleanups.append(lambda: subprocess.run(["umount", "-l", mnt]))
    trace = os.path.join(mnt, "trace.lht")
    lh = bare_and_traced(ctx, [prog(ctx), "churn", "400000"], trace)
    lines = agent_lines(lh.stderr)
    stops = [ln for ln in lines if STOPPED in ln]
    ctx.check(len(stops) == 1, "the agent says once that it stopped recording",
              "one '%s' line" % STOPPED, lines)
    ctx.check(os.path.getsize(trace) > 0, "a partial trace on the full disk", "> 0 bytes",
              os.path.getsize(trace))
    rep = report_json(ctx, trace, salvage=True)
    if rep:
        summ = rep["summary"]
        ctx.figure("diskfull: 512 KiB tmpfs filled; target exit 0, same output; agent said: "
                   "%r; the partial trace (%d bytes) loads with --salvage: %s events, "
                   "salvaged %s" % (stops[0] if stops else None, os.path.getsize(trace),
                                    summ.get("total_events"), summ.get("salvaged")))


def case_unwritable(ctx, args):
    # 1. A path under a regular file: ENOTDIR, as any user.
    notdir = ctx.path("plainfile")
    with open(notdir, "w") as f:
        f.write("x\n")
    lh = bare_and_traced(ctx, [prog(ctx), "churn", "20000"], os.path.join(notdir, "t.lht"))
    lines = agent_lines(lh.stderr)
    ctx.check(len(lines) == 1 and STOPPED in lines[0] and "cannot create trace file" in lines[0]
              and "t.lht" in lines[0], "output under a regular file: one message",
              "one line: cannot create trace file ...t.lht (errno 20); recording stopped",
              lines)
    ctx.figure("unwritable (path under a file): exit 0, same output, agent said %r" % lines)
    # 2. leakhound run: the same, with its own message, and the program's exit status.
    r = H.run(ctx, [ctx.lh, "run", "-o", os.path.join(notdir, "t.lht"), "--", prog(ctx),
                    "churn", "2000"], timeout=60)
    # Either it runs the program unharmed, or it refuses up front with one clear line.
    refused = (r.returncode != 0 and r.stdout == "" and len(r.stderr.strip().splitlines()) == 1
               and r.stderr.startswith("leakhound: ") and "t.lht" in r.stderr)
    ran = r.returncode == 0 and "churn 2000 checksum" in r.stdout
    ctx.check(ran or refused, "leakhound run with an output it cannot create",
              "the program's output and exit 0, or a one-line refusal naming the file",
              "exit %s, stdout %r, stderr %r" % (r.returncode, r.stdout[-200:], r.stderr[-300:]))
    ctx.figure("unwritable (leakhound run -o under a file): exit %s, stderr %r"
               % (r.returncode, r.stderr.strip()[-300:]))
    # 3. A directory the user may not write, as nobody.
    setpriv = H.which("setpriv")
    if os.geteuid() != 0 or not setpriv:
        print("  (read-only directory as nobody: skipped, needs root and setpriv)")
        return None
    ro = ctx.path("readonly")
    os.mkdir(ro, 0o755)
    os.chmod(ctx.workdir, 0o755)
    shutil.copy(prog(ctx), ctx.path("fault_prog"))
    os.chmod(ctx.path("fault_prog"), 0o755)
    nobody = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]
    # The agent must be readable by nobody: a copy next to the program.
    agent = ctx.path("libleakhound.so")
    shutil.copy(ctx.agent, agent)
    os.chmod(agent, 0o755)
    # The preload is set by env(1) for the target only: setpriv itself must not be traced
    # (see docs/RELIABILITY.md: a thread added to a program that drops privileges with
    # per-thread capabilities makes glibc's setxid broadcast abort).
    bare = H.run(ctx, nobody + [ctx.path("fault_prog"), "churn", "20000"], timeout=60,
                 env=H.clean_env())
    lhr = H.run(ctx, nobody + ["/usr/bin/env", "LD_PRELOAD=" + agent, "LEAKHOUND_OUTPUT="
                               + os.path.join(ro, "t.lht"), ctx.path("fault_prog"), "churn",
                               "20000"], timeout=60, env=H.clean_env())
    ctx.check(lhr.returncode == bare.returncode == 0 and lhr.stdout == bare.stdout,
              "read-only directory (as nobody): target unaffected", bare.stdout,
              "exit %s: %r %r" % (lhr.returncode, lhr.stdout, lhr.stderr[-300:]))
    lines = agent_lines(lhr.stderr)
    ctx.check(len(lines) == 1 and STOPPED in lines[0] and "(errno 13)" in lines[0],
              "read-only directory: one message", "one line: cannot create trace file ... "
              "(errno 13); recording stopped", lines)
    ctx.check(os.listdir(ro) == [], "nothing created in the read-only directory", [],
              os.listdir(ro))
    ctx.figure("unwritable (read-only directory, as nobody): exit 0, same output, agent said "
               "%r" % lines)


def case_dirgone(ctx, args):
    out = ctx.path("out")
    os.mkdir(out)
    trace = os.path.join(out, "trace.lht")
    bare = H.run(ctx, [prog(ctx), "forklate", "1.2"], timeout=60, env=H.clean_env())
    p = subprocess.Popen([prog(ctx), "forklate", "1.2"], cwd=ctx.workdir,
                         env=preload_env(ctx, trace), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    ctx.cleanups.append(lambda: H.kill_group(p))
    time.sleep(0.3)
    existed = os.path.exists(trace)
    shutil.rmtree(out)
    try:
        so, se = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        H.kill_group(p)
        so, se = p.communicate()
        ctx.fail("target after its output directory was removed", "exits", "hung")
    so, se = so.decode(errors="replace"), se.decode(errors="replace")
    ctx.check(existed, "the trace existed before the removal", True, existed)
    ctx.check(p.returncode == bare.returncode == 0 and so == bare.stdout,
              "target whose output directory was removed mid-run",
              "exit 0, output %r" % bare.stdout, "exit %s, output %r, stderr %r"
              % (p.returncode, so, se[-300:]))
    lines = agent_lines(se)
    # The parent writes on through its open descriptor; the fork child cannot create its
    # file and says so once; the exit snapshot cannot create its contents file.
    ctx.check(len([ln for ln in lines if "cannot create trace file" in ln and STOPPED in ln])
              == 1 and all("errno" not in ln or "cannot" in ln for ln in lines),
              "agent messages", "one 'cannot create trace file' line (the fork child), "
              "each message saying what failed", lines)
    ctx.figure("dirgone: output directory removed 0.3 s into a 1.2 s run, a fork after it; "
               "exit %s, same output %s; agent said %r" % (p.returncode, so == bare.stdout,
                                                        lines))


# ---------------------------------------------------------------------------------------
# Hostile input for the analyzer
# ---------------------------------------------------------------------------------------

def crc32c(data):
    """CRC-32C (Castagnoli), bitwise: small inputs only."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def rec(t, payload):
    return bytes([t]) + varint(len(payload)) + payload


def lstr(s):
    return varint(len(s)) + s


def file_header(info, magic=b"LHTRACE\0", info_len=None):
    return magic + struct.pack("<HHI", 1, 0, len(info) if info_len is None else info_len) + info


def frame(payload, n_records=1, raw_len=None, comp_len=None, codec=0, seq=0, tid=1,
          flags=0, crc=None, comp=None):
    body = comp if comp is not None else payload
    h = struct.pack("<IHBBIIIIQQI", 0x3146484C, 48, codec, flags, tid,
                    len(payload) if raw_len is None else raw_len,
                    len(body) if comp_len is None else comp_len,
                    crc32c(body) if crc is None else crc, 1000, seq, n_records)
    return h + struct.pack("<I", crc32c(h)) + body


def zstd_compress(data):
    zstd = H.which("zstd")
    r = subprocess.run([zstd, "-q", "-c", "-19"], input=data, stdout=subprocess.PIPE,
                       check=True)
    return r.stdout


INFO = rec(0x01, varint(4242) + varint(1)) + rec(0x02, lstr(b"/bin/hostile"))


def hostile_files():
    """name -> (bytes, what the analyzer may answer: 'error' or 'any')."""
    files = {}
    big = 60 << 20
    # A frame header announcing a 60 MiB payload, and a file that stops right after it.
    hdr = frame(b"", raw_len=big, comp_len=big)
    files["announce_60MiB"] = (file_header(INFO) + hdr[:48], "error")
    # The same, with 60 MiB announced but garbage following (short).
    files["announce_60MiB_short"] = (file_header(INFO) + hdr[:48] + b"\x00" * 4096, "error")
    # Payload length above the format's limit.
    files["comp_len_4GiB"] = (file_header(INFO) + frame(b"", raw_len=0xFFFFFFFF,
                                                         comp_len=0xFFFFFFFF)[:48], "error")
    # A zstd bomb: 60 MiB of zeros (unknown records of type 0, length 0) in a few KiB.
    zeros = b"\x00" * big
    if H.which("zstd"):
        comp = zstd_compress(zeros)
        files["zstd_bomb_60MiB"] = (file_header(INFO) + frame(zeros, n_records=big // 2,
                                                              codec=1, comp=comp), "any")
        # The bomb lying about its size (raw_len 1 KiB).
        files["zstd_bomb_lying"] = (file_header(INFO) + frame(zeros, raw_len=1024, codec=1,
                                                              comp=comp), "error")
    # Info block: info_len far beyond the 1 MiB limit, and beyond the file.
    files["info_len_4GiB"] = (file_header(b"", info_len=0xFFFFFFFF), "error")
    # Info records claiming huge counts.
    files["cmdline_argc_2e60"] = (file_header(INFO + rec(0x03, varint(1 << 60) + lstr(b"x"))),
                                  "any")
    files["string_len_2e60"] = (file_header(rec(0x02, varint(1 << 60) + b"abc")), "any")
    files["record_len_2e60"] = (file_header(INFO + bytes([0x02]) + varint(1 << 60) + b"ab"),
                                "error")
    # Frame records with absurd but decodable numbers (stack ids at the reader's limit,
    # 2^24; 1024-frame stacks with wild addresses; sizes near 2^64), so that they get past
    # the decoder into the heap model, the stack table and the symbolizer.
    idmax = 1 << 24
    stack = rec(0x30, varint(idmax) + varint(0) + varint(1024)
                + b"".join(varint(((1 << 62) + i * 977) & ((1 << 64) - 1)) for i in range(1024)))
    alloc_hi = rec(0x40, varint(5) + varint(32) + varint((1 << 63) + 12345) + varint(idmax))
    alloc_hi2 = rec(0x40, varint(5) + varint(64) + varint((1 << 63) + 99999) + varint(idmax))
    alloc_id = rec(0x40, varint(5) + varint(64) + varint(100) + varint(idmax))
    free_x = rec(0x41, varint(5) + varint(64))
    realloc_x = rec(0x42, varint(5) + varint(64) + varint(96) + varint(1 << 62)
                    + varint(idmax) + varint(1 << 62))
    module = rec(0x20, varint(1) + varint(0) + varint(1 << 63) + lstr(b"/nonexistent")
                 + varint(4) + b"\x01\x02\x03\x04" + varint(1)
                 + varint(1 << 62) + varint(1 << 62) + varint(5))
    sync = rec(0x60, varint(1 << 62))
    for name, body, n in (("stack_huge", stack + alloc_id, 2),
                          ("alloc_huge_size", alloc_hi + alloc_hi2, 2),
                          ("alloc_stack_id_max", alloc_id + free_x + alloc_id, 3),
                          ("realloc_huge", realloc_x + realloc_x, 2),
                          ("module_huge", module + stack + alloc_id, 3),
                          ("sync_far_future", alloc_id + sync + alloc_hi, 3)):
        files[name] = (file_header(INFO) + frame(body, n_records=n), "any")
    # Many frames whose records all carry distinct stack ids near the limit (table growth).
    many = b"".join(frame(rec(0x40, varint(1) + varint(16 * (i + 1)) + varint(8)
                              + varint(idmax - i)), seq=i) for i in range(2000))
    files["many_stack_ids"] = (file_header(INFO) + many, "any")
    # Bad magic, truncated header, wrong CRCs.
    files["bad_magic"] = (b"NOTATRACE" + b"\x00" * 40, "error")
    files["header_only_8"] = (b"LHTRACE\0", "error")
    files["bad_header_crc"] = (file_header(INFO) + frame(alloc_id)[:44] + b"\0\0\0\0"
                               + frame(alloc_id)[48:], "error")
    files["bad_payload_crc"] = (file_header(INFO) + frame(alloc_id, crc=0), "error")
    return files


def case_hostile(ctx, args):
    sanitized = False
    cache = os.path.join(ctx.build, "CMakeCache.txt")
    if os.path.exists(cache):
        with open(cache) as f:
            sanitized = bool(re.search(r"^LH_SANITIZER:STRING=\S", f.read(), re.M))
    limit = 1 << 30  # 1 GiB of address space for the analyzer

    def limited():
        os.setsid()
        if not sanitized:  # ASan reserves terabytes of shadow: no ulimit -v there
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    worst = 0
    unnamed = set()
    for name, (data, expect) in sorted(hostile_files().items()):
        path = ctx.path(name + ".lht")
        with open(path, "wb") as f:
            f.write(data)
        for extra in ([], ["--salvage"]):
            t0 = time.monotonic()
            p = subprocess.Popen([ctx.lh, "report", path, "--format", "json"] + extra,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 preexec_fn=limited, cwd=ctx.workdir)
            try:
                out, err = p.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                out, err = p.communicate()
                ctx.fail("report %s %s" % (name, extra), "finishes within 60 s", "hung")
                continue
            secs = time.monotonic() - t0
            ru = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            worst = max(worst, ru)
            err = err.decode(errors="replace").strip()
            label = "report %s%s" % (name, " --salvage" if extra else "")
            ctx.check(p.returncode >= 0 and p.returncode not in (134, 139),
                      "%s: no crash" % label, "an exit status", "%s: %s"
                      % (p.returncode, err[-500:]))
            ctx.check("AddressSanitizer" not in err and "runtime error" not in err,
                      "%s: no sanitizer report" % label, "none", err[-800:])
            if p.returncode != 0:
                lines = err.splitlines()
                ctx.check(p.returncode == 1 and 1 <= len(lines) <= 3
                          and lines[0].startswith("leakhound: "),
                          "%s: a clear error" % label, "exit 1 and one 'leakhound:' line",
                          "exit %d: %s" % (p.returncode, lines[:5]))
                if lines and name not in lines[0]:
                    unnamed.add(lines[0])
            elif expect == "error" and not extra:
                ctx.fail("%s: refused" % label, "an error", "exit 0: %s" % out[:200])
            ctx.log("%s: exit %d in %.2f s: %s" % (label, p.returncode, secs, err[:200]))
    ctx.figure("hostile: %d hostile files, each with and without --salvage, under ulimit -v "
               "%s: no crash, no hang; peak RSS of any analyzer run %d MiB"
               % (len(hostile_files()), "off (sanitizer build)" if sanitized else "1 GiB",
                  worst // 1024))
    for msg in sorted(unnamed):
        # Known (docs/RELIABILITY.md): errors of the heap model do not name the file.
        ctx.figure("hostile: an error that does not name the file: %r" % msg)


# ---------------------------------------------------------------------------------------
# Security
# ---------------------------------------------------------------------------------------

def case_modes(ctx, args):
    old = os.umask(0o022)
    try:
        trace = ctx.path("trace.lht")
        # A planted symlink where the exit snapshot's contents file will go.
        precious = ctx.path("precious.txt")
        with open(precious, "w") as f:
            f.write("precious\n")
        os.symlink(precious, ctx.path("trace.snap1.lhs"))
        r = H.run(ctx, [prog(ctx), "forklate", "0.4"], timeout=60,
                  env=preload_env(ctx, trace))
        ctx.check(r.returncode == 0, "target exit status", 0, "%s: %s" % (r.returncode,
                                                                           r.stderr[-300:]))
        with open(precious) as f:
            ctx.check(f.read() == "precious\n", "symlink target of the .lhs path untouched",
                      "precious", "changed")
        ctx.check(os.path.islink(ctx.path("trace.snap1.lhs")), "planted symlink left alone",
                  "a symlink", "replaced")
        files = sorted(os.listdir(ctx.workdir))
        made = [f for f in files if f.startswith("trace") and
                not os.path.islink(ctx.path(f))]
        ctx.check(any(re.fullmatch(r"trace\.lht\.\d+", f) for f in made),
                  "the fork child's trace", "trace.lht.<pid>", files)
        for f in made:
            mode = stat.S_IMODE(os.lstat(ctx.path(f)).st_mode)
            ctx.check(mode == 0o600, "mode of %s (umask 022)" % f, "0600", "%04o" % mode)
        ctx.figure("modes: %s all 0600; planted symlink at trace.snap1.lhs not followed; "
                   "agent said %r" % (made, agent_lines(r.stderr)))
    finally:
        os.umask(old)


def case_setuid(ctx, args):
    setpriv = H.which("setpriv")
    if os.geteuid() != 0 or not setpriv:
        print("SKIP faults.setuid: needs root (to make a setuid-root program) and setpriv")
        return H.SKIP
    os.chmod(ctx.workdir, 0o755)
    if os.statvfs(ctx.workdir).f_flag & os.ST_NOSUID:
        print("SKIP faults.setuid: the build directory is on a nosuid mount")
        return H.SKIP
    # glibc's secure mode ignores LD_PRELOAD entries with a slash; a bare name is loaded
    # from the standard directories, and only if the library file is itself setuid.
    libdir = "/usr/lib/x86_64-linux-gnu" if os.path.isdir("/usr/lib/x86_64-linux-gnu") \
        else "/usr/lib"
    libname = "libleakhound-lhtest-%d.so" % os.getpid()
    lib = os.path.join(libdir, libname)
    shutil.copy(ctx.agent, lib)
    ctx.cleanups.append(lambda: os.path.exists(lib) and os.unlink(lib))
    os.chmod(lib, 0o4755)
    suid = ctx.path("suid_prog")
    plain = ctx.path("plain_prog")
    for p in (suid, plain):
        shutil.copy(prog(ctx), p)
        os.chown(p, 0, 0)
    os.chmod(suid, 0o4755)
    os.chmod(plain, 0o755)
    out = ctx.path("out")
    os.mkdir(out)
    os.chmod(out, 0o1777)  # nobody could create files here: only the agent's check stops it
    nobody = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]
    results = {}
    for name, path in (("plain", plain), ("setuid", suid)):
        target = os.path.join(out, name + ".lht")
        r = H.run(ctx, nobody + ["/usr/bin/env", "LD_PRELOAD=" + libname,
                                 "LEAKHOUND_OUTPUT=" + target, path, "churn", "5000"],
                  timeout=60, env=H.clean_env())
        results[name] = (r, os.path.exists(target))
        ctx.check(r.returncode == 0 and "churn 5000 checksum" in r.stdout,
                  "%s program as nobody with the agent preloaded" % name, "exit 0 and output",
                  "exit %s: %r %r" % (r.returncode, r.stdout, r.stderr[-300:]))
    r, made = results["plain"]
    ctx.check(made, "control: the same library, preloaded by name, traces a plain program run "
              "by nobody", "out/plain.lht", sorted(os.listdir(out)))
    r, made = results["setuid"]
    ctx.check(not made, "setuid program: no trace where LEAKHOUND_OUTPUT says", "no file",
              sorted(os.listdir(out)))
    ctx.check("setuid/setgid program: not tracing" in r.stderr,
              "setuid program: the agent was loaded and said why it stays off",
              "'setuid/setgid program: not tracing'", r.stderr.strip()[-300:])
    ctx.figure("setuid: setuid-root copy run by nobody with LD_PRELOAD=%s (setuid, in %s): "
               "agent loaded, said %r, wrote nothing; control (not setuid): trace written"
               % (libname, libdir, agent_lines(r.stderr)))


SECRET = b"hunter2-SECRET-7f3a9c-do-not-leak"


def lhs_payloads(ctx, path):
    """The decompressed payloads of a .lhs file's frames (zstd(1) on each frame)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"LHSNAPS\0":
        ctx.fail("%s magic" % path, "LHSNAPS", data[:8])
        return []
    info_len = struct.unpack_from("<I", data, 12)[0]
    off = 16 + info_len
    out = [data[16:off]]
    zstd = H.which("zstd")
    while off + 48 <= len(data):
        (magic, hlen, codec, _flags, _tid, raw_len, comp_len, _crc, _ts, _seq, _n,
         _hcrc) = struct.unpack_from("<IHBBIIIIQQII", data, off)
        if magic != 0x3146484C:
            ctx.fail("%s frame magic at %d" % (path, off), "LHF1", hex(magic))
            return out
        body = data[off + hlen:off + hlen + comp_len]
        if codec == 1:
            r = subprocess.run([zstd, "-q", "-d", "-c"], input=body, stdout=subprocess.PIPE)
            if not ctx.check(r.returncode == 0 and len(r.stdout) == raw_len,
                             "zstd -d of a frame of %s" % path, raw_len, len(r.stdout)):
                return out
            body = r.stdout
        out.append(body)
        off += hlen + comp_len
    return out


def case_contents(ctx, args):
    if not H.which("zstd"):
        print("SKIP faults.contents: zstd(1) is not installed")
        return H.SKIP
    figures = []
    for mode in ("none", "pointers", "full"):
        d = ctx.path(mode)
        os.mkdir(d)
        trace = os.path.join(d, "trace.lht")
        r = H.run(ctx, [prog(ctx), "secret"], timeout=60,
                  env=preload_env(ctx, trace, {"LEAKHOUND_SNAPSHOT_CONTENTS": mode}), cwd=d)
        ctx.check(r.returncode == 0, "%s: target exit status" % mode, 0, r.returncode)
        with open(trace, "rb") as f:
            ctx.check(SECRET not in f.read(), "%s: the secret is not in the trace" % mode,
                      "absent", "present")
        lhs = sorted(f for f in os.listdir(d) if f.endswith(".lhs"))
        if mode == "none":
            ctx.check(lhs == [], "none: no contents file", [], lhs)
            figures.append("none: no .lhs file")
            continue
        if not ctx.check(len(lhs) == 1, "%s: one contents file (exit snapshot)" % mode, 1, lhs):
            continue
        payloads = lhs_payloads(ctx, os.path.join(d, lhs[0]))
        found = any(SECRET in p for p in payloads)
        with open(os.path.join(d, lhs[0]), "rb") as f:
            found = found or SECRET in f.read()
        raw = sum(len(p) for p in payloads)
        if mode == "pointers":
            ctx.check(not found, "pointers: the secret is not in the .lhs file", "absent",
                      "present")
        else:
            ctx.check(found, "full: the secret is in the .lhs file (the pages are copied)",
                      "present", "absent")
        figures.append("%s: %d frames, %d bytes decompressed, secret %s"
                       % (mode, len(payloads) - 1, raw, "present" if found else "absent"))
    ctx.figure("contents: " + "; ".join(figures))


def case_dropuid(ctx, args):
    """A server's worker that becomes nobody (nginx as root): the agent creates the trace
    and the next snapshot's contents file just before the uid changes, since it could not
    after, in root's directory, plus a second one kept for the exit snapshot alone. The
    target is unaffected. Run 0: the exit snapshot has contents (the 100-byte block is read
    from them). Run 1: a SIGUSR2 snapshot after the drop takes the first file and the exit
    snapshot still has its own (memcached -u nobody: its leak summary). Run 2: the second
    SIGUSR2 snapshot can create no file: it says why in one line (errno, euid) and is listed
    without contents; the exit snapshot still has them."""
    if os.geteuid() != 0:
        print("  (dropuid: skipped, needs root)")
        return H.SKIP
    for n_signals in (0, 1, 2):
        d = ctx.path("out%d" % n_signals)
        os.mkdir(d, 0o755)
        trace = os.path.join(d, "trace.lht")
        env = preload_env(ctx, trace, {"LEAKHOUND_SNAPSHOT_SIGNAL": "USR2"})
        r = H.run(ctx, [prog(ctx), "dropuid", str(n_signals)], timeout=60, env=env, cwd=d)
        tag = "dropuid %d: " % n_signals
        ctx.check((r.returncode, r.stdout) == (0, "euid 65534\n"), tag + "target unaffected",
                  (0, "euid 65534\n"), (r.returncode, r.stdout, r.stderr[-300:]))
        lines = agent_lines(r.stderr)
        res = H.run(ctx, [ctx.lh, "shell", trace, "-c", "snapshots"], timeout=60)
        rows = [ln.lstrip("* ").split() for ln in res.stdout.splitlines()[1:]]
        got = [(f[1], f[-1]) for f in rows if len(f) >= 3]
        if n_signals == 0:
            ctx.check(lines == [], tag + "nothing to say", [], lines)
            ctx.check(got == [("exit", "pointers")], tag + "the exit snapshot, with contents",
                      [("exit", "pointers")], res.stdout + res.stderr)
            # reachable from the global g_secret_block: known only from the contents
            res = H.run(ctx, [ctx.lh, "shell", trace, "-c", "largest 5"], timeout=60)
            rows = [ln.split() for ln in res.stdout.splitlines()[1:]]
            ctx.check(res.returncode == 0 and
                      any(f[2:4] == ["100", "B"] and "reachable" in f for f in rows),
                      tag + "the exit snapshot's graph: the 100-byte block, reachable",
                      "a row of 100 B, reachable", res.stdout + res.stderr)
        elif n_signals == 1:
            ctx.check(lines == [], tag + "nothing to say", [], lines)
            ctx.check(got == [("signal-1", "pointers"), ("exit", "pointers")],
                      tag + "the signal snapshot and the exit one, both with contents",
                      [("signal-1", "pointers"), ("exit", "pointers")], res.stdout + res.stderr)
        else:
            want = "(errno 13, euid 65534); snapshot without contents"
            ctx.check(len(lines) == 1 and "cannot create snapshot file " in lines[0] and
                      lines[0].endswith(want), tag + "one line saying why",
                      "cannot create snapshot file ... " + want, lines)
            want_rows = [("signal-1", "pointers"), ("signal-2", "none"), ("exit", "pointers")]
            ctx.check(got == want_rows,
                      tag + "the first signal snapshot and the exit one with contents, the "
                      "second signal snapshot without", want_rows, res.stdout + res.stderr)
        ctx.figure(tag + "agent said %r; snapshots %r" % (lines, got))


# Cases that run a program as nobody: their scratch directory must be reachable by nobody.
OTHER_USER = ("unwritable", "setuid")

CASES = {"sigkill": case_sigkill, "diskfull": case_diskfull, "unwritable": case_unwritable,
         "dirgone": case_dirgone, "hostile": case_hostile, "modes": case_modes,
         "setuid": case_setuid, "contents": case_contents, "dropuid": case_dropuid}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--case", required=True, choices=sorted(CASES))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--env", action="append", default=[], metavar="LEAKHOUND_X=V",
                    help="agent setting for the traced runs")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 30)
    ctx = H.Ctx(args.build, "faults." + args.case, args.verbose,
                other_user=args.case in OTHER_USER)
    for kv in args.env:
        k, _, v = kv.partition("=")
        H.AGENT_ENV[k] = v
    rc = None
    if H.need(ctx, ctx.lh, ctx.agent, prog(ctx)):
        try:
            rc = CASES[args.case](ctx, args)
        except Exception:
            import traceback
            ctx.fail("runner", "no exception", traceback.format_exc()[-1500:])
    if rc == H.SKIP and not ctx.failures:
        ctx.finish(False)
        return H.SKIP
    return ctx.finish(args.keep)


if __name__ == "__main__":
    H.main_wrapper(main)
