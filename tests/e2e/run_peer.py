#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""End-to-end tests of the behaviours the leak checkers' own test suites check (Valgrind
memcheck's leak tests, LeakSanitizer's TestCases), on progs/peer_shapes.c: one heap shape
per mode. summary.MODE: leakhound's LEAK SUMMARY of the exit snapshot, exact, and, where
valgrind is installed, Valgrind's for the same binary (the same four totals, or the blocks
named where the two runtimes differ: see each case). check.*: the exit status and the one
line of `run --check`, which fails on what nothing reaches at exit, as LeakSanitizer does,
not on what a global, a thread's stack or TLS still holds, even through an interior
pointer only.

Usage:
  run_peer.py --build DIR --case NAME [--keep] [-v]
  run_peer.py --build DIR --all
  run_peer.py --list
Exit status: 0 pass, 1 fail, 2 usage error.
"""

import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_e2e as E  # noqa: E402  (the shared helpers: Ctx, run, lh_run, load_report)

PROG = "peer_shapes"
CLASSES = ("definitely_lost", "indirectly_lost", "possibly_lost", "still_reachable")
VG_NAMES = {"definitely lost": "definitely_lost", "indirectly lost": "indirectly_lost",
            "possibly lost": "possibly_lost", "still reachable": "still_reachable"}


def eq(ctx, what, want, got):
    return ctx.check(want == got, what, want, got)


def argv_of(ctx, mode):
    args = [ctx.prog(PROG), mode]
    if mode == "unreadable":
        args.append(ctx.workdir)  # where it makes (and at once unlinks) its file
    return args


def summary(ctx, mode):
    """leakhound's LEAK SUMMARY of `peer_shapes MODE`: {class: (bytes, blocks)}."""
    trace = os.path.join(ctx.workdir, mode + ".lht")
    E.lh_run(ctx, argv_of(ctx, mode), out=trace)
    rep = E.load_report(ctx, trace)
    ls = rep.get("leak_summary")
    if not ls:
        raise E.Failure("no leak_summary in the report of %s: %s" % (mode, sorted(rep)))
    return {k: (ls[k]["bytes"], ls[k]["blocks"]) for k in CLASSES}


def valgrind(ctx, mode):
    """Valgrind's answer for the same binary at exit: ({class: (bytes, blocks)} of its LEAK
    SUMMARY, {(bytes, blocks): [classes of the loss records of that size]}), or None when
    valgrind is not installed."""
    if not shutil.which("valgrind"):
        ctx.log("valgrind is not installed: its answer is not compared")
        return None
    res = E.run(ctx, ["valgrind", "--leak-check=full", "--show-leak-kinds=all"] +
                argv_of(ctx, mode), timeout=300)
    text = res.stderr.split("LEAK SUMMARY:")
    if len(text) < 2:
        raise E.Failure("valgrind %s: no LEAK SUMMARY in:\n%s" % (mode, res.stderr[-1500:]))
    totals = {}
    for name, b, n in re.findall(r"(definitely lost|indirectly lost|possibly lost|still "
                                 r"reachable): ([\d,]+) bytes in ([\d,]+) blocks", text[-1]):
        totals[VG_NAMES[name]] = (int(b.replace(",", "")), int(n.replace(",", "")))
    for k in CLASSES:
        totals.setdefault(k, (0, 0))
    records = {}
    for b, n, k in re.findall(r"== ([\d,]+) bytes in ([\d,]+) blocks are (still reachable|"
                              r"definitely lost|possibly lost|indirectly lost) in loss record",
                              text[0]):
        records.setdefault((int(b.replace(",", "")), int(n.replace(",", ""))),
                           []).append(VG_NAMES[k])
    return totals, records


def fmt(s):
    return "; ".join("%s %d bytes in %d blocks" % (k, s[k][0], s[k][1]) for k in CLASSES)


def expect_summary(ctx, mode, want, vg="totals"):
    """want: {class: (bytes, blocks)}, the classes not named being (0, 0). vg: "totals"
    (Valgrind's LEAK SUMMARY is the same), a dict {(bytes, blocks): class} of loss records
    Valgrind must give (where its runtime adds blocks of its own), or None (not compared)."""
    want = {k: want.get(k, (0, 0)) for k in CLASSES}
    got = summary(ctx, mode)
    ctx.check(got == want, "leakhound's LEAK SUMMARY of %s" % mode, fmt(want), fmt(got))
    if vg is None:
        return
    v = valgrind(ctx, mode)
    if v is None:
        return
    totals, records = v
    if vg == "totals":
        ctx.check(totals == want, "Valgrind's LEAK SUMMARY of %s" % mode, fmt(want),
                  fmt(totals))
        return
    for key, cls in sorted(vg.items()):
        ctx.check(records.get(key) == [cls], "Valgrind: %d bytes in %d blocks of %s"
                  % (key[0], key[1], mode), cls, records.get(key))


def case_chains(ctx):
    """Start and interior pointers from a root or from a lost block (Valgrind's nine
    leak-cases): 3 definitely lost, 2 indirectly (a start pointer, or an interior one, from
    a lost block), 6 possibly (an interior pointer on the way from a root), 4 reachable."""
    expect_summary(ctx, "chains", {"definitely_lost": (96, 3), "indirectly_lost": (64, 2),
                                   "possibly_lost": (192, 6), "still_reachable": (128, 4)})


def case_selfref(ctx):
    """A block whose only pointer is in itself: definitely lost."""
    expect_summary(ctx, "selfref", {"definitely_lost": (64, 1)})


def case_unaligned(ctx):
    """The only copy of a pointer at an odd address in a global: not a pointer to a
    scanner that reads aligned words (Valgrind; LeakSanitizer's default use_unaligned=0)."""
    expect_summary(ctx, "unaligned", {"definitely_lost": (48, 1)})


def case_zero(ctx):
    """malloc(0) and calloc(0, 8) lost are 0 bytes in 2 blocks; the one a global keeps is
    reachable; realloc(p, 0) freed p."""
    expect_summary(ctx, "zero", {"definitely_lost": (0, 2), "still_reachable": (0, 1)})


def case_fails(ctx):
    """A realloc, a calloc and a malloc too large to succeed record nothing; the failed
    realloc's block is left as it was (77 bytes, lost)."""
    expect_summary(ctx, "fails", {"definitely_lost": (77, 1)})
    trace = os.path.join(ctx.workdir, "fails.lht")
    rep = E.load_report(ctx, trace)
    s = rep["summary"]
    eq(ctx, "allocations, frees, reallocs recorded", (1, 0, 0),
           (s["total_allocations"], s["total_frees"], s["total_reallocs"]))


def case_onepast(ctx):
    """A pointer one past a block's end does not hold it (definitely lost); one to its last
    byte does, as an interior pointer (possibly lost)."""
    expect_summary(ctx, "onepast", {"definitely_lost": (40, 1), "possibly_lost": (40, 1)})


def case_tree(ctx):
    """A 15-node tree with its left subtree cut off: the subtree's root definitely lost,
    its 6 descendants indirectly, the 8 nodes left reachable."""
    expect_summary(ctx, "tree", {"definitely_lost": (16, 1), "indirectly_lost": (96, 6),
                                 "still_reachable": (128, 8)})


def case_cycles(ctx):
    """A pointer hidden by xor (lost), a 3-cycle a global reaches (reachable), a lost
    2-cycle (one block definitely lost, the other indirectly)."""
    expect_summary(ctx, "cycles", {"definitely_lost": (123, 2), "indirectly_lost": (24, 1),
                                   "still_reachable": (48, 3)})


def case_stale(ctx):
    """The only copy of a pointer in a returned frame, below the stack pointer: lost
    (LeakSanitizer's stale_stack_leak)."""
    expect_summary(ctx, "stale", {"definitely_lost": (1337, 1)})


def case_unreadable(ctx):
    """A pointer in a PROT_NONE page is not read (lost); a shared file mapping whose second
    page lies past the file's end (reading it raises SIGBUS) is read where it can be, and
    an anonymous mapping is a root: 222 and 333 reachable. The program and the snapshot
    survive it."""
    expect_summary(ctx, "unreadable", {"definitely_lost": (111, 1),
                                       "still_reachable": (555, 2)})


def case_allocfns(ctx):
    """posix_memalign, aligned_alloc, valloc, calloc, memalign, strdup, strndup, asprintf
    and getline's blocks, each lost, at their sizes (getline's buffer: 120 bytes)."""
    expect_summary(ctx, "allocfns", {"definitely_lost": (5785, 9)})


def case_large(ctx):
    """Blocks malloc serves by mmap: 40 MiB lost, 33 MiB reachable, a 20 MiB lost one
    holding the only pointer to 1000 bytes (indirectly lost). Not compared with Valgrind:
    under it an interior pointer into them turns up somewhere, and it says possibly lost."""
    expect_summary(ctx, "large", {"definitely_lost": (62914560, 2),
                                  "indirectly_lost": (1000, 1),
                                  "still_reachable": (34603008, 1)}, vg=None)


def case_threads(ctx):
    """A block on the stack of a thread blocked at exit is reachable; a detached thread's
    result and a thread argument nobody freed are lost. glibc's thread descriptors (the DTV
    of each cached stack) are possibly lost, one per stack natively, fewer under Valgrind's
    scheduler: compared block by block."""
    got = summary(ctx, "threads")
    eq(ctx, "threads: definitely lost", (357, 2), got["definitely_lost"])
    eq(ctx, "threads: still reachable", (321, 1), got["still_reachable"])
    eq(ctx, "threads: indirectly lost", (0, 0), got["indirectly_lost"])
    expect_summary(ctx, "threads", {**got}, vg={(321, 1): "still_reachable",
                                                 (234, 1): "definitely_lost",
                                                 (123, 1): "definitely_lost"})


def case_thread_exits(ctx):
    """A thread calls exit while main waits in pthread_join: what either stack holds is
    reachable, the dropped block lost; the thread's descriptor (DTV, its size glibc's
    business) possibly lost: compared with Valgrind block by block."""
    got = summary(ctx, "thread_exits")
    eq(ctx, "thread_exits: definitely, indirectly lost, still reachable",
       ((900, 1), (0, 0), (2100, 3)),
       (got["definitely_lost"], got["indirectly_lost"], got["still_reachable"]))
    eq(ctx, "thread_exits: possibly lost blocks (the DTV)", 1, got["possibly_lost"][1])
    expect_summary(ctx, "thread_exits", got, vg={(900, 1): "definitely_lost",
                                                 (800, 1): "still_reachable",
                                                 (700, 1): "still_reachable",
                                                 (600, 1): "still_reachable"})


def case_coroutine_exits(ctx):
    """exit from a coroutine whose stack is a heap block: the block its frame holds, the
    stack block and the one main's frame holds are all reachable."""
    expect_summary(ctx, "coroutine_exits", {"still_reachable": (131072 + 777 + 555, 3)})


def case_kept(ctx):
    """Blocks held by initialized data, .bss and the main thread's TLS: all reachable
    (LeakSanitizer's use_globals_initialized, use_globals_uninitialized, use_tls_static)."""
    expect_summary(ctx, "kept", {"still_reachable": (4014, 3)})


def check_line(ctx, mode, status, extra=()):
    """`leakhound run --check [extra] -- peer_shapes MODE`: its exit status must be status;
    returns its one verdict line."""
    trace = os.path.join(ctx.workdir, mode + ".check.lht")
    argv = [ctx.lh, "run", "--check"] + list(extra) + ["-o", trace, "--"] + argv_of(ctx, mode)
    res = E.run(ctx, argv)
    eq(ctx, "exit status of run --check %s-- %s" % ("".join(a + " " for a in extra), mode),
           status, res.returncode)
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("leakhound: check ")]
    if len(lines) != 1:
        raise E.Failure("one verdict line expected in:\n%s" % res.stderr[-1500:])
    return lines[0].replace(trace, "TRACE")


def expect_verdict(ctx, mode, status, start, extra=(), also=""):
    """The verdict line of run --check [extra] -- peer_shapes MODE starts with start (the
    largest site's path differs per build) and holds also."""
    line = check_line(ctx, mode, status, extra)
    ctx.check(line.startswith(start) and also in line, "verdict on %s %s"
              % (mode, " ".join(extra)), start + " ... " + also, line)


def case_check_kept(ctx):
    """What a global or TLS still holds at exit is not a leak: the check passes (as under
    LeakSanitizer); with --check-reachable it counts, and fails."""
    eq(ctx, "verdict", "leakhound: check passed: 0 B (0 bytes) lost in 0 blocks from 0 sites "
       "(definitely 0, indirectly 0 bytes; not counted: possibly lost 0, still reachable 4014 "
       "bytes) (allowed 0 bytes)", check_line(ctx, "kept", 0))
    expect_verdict(ctx, "kept", 23, "leakhound: check failed: 3.9 KiB (4014 bytes) leaked in 3 "
                   "blocks from 3 sites (definitely 0, indirectly 0 bytes; counted too: possibly "
                   "lost 0, still reachable 4014 bytes); largest 1.3 KiB at ",
                   ["--check-reachable"])


def case_check_zero(ctx):
    """Lost malloc(0) blocks fail the check though they are 0 bytes (LeakSanitizer counts
    each as 1 byte); --max-leak 1 lets them pass."""
    expect_verdict(ctx, "zero", 23, "leakhound: check failed: 0 B (0 bytes) lost in 2 blocks "
                   "from 2 sites (definitely 0, indirectly 0 bytes; not counted: possibly lost "
                   "0, still reachable 0 bytes); largest 0 B at ")
    check_line(ctx, "zero", 0, ["--max-leak", "1"])


def case_check_classes(ctx):
    """What fails the check: definitely and indirectly lost (LeakSanitizer's direct and
    indirect leaks); not possibly lost (LeakSanitizer takes an interior pointer as a
    reference) nor reachable; the largest site named is the largest lost one."""
    expect_verdict(ctx, "chains", 23, "leakhound: check failed: 160 B (160 bytes) lost in 5 "
                   "blocks from 5 sites (definitely 96, indirectly 64 bytes; not counted: "
                   "possibly lost 192, still reachable 128 bytes); largest 32 B at ")
    check_line(ctx, "chains", 0, ["--max-leak", "160"])
    check_line(ctx, "chains", 23, ["--max-leak", "159"])
    # an interior pointer from a global only (possibly lost) is no failure
    expect_verdict(ctx, "onepast", 23, "leakhound: check failed: 40 B (40 bytes) lost in 1 "
                   "block from 1 site (definitely 40, indirectly 0 bytes; not counted: possibly "
                   "lost 40, still reachable 0 bytes)")
    # glibc's thread descriptors (possibly lost) are suppressed by default anyway
    expect_verdict(ctx, "threads", 23, "leakhound: check failed: 357 B (357 bytes) lost in 2 "
                   "blocks from 2 sites (definitely 357, indirectly 0 bytes; not counted: "
                   "possibly lost 0, still reachable 321 bytes); largest 234 B at ",
                   also="in returns_block")


def case_embedded(ctx):
    """The rules a program embeds for LeakSanitizer (__lsan_default_suppressions, heaptrack's
    embedded_lsan_suppressions): applied by run --check and report --default-suppressions,
    not by a plain report nor with --no-default-suppressions."""
    # the program's rules hide 11 and 22 bytes
    expect_verdict(ctx, "embedded", 23, "leakhound: check failed: 44 B (44 bytes) lost in 1 "
                   "block from 1 site (definitely 44, indirectly 0 bytes; not counted: possibly "
                   "lost 0, still reachable 0 bytes); largest 44 B at ",
                   also=" in peer_shown (allowed 0 bytes; 33 B suppressed)")
    expect_verdict(ctx, "embedded", 23, "leakhound: check failed: 77 B (77 bytes) lost in 3 "
                   "blocks ", ["--no-default-suppressions"])
    trace = os.path.join(ctx.workdir, "embedded.check.lht")
    rep = E.load_report(ctx, trace, ["--default-suppressions"])
    eq(ctx, "report --default-suppressions: suppressed bytes", 33,
       rep["summary"].get("suppressed_bytes"))
    ctx.check(all(s["frames"][0]["function"] not in ("peer_hidden_by_program",
                                                     "peer_embedded_too")
                  for s in rep["sites"] if s["frames"]),
              "report --default-suppressions: the program's rules hide their sites",
              "no site in peer_hidden_by_program or peer_embedded_too",
              [s["frames"][0]["function"] for s in rep["sites"] if s["frames"]])
    rep = E.load_report(ctx, trace)
    eq(ctx, "plain report: nothing suppressed", 77, rep["summary"]["leaked_bytes"])


PY_LEAK = """import ctypes
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.memset.argtypes = (ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t)
def native_leak():
    for i in range(10):
        libc.memset(libc.malloc(4321), 0, 4321)  # dropped: a native leak
keep = []
native_leak()
keep.append(bytearray(50000))
"""

PY_CLEAN = """import collections, json
d = collections.defaultdict(list)
for i in range(1000):
    d[i % 10].append(json.dumps({"i": i}))
"""


def case_check_python(ctx):
    """A Python program: what the interpreter keeps (its objects, reached from modules and
    through interior pointers, possibly lost) is no failure; the native blocks a line
    dropped are, located at that line (memray's and LeakSanitizer's use on CPython)."""
    py = shutil.which("python3")
    if not py:
        raise E.Skip("no python3")
    for name, text in (("leak.py", PY_LEAK), ("clean.py", PY_CLEAN)):
        with open(os.path.join(ctx.workdir, name), "w") as f:
            f.write(text)
    trace = os.path.join(ctx.workdir, "py.lht")
    res = E.run(ctx, [ctx.lh, "run", "--check", "-o", trace, "--", py,
                      os.path.join(ctx.workdir, "clean.py")])
    eq(ctx, "exit status of run --check -- python3 clean.py", 0, res.returncode)
    ctx.check("leakhound: check passed: 0 B (0 bytes) lost in 0 blocks from 0 sites" in
              res.stderr, "clean.py: verdict", "check passed: 0 B", res.stderr[-800:])
    res = E.run(ctx, [ctx.lh, "run", "--check", "-o", trace, "--", py,
                      os.path.join(ctx.workdir, "leak.py")])
    eq(ctx, "exit status of run --check -- python3 leak.py", 23, res.returncode)
    ctx.check(re.search(r"leakhound: check failed: 42\.2 KiB \(43210 bytes\) lost in 10 blocks "
                        r"from 1 site \(definitely \d+, indirectly \d+ bytes; not counted: "
                        r"possibly lost \d+, still reachable \d+ bytes\); largest 42\.2 KiB at "
                        r"\S*leak\.py:7 in __main__\.native_leak ", res.stderr) is not None,
              "leak.py: verdict", "43210 bytes lost in 10 blocks ... leak.py:7", res.stderr[-800:])


def case_check_forks(ctx):
    """run --check judges every process it traced, as LeakSanitizer checks each process at
    its exit: peer_shapes forks three children and loses nothing itself; the child that
    lost 4 blocks of 100 bytes and returned through exit fails the check, on a line naming
    its pid; the one that left by _exit and the one that exec'd /bin/true are not judged
    (LeakSanitizer does not check there), nor printed. Before, only the program's own
    process was judged, and this run passed."""
    trace = os.path.join(ctx.workdir, "forks.check.lht")
    res = E.run(ctx, [ctx.lh, "run", "--check", "-o", trace, "--"] + argv_of(ctx, "forks"))
    pids = res.stdout.split()
    if len(pids) != 3:
        raise E.Failure("three child pids expected on stdout: %r" % res.stdout)
    eq(ctx, "exit status of run --check -- peer_shapes forks", 23, res.returncode)
    fn, line = E.marker("forks_lost")
    got = [ln.replace(trace, "TRACE") for ln in res.stderr.splitlines()
           if ln.startswith("leakhound: check ")]
    rest = " (allowed 0 bytes; 4.0 KiB suppressed)"
    want = ["leakhound: check passed: 0 B (0 bytes) lost in 0 blocks from 0 sites (definitely "
            "0, indirectly 0 bytes; not counted: possibly lost 0, still reachable 0 bytes)" + rest,
            "leakhound: check failed: process %s (peer_shapes): 400 B (400 bytes) lost in 4 "
            "blocks from 1 site (definitely 400, indirectly 0 bytes; not counted: possibly lost "
            "0, still reachable 0 bytes); largest 400 B at %s:%d in lose (allowed 0 bytes); "
            "see leakhound report TRACE.%s --default-suppressions" % (pids[0], fn, line, pids[0])]
    got = [re.sub(r" at \S*/%s:" % re.escape(fn), " at %s:" % fn, ln) for ln in got]
    eq(ctx, "verdict lines", want, got)


def case_check_follow(ctx):
    """The same with --follow-exec: the third child's exec of /bin/true is traced too, in a
    file named with its pid (TRACE.PID.1: its fork image's TRACE.PID came first; it was
    TRACE.1, a name that says nothing of whose it is, as sshd's re-executed children got),
    and judged: it exits cleanly and loses nothing, so it passes on a line of its own."""
    trace = os.path.join(ctx.workdir, "follow.lht")
    res = E.run(ctx, [ctx.lh, "run", "--check", "--follow-exec", "-o", trace, "--"] +
                argv_of(ctx, "forks"))
    pids = res.stdout.split()
    if len(pids) != 3:
        raise E.Failure("three child pids expected on stdout: %r" % res.stdout)
    eq(ctx, "exit status of run --check --follow-exec -- peer_shapes forks", 23,
       res.returncode)
    eq(ctx, "trace files", sorted(["follow.lht"] + ["follow.lht.%s" % p for p in pids] +
                                  ["follow.lht.%s.1" % pids[2]]), E.trace_files(ctx.workdir))
    got = [ln.split(": ")[1:3] for ln in res.stderr.splitlines()
           if ln.startswith("leakhound: check ")]
    want = [["check passed", "0 B (0 bytes) lost in 0 blocks from 0 sites (definitely 0, "
             "indirectly 0 bytes; not counted"],
            ["check failed", "process %s (peer_shapes)" % pids[0]],
            ["check passed", "process %s (true)" % pids[2]]]
    eq(ctx, "verdict lines (the start of each)", want, got)


CASES = {
    "chains": case_chains, "selfref": case_selfref, "unaligned": case_unaligned,
    "zero": case_zero, "fails": case_fails, "onepast": case_onepast, "tree": case_tree,
    "cycles": case_cycles, "stale": case_stale, "unreadable": case_unreadable,
    "allocfns": case_allocfns, "large": case_large, "threads": case_threads,
    "kept": case_kept, "check_kept": case_check_kept, "check_zero": case_check_zero,
    "check_classes": case_check_classes, "embedded": case_embedded,
    "check_python": case_check_python, "thread_exits": case_thread_exits,
    "coroutine_exits": case_coroutine_exits, "check_forks": case_check_forks,
    "check_follow": case_check_follow,
}


def main():
    return E.cases_main('peer', CASES, __doc__)


if __name__ == "__main__":
    sys.exit(main())
