#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""Perl programs seen as Perl (issue 12, stacks): the small programs in progs/ run under
`leakhound run`, with exact answers about their Perl subs and lines; an XS module built here
(xs/Leaky.c) whose C frames must stay under the Perl line; core modules (JSON::PP,
Storable) run unchanged; marks from --mark-sub and from the LeakHound module; and bad input
(a perl the agent was not built for, fork and exec). Lines come from `# @name` markers.

Usage:
  run_perl.py --build DIR --lib DIR --case NAME [--keep] [-v]
Exit status: 0 pass, 1 fail, 2 usage error, 77 skipped.
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROGS = os.path.join(HERE, "progs")


class Failure(Exception):
    pass


class Ctx:
    def __init__(self, build, lib, workdir, verbose):
        self.lh = os.path.join(build, "bin", "leakhound")
        self.perl5 = os.path.join(build, "lib", "perl5")  # the LeakHound module
        self.lib = lib
        self.workdir = workdir
        self.verbose = verbose
        self.fails = []

    def check(self, ok, what, want, got):
        if not ok:
            self.fails.append("%s\n    expected: %s\n    got:      %s" % (what, want, got))
        elif self.verbose:
            print("ok: %s" % what)
        return ok


def run(ctx, argv, env=None, timeout=300):
    e = dict(os.environ)
    e.pop("LEAKHOUND_TEST_PERL_VERSION", None)
    e["PERL5LIB"] = ctx.lib
    e.update(env or {})
    if ctx.verbose:
        print("$ " + " ".join(argv))
    return subprocess.run(argv, cwd=ctx.workdir, env=e, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=timeout)


def marker(prog, name):
    """(file, line) of the `# @name` comment in progs/prog."""
    path = os.path.join(PROGS, prog)
    with open(path) as f:
        for no, text in enumerate(f, 1):
            if re.search(r"[#*] @%s\b" % re.escape(name), text):
                return path, no
    raise Failure("no marker @%s in %s" % (name, path))


def marker_path(path, name):
    with open(path) as f:
        for no, text in enumerate(f, 1):
            if re.search(r"[#*] @%s\b" % re.escape(name), text):
                return path, no
    raise Failure("no marker @%s in %s" % (name, path))


def lh_run(ctx, prog, args=(), extra=(), env=None, name="trace.lht", perl_args=()):
    trace = os.path.join(ctx.workdir, name)
    argv = [ctx.lh, "run", "-o", trace] + list(extra) + \
        ["--", "perl"] + list(perl_args) + [os.path.join(PROGS, prog)] + [str(a) for a in args]
    res = run(ctx, argv, env=env)
    if res.returncode != 0:
        raise Failure("`%s` exited %d\n    stderr: %s" % (" ".join(argv), res.returncode,
                                                       res.stderr.strip()[-1500:]))
    return trace, res


def lh_json(ctx, args):
    res = run(ctx, [ctx.lh] + args + ["--format", "json"])
    if res.returncode != 0:
        raise Failure("`leakhound %s` exited %d: %s" % (" ".join(args), res.returncode,
                                                      res.stderr.strip()[-800:]))
    try:
        return json.loads(res.stdout)
    except ValueError as e:
        raise Failure("leakhound %s: not JSON (%s)" % (" ".join(args), e))


def lh_text(ctx, args):
    res = run(ctx, [ctx.lh] + args)
    if res.returncode != 0:
        raise Failure("`leakhound %s` exited %d: %s" % (" ".join(args), res.returncode,
                                                      res.stderr.strip()[-800:]))
    return res.stdout


def all_sites(ctx, trace, extra=()):
    return lh_json(ctx, ["report", trace, "--top", "1000000"] + list(extra))["sites"]


def frame_at(f, func, where):
    return (f.get("function") == func and f.get("file") == where[0] and
            f.get("line") == where[1])


def fmt_frames(site, n=6):
    return " <- ".join("%s (%s:%s)" % (f.get("function"), os.path.basename(f.get("file") or "?"),
                                       f.get("line")) for f in site["frames"][:n])


def sites_at(sites, func, where):
    return [s for s in sites if s.get("location") and frame_at(s["location"], func, where)]


def one_site_at(ctx, trace, func, where):
    """The one site at func, where (a line is one site: sitecanon.h), checked to hold what
    the --native sites at that line (one per path through the interpreter) add up to.
    Returns (that site or None, the --native sites)."""
    merged = sites_at(all_sites(ctx, trace), func, where)
    native = sites_at(all_sites(ctx, trace, ["--native"]), func, where)
    want = (sum(s["leaked_blocks"] for s in native), sum(s["leaked_bytes"] for s in native))
    ok = len(merged) == 1 and (merged[0]["leaked_blocks"], merged[0]["leaked_bytes"]) == want
    ctx.check(ok, "one site at %s:%d" % (os.path.basename(where[0]), where[1]),
              "1 site of %d blocks, %d bytes (the sum of the --native sites)" % want,
              [(s["leaked_blocks"], s["leaked_bytes"]) for s in merged])
    return (merged[0] if len(merged) == 1 else None), native


# ---------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------

def case_cache(ctx):
    """A hash that never evicts: the site is the Perl line that stores into it, with its
    callers, and no interpreter frame in sight."""
    n = 1000
    trace, _ = lh_run(ctx, "cache.pl", [n])
    sites = lh_json(ctx, ["report", trace, "--top", "5"])["sites"]
    store, call, loop = (marker("cache.pl", m) for m in ("store", "call", "loop"))
    top = sites[0] if sites else None
    if not ctx.check(top and frame_at(top["location"], "MyApp::remember", store),
                     "top site", "MyApp::remember at cache.pl:%d" % store[1],
                     fmt_frames(top) if top else "(no sites)"):
        return
    merged, native = one_site_at(ctx, trace, "MyApp::remember", store)
    ctx.check(merged is not None and merged["stack_id"] == top["stack_id"],
              "the top site is the store line's one site", top["stack_id"],
              merged and merged["stack_id"])
    # With --native, the paths through perl are sites of their own: the values, the keys.
    strings = [s for s in native if s["leaked_blocks"] == n and s["leaked_bytes"] == n * 202]
    ctx.check(len(strings) == 1, "--native: the values' site",
              "%d blocks, %d bytes (200 characters + NUL + COW count)" % (n, n * 202),
              [(s["leaked_blocks"], s["leaked_bytes"]) for s in native])
    fr = top["frames"]
    ctx.check(len(fr) == 3 and frame_at(fr[1], "MyApp::handle_request", call) and
              frame_at(fr[2], "main", loop) and all(f.get("language") == "perl" for f in fr),
              "top site's stack", "MyApp::remember <- MyApp::handle_request (:%d) <- main (:%d), "
              "all Perl" % (call[1], loop[1]), fmt_frames(top))
    every = all_sites(ctx, trace)
    hidden = [s for s in every if any(f.get("language") for f in s["frames"]) and
              any((f.get("function") or "").startswith(("Perl_", "pp_")) for f in s["frames"])]
    ctx.check(not hidden, "interpreter frames hidden in stacks with Perl frames", "none",
              "; ".join(fmt_frames(s) for s in hidden[:3]))
    # The hash keys: a second --native site at the same line, one block per entry.
    keys = [s for s in native if s["leaked_blocks"] == n]
    ctx.check(len(keys) == 2, "--native sites at the store line with one block per entry", 2,
              [(s["leaked_blocks"], s["leaked_bytes"]) for s in native])


def case_native(ctx):
    """--native shows the interpreter's frames, the Perl frames spliced in at runops."""
    trace, _ = lh_run(ctx, "cache.pl", [300])
    store = marker("cache.pl", "store")
    top = lh_json(ctx, ["report", trace, "--top", "1", "--native"])["sites"][0]
    names = [f.get("function") or "" for f in top["frames"]]
    ctx.check(top["location"] and frame_at(top["location"], "MyApp::remember", store),
              "--native: the site is still the Perl line", "MyApp::remember:%d" % store[1],
              fmt_frames(top))
    ok = "Perl_safesysmalloc" in names and "Perl_runops_standard" in names and \
        "MyApp::remember" in names and \
        names.index("Perl_safesysmalloc") < names.index("MyApp::remember") < \
        names.index("Perl_runops_standard")
    ctx.check(ok, "--native stack", "Perl_safesysmalloc ... MyApp::remember ... main "
              "Perl_runops_standard ...", " <- ".join(names[:14]))
    plain = lh_json(ctx, ["report", trace, "--top", "1"])["sites"][0]
    ctx.check(len(plain["frames"]) == 3, "without --native", "3 Perl frames",
              fmt_frames(plain))


def case_concat(ctx):
    """A string grown with .=: one block, at the .= line, as big as the string."""
    n = 5000
    trace, _ = lh_run(ctx, "concat.pl", [n])
    top = lh_json(ctx, ["report", trace, "--top", "1"])["sites"][0]
    append = marker("concat.pl", "append")
    length = sum(len("request %d handled by worker 7 in 0.003 s\n" % i) for i in range(1, n + 1))
    ctx.check(frame_at(top["location"], "main::audit", append), "top site",
              "main::audit at concat.pl:%d" % append[1], fmt_frames(top))
    merged, native = one_site_at(ctx, trace, "main::audit", append)
    ctx.check(merged is not None and merged["stack_id"] == top["stack_id"],
              "the top site is the append line's one site", top["stack_id"],
              merged and merged["stack_id"])
    log = [s for s in native if s["leaked_blocks"] == 1 and
           length < s["leaked_bytes"] < 2 * length]
    ctx.check(len(log) == 1, "--native: the log string", "1 block of more than %d bytes (the "
              "string) and less than twice that" % length,
              [(s["leaked_blocks"], s["leaked_bytes"]) for s in native])


def case_closure(ctx):
    """A closure capturing a growing array: the site is the anonymous sub's line."""
    n = 1000
    trace, _ = lh_run(ctx, "closure.pl", [n])
    push, call = marker("closure.pl", "push"), marker("closure.pl", "call")
    merged, at = one_site_at(ctx, trace, "main::__ANON__", push)
    per_entry = [s for s in at if s["leaked_blocks"] == n]
    ctx.check(len(per_entry) == 3, "--native sites at the push line with one block per element",
              "3 (hash buckets, the string, its key)",
              [(s["leaked_blocks"], s["leaked_bytes"]) for s in at])
    ctx.check(merged is not None and len(merged["frames"]) == 2 and
              frame_at(merged["frames"][1], "main", call), "its stack",
              "main::__ANON__ <- main (closure.pl:%d)" % call[1],
              merged and fmt_frames(merged))


def counts_by_function(ctx, trace):
    doc = lh_json(ctx, ["counts", trace, "--by", "function", "--top", "1000"])
    return doc, {(g.get("location") or {}).get("function"): g for g in doc["groups"]}


def case_mark_sub(ctx):
    """--mark-sub: each call is a mark; blocks left per call = objects created per call."""
    n = 40
    trace, _ = lh_run(ctx, "marksub.pl", [n], extra=["--mark-sub", "MyApp::handle_request"])
    doc, groups = counts_by_function(ctx, trace)
    bounds = doc["bounds"]
    ctx.check(len(bounds) == n and all(b["label"] == "MyApp::handle_request" for b in bounds),
              "marks", "%d marks labelled MyApp::handle_request" % n,
              "%d: %s" % (len(bounds), sorted({b["label"] for b in bounds})))
    g = groups.get("MyApp::handle_request")
    if not ctx.check(g is not None, "a MyApp::handle_request group", "present",
                     sorted(k for k in groups if k)[:20]):
        return
    # Mark k is taken when call k starts: counts[k] - counts[k-1] is what call k-1 left.
    # The first calls also warm up perl's arenas; from the third on, exactly 5 per call.
    deltas = [b - a for a, b in zip(g["counts"], g["counts"][1:])]
    ctx.check(len(deltas) == n - 1 and all(d == 5 for d in deltas[2:]),
              "blocks left per call", "5 each (key, array body, 3 strings)", deltas)


def case_module(ctx):
    """perl -MLeakHound under leakhound run: marks and a named snapshot; harmless alone."""
    n = 30
    trace, res = lh_run(ctx, "module.pl", [n])
    ctx.check(res.stdout.strip() == "active", "LeakHound::active() under leakhound run",
              "active", res.stdout.strip())
    doc, groups = counts_by_function(ctx, trace)
    labels = [b["label"] for b in doc["bounds"]]
    ctx.check(labels.count("request") == n, "marks from LeakHound::mark", "%d" % n,
              labels.count("request"))
    snaps = lh_json(ctx, ["counts", trace, "--use", "snapshots", "--top", "1"])["bounds"]
    ctx.check([b["label"] for b in snaps][:2] == ["after-warmup", "late"], "LeakHound::snapshot",
              "snapshots after-warmup, late", [b["label"] for b in snaps])
    keep = marker("module.pl", "keep")
    _, at = one_site_at(ctx, trace, "main", keep)
    ctx.check(any(s["leaked_blocks"] == n for s in at), "--native: the kept strings",
              "%d blocks at module.pl:%d" % (n, keep[1]), [(s["leaked_blocks"]) for s in at])
    # Without the agent: loads, does nothing, says inactive.
    res = run(ctx, ["perl", os.path.join(PROGS, "module.pl"), "3"],
              env={"PERL5LIB": ctx.perl5})
    ctx.check(res.returncode == 0 and res.stdout.strip() == "inactive" and not res.stderr,
              "LeakHound without the agent", "exit 0, 'inactive', nothing on stderr",
              "exit %d, %r, %r" % (res.returncode, res.stdout, res.stderr[-300:]))
    # The module's version is the project's, written once (CMakeLists.txt project VERSION).
    res = run(ctx, ["perl", "-MLeakHound", "-e", "print LeakHound->VERSION"],
              env={"PERL5LIB": ctx.perl5})
    want = run(ctx, [ctx.lh, "--version"]).stdout.split()
    ctx.check(len(want) > 1 and res.stdout == want[1], "LeakHound->VERSION is leakhound's",
              want[1] if len(want) > 1 else want, res.stdout)


def case_frees(ctx):
    """A program that frees everything it allocates per request: nothing grows."""
    n = 60
    trace, _ = lh_run(ctx, "frees.pl", [n], extra=["--mark-sub", "Worker::handle_request"])
    doc, groups = counts_by_function(ctx, trace)
    growing = {}
    for name, g in groups.items():
        c = g["counts"]
        if len(c) >= 4 and c[-1] != c[2]:
            growing[name] = c[2:]
    ctx.check(len(doc["bounds"]) == n, "marks", n, len(doc["bounds"]))
    ctx.check(not growing, "live blocks per function from the third call on", "constant",
              growing)


def case_xs(ctx):
    """An XS module allocating from C: its C frames under the Perl line that called it."""
    n = 100
    trace, _ = lh_run(ctx, "xs.pl", [n])
    grab = marker("xs.pl", "grab")
    xs_src = os.path.join(HERE, "xs", "Leaky.c")
    sites = all_sites(ctx, trace)
    want = [s for s in sites if s["leaked_blocks"] == n and
            sum(1000 + i for i in range(1, n + 1)) == s["leaked_bytes"]]
    if not ctx.check(len(want) == 1, "one site with the grabbed blocks",
                     "%d blocks, %d bytes" % (n, sum(1000 + i for i in range(1, n + 1))),
                     [(s["leaked_blocks"], s["leaked_bytes"]) for s in sites[:5]]):
        return
    s = want[0]
    fr = s["frames"]
    names = [f.get("function") for f in fr]
    ok = (len(fr) == 4 and names[0] == "leaky_keep" and names[1] == "XS_Leaky_grab" and
          fr[0].get("file", "").endswith("Leaky.c") and
          frame_at(fr[2], "main::fill_buffers", grab) and names[3] == "main")
    ctx.check(ok, "the XS site's stack", "leaky_keep (Leaky.c) <- XS_Leaky_grab (Leaky.c) <- "
              "main::fill_buffers (xs.pl:%d) <- main" % grab[1], fmt_frames(s))
    ctx.check(frame_at(s["location"], "main::fill_buffers", grab), "the XS site's location",
              "the Perl line, xs.pl:%d" % grab[1], s["location"])
    del xs_src


def case_views(ctx):
    """Every view names the Perl subs: --by function, tree, folded, SQLite, pprof,
    flame graph, HTML."""
    trace, _ = lh_run(ctx, "cache.pl", [500])
    by = lh_text(ctx, ["report", trace, "--by", "function"])
    ctx.check(re.search(r"MyApp::remember \(.*cache\.pl\)", by), "report --by function",
              "a MyApp::remember (cache.pl) row", by[:600])
    tree = lh_text(ctx, ["tree", trace])
    ctx.check("MyApp::handle_request" in tree and "MyApp::remember" in tree and
              "Perl_safesysmalloc" not in tree.split("MyApp::remember")[1].split("\n")[0],
              "tree", "main > MyApp::handle_request > MyApp::remember", tree[:800])
    out = os.path.join(ctx.workdir, "x")
    lh_text(ctx, ["export", trace, "--folded", out + ".folded", "--sqlite", out + ".db",
                  "--pprof", out + ".pb.gz"])
    with open(out + ".folded") as f:
        folded = f.read()
    ctx.check(re.search(r"^main;MyApp::handle_request;MyApp::remember \d+$", folded, re.M),
              "folded export", "main;MyApp::handle_request;MyApp::remember N", folded[:400])
    import sqlite3
    db = sqlite3.connect(out + ".db")
    rows = db.execute("select count(*) from frames where function = 'MyApp::remember'").fetchone()
    ctx.check(rows[0] > 0, "SQLite frames", "rows for MyApp::remember", rows[0])
    import gzip
    with gzip.open(out + ".pb.gz") as f:
        pb = f.read()
    ctx.check(b"MyApp::remember" in pb and b"cache.pl" in pb, "pprof strings",
              "MyApp::remember and cache.pl", "absent")
    lh_text(ctx, ["flamegraph", trace, "-o", out + ".svg"])
    lh_text(ctx, ["html", trace, "-o", out + ".html"])
    for ext in (".svg", ".html"):
        with open(out + ext) as f:
            text = f.read()
        ctx.check("MyApp::remember" in text, ext[1:] + " view", "MyApp::remember", "absent")


def case_realperl(ctx):
    """Core modules no one here wrote (JSON::PP, Storable): every Perl frame names a file
    that exists and a line inside it."""
    trace, res = lh_run(ctx, "realperl.pl", [200])
    ctx.check(res.stdout.strip() == "20", "program output", "20", res.stdout.strip())
    sites = all_sites(ctx, trace)
    lines = {}
    bad, seen_files = [], set()
    n_frames = 0
    for s in sites:
        for f in s["frames"]:
            if f.get("language") != "perl":
                continue
            n_frames += 1
            path = f.get("file")
            if not path or path.startswith("(eval"):
                continue
            if path not in lines:
                try:
                    with open(path, errors="replace") as fh:
                        lines[path] = sum(1 for _ in fh)
                except OSError:
                    lines[path] = -1
            seen_files.add(os.path.basename(path))
            if lines[path] < 0 or f.get("line", 0) > lines[path]:
                bad.append("%s %s:%s" % (f.get("function"), path, f.get("line")))
    ctx.check(n_frames > 100 and not bad, "Perl frames' files and lines exist",
              "all of > 100 frames", "%d frames, bad: %s" % (n_frames, bad[:5]))
    ctx.check({"PP.pm", "Storable.pm", "realperl.pl"} <= seen_files, "files seen",
              "JSON/PP.pm, Storable.pm, realperl.pl", sorted(seen_files)[:20])
    funcs = {f.get("function") for s in sites for f in s["frames"]}
    ctx.check(any((x or "").startswith("JSON::PP::") for x in funcs), "JSON::PP subs",
              "some JSON::PP::* frame", sorted(x for x in funcs if x)[:20])
    dup = same_display([s for s in sites if any(f.get("language") for f in s["frames"])])
    ctx.check(not dup, "no two sites with Perl frames and the same displayed stack", "none",
              dup[:5])


def same_display(sites):
    """Groups of sites whose displayed stacks are the same (there must be none)."""
    seen = {}
    for s in sites:
        key = tuple((f.get("function"), f.get("file"), f.get("line"), f.get("module"),
                     f.get("inlined"), f.get("language"),
                     None if f.get("function") and f.get("file") else f.get("offset"))
                    for f in s["frames"])
        seen.setdefault(key, []).append(s["stack_id"])
    return [v for v in seen.values() if len(v) > 1]


def case_paths(ctx):
    """One Perl line allocating through several paths in perl's C code (hash entry, bodies,
    strings) is one site in report, leaks and report --growth, with the figures the
    --native sites at that line add up to."""
    n = 300
    trace, _ = lh_run(ctx, "paths.pl", [n], extra=["--mark-sub", "MyApp::handle"])
    store = marker("paths.pl", "store")
    # (view, arguments, its sites' key, bytes field, blocks field, the --native oracle).
    # report --growth lists growing sites only, so its oracle is counts (every site's live
    # bytes and blocks at the last mark, which is what --growth's last_* are).
    counts = ["counts", trace, "--top", "0"]
    views = (("report", ["report", trace, "--top", "0"], "sites", "leaked_bytes",
              "leaked_blocks", None),
             ("leaks", ["leaks", trace, "--top", "0"], "sites", "leaked_bytes",
              "leaked_blocks", None),
             ("counts", counts, "groups", "final_bytes", "final_blocks", None),
             ("report --growth", ["report", "--growth", trace, "--top", "0"], "sites",
              "last_bytes", "last_blocks", (counts, "groups", "final_bytes", "final_blocks")))
    for what, args, key, fb, fk, oracle in views:
        merged = sites_at(lh_json(ctx, args)[key], "MyApp::handle", store)
        oargs, okey, ob, ok = oracle or (args, key, fb, fk)
        native = sites_at(lh_json(ctx, oargs + ["--native"])[okey], "MyApp::handle", store)
        want = (sum(s[ob] for s in native), sum(s[ok] for s in native))
        ctx.check(len(native) >= 3, what + " --native: sites at the store line",
                  "3 or more (the paths through perl)", len(native))
        ctx.check(len(merged) == 1, what + ": sites at the store line", 1,
                  ["%s: %s" % (s["stack_id"], fmt_frames(s)) for s in merged])
        if merged:
            got = (merged[0][fb], merged[0][fk])
            ctx.check(got == want and want[1] >= n, what + ": the site's %s, %s" % (fb, fk),
                      "the sums over the --native sites %s" % (want,), got)
    every = all_sites(ctx, trace)
    dup = same_display([s for s in every if any(f.get("language") for f in s["frames"])])
    ctx.check(not dup, "report: no two sites with Perl frames and the same displayed stack",
              "none", dup[:5])
    top = lh_json(ctx, ["report", trace, "--top", "1"])["sites"][0]
    log = lh_text(ctx, ["log", trace, "--site", str(top["stack_id"])])
    m = re.search(r"events:\s+(\d+) matched", log)
    ctx.check(m and int(m.group(1)) == top["allocations"] + top["frees"],
              "log --site %d: events matched" % top["stack_id"],
              "%d allocations + %d frees" % (top["allocations"], top["frees"]),
              m.group(0) if m else log[:300])


def case_badversion(ctx):
    """A perl the agent was not built for: one line, native frames only, no crash."""
    trace, res = lh_run(ctx, "cache.pl", [100],
                        env={"LEAKHOUND_TEST_PERL_VERSION": "5.99.0"})
    lines = [l for l in res.stderr.splitlines() if l.startswith("<lh>:")]
    ctx.check(len(lines) == 1 and "perl 5.99.0" in lines[0] and "native frames only"
              in lines[0], "the agent's line", "one '<lh>: perl 5.99.0: ... native frames "
              "only' line", lines)
    res = run(ctx, [ctx.lh, "report", trace, "--top", "3"])
    ctx.check(res.returncode == 0 and "perl 5.99.0" in res.stderr, "report says it too",
              "exit 0 and the line as a warning", "exit %d, %r" % (res.returncode,
                                                                   res.stderr[-400:]))
    sites = all_sites(ctx, trace)
    ctx.check(not any(f.get("language") for s in sites for f in s["frames"]),
              "no Perl frames recorded", "none", "some")


def case_forks(ctx):
    """A perl that forks and execs perl: no crash; each traced process has its Perl lines."""
    trace, res = lh_run(ctx, "forks.pl", extra=["--follow-exec"])
    ctx.check("child done" in res.stdout and "parent done" in res.stdout, "program output",
              "child done, parent done", res.stdout)
    parent = marker("forks.pl", "parent")
    top = [s for s in all_sites(ctx, trace) if s.get("location") and
           s["location"].get("file") == parent[0]]
    ctx.check(top, "parent trace has Perl sites in forks.pl", "some", "none")
    others = sorted(glob.glob(trace + ".*[0-9]"))
    files_seen = set()
    for t in others:
        for s in all_sites(ctx, t):
            for f in s["frames"]:
                if f.get("language") == "perl":
                    files_seen.add(f.get("file"))
    ctx.check(parent[0] in files_seen and "-e" in files_seen, "child traces",
              "the forked child's Perl frames in forks.pl and the exec'd perl's in -e",
              "%s in %s" % (sorted(x or "" for x in files_seen), others))


def case_embed(ctx):
    """perl embedded in a C program: one line saying so, Perl frames recorded, and recording
    goes on after perl_destruct and perl_free (no crash reading a freed interpreter)."""
    prog = os.path.join(os.path.dirname(ctx.lib), "embed")
    trace = os.path.join(ctx.workdir, "embed.lht")
    res = run(ctx, [ctx.lh, "run", "-o", trace, "--", prog])
    lines = [l for l in res.stderr.splitlines() if l.startswith("<lh>:")]
    ctx.check(res.returncode == 0, "exit status", 0, "%d: %s" % (res.returncode,
                                                             res.stderr[-500:]))
    ctx.check(len(lines) == 1 and "perl 5." in lines[0] and "embedded in embed" in lines[0],
              "the agent's line", "one '<lh>: perl 5.x embedded in embed: ...' line", lines)
    sites = all_sites(ctx, trace)
    # perl_destruct frees the Perl data (an embedded perl destroys everything), so the
    # Perl sub is seen among the allocations: a value and a key per call, and arenas.
    by = lh_text(ctx, ["report", trace, "--by", "function", "--metric", "allocated"])
    m = re.search(r"^\s*\S+ \S+\s+[\d.]+%\s+\S+ \S+\s+[\d.]+%\s+(\d+)\s+main::store \(-e\)$",
                  by, re.M)
    ctx.check(m and 600 <= int(m.group(1)) < 700, "the Perl sub's allocations",
              "a main::store (-e) row with 600 (two per call) + arenas allocations", by[:900])
    after = marker_path(os.path.join(HERE, "embed", "embed.c"), "c_after")
    c_site = [s for s in sites if s["leaked_blocks"] == 64 and s["leaked_bytes"] == 64 * 777]
    ctx.check(len(c_site) == 1 and c_site[0]["location"].get("line") == after[1] and
              not any(f.get("language") for f in c_site[0]["frames"]),
              "C allocations after perl_free", "64 x 777 bytes at embed.c:%d, native frames"
              % after[1], [fmt_frames(s) for s in c_site])


def case_alternate(ctx):
    """Sibling subs allocating alternately under the same callers: each site has its own
    Perl stack, exactly (the agent reuses the frames shared with the previous stack)."""
    n = 500
    trace, _ = lh_run(ctx, "alternate.pl", [n])
    sites = all_sites(ctx, trace)
    m = {k: marker("alternate.pl", k) for k in ("a", "b", "call_a", "call_b", "call_middle",
                                                  "loop")}
    for sub, line, call, size in (("main::inner_a", "a", "call_a", 102),
                                  ("main::inner_b", "b", "call_b", 302)):
        merged, native = one_site_at(ctx, trace, sub, m[line])
        got = [s for s in native if s["leaked_blocks"] == n]
        want = [(sub, m[line][1]), ("main::middle", m[call][1]),
                ("main::outer", m["call_middle"][1]), ("main", m["loop"][1])]
        ok = len(got) == 1 and got[0]["leaked_bytes"] == n * size and merged is not None and \
            [(f.get("function"), f.get("line")) for f in merged["frames"]] == want
        ctx.check(ok, "the %s site" % sub, "a --native site of %d blocks of %d bytes; stack %s"
                  % (n, size, want), [(s["leaked_blocks"], s["leaked_bytes"], fmt_frames(s))
                                      for s in sites_at(sites, sub, m[line])])


def case_objects(ctx):
    """Exit = when the main program ends, before global destruction (which destroys these
    objects): the exit report holds them, and the exit status is the program's."""
    n = 500
    trace = os.path.join(ctx.workdir, "objects.lht")
    res = run(ctx, [ctx.lh, "run", "-o", trace, "--", "perl", os.path.join(PROGS, "objects.pl"),
                    str(n)])
    ctx.check(res.returncode == 3, "exit status", 3, res.returncode)
    new = marker("objects.pl", "new")
    _, at = one_site_at(ctx, trace, "Foo::new", new)
    ctx.check(sorted(s["leaked_blocks"] for s in at if s["leaked_blocks"] == n) == [n, n],
              "objects live at exit", "two --native sites at Foo::new with %d blocks each (the "
              "data "
              "strings, the hash buckets)" % n, [(s["leaked_blocks"], s["leaked_bytes"])
                                                  for s in at])
    text = lh_text(ctx, ["report", trace, "--top", "1"])
    ctx.check(re.search(r"exit:\s+clean exit \(status 3\)", text), "exit line",
              "clean exit (status 3)", [l for l in text.splitlines() if "exit" in l])


def case_startup(ctx):
    """Blocks perl allocated while no Perl code ran (perl_construct, before the first
    statement): their site's location is the interpreter phase, never perl's allocator
    wrapper (Perl_safesyscalloc), in JSON and in text; --native keeps every frame."""
    trace, _ = lh_run(ctx, "cache.pl", [100])
    sites = all_sites(ctx, trace)
    want = {"function": "perl_construct", "file": "perl start-up, no script frame", "line": 0,
            "module": None, "phase": True}
    start = [s for s in sites if all(s["location"].get(k) == v for k, v in want.items())]
    ctx.check(start and all(s["frames"][-1] == s["location"] for s in start),
              "start-up sites located at the phase, their outermost frame", want,
              "; ".join(fmt_frames(s, 20) for s in sites[:3]))
    wrappers = [s for s in sites
                if (s["location"].get("function") or "").startswith("Perl_safesys")]
    ctx.check(not wrappers, "no site located at Perl_safesys*", "none",
              "; ".join(fmt_frames(s) for s in wrappers[:3]))
    # nor a frame of its stack: a start-up site's frames end at the function that asked
    # perl's allocator (flame graphs and folded stacks draw every frame)
    shown = [s for s in start if any((f.get("function") or "").startswith("Perl_safesys")
                                     for f in s["frames"])]
    ctx.check(start and not shown, "start-up stacks without Perl_safesys* frames", "none",
              "; ".join(fmt_frames(s, 20) for s in shown[:3]))
    text = lh_text(ctx, ["report", trace, "--top", "0"])
    ctx.check(re.search(r", at perl start-up, no script frame \[site \d+\]\n(    .*\n)*?"
                        r"    (at|by) perl_construct \(perl start-up, no script frame\)\n",
                        text), "text: a start-up site",
              "at perl start-up, no script frame [site N] ... perl_construct (perl start-up, "
              "no script frame)", text[:1500])
    # the shell's "created at" names the phase without a line number
    largest = lh_text(ctx, ["shell", trace, "--no-index", "-c", "largest 40"])
    ctx.check("perl_construct (perl start-up, no script frame)" in largest and
              "no script frame:" not in largest, "shell: a start-up block's site",
              "perl_construct (perl start-up, no script frame)", largest[:1500])
    native = all_sites(ctx, trace, ["--native"])
    full = [s for s in native if s["location"].get("file") == want["file"]]
    ctx.check(full and all(any(f.get("function") == "_start" for f in s["frames"])
                           for s in full),
              "--native: start-up sites keep the whole native stack", "_start in each",
              "; ".join(fmt_frames(s, 20) for s in full[:2]))


def case_rank(ctx):
    """A daemon whose cache, still reachable, grows by one 3000-character string per request
    (--mark-sub Daemon::handle: 50 marks), beside a 200,000-character string made at
    start-up: the report ranks the growing cache first, in report --growth's order and with
    its figures, then the rest by bytes (issue 10). Hash seed 0: the same hash splits, so
    the same bytes, on every run."""
    env = {"PERL_HASH_SEED": "0", "PERL_PERTURB_KEYS": "0"}
    trace, _ = lh_run(ctx, "rank_cache.pl", [50], extra=["--mark-sub", "Daemon::handle"],
                      env=env)
    doc = lh_json(ctx, ["report", trace, "--top", "3"])
    summ = doc["summary"]
    ctx.check((summ.get("ranked_by"), summ.get("growing_sites"), summ.get("growth_boundaries"),
               summ.get("growth_points")) == (["growth", "bytes"], 1, "marks", 50),
              "ranked by growth, then bytes: 1 site grows over 50 marks",
              (["growth", "bytes"], 1, "marks", 50),
              (summ.get("ranked_by"), summ.get("growing_sites"), summ.get("growth_boundaries"),
               summ.get("growth_points")))
    entry, config = marker("rank_cache.pl", "entry"), marker("rank_cache.pl", "config")
    keys = ("growth_bytes_per_mark", "grew_intervals", "intervals", "first_bytes",
            "last_bytes", "last_blocks", "trend")
    # (the line's 7 blocks of compiling it hold the script's path: their bytes depend on
    # where the checkout is, and only their count is checked)
    got = [(s["location"].get("line"), s["leaked_bytes"] if s["leaked_blocks"] != 7 else "-",
            s["leaked_blocks"], s["rank"],
            s.get("growth") and {k: s["growth"].get(k) for k in keys}) for s in doc["sites"]]
    grows = {"growth_bytes_per_mark": 3050.557215, "grew_intervals": 49, "intervals": 49,
             "first_bytes": 0, "last_bytes": 149434, "last_blocks": 101, "trend": "growing"}
    want = [(entry[1], 152985, 103, "reachable", grows),
            (config[1], "-", 7, "reachable", None), (config[1], 200008, 1, "reachable", None)]
    ctx.check(got == want, "the growing cache first, then the start-up string by bytes", want,
              got)
    g = lh_json(ctx, ["report", trace, "--growth", "--top", "1"])["sites"]
    ctx.check(g and doc["sites"] and g[0]["stack_id"] == doc["sites"][0]["stack_id"] and
              {k: g[0].get(k) for k in keys} == grows, "report --growth: the same site first, "
              "the same figures", grows, g[:1] and {k: g[0].get(k) for k in keys})
    text = lh_text(ctx, ["report", trace, "--top", "3"])
    line = ("Top 3 of %d sites: the 1 growing first, by bytes per mark (report --growth), then "
            "by leaked bytes:" % summ.get("leak_sites"))
    ctx.check(line in text.splitlines(), "text: the order said", line, text[:1500])


CASES = {
    "rank": case_rank,
    "startup": case_startup, "cache": case_cache, "paths": case_paths, "native": case_native, "concat": case_concat,
    "closure": case_closure, "mark_sub": case_mark_sub, "module": case_module,
    "frees": case_frees, "xs": case_xs, "views": case_views, "realperl": case_realperl,
    "badversion": case_badversion, "forks": case_forks, "embed": case_embed,
    "alternate": case_alternate, "objects": case_objects,
}


class Skip(Exception):
    """A case whose prerequisite is missing (exit 77)."""


def main(cases=None, name="perl"):
    """Runs one case of cases (this file's CASES by default); tests/perl/run_field.py runs
    its own through here."""
    cases = cases or CASES
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--case", required=True, choices=sorted(cases))
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    if not shutil.which("perl"):
        print("skipped: no perl")
        return 77
    work = tempfile.mkdtemp(prefix="lh_%s_" % name)
    ctx = Ctx(a.build, os.path.abspath(a.lib), work, a.v)
    try:
        cases[a.case](ctx)
    except Skip as e:
        print("skipped: %s" % e)
        shutil.rmtree(work, ignore_errors=True)
        return 77
    except Failure as e:
        ctx.fails.append(str(e))
    except subprocess.TimeoutExpired as e:
        ctx.fails.append("timed out: %s" % e)
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print("kept %s" % work)
    if ctx.fails:
        print("FAIL %s.%s:\n  " % (name, a.case) + "\n  ".join(ctx.fails))
        return 1
    print("ok %s.%s" % (name, a.case))
    return 0


if __name__ == "__main__":
    sys.exit(main())
