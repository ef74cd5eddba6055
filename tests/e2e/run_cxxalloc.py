#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""C++'s operator new and delete under leakhound, with glibc's malloc and with each
allocator Debian ships that defines its own operators (agent/shims_cxx.c): progs/
cxx_alloc.cpp built once per allocator (-O2, the allocator linked: cxx_alloc_<case>).

Each case runs the program bare and under `leakhound run` (same output), then checks the
report's sites in cxx_alloc.cpp, by line: allocations, frees and the class of what is
left at exit, exactly (the table WANT, from the program's comment); and `shell count --by
type` (the C++ classes, from the blocks' vtables). Before the shims, a program linked
against jemalloc, tcmalloc or mimalloc recorded none of its `new`s. jemalloc and tcmalloc
also throw std::bad_alloc through the shim (argument "throw"), and the program goes on
recording. glibc: Valgrind on the same binary (when installed) gives the same definitely
and indirectly lost bytes and blocks.

Usage: run_cxxalloc.py --build DIR --case glibc|jemalloc|tcmalloc|mimalloc [--keep] [-v]
Exit status: 0 pass, 1 fail, 77 skipped (the allocator is not installed).
"""

import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_e2e as E  # noqa: E402

Failure = E.Failure

# marker: (allocations, frees, {class: (blocks, bytes)} of the blocks live at exit)
WANT = {
    "cxx_stdout": (1, 0, {"still_reachable": (1, 4096)}),  # stdout's buffer (a pipe's)
    "cxx_cache": (1, 0, {"still_reachable": (1, 48)}),
    # the map's nodes (48 B) are allocated on the same line as the Circles (16 B)
    "cxx_cached_circle": (20, 0, {"still_reachable": (20, 640)}),
    "cxx_lost_rect": (3, 0, {"definitely_lost": (3, 72)}),
    "cxx_aligned_line": (2, 0, {"definitely_lost": (2, 384)}),
    "cxx_aligned_lines": (1, 0, {"definitely_lost": (1, 768)}),
    "cxx_sized_rect": (100, 100, {}),
    "cxx_placed": (1, 0, {"still_reachable": (1, 32)}),
    "cxx_nothrow": (1, 1, {}),
    "cxx_after_throw": (1, 0, {"still_reachable": (1, 24)}),
}
# Which block of a two-Peer cycle is definitely lost follows the addresses (Valgrind's
# rule), which the allocator chooses: the two lines together.
PEERS = ("cxx_peer_a", "cxx_peer_b")
PEERS_WANT = (10, 0, {"definitely_lost": (5, 680), "indirectly_lost": (5, 680)})
TYPES = [(11, "192 B", "(anonymous namespace)::Circle"),
         (10, "1.3 KiB", "(anonymous namespace)::Peer (std::make_shared)"),
         (4, "96 B", "(anonymous namespace)::Rect")]
CLASSES = ("definitely_lost", "indirectly_lost", "possibly_lost", "still_reachable")


def line_of(name):
    return E.marker(name)[1]


def program_sites(ctx, rep, trace):
    """{line: (allocations, frees, {class: (blocks, bytes)})} over the sites whose
    location is in cxx_alloc.cpp: the report's (the sites with blocks left at exit) and
    `report --temporary --threshold 1h`'s (every site with frees: each block freed within
    an hour counts)."""
    res = E.run(ctx, [ctx.lh, "report", trace, "--temporary", "--threshold", "1h", "--format",
                      "json", "--top", "0"])
    if res.returncode != 0:
        raise Failure("report --temporary: exit %d: %s" % (res.returncode, res.stderr[-500:]))
    allocs, frees, classes = {}, {}, {}
    for kind, sites in (("leaks", rep["sites"]), ("temporary", json.loads(res.stdout)["sites"])):
        for s in sites:
            loc = s.get("location") or {}
            if not (loc.get("file") or "").endswith("cxx_alloc.cpp"):
                continue
            ln = loc["line"]
            if kind == "temporary":
                frees[ln] = frees.get(ln, 0) + s["temporary_blocks"]
                if ln in classes:
                    continue  # its allocations are the leak report's already
            allocs[ln] = allocs.get(ln, 0) + s["allocations"]
            cls = classes.setdefault(ln, {}) if kind == "leaks" else {}
            for k, v in (s.get("classification") or {}).items():
                if k in CLASSES and v.get("blocks"):
                    b, n = cls.get(k, (0, 0))
                    cls[k] = (b + v["blocks"], n + v["bytes"])
    return dict((ln, (a, frees.get(ln, 0), classes.get(ln, {}))) for ln, a in allocs.items())


def check_sites(ctx, rep, trace, throw):
    got = program_sites(ctx, rep, trace)
    want_all = dict(WANT)
    if throw:
        # the std::bad_alloc thrown from operator new[]: libstdc++'s exception object
        want_all["cxx_huge"] = (1, 1, {})
    for name, want in want_all.items():
        ln = line_of(name)
        ctx.check(got.pop(ln, None) == want, "%s (cxx_alloc.cpp:%d): allocations, frees, "
                  "classes at exit" % (name, ln), want, got.get(ln))
    a, b = (line_of(n) for n in PEERS)
    pa, pb = got.pop(a, (0, 0, {})), got.pop(b, (0, 0, {}))
    cls = {}
    for c in CLASSES:
        n = [x[2].get(c, (0, 0)) for x in (pa, pb)]
        if n[0][0] + n[1][0]:
            cls[c] = (n[0][0] + n[1][0], n[0][1] + n[1][1])
    peers = (pa[0] + pb[0], pa[1] + pb[1], cls)
    ctx.check(peers == PEERS_WANT, "the shared_ptr cycles (cxx_alloc.cpp:%d and %d)" % (a, b),
              PEERS_WANT, peers)
    ctx.check(not got, "no other site in cxx_alloc.cpp", "{}", got)


def check_types(ctx, trace):
    res = E.run(ctx, [ctx.lh, "shell", trace, "exit", "-c", "count --by type"])
    rows = []
    for n, size, typ in TYPES:
        rows.append(re.search(r"^\s+\d+\s+%d\s+%s\s+%s$" % (n, re.escape(size), re.escape(typ)),
                              res.stdout, re.M) is not None)
    ctx.check(res.returncode == 0 and all(rows), "count --by type: the classes, from their "
              "vtables", TYPES, res.stdout + res.stderr[-300:])


def valgrind_agrees(ctx, prog, rep):
    """Valgrind replaces operator new itself: its definitely and indirectly lost (bytes,
    blocks) are leakhound's."""
    if not shutil.which("valgrind"):
        ctx.log("valgrind is not installed: its answer is not compared")
        return
    res = E.run(ctx, ["valgrind", "--leak-check=summary", prog], timeout=300)
    got = {}
    for cls in ("definitely lost", "indirectly lost"):
        m = re.search(r"%s: ([\d,]+) bytes in ([\d,]+) blocks" % cls, res.stderr)
        got[cls] = (int(m.group(1).replace(",", "")), int(m.group(2).replace(",", ""))) \
            if m else None
    ls = rep.get("leak_summary") or {}
    mine = {"definitely lost": ls.get("definitely_lost"), "indirectly lost":
            ls.get("indirectly_lost")}
    mine = dict((k, (v["bytes"], v["blocks"]) if v else None) for k, v in mine.items())
    ctx.check(got == mine == {"definitely lost": (1904, 11), "indirectly lost": (680, 5)},
              "valgrind's and leakhound's definitely and indirectly lost",
              "both {'definitely lost': (1904, 11), 'indirectly lost': (680, 5)}",
              "valgrind %s, leakhound %s" % (got, mine))


def case(allocator, throw):
    def run_case(ctx):
        ctx.unwind = "table"  # what users get (the default), checked against libunwind
        prog = ctx.prog("cxx_alloc_%s" % allocator)
        if not os.path.exists(prog):
            raise E.Skip("%s is not installed (cxx_alloc_%s not built)" % (allocator, allocator))
        argv = [prog] + (["throw"] if throw else [])
        want_out = "cxx_alloc\n" + ("bad_alloc\n" if throw else "") + "10077 10\n"
        bare = E.run(ctx, argv)
        ctx.check(bare.returncode == 0 and bare.stdout == want_out, "bare run",
                  "exit 0, %r" % want_out, "exit %d, %r" % (bare.returncode, bare.stdout))
        trace = os.path.join(ctx.workdir, "trace.lht")
        res = E.lh_run(ctx, argv, out=trace)
        ctx.check(res.stdout == want_out, "stdout under leakhound", want_out, res.stdout)
        rep = E.load_report(ctx, trace)
        check_sites(ctx, rep, trace, throw)
        check_types(ctx, trace)
        if allocator == "glibc":
            valgrind_agrees(ctx, prog, rep)
    run_case.__doc__ = "cxx_alloc_%s%s" % (allocator, " throw" if throw else "")
    return run_case


CASES = {
    "glibc": case("glibc", False),
    "jemalloc": case("jemalloc", True),
    "tcmalloc": case("tcmalloc", True),
    # mimalloc's operator new aborts when out of memory: no "throw"
    "mimalloc": case("mimalloc", False),
}


def main():
    return E.cases_main("cxxalloc", CASES, __doc__)


if __name__ == "__main__":
    sys.exit(main())
