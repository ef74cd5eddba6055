#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""End-to-end tests of issue 11, "leak classes you can trust": entry points that survive
a misaligned stack, and roots where Valgrind and LeakSanitizer find them (thread stacks
from the threads themselves, malloc arenas as heap, the capturing thread from the
program's stack pointer, TLS and thread descriptors), on progs/misaligned.c and
progs/roots_*.c. Exact classes and bytes; addresses differ per run.

Usage:
  run_roots.py --build DIR --case NAME [--keep] [-v]
  run_roots.py --build DIR --all
  run_roots.py --list
Exit status: 0 pass, 1 fail, 2 usage error, 77 skipped (not on this architecture).
"""

import argparse
import os
import platform
import re
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_e2e as E  # noqa: E402  (the shared helpers: Ctx, run, lh_run, load_report)

Failure = E.Failure


class Skip(Exception):
    pass


# ---------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------

def record(ctx, prog, args=(), name="trace.lht", extra=()):
    trace = os.path.join(ctx.workdir, name)
    E.lh_run(ctx, [ctx.prog(prog)] + list(args), out=trace, extra=extra)
    return trace


def shell(ctx, trace, cmds, snapshot=None):
    argv = [ctx.lh, "shell", trace] + ([snapshot] if snapshot else []) + ["-c", cmds]
    res = E.run(ctx, argv)
    ctx.check(res.returncode == 0, "exit status of shell -c %r" % cmds, 0,
              "%d (stderr: %s)" % (res.returncode, res.stderr[-600:]))
    return res.stdout


def expect_in(ctx, what, needle, text):
    ctx.check(needle in text, what, repr(needle), text[-2000:])


# ---------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------

def case_misaligned(ctx):
    """Every allocation function, free, malloc_usable_size, exit and the public API called
    with a stack 8 bytes off the ABI's alignment: the program runs to its end, the trace
    is complete and holds exactly what was left live through the misaligning trampoline."""
    if platform.machine() != "x86_64":
        raise Skip("the misaligned-stack case is x86-64's")
    trace = record(ctx, "misaligned")
    rep = E.load_report(ctx, trace)
    summ = rep["summary"]
    ctx.check(summ["clean_exit"] is True, "clean exit", True, summ["clean_exit"])
    # The trampoline has no frame of its own: its caller's frame is skipped by the fp
    # unwinder, so the sites are told apart by their innermost frame.
    mine = [s for s in rep["sites"] if s["leaked_blocks"] and s["frames"]
            and s["frames"][0]["function"] == "mis3"]
    blocks = sum(s["leaked_blocks"] for s in mine)
    nbytes = sum(s["leaked_bytes"] for s in mine)
    ctx.check((blocks, nbytes) == (9, 2490), "blocks and bytes left live through mis3",
              (9, 2490), (blocks, nbytes))
    out = shell(ctx, trace, "snapshots")
    ctx.check(re.search(r"^\s+1\s+misaligned\s+api\s", out, re.M) is not None,
              "lh_snapshot called misaligned", "snapshot 1 'misaligned' (api)", out)
    out = shell(ctx, trace, "count --by type")
    ctx.check(re.search(r"^\s+\d+\s+1\s+100 B\s+mis_block$", out, re.M) is not None,
              "lh_tag called misaligned", "1 block of 100 B typed mis_block", out)


CASES = {
    "misaligned": case_misaligned,
}


def run_case(build, name, keep, verbose):
    base = os.path.join(build, "tests", "e2e", "work")
    os.makedirs(base, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="roots." + name + ".", dir=base)
    ctx = E.Ctx(build, "fp", workdir, verbose)
    t0 = time.monotonic()
    try:
        CASES[name](ctx)
    except Skip as e:
        print("skip roots.%s: %s" % (name, e))
        shutil.rmtree(workdir, ignore_errors=True)
        return 77
    except Failure as e:
        ctx.failures.append(str(e))
    dt = time.monotonic() - t0
    if ctx.failures:
        print("FAIL roots.%s (%.1f s; files kept in %s)" % (name, dt, workdir))
        for f in ctx.failures:
            print("  - " + f)
        return 1
    print("ok   roots.%s (%.1f s)" % (name, dt))
    if not keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build")
    ap.add_argument("--case")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if args.list:
        print("\n".join(CASES))
        return 0
    if not args.build or not (args.case or args.all):
        ap.error("--build and --case (or --all) are required")
    if args.case and args.case not in CASES:
        ap.error("unknown case %r (see --list)" % args.case)
    build = os.path.abspath(args.build)
    names = list(CASES) if args.all else [args.case]
    results = [run_case(build, n, args.keep, args.verbose) for n in names]
    if args.all:
        print("%d of %d passed" % (results.count(0), len(results)))
    if any(r == 1 for r in results):
        return 1
    return 77 if all(r == 77 for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
