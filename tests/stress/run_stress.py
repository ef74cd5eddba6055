#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""Stress tests: programs that push the agent's corners (progs/st_*.c) run bare and under
`leakhound run`; the traced run must behave as the bare one (exit status, the lines that
do not depend on timing) and the trace must account for every call exactly.

Each program counts its own allocations, frees and reallocs per allocating function and
prints them ("COUNT <name> allocs=.. frees=.. reallocs=.."). The runner reads every event
of the trace (`leakhound log --format json`), attributes each to its allocating function (the
innermost frame) when that is one of the program's (libc and the loader allocate for themselves: those
are not counted) and compares: an allocation counts at its site, a free at the site of the
block it ended (a block keeps its site through realloc), a realloc once at its own site. The report's own totals must agree
too (allocations - frees + unmatched frees == leaked blocks).

Usage: run_stress.py --build DIR --case NAME [--unwind fp|libunwind] [--keep] [-v]
Cases: cross churn fork dlopen signal edge.   Exit: 0 pass, 1 fail.
"""

import argparse
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402


def keyer(table):
    """frames -> the COUNT name of the allocating function (the innermost frame, the one
    that called malloc) when it is one of table's; None for anything else, including
    libc's own allocations made on behalf of the program's functions (printf's buffer)."""
    def mine(frames):
        fns = H.functions(frames)
        return table.get(fns[0]) if fns else None
    return mine


def traced(ctx, args, argv, trace, env_extra=None, timeout=120):
    lh = [ctx.lh, "run", "-o", trace]
    if args.unwind:
        lh += ["--unwind", args.unwind]
    return H.run(ctx, lh + ["--"] + argv, timeout=timeout, env=H.clean_env(env_extra))


def compare_counts(ctx, trace, prog_counts, table, exact=True, label=None):
    """The trace's per-site figures against the program's. Returns the trace figures."""
    events, sites = H.event_log(ctx, trace)
    if events is None:
        return None
    got = H.count_by_sites(events, sites, keyer(table))
    for name in sorted(set(table.values())):
        want = prog_counts.get(name)
        if want is None:
            ctx.fail("the program printed COUNT %s" % name, "a COUNT line", "none")
            continue
        have = got.get(name, {"allocs": 0, "frees": 0, "reallocs": 0})
        for k in ("allocs", "frees", "reallocs"):
            if exact:
                ctx.check(have[k] == want[k], "%s: %s of %s in the trace (the program "
                          "counted them)" % (label or os.path.basename(trace), k, name),
                          want[k], have[k])
    return got


def report_summary(ctx, trace, clean_exit=True):
    rep = H.report(ctx, trace)
    if rep is None:
        return None
    summ = rep.get("summary") or {}
    H.check_totals(ctx, trace, summ, clean_exit=clean_exit)
    return summ


def stable_lines(text):
    """The output lines that do not depend on timing (no COUNT, no 'signals')."""
    return [ln for ln in text.splitlines()
            if not ln.startswith("COUNT ") and not ln.startswith("signals ")]


def run_pair(ctx, args, argv, env_extra=None, compare_all=False, timeout=120):
    bare = H.run(ctx, argv, timeout=timeout, env=H.clean_env(env_extra))
    ctx.check(bare.returncode == 0, "bare run of %s" % " ".join(argv[-3:]), "exit 0",
              "exit %s: %s" % (bare.returncode, bare.stderr[-300:]))
    trace = ctx.path("trace.lht")
    res = traced(ctx, args, argv, trace, env_extra, timeout)
    ctx.check(res.returncode == bare.returncode, "exit status under the agent",
              bare.returncode, "%s, stderr: %s" % (res.returncode, res.stderr.strip()[-600:]))
    if compare_all:
        ctx.check(res.stdout == bare.stdout, "stdout under the agent is the bare stdout",
                  bare.stdout, res.stdout)
    else:
        ctx.check(stable_lines(res.stdout) == stable_lines(bare.stdout),
                  "stdout under the agent (lines that do not depend on timing)",
                  stable_lines(bare.stdout), stable_lines(res.stdout))
    ctx.check("<lh>" not in res.stderr, "no agent message on stderr", "none",
              res.stderr.strip()[-400:])
    return res, trace


def prog(ctx, name):
    return os.path.join(ctx.build, "tests", "stress", "progs", name)


def case_cross(ctx, args):
    threads, iters = 32, 6000
    res, trace = run_pair(ctx, args, [prog(ctx, "st_threads"), "cross", str(threads), str(iters)])
    counts = H.program_counts(res.stdout)
    got = compare_counts(ctx, trace, counts, {"st_fresh": "st_fresh", "st_grow": "st_grow"})
    summ = report_summary(ctx, trace)
    if got and summ:
        ctx.figure("cross: %d threads x %d iterations: st_fresh %s, st_grow %s; report: %s "
                   "allocations, %s frees, %s reallocs, %s events"
                   % (threads, iters, got.get("st_fresh"), got.get("st_grow"),
                      summ.get("total_allocations"), summ.get("total_frees"),
                      summ.get("total_reallocs"), summ.get("total_events")))


def case_churn(ctx, args):
    rounds = 1000
    res, trace = run_pair(ctx, args, [prog(ctx, "st_threads"), "churn", str(rounds)])
    counts = H.program_counts(res.stdout)
    got = compare_counts(ctx, trace, counts, {"st_churn_alloc": "st_churn",
                                              "churn_worker": "st_churn"})
    summ = report_summary(ctx, trace)
    if got and summ:
        ctx.figure("churn: %d threads created and joined; trace: %s; report %s events, "
                   "%s dropped" % (rounds * 4, got.get("st_churn"), summ.get("total_events"),
                                   summ.get("dropped_events")))


def case_fork(ctx, args):
    forks, blocks = 8, 5000
    res, trace = run_pair(ctx, args, [prog(ctx, "st_fork"), str(forks), str(blocks)])
    counts = H.program_counts(res.stdout)
    compare_counts(ctx, trace, counts, {"st_parent_alloc": "parent"}, label="parent trace")
    report_summary(ctx, trace)
    children = sorted(k for k in counts if k.startswith("child."))
    ctx.check(len(children) == forks, "children that reported their counts", forks,
              len(children))
    files = sorted(f for f in glob.glob(trace + ".*") if re.fullmatch(r".*\.lht\.\d+", f))
    ctx.check(len(files) == forks, "one trace per fork child (%s.<pid>)" % trace, forks,
              [os.path.basename(f) for f in files])
    ok = 0
    for child in children:
        pid = child.split(".", 1)[1]
        ctrace = "%s.%s" % (trace, pid)
        if not ctx.check(os.path.exists(ctrace), "trace of child %s" % pid, ctrace, "missing"):
            continue
        got = compare_counts(ctx, ctrace, counts, {"st_child_alloc": child},
                             label="child %s" % pid)
        summ = report_summary(ctx, ctrace)
        if summ is not None:
            # The child's trace is seeded with the parent's blocks live at the fork
            # (analysis/trace.h), so its frees of the 8 inherited blocks match them.
            ctx.check(summ.get("unmatched_frees") == 0,
                      "child %s: unmatched frees (its %d frees of inherited blocks match the "
                      "parent's allocations)" % (pid, counts[child]["inherited_frees"]), 0,
                      summ.get("unmatched_frees"))
            ctx.check(summ.get("exit_status") == 0, "child %s: exit status in the trace" % pid,
                      0, summ.get("exit_status"))
        if got is not None and not any(f for f in ctx.failures if pid in f):
            ok += 1
    ctx.figure("fork: %d forks from a process with 4 busy threads; %d child traces exact"
               % (forks, ok))


def case_dlopen(ctx, args):
    rounds = 300
    res, trace = run_pair(ctx, args, [prog(ctx, "st_dlopen"), str(rounds)])
    counts = H.program_counts(res.stdout)
    got = compare_counts(ctx, trace, counts, {"st_plugin_alloc": "st_plugin"})
    rep = H.report(ctx, trace)
    if rep is not None:
        H.check_totals(ctx, trace, rep["summary"])
    if got:
        ctx.figure("dlopen: %d dlopen/dlclose rounds; st_plugin.so's site: %s"
                   % (rounds, got.get("st_plugin")))


def case_signal(ctx, args):
    res, trace = run_pair(ctx, args, [prog(ctx, "st_signal"), "200000"])
    counts = H.program_counts(res.stdout)
    table = {"st_main_alloc": "st_main_alloc", "st_handler_alloc": "st_handler_alloc"}
    events, sites = H.event_log(ctx, trace)
    if events is None:
        return
    got = H.count_by_sites(events, sites, keyer(table))
    want = counts.get("st_main_alloc")
    have = got.get("st_main_alloc", {})
    if ctx.check(want is not None, "COUNT st_main_alloc", "a line", res.stdout[-300:]):
        for k in ("allocs", "frees"):
            ctx.check(have.get(k) == want[k], "%s of the main loop in the trace" % k, want[k],
                      have.get(k))
    hw = counts.get("st_handler_alloc")
    hh = got.get("st_handler_alloc", {"allocs": 0, "frees": 0})
    if ctx.check(hw is not None, "COUNT st_handler_alloc", "a line", res.stdout[-300:]):
        ctx.check(hh["allocs"] == hh["frees"], "recorded handler allocations == recorded "
                  "handler frees (a handler inside a hook is wholly unrecorded)",
                  hh["allocs"], hh["frees"])
        ctx.check(0 < hh["allocs"] <= hw["allocs"], "recorded handler allocations",
                  "1..%d" % hw["allocs"], hh["allocs"])
        ctx.check(hw["signals"] > 100, "SIGALRM delivered while the main loop allocates",
                  "> 100", hw["signals"])
        ctx.figure("signal: %d SIGALRM handlers ran (each malloc+free) during %d main-loop "
                   "allocations; %d handler pairs recorded, %d passed through unrecorded "
                   "(inside a hook)" % (hw["signals"], want["allocs"] if want else -1,
                                        hh["allocs"], hw["allocs"] - hh["allocs"]))
    report_summary(ctx, trace)


def case_edge(ctx, args):
    res, trace = run_pair(ctx, args, [prog(ctx, "st_edge")], compare_all=True)
    counts = H.program_counts(res.stdout)
    ctx.check("FAILED" not in res.stdout, "API checks under the agent", "no FAILED line",
              [ln for ln in res.stdout.splitlines() if "FAILED" in ln])
    errnos = [ln for ln in res.stdout.splitlines() if ln.startswith("errno ")]
    ctx.check(any(re.match(r"errno malloc_huge NULL 12$", ln) for ln in errnos),
              "malloc(SIZE_MAX/2) under the agent", "NULL, errno 12 (ENOMEM)", errnos)
    table = {n: n for n in ("st_aligned", "st_realloc_edges", "st_zero", "st_failing")}
    got = compare_counts(ctx, trace, counts, table)
    summ = report_summary(ctx, trace)
    if summ is not None:
        ctx.check(summ.get("unmatched_frees") == 0, "unmatched frees (a failed realloc must "
                  "not record a free)", 0, summ.get("unmatched_frees"))
    if got:
        ctx.figure("edge: " + "; ".join("%s %s" % (k, got.get(k)) for k in sorted(table)))
        ctx.figure("edge: " + "; ".join(errnos))


CASES = {"cross": case_cross, "churn": case_churn, "fork": case_fork, "dlopen": case_dlopen,
         "signal": case_signal, "edge": case_edge}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--case", required=True, choices=sorted(CASES))
    ap.add_argument("--unwind", choices=["fp", "libunwind"])
    ap.add_argument("--env", action="append", default=[], metavar="LEAKHOUND_X=V",
                    help="agent setting for the traced runs (LEAKHOUND_BUFFER_KB=4: tiny "
                         "buffers, a flush every few hundred events)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    name = "stress.%s%s" % (args.case, "." + args.unwind if args.unwind else "")
    for kv in args.env:
        k, _, v = kv.partition("=")
        H.AGENT_ENV[k] = v
    ctx = H.Ctx(args.build, name, args.verbose)
    if H.need(ctx, ctx.lh, ctx.agent):
        try:
            CASES[args.case](ctx, args)
        except Exception as e:  # a crash of the runner is a failure, with its cause
            import traceback
            ctx.fail("runner", "no exception", traceback.format_exc()[-1500:])
            del e
    return ctx.finish(args.keep)


if __name__ == "__main__":
    H.main_wrapper(main)
