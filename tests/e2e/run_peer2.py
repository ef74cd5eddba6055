#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""End-to-end tests of the behaviours the heap profilers' own test suites check (heaptrack's,
memray's, Valgrind massif's), on progs/peer_profiles.c, one behaviour per mode, with exact
answers; where the peer tool is installed, its answer for the same binary is compared too.

Usage:
  run_peer2.py --build DIR --case NAME [--keep] [-v]
  run_peer2.py --build DIR --all
  run_peer2.py --list
Exit status: 0 pass, 1 fail, 2 usage error.
"""

import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_e2e as E  # noqa: E402  (the shared helpers: Ctx, run, lh_run, load_report)

PROG = "peer_profiles"


def eq(ctx, what, want, got):
    return ctx.check(want == got, what, want, got)


def trace_of(ctx, mode, extra=()):
    """leakhound run -- peer_profiles MODE; the trace's path."""
    trace = os.path.join(ctx.workdir, mode + ".lht")
    if not os.path.exists(trace):
        E.lh_run(ctx, [ctx.prog(PROG), mode], out=trace, extra=extra)
    return trace


def lh_json(ctx, argv):
    """leakhound ARGV --format json, parsed."""
    res = E.run(ctx, [ctx.lh] + argv + ["--format", "json"])
    if res.returncode != 0:
        raise E.Failure("leakhound %s: exit %d: %s" % (" ".join(argv), res.returncode,
                                                       res.stderr.strip()[-800:]))
    return json.loads(res.stdout)


def by_function(sites):
    """{innermost function of the site: [site, ...]} of a JSON site list."""
    out = {}
    for s in sites:
        fn = s["frames"][0]["function"] if s.get("frames") else None
        out.setdefault(fn, []).append(s)
    return out


def heaptrack_print(ctx, mode, section):
    """heaptrack_print's SECTION (--print-temporary, --print-allocators, ...) alone, of a
    heaptrack run of `peer_profiles MODE`, or None when heaptrack is not installed."""
    if not shutil.which("heaptrack") or not shutil.which("heaptrack_print"):
        ctx.log("heaptrack is not installed: its answer is not compared")
        return None
    out = os.path.join(ctx.workdir, "ht." + mode)
    files = [f for f in os.listdir(ctx.workdir) if f.startswith("ht." + mode)]
    if not files:
        res = E.run(ctx, ["heaptrack", "-o", out, ctx.prog(PROG), mode], timeout=300)
        files = [f for f in os.listdir(ctx.workdir) if f.startswith("ht." + mode)]
        if res.returncode != 0 or not files:
            raise E.Failure("heaptrack %s: exit %d, %s" % (mode, res.returncode,
                                                          res.stderr[-800:]))
    sections = ["--print-temporary", "--print-peaks", "--print-allocators", "--print-leaks"]
    argv = ["heaptrack_print", "-f", os.path.join(ctx.workdir, files[0])]
    for s in sections:
        argv += [s, "1" if s == section else "0"]
    return E.run(ctx, argv, timeout=300).stdout


def heaptrack_by_function(ctx, mode, section, pattern, value=int):
    """{function: summed value} of the entries of heaptrack_print's SECTION for `peer_profiles
    MODE`, each matched by pattern (groups: the value's, then the function), or None when
    heaptrack is not installed."""
    text = heaptrack_print(ctx, mode, section)
    if text is None:
        return None
    got = {}
    for m in re.findall(pattern, text, re.M):
        got[m[-1]] = got.get(m[-1], 0) + value(*m[:-1])
    return got


def heaptrack_temporaries(ctx, mode):
    """heaptrack's temporary allocations, by function (--print-temporary)."""
    return heaptrack_by_function(ctx, mode, "--print-temporary",
                                 r"^(\d+) temporary allocations of \d+ allocations in total "
                                 r"\([\d.]+%\) from\n(\S+)\n")


def case_temporary(ctx):
    """heaptrack's temporary allocations: a block freed by its thread's next call to the
    allocator (nothing allocated or freed in between), however long it lived. 100 from
    tmp_single, 50 from the thread's tmp_in_thread_one while main allocates meanwhile;
    none from tmp_pair (two blocks made, then freed) nor tmp_kept. The 1 ms rule counts
    tmp_pair's too."""
    trace = trace_of(ctx, "temporary")
    rep = lh_json(ctx, ["report", trace, "--temporary", "--immediate", "--top", "0"])
    eq(ctx, "--immediate in the JSON", True, rep["summary"]["immediate"])
    got = {fn: sum(s["temporary_blocks"] for s in v) for fn, v in
           by_function(rep["sites"]).items()}
    eq(ctx, "temporary blocks by function (--immediate)",
       {"tmp_single": 100, "tmp_in_thread_one": 50}, got)
    eq(ctx, "temporary blocks and bytes in all (--immediate)", (150, 100 * 64 + 50 * 100),
       (rep["summary"]["temporary_blocks"], rep["summary"]["temporary_bytes"]))
    rep = lh_json(ctx, ["report", trace, "--temporary", "--threshold", "1h", "--top", "0"])
    got = {fn: sum(s["temporary_blocks"] for s in v) for fn, v in
           by_function(rep["sites"]).items()}
    eq(ctx, "temporary blocks by function (within 1 h)",
       {"tmp_single": 100, "tmp_in_thread_one": 50, "tmp_pair": 20, "tmp_kept": 10}, got)
    res = E.run(ctx, [ctx.lh, "report", trace, "--immediate"])
    eq(ctx, "report --immediate alone", (2, "leakhound: report: --immediate goes with "
                                            "--temporary"),
       (res.returncode, res.stderr.strip()))
    ht = heaptrack_temporaries(ctx, "temporary")
    if ht is not None:
        # heaptrack orders all threads' calls in one stream, so the thread's count there
        # depends on how the threads interleaved; and it matches a free with the latest
        # allocation by site and size, not by address: free(kept[0]) just after kept[9]
        # was made counts at tmp_kept when no call of the thread came between
        eq(ctx, "heaptrack: temporary allocations from tmp_single, tmp_pair",
           (100, None), (ht.get("tmp_single"), ht.get("tmp_pair")))


def tree_functions(node, out=None):
    """{function: value} of every node of a `tree --format json` answer, summed over the
    places a function appears."""
    out = {} if out is None else out
    out[node["function"]] = out.get(node["function"], 0) + node["value"]
    for c in node["children"]:
        tree_functions(c, out)
    return out


def massif_peak(ctx, mode):
    """Massif's peak snapshot of `peer_profiles MODE` (--peak-inaccuracy=0: the exact one):
    (useful heap bytes, {function: bytes} of the allocating functions at the first level of
    its tree), or None when valgrind is not installed."""
    if not shutil.which("valgrind") or not shutil.which("ms_print"):
        ctx.log("valgrind is not installed: massif's answer is not compared")
        return None
    out = os.path.join(ctx.workdir, "massif." + mode)
    res = E.run(ctx, ["valgrind", "--tool=massif", "--peak-inaccuracy=0.0",
                      "--massif-out-file=" + out, ctx.prog(PROG), mode], timeout=300)
    if res.returncode != 0 or not os.path.exists(out):
        raise E.Failure("massif %s: exit %d, %s" % (mode, res.returncode, res.stderr[-800:]))
    with open(out) as f:
        text = f.read()
    peak = None
    for snap in text.split("snapshot=")[1:]:
        if "heap_tree=peak" in snap:
            peak = snap
    if peak is None:
        raise E.Failure("massif %s: no peak snapshot in %s" % (mode, out))
    useful = int(re.search(r"mem_heap_B=(\d+)", peak).group(1))
    first = {}
    for nbytes, fn in re.findall(r"^ n\d+: (\d+) 0x[0-9A-F]+: (\w+) \(", peak, re.M):
        first.setdefault(fn, int(nbytes))
    return useful, first


def case_peak(ctx):
    """The heap's high-water mark (heaptrack's peak heap, massif's peak snapshot, memray's
    high-water mark): a calloc of 300000 bytes in main and, in a thread, a block of 200000
    realloc grows to 400000: 700000 bytes live at the peak, then a later 350000 while the
    300000 is still live (650000, not the peak) and 10 bytes left at exit. tree --metric
    peak gives the two stacks live at the peak; leakhound puts the grown block at the site
    that made it (with the realloc among its growers), heaptrack's peak memory consumers
    and massif's peak snapshot at the realloc's."""
    trace = trace_of(ctx, "peak")
    rep = E.load_report(ctx, trace)
    glibc = rep["summary"]["peak_bytes"] - 700000  # the thread's descriptor (DTV), glibc's
    ctx.check(0 <= glibc < 1024, "peak: 700000 bytes and the thread's DTV", "700000 + < 1 KiB",
              rep["summary"]["peak_bytes"])
    tree = lh_json(ctx, ["tree", trace, "--metric", "peak", "--min-percent", "0"])
    got = tree_functions(tree["root"])
    eq(ctx, "tree --metric peak: peak_main_block, peak_thread_block, peak_grow, peak_after, "
       "peak_left", (300000, 400000, None, None, None),
       tuple(got.get(f) for f in ("peak_main_block", "peak_thread_block", "peak_grow",
                                  "peak_after", "peak_left")))
    eq(ctx, "tree --metric peak: the whole", rep["summary"]["peak_bytes"], tree["total"])
    fns = lh_json(ctx, ["report", trace, "--by", "function", "--metric", "peak", "--top", "0"])
    rows = {r["function"]: r for r in fns["functions"]}
    eq(ctx, "report --by function --metric peak: peak (inclusive), peak_thread (inclusive)",
       (300000, 400000), (rows["peak"]["inclusive"]["peak"],
                            rows["peak_thread"]["inclusive"]["peak"]))
    ht = heaptrack_peaks(ctx, "peak")
    if ht is not None:
        # heaptrack's peak memory consumers are the blocks live at the heap's peak, as
        # here; it puts the grown block at the realloc
        eq(ctx, "heaptrack: peak memory consumed by peak_main_block, peak_grow, peak_after, "
           "peak_left", (300000, 400000, None, None),
           tuple(ht.get(f) for f in ("peak_main_block", "peak_grow", "peak_after",
                                     "peak_left")))
    ms = massif_peak(ctx, "peak")
    if ms is not None:
        useful, first = ms
        ctx.check(0 <= useful - 700000 < 1024, "massif: the peak's useful heap",
                  "700000 + < 1 KiB", useful)
        eq(ctx, "massif: peak_grow and peak_main_block at the peak", (400000, 300000),
           (first.get("peak_grow"), first.get("peak_main_block")))


def heaptrack_calls(ctx, mode):
    """heaptrack's calls to allocation functions, by function (--print-allocators)."""
    return heaptrack_by_function(ctx, mode, "--print-allocators",
                                 r"^(\d+) calls to allocation functions with .* from\n(\S+)\n")


def case_allocations(ctx):
    """Calls to the allocator per site, by count (heaptrack's most calls to allocation
    functions): --metric allocations of report --by function, tree and export --folded.
    1000 mallocs freed at once in calls_churn, 10 callocs in calls_kept, 5 reallocs (the
    first of NULL) in calls_grow; allocations() itself makes none."""
    trace = trace_of(ctx, "allocations")
    want = {"calls_churn": 1000, "calls_kept": 10, "calls_grow": 5}
    fns = lh_json(ctx, ["report", trace, "--by", "function", "--metric", "allocations",
                        "--top", "0"])
    rows = {r["function"]: r for r in fns["functions"]}
    eq(ctx, "report --by function --metric allocations: exclusive calls",
       want, {f: rows[f]["exclusive"]["allocations"] for f in want if f in rows})
    eq(ctx, "report --by function --metric allocations: allocations() inclusive, exclusive",
       (1015, 0), (rows["allocations"]["inclusive"]["allocations"],
                   rows["allocations"]["exclusive"]["allocations"]))
    eq(ctx, "report --by function --metric allocations: the first row", "calls_churn",
       fns["functions"][0]["function"])
    tree = lh_json(ctx, ["tree", trace, "--metric", "allocations", "--min-percent", "0"])
    got = tree_functions(tree["root"])
    eq(ctx, "tree --metric allocations", dict(want, allocations=1015),
       {f: got.get(f) for f in list(want) + ["allocations"]})
    folded = os.path.join(ctx.workdir, "allocations.folded")
    E.run(ctx, [ctx.lh, "export", trace, "--folded", folded, "--metric", "allocations"])
    mine = {}
    with open(folded) as f:
        for line in f:
            path, n = line.rsplit(" ", 1)
            leaf = path.split(";")[-1]
            if leaf in want:
                mine[leaf] = mine.get(leaf, 0) + int(n)
    eq(ctx, "export --folded --metric allocations: by leaf", want, mine)
    ht = heaptrack_calls(ctx, "allocations")
    if ht is not None:
        eq(ctx, "heaptrack: calls to allocation functions", want,
           {f: ht.get(f) for f in want})


def heaptrack_peaks(ctx, mode):
    """heaptrack's peak memory consumers, bytes by function (--print-peaks; its K, M, G are
    powers of 1000)."""
    units = {"B": 1, "K": 1000, "M": 1000 ** 2, "G": 1000 ** 3}
    return heaptrack_by_function(ctx, mode, "--print-peaks",
                                 r"^([\d.]+)([BKMG]) peak memory consumed over \d+ calls "
                                 r"from\n(\S+)\n",
                                 lambda n, unit: round(float(n) * units[unit]))


PY_KINDS = """import ctypes, threading
libc = ctypes.CDLL(None)
for n in ("malloc", "calloc", "realloc", "valloc", "pvalloc", "memalign", "aligned_alloc"):
    getattr(libc, n).restype = ctypes.c_void_p
libc.realloc.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
libc.free.argtypes = (ctypes.c_void_p,)
libc.posix_memalign.argtypes = (ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t,
                                ctypes.c_size_t)
keep = []
def k_malloc(): keep.append(libc.malloc(1001))
def k_calloc(): keep.append(libc.calloc(10, 101))
def k_realloc(): keep.append(libc.realloc(libc.malloc(10), 1003))
def k_valloc(): keep.append(libc.valloc(1004))
def k_pvalloc(): keep.append(libc.pvalloc(1))
def k_memalign(): keep.append(libc.memalign(64, 1005))
def k_posix_memalign():
    p = ctypes.c_void_p()
    libc.posix_memalign(ctypes.byref(p), 64, 1006)
    keep.append(p.value)
def k_aligned_alloc(): keep.append(libc.aligned_alloc(64, 1024))
def k_freed(): libc.free(libc.malloc(1008))
def in_thread(): keep.append(libc.malloc(1007))
k_malloc(); k_calloc(); k_realloc(); k_valloc(); k_pvalloc(); k_memalign()
k_posix_memalign(); k_aligned_alloc(); k_freed()
t = threading.Thread(target=in_thread); t.start(); t.join()
"""

# The native block each line of PY_KINDS made and kept: (bytes, allocations at that line's
# site: realloc's block continues its malloc's).
PY_KINDS_WANT = {"k_malloc": (1001, 1), "k_calloc": (1010, 1), "k_realloc": (1003, 2),
                 "k_valloc": (1004, 1), "k_pvalloc": (4096, 1), "k_memalign": (1005, 1),
                 "k_posix_memalign": (1006, 1), "k_aligned_alloc": (1024, 1),
                 "in_thread": (1007, 1)}


def case_python_allocators(ctx):
    """memray's allocator kinds under CPython, with Python and native frames mixed: malloc,
    calloc, realloc, valloc, pvalloc (a page: the size glibc gives it), memalign,
    posix_memalign and aligned_alloc called through ctypes, each block kept, located at
    the Python line that called it (libffi's and ctypes' C frames under it), one in a
    thread; a block freed at once leaves nothing."""
    py = shutil.which("python3")
    if not py:
        raise E.Skip("no python3")
    script = os.path.join(ctx.workdir, "kinds.py")
    with open(script, "w") as f:
        f.write(PY_KINDS)
    trace = os.path.join(ctx.workdir, "kinds.lht")
    E.lh_run(ctx, [py, script], out=trace)
    rep = E.load_report(ctx, trace)
    got = {}
    for s in rep["sites"]:
        loc = s["location"]
        fn = (loc.get("function") or "").replace("__main__.", "")
        if fn in PY_KINDS_WANT or fn == "k_freed":
            ctx.check(loc["file"] == script, "%s's site: in kinds.py" % fn, script, loc["file"])
            # the ctypes result objects of the same line are Python's, < 100 bytes
            if s["leaked_bytes"] >= 1000:
                got[fn] = (s["leaked_bytes"], s["allocations"])
                eq(ctx, "%s: one block, at line" % fn, (1, PY_KINDS.splitlines().index(
                   [ln for ln in PY_KINDS.splitlines() if ln.startswith("def %s(" % fn)][0])
                   + 1 + (fn == "k_posix_memalign") * 2), (s["leaked_blocks"], loc["line"]))
    eq(ctx, "the native blocks kept, by Python function", PY_KINDS_WANT, got)
    mr = memray_leaks(ctx, script)
    if mr is not None:
        # memray patches the modules' symbol tables; ctypes calls what dlsym gave, so it
        # sees malloc (dlsym is patched too) but neither calloc, realloc nor the aligned
        # ones: it takes realloc's 10-byte block as leaked instead of the 1003
        eq(ctx, "memray: leaked at k_malloc, in_thread", (1001, 1007),
           (mr.get("k_malloc"), mr.get("in_thread")))


MEMRAY_LEAKS = """import sys, memray
for rec in memray.FileReader(sys.argv[1]).get_leaked_allocation_records(merge_threads=True):
    st = rec.stack_trace()
    if st and st[0][1] == sys.argv[2]:
        print(st[0][0], rec.size)
"""


def memray_leaks(ctx, script):
    """memray's leaked bytes of `python script`, {function: bytes} at the script's lines,
    or None when no python at hand has memray ($LH_PEER_MEMRAY_PYTHON, else python3)."""
    py = os.environ.get("LH_PEER_MEMRAY_PYTHON") or shutil.which("python3")
    if not py or E.run(ctx, [py, "-c", "import memray"]).returncode != 0:
        ctx.log("memray is not installed: its answer is not compared")
        return None
    out = os.path.join(ctx.workdir, "memray.bin")
    res = E.run(ctx, [py, "-m", "memray", "run", "-f", "-o", out, script], timeout=300)
    if res.returncode != 0:
        raise E.Failure("memray run: exit %d, %s" % (res.returncode, res.stderr[-800:]))
    res = E.run(ctx, [py, "-c", MEMRAY_LEAKS, out, script])
    got = {}
    for line in res.stdout.splitlines():
        fn, n = line.rsplit(" ", 1)
        got[fn] = got.get(fn, 0) + int(n)
    return got


def valgrind_records(ctx, mode):
    """Valgrind memcheck's loss records of `peer_profiles MODE`: {function that called
    malloc: (class, bytes)}, or None when valgrind is not installed."""
    if not shutil.which("valgrind"):
        ctx.log("valgrind is not installed: its answer is not compared")
        return None
    res = E.run(ctx, ["valgrind", "--leak-check=full", "--show-leak-kinds=all",
                      ctx.prog(PROG), mode], timeout=300)
    got = {}
    for nbytes, cls, fn in re.findall(r"== ([\d,]+) bytes in 1 blocks are (still reachable|"
                                      r"definitely lost|possibly lost|indirectly lost) in "
                                      r"loss record [^\n]*\n==\d+==    at 0x[0-9A-F]+: \w+ "
                                      r"\([^\n]*\n==\d+==    by 0x[0-9A-F]+: (\w+) ",
                                      res.stderr):
        got[fn] = (cls, int(nbytes.replace(",", "")))
    return got


def case_lifecycle(ctx):
    """Blocks made before main and after it returned (heaptrack's and Valgrind's tests of
    static constructors and exit): a constructor's lost 222 bytes, an atexit handler's
    333 (which frees the constructor's kept 111), a destructor's 444 (g_sink still holds
    it: reachable), a thread-specific data destructor's 555 (which frees the thread's 66),
    main's 777 kept by a static. Each at its function, the same classes as Valgrind's."""
    trace = trace_of(ctx, "lifecycle")
    rep = E.load_report(ctx, trace)
    want = {"life_ctor": ("definitely lost", 222), "life_atexit": ("definitely lost", 333),
            "life_dtor": ("still reachable", 444), "life_key_dtor": ("definitely lost", 555),
            "lifecycle": ("still reachable", 777)}
    got = {}
    for s in rep["sites"]:
        fn = s["location"]["function"]
        for cls, v in s["classification"].items():
            if v["blocks"] and fn in want and not (fn == "lifecycle" and
                                                    cls == "possibly_lost"):
                got[fn] = (cls.replace("_", " "), v["bytes"])
    eq(ctx, "classes and bytes at exit, by function", want, got)
    s = rep["summary"]
    # 8 blocks: the program's 7 and the thread's descriptor (DTV, glibc's)
    eq(ctx, "allocations, frees", (8, 2), (s["total_allocations"], s["total_frees"]))
    vg = valgrind_records(ctx, "lifecycle")
    if vg is not None:
        eq(ctx, "Valgrind's loss records, by function", want, vg)


def leak_summary(ctx, trace):
    """{class: (bytes, blocks)} of a trace's LEAK SUMMARY."""
    ls = E.load_report(ctx, trace)["leak_summary"]
    return {k: (v["bytes"], v["blocks"]) for k, v in ls.items() if v["blocks"]}


PY_PYMALLOC = """import ctypes
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
class Holder:
    pass
h = Holder()
h.p = ctypes.c_void_p(libc.malloc(4242))
"""


def case_mapped(ctx):
    """A block whose only pointer lies in an anonymous mapping the program made itself is
    reachable (Valgrind scans such memory) in both contents modes; mode full (the default
    for Python and Perl) had it definitely lost, and so every native block a Python object
    in a pymalloc arena holds (PYTHONMALLOC left to pymalloc: LEAKHOUND_PYMALLOC=keep):
    `run --check` failed on such a program."""
    for contents in ("pointers", "full"):
        trace = os.path.join(ctx.workdir, "mapped.%s.lht" % contents)
        E.lh_run(ctx, [ctx.prog(PROG), "mapped"], out=trace,
                 extra=["--snapshot-contents", contents])
        eq(ctx, "mapped, contents %s: leak summary" % contents,
           {"still_reachable": (999, 1)}, leak_summary(ctx, trace))
    vg = valgrind_records(ctx, "mapped")
    if vg is not None:
        eq(ctx, "Valgrind's loss records", {"mapped": ("still reachable", 999)}, vg)
    py = shutil.which("python3")
    if not py:
        return
    script = os.path.join(ctx.workdir, "pymalloc.py")
    with open(script, "w") as f:
        f.write(PY_PYMALLOC)
    trace = os.path.join(ctx.workdir, "pymalloc.lht")
    env = dict(os.environ, LEAKHOUND_PYMALLOC="keep")
    res = E.run(ctx, [ctx.lh, "run", "--check", "-o", trace, "--", py, script], env=env)
    eq(ctx, "python with pymalloc: exit status of run --check", 0, res.returncode)
    rep = E.load_report(ctx, trace)
    got = [(s["classification"]["still_reachable"]["bytes"], s["location"]["line"])
           for s in rep["sites"] if s["leaked_bytes"] == 4242]
    eq(ctx, "python with pymalloc: the block a Holder keeps (reachable bytes, line)",
       [(4242, 7)], got)


CASES = {
    "temporary": case_temporary,
    "peak": case_peak,
    "allocations": case_allocations,
    "python_allocators": case_python_allocators,
    "lifecycle": case_lifecycle,
    "mapped": case_mapped,
}


def main():
    return E.cases_main('peer2', CASES, __doc__)


if __name__ == "__main__":
    sys.exit(main())
