#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""A program that closes every descriptor it did not open (progs/close_fds.c, as dnsmasq
does at its start), by walking /proc/self/fd ("walk") or with close_range ("range"), then
writes 1000 lines to a file of its own and leaks 4 blocks of 777 bytes. Under leakhound its
file holds exactly its 1000 lines (before agent/ownfd.h the agent's trace descriptor was
closed and its number reused by that file, and the agent's frames went into it; with
dnsmasq, into its netlink socket) and the trace is whole: a clean exit, the 4 blocks
definitely lost at progs/close_fds.c's marked line. "dup2": the program puts its file on
descriptors 3 to 9 (a shell's `exec 3>file`); the same must hold. The raw ways, past the
close and close_range shims (the agent keeps its descriptors at 768 or above, so only a
close of all reaches them): "sysclose" (syscall(SYS_close, fd) for each), "sysrange"
(syscall(SYS_close_range, 3, ~0U, 0)), "closefrom" (glibc's, which calls its own
close_range inside the library: sshd) and "duphigh" (dup2 onto every descriptor from 10
to 1023: those of the agent are refused with EBADF, as Valgrind refuses its own, and only
those: at least one, all at 768 or above).

Usage: run_closefds.py --build DIR --case walk|range|dup2|sysclose|sysrange|closefrom|duphigh
       [--keep] [-v]
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_e2e as E  # noqa: E402


def case(how):
    def run_case(ctx):
        out = os.path.join(ctx.workdir, "own.txt")
        trace = os.path.join(ctx.workdir, "trace.lht")
        res = E.lh_run(ctx, [ctx.prog("close_fds"), how, out], out=trace)
        refused = [int(ln.split()[1]) for ln in res.stdout.splitlines()
                   if ln.startswith("refused ")]
        if how == "duphigh":
            ctx.check(refused and min(refused) >= 768, "dup2 refused only the agent's "
                      "descriptors (768 and above)", "some, all >= 768", refused)
        else:
            ctx.check(refused == [], "nothing refused", [], refused)
        with open(out, "rb") as f:
            data = f.read()
        want = b"".join(b"line %d\n" % i for i in range(1000))
        ctx.check(data == want, "the program's own file: its 1000 lines, nothing else",
                  "%d bytes" % len(want), "%d bytes: %r" % (len(data), data[:80]))
        rep = E.load_report(ctx, trace)
        summ = rep["summary"]
        ctx.check(summ["clean_exit"] is True, "clean exit in the trace", True, summ["clean_exit"])
        fn, line = E.marker("closefds_block")
        got = [(s["leaked_blocks"], s["leaked_bytes"],
                s["classification"]["definitely_lost"]["blocks"]) for s in rep["sites"]
               if (s.get("location") or {}).get("file", "").endswith(fn)
               and s["location"]["line"] == line]
        ctx.check(got == [(4, 3108, 4)], "the 4 lost blocks at %s:%d" % (fn, line),
                  [(4, 3108, 4)], got)
    run_case.__doc__ = "close_fds %s" % how
    return run_case


CASES = {how: case(how) for how in ("walk", "range", "dup2", "sysclose", "sysrange",
                                    "closefrom", "duphigh")}


def main():
    return E.cases_main("closefds", CASES, __doc__)


if __name__ == "__main__":
    sys.exit(main())
