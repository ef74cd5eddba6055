#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""Perl programs as people run them (servers stopped with Ctrl-C, one SIGUSR2 taken by
hand, caches, closures, XS), each with the answer a Perl developer must get without
reading perl's C internals. Programs are in field/; lines come from `# @name` markers.

Usage:
  run_field.py --build DIR --lib DIR --case NAME [--keep] [-v]
Exit status: 0 pass, 1 fail, 2 usage error, 77 skipped.
"""

import os
import re
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_perl  # noqa: E402  (the runner, markers)
from run_perl import Failure, Skip, lh_json, run  # noqa: E402

FIELD = os.path.join(HERE, "field")

# The frame perl's arena allocators become (analysis/scriptstack.h).
ARENA = "perl SV arena (room for new SVs, shared by all code)"
ARENA_C = ("Perl_more_bodies", "Perl_more_sv", "S_more_sv", "S_more_he")


def marker(prog, name):
    return run_perl.marker_path(os.path.join(FIELD, prog), name)


def lh_field_run(ctx, prog, env=None, name="trace.lht", ok_status=(0,)):
    trace = os.path.join(ctx.workdir, name)
    argv = [ctx.lh, "run", "-o", trace, "--", "perl", os.path.join(FIELD, prog)]
    res = run(ctx, argv, env=env)
    if res.returncode not in ok_status:
        raise Failure("`%s` exited %d\n    stderr: %s" % (" ".join(argv), res.returncode,
                                                       res.stderr.strip()[-1500:]))
    return trace


def need_module(ctx, module, package):
    """Skips the case when perl cannot load module (Debian package)."""
    if run(ctx, ["perl", "-M" + module, "-e", "1"]).returncode != 0:
        raise Skip("%s is not installed (Debian %s)" % (module, package))


def where(f):
    return "%s (%s:%s)" % (f.get("function"), os.path.basename(f.get("file") or "?"),
                           f.get("line"))


def case_stopped(ctx):
    """A server checked with one SIGUSR2 and stopped with Ctrl-C: `report --growth` must
    answer from the slices (it refused: "the trace has 1 snapshot: growth needs at least
    2"), and rank the leaking line first; perl's arena slabs are the arena, not the line
    that happened to take them."""
    prog = "stopped_server.pl"
    snap = os.path.join(ctx.workdir, "trace.snap1.lhs")
    trace = lh_field_run(ctx, prog, env={"LH_WAIT_FOR": snap}, ok_status=(130,))
    ctx.check(os.path.exists(snap), "the one SIGUSR2 snapshot was taken", snap, "missing")
    g = lh_json(ctx, ["report", trace, "--growth"])
    ctx.check(g["summary"]["boundaries"] == "slices" and g["summary"]["points"] == 21,
              "one running snapshot: growth over the 21 slices", "slices, 21",
              "%s, %s" % (g["summary"]["boundaries"], g["summary"]["points"]))
    body = marker(prog, "body")
    # Ctrl-C ends the trace as exit does (an exit snapshot): leaks answers from the one
    # SIGUSR2 to it, the body line first
    lk = lh_json(ctx, ["leaks", trace])
    top = lk["sites"][0]["location"] if lk["sites"] else {}
    ctx.check((lk["summary"]["boundaries"], lk["summary"]["intervals"]) == ("snapshots", 1) and
              (top.get("function"), top.get("line")) == ("Shop::Handler::new", body[1]),
              "leaks: from signal-1 to the exit snapshot Ctrl-C took, the body line first",
              "snapshots, 1 interval, Shop::Handler::new:%d" % body[1],
              "%s, %s, %s" % (lk["summary"]["boundaries"], lk["summary"]["intervals"],
                              where(top)))
    cycle = marker(prog, "cycle")
    top = g["sites"][0]["location"] if g["sites"] else {}
    ctx.check((top.get("function"), top.get("file"), top.get("line")) ==
              ("Shop::Handler::new", body[0], body[1]),
              "the top growing site is the leaked body line", "Shop::Handler::new at %s:%d"
              % body, where(top))
    growing = [(s["location"].get("function"), s["location"].get("line"))
               for s in g["sites"] if s["growing"]]
    ctx.check(("Shop::Handler::new", cycle[1]) in growing, "the closure line grows too",
              "Shop::Handler::new:%d among %s" % (cycle[1], growing), growing)
    # Every site that perl's arena allocators made is located at the arena, and no other.
    native = {s["stack_id"]: s for s in lh_json(ctx, ["report", trace, "--native", "--top",
                                                       "1000000"])["sites"]}
    plain = lh_json(ctx, ["report", trace, "--top", "1000000"])["sites"]
    n_arena, wrong = 0, []
    for s in plain:
        if not any(f.get("language") == "perl" for f in s["frames"]):
            continue  # perl starting up: located at its phase (perl_construct)
        nat = native.get(s["stack_id"], {}).get("frames", [])
        in_arena = any(f.get("function") in ARENA_C for f in nat)
        loc = s.get("location") or {}
        at_arena = loc.get("function") == ARENA
        n_arena += at_arena
        if in_arena != at_arena:
            wrong.append("site %d at %s, arena allocator on its stack: %s" %
                         (s["stack_id"], where(loc), in_arena))
    ctx.check(not wrong, "a site of Perl code is at the arena iff an arena allocator made it",
              "none otherwise", "; ".join(wrong[:4]))
    ctx.check(n_arena > 0, "arena sites exist (the leaked SVs filled slabs)", "> 0", n_arena)
    for s in g["sites"][:6]:
        loc = s["location"]
        if loc.get("function") == ARENA:
            frames = s["frames"]
            ctx.check(len(frames) > 1 and frames[1].get("language") == "perl",
                      "an arena site keeps the Perl line that took the slab under it",
                      "arena <- Perl frame", " <- ".join(where(f) for f in frames[:3]))
            break


MODULES = ("Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel")


def case_modules(ctx):
    """Eight modules of one shape, each keeping a big string in `our $DATA` from its
    top-level code: perl frees each file's top-level optree once it ran, and the next file's
    COP takes the same slot with the same line. Every string must be at its own file (one
    was shown at the module loaded before it: Delta's at Charlie.pm:5)."""
    lib = os.path.join(ctx.workdir, "lib")
    os.mkdir(lib)
    for m in MODULES:
        with open(os.path.join(lib, m + ".pm"), "w") as f:
            f.write("package %s;\nuse strict;\nmy $bits = 0;\n$bits |= $_ for 1 .. 3;\n"
                    "our $DATA = \"%s\" x 20000;    # line 5\n1;\n" % (m, m))
    main = os.path.join(ctx.workdir, "main.pl")
    with open(main, "w") as f:
        f.write("use lib '%s';\n" % lib)
        f.write("".join("require %s;\n" % m for m in MODULES))
    trace = os.path.join(ctx.workdir, "trace.lht")
    res = run(ctx, [ctx.lh, "run", "-o", trace, "--", "perl", main])
    if res.returncode != 0:
        raise Failure("leakhound run exited %d: %s" % (res.returncode, res.stderr[-800:]))
    sites = lh_json(ctx, ["report", trace, "--top", "1000000"])["sites"]
    for i, m in enumerate(MODULES):
        got = [s for s in sites if s["leaked_bytes"] >= len(m) * 20000 and
               len(s["frames"]) > 1 and s["frames"][1].get("file") == main and
               s["frames"][1].get("line") == i + 2]
        want = ("(require)", os.path.join(lib, m + ".pm"), 5)
        f = got[0]["frames"][0] if got else {}
        ctx.check(len(got) == 1 and (f.get("function"), f.get("file"), f.get("line")) == want,
                  "$%s::DATA (required at main.pl:%d) is at its own file" % (m, i + 2),
                  "%s (%s:%d)" % (want[0], os.path.basename(want[1]), want[2]),
                  where(f) if got else "no such site")
    # report --by function: each file's top-level code is a function of its own (every
    # file's "(require)" was one row, named after one of the files)
    fs = lh_json(ctx, ["report", trace, "--by", "function", "--top", "1000000"])["functions"]
    for m in MODULES:
        path = os.path.join(lib, m + ".pm")
        got = [f.get("exclusive", {}).get("leaked", 0) for f in fs
               if f.get("function") == "(require)" and f.get("file") == path]
        ctx.check(len(got) == 1 and got[0] >= len(m) * 20000,
                  "--by function: %s.pm's (require) is its own row with its string" % m,
                  "one row, >= %d B" % (len(m) * 20000), got)


def shell(ctx, trace, cmds):
    res = run(ctx, [ctx.lh, "shell", trace, "-c", cmds])
    if res.returncode != 0:
        raise Failure("shell -c '%s' exited %d: %s" % (cmds, res.returncode, res.stderr[-800:]))
    return res.stdout


def type_rows(out):
    """{type: (count, [row numbers])} of a count or unreachable listing, counts summed."""
    rows = {}
    for line in out.splitlines():
        m = re.match(r"^\s*(\d+)\s+(\d+)\s+\S+ \S+\s+(\S+)", line)
        if m:
            n, rs = rows.get(m.group(3), (0, []))
            rows[m.group(3)] = (n + int(m.group(2)), rs + [int(m.group(1))])
    return rows


def case_cycles(ctx):
    """Closure and parent/child cycles left at exit (conn_cycle.pl): the exit snapshot holds
    every object (Devel::MAT at END: 200 Shop::Node, 50 Shop::Conn, all unreachable; the
    snapshot had been taken inside perl's sv_clean_objs, one object already half freed),
    and `identify` shows the cycle to break, not just the object that "holds" it."""
    prog = "conn_cycle.pl"
    trace = lh_field_run(ctx, prog)
    count = type_rows(shell(ctx, trace, "count --by type"))
    lost = type_rows(shell(ctx, trace, "unreachable"))
    for cls, n in (("Shop::Node", 200), ("Shop::Conn", 50)):
        ctx.check(count.get(cls, (0,))[0] == n, "count: every %s" % cls, n,
                  count.get(cls, (0,))[0])
        ctx.check(lost.get(cls, (0,))[0] == n, "unreachable: every %s" % cls, n,
                  lost.get(cls, (0,))[0])
        # one row per type and line, not one per native path to it
        ctx.check(len(lost.get(cls, (0, []))[1]) == 1, "unreachable: %s in one row" % cls,
                  1, lost.get(cls, (0, []))[1])
    # count --by site: one row per site, its objects summed (Shop::Node's 200 objects at
    # line 23 were two rows, 150 and 50). Only the program's own lines: two files of one
    # base name (List/Util.pm and Scalar/Util.pm at one line) print alike and stay apart
    by_site = shell(ctx, trace, "count --by site")
    labels = [m.group(2) for m in re.finditer(r"^\s*\d+\s+(\d+)\s+\S+ \S+  (.*)$", by_site, re.M)]
    own = [lb for lb in labels if "(conn_cycle.pl:" in lb]
    dup = sorted({lb for lb in own if own.count(lb) > 1})
    ctx.check(own and not dup, "count --by site: each of the program's sites once",
              "no repeated label", dup)
    got = [int(m.group(1)) for m in re.finditer(r"^\s*\d+\s+(\d+)\s+\S+ \S+  (.*)$",
                                                by_site, re.M)
           if m.group(2).startswith("Shop::Node::new (conn_cycle.pl:")]
    ctx.check(got and max(got) == 200, "count --by site: the 200 Shop::Node hashes in one row",
              200, got)
    # The block view names perl's SV arena once ("perl SV arena (...), perl SV arena
    # (...) ()" was printed for a block of it); its rows are the report's sites, by id
    blocks = shell(ctx, trace, "native on; count --by site")
    arena = [int(m.group(1))
             for m in re.finditer(r"^\s*(\d+)\s+\d+\s+\S+ \S+  (.*) \[site \d+\]$", blocks, re.M)
             if m.group(2) == ARENA]
    ctx.check(bool(arena), "native count --by site: the arena's label is its name", ARENA,
              blocks[:600])
    if arena:
        out = shell(ctx, trace, "native on; count --by site; show @%d" % arena[0])
        out = out[out.find("\nblock 0x"):]
        pat = r"-> inside 0x[0-9a-f]+ \(\+0x[0-9a-f]+\): \S+ \S+ %s$" % re.escape(ARENA)
        ctx.check(re.search(pat, out, re.M) is not None and ARENA + " ()" not in out and
                  ARENA + ", " not in out, "show: a word into the arena names it once", pat,
                  out[:1200])
    if "Shop::Conn" in lost:
        out = shell(ctx, trace, "unreachable; identify @%d" % lost["Shop::Conn"][1][0])
        want = ('  the cycle: Shop::Conn -> {"on_close"} -> ARRAY -> [0] -> CODE -> '
                'closure $self -> Shop::Conn')
        ctx.check(want in out.splitlines(), "identify: the closure cycle", want,
                  out[out.find("Shop::Conn 0x"):][:600])
    if "Shop::Node" in lost:
        out = shell(ctx, trace, "unreachable; identify @%d" % lost["Shop::Node"][1][0])
        pat = (r'^  the cycle: Shop::Node -> (\{"owner"\} -> Shop::Node -> \{"kids"\} -> '
               r'ARRAY -> \[\d\] -> Shop::Node|\{"kids"\} -> ARRAY -> \[\d\] -> Shop::Node '
               r'-> \{"owner"\} -> Shop::Node)$')
        ctx.check(re.search(pat, out, re.M) is not None,
                  "identify: the strong {owner} copy, not the weakened {parent}", pat,
                  out[out.find("Shop::Node 0x"):][:600])


def case_dbi(ctx):
    """DBI + DBD::SQLite, a statement handle cached per query text (orders.pl): the report
    keeps SQLite's C frames under the Perl line that prepared, and the shell says what
    holds the growth: the handle in `my $dbh`, its tied inner hash, CachedKids (it said
    "[held outside Perl data]": the 1000 statement handles hold their parent from C)."""
    need_module(ctx, "DBD::SQLite", "libdbd-sqlite3-perl")
    prog = "orders.pl"
    trace = lh_field_run(ctx, prog)
    prep = marker(prog, "prepare")
    sites = lh_json(ctx, ["report", trace, "--top", "1"])["sites"]
    fr = sites[0]["frames"] if sites else []
    names = [f.get("function") for f in fr]
    at = [i for i, f in enumerate(fr) if (f.get("function"), f.get("file"), f.get("line")) ==
          ("Shop::Orders::total_for", prep[0], prep[1])]
    ctx.check(bool(at) and "sqlite3_prepare_v2" in names[:at[0]],
              "the top site: SQLite's prepare under the Perl line that prepared",
              "sqlite3_prepare_v2 ... Shop::Orders::total_for (orders.pl:%d)" % prep[1],
              " <- ".join(where(f) for f in fr[:20]))
    ctx.check(not any((n or "").startswith(("Perl_", "pp_", "S_")) for n in names),
              "no perl internals on the stack", "no Perl_*, pp_*, S_*", names)
    out = shell(ctx, trace, "largest 3 --retained")
    want = ("&Shop::Orders::db -> my $dbh -> DBI::db -> magic 'P' -> DBI::db -> "
            "{\"CachedKids\"} -> HASH")
    ctx.check(any(want in line and " HASH " in line for line in out.splitlines()),
              "largest --retained: CachedKids under my $dbh", want, out)


def case_callers(ctx):
    """`report --by function` names a Perl sub after its own file, not the file of the line
    that called it (callers.pl: ShopApp::handler was listed in callers.pl, the call site
    its first allocation was recorded at)."""
    trace = lh_field_run(ctx, "callers.pl")
    seen = run_perl.marker_path(os.path.join(FIELD, "lib", "ShopApp.pm"), "seen")
    # every function: each file's top-level code is a row of its own, more than the top 20
    fs = lh_json(ctx, ["report", trace, "--by", "function", "--top", "1000000"])["functions"]
    got = [(f.get("file"), f.get("exclusive", {}).get("allocations")) for f in fs
           if f.get("function") == "ShopApp::handler"]
    ctx.check(len(got) == 1 and got[0][0] == seen[0], "ShopApp::handler's file",
              seen[0], got)


def case_routecache(ctx):
    """`count --by site; identify @N`: the object a row names is one held where most of the
    row is (route_cache.pl: 400 pages in %Shop::Cache::RENDERED, 3 rendered ahead by the
    same line into %Shop::Pages::WARM; identify answered %Shop::Pages::WARM{"1"}, the first
    by address, as Mojolicious's route handler's pad was for a Mojolicious::Lite app)."""
    prog = "route_cache.pl"
    trace = lh_field_run(ctx, prog)
    body = marker(prog, "body")
    label = "Shop::Pages::render (%s:%d)" % (os.path.basename(body[0]), body[1])
    out = shell(ctx, trace, "count --by site")
    rows = [(int(m.group(1)), int(m.group(2))) for m in
            re.finditer(r"^\s*(\d+)\s+(\d+)\s+\S+ \S+  (.*)$", out, re.M)
            if m.group(3) == label]
    ctx.check(len(rows) == 1 and rows[0][1] >= 403, "count --by site: the pages in one row",
              "%s: 403 strings or more" % label, rows)
    if len(rows) != 1:
        return
    out = shell(ctx, trace, "count --by site; identify @%d" % rows[0][0])
    out = out[out.find("\nSCALAR(PV) 0x") + 1:]
    head = r"^SCALAR\(PV\) 0x[0-9a-f]+, \d+ B, retained \d+ B, created at %s$" % re.escape(label)
    path = r'^  %Shop::Cache::RENDERED\{"/item-\d+"\} -> HASH -> \{"body"\} -> SCALAR\(PV\)$'
    ctx.check(re.search(head, out, re.M) is not None and re.search(path, out, re.M) is not None,
              "identify @N: a page held by the cache, as 400 of them are", path, out[:600])
    out = shell(ctx, trace, "roots 1")
    ctx.check(re.search(r"^\s+1\s+\S+ \S+\s+\S+ \S+  %Shop::Cache::RENDERED \(HASH\)$", out,
                        re.M) is not None, "roots: the cache first",
              "%Shop::Cache::RENDERED (HASH)", out)


def case_xscopies(ctx):
    """A stripped XS module's frames under the Perl line that called it (xs_copies.pl:
    Storable's dclone kept in @KEEP): its static functions named "<static 0x14ca0>"
    (their start; after the nearest exported function when there is one, nearsym.h) in the
    module's path under auto/ (Storable/Storable.so), as JSON::XS's are JSON/XS/XS.so (were
    "XS.so+0x420e": which of the XS.so?), with no perl internals."""
    prog = "xs_copies.pl"
    trace = lh_field_run(ctx, prog)
    at = marker(prog, "dclone")
    res = run(ctx, [ctx.lh, "report", trace, "--top", "1"])
    first = re.search(r"^#1: .* at (?:\S*/)?%s:%d \[site \d+\]\n((?:    .*\n)+)" %
                      (re.escape(os.path.basename(at[0])), at[1]), res.stdout, re.M)
    frames = first.group(1).splitlines() if first else []
    # (Storable.so is stripped: its static functions are named by their start in the call
    # frame information and the exported function before them, nearsym.h)
    static = r"<static 0x[0-9a-f]+(?: after \S+)?> \(in Storable/Storable\.so\)"
    ctx.check(bool(frames) and re.match(r"^    at %s$" % static, frames[0]) is not None,
              "the top site: Storable's frame named by its module",
              "at <static 0x... after ...> (in Storable/Storable.so)",
              frames[:3] or res.stdout[:800])
    ctx.check(("    by main (%s:%d)" % (at[0], at[1])) in frames,
              "under the Perl line that called it", "by main (xs_copies.pl:%d)" % at[1],
              frames[-3:])
    ctx.check(not any(re.match(r"^    (at|by) (Perl_|pp_|S_)", f) for f in frames),
              "no perl internals on the stack", "no Perl_*, pp_*, S_*", frames)
    res = run(ctx, [ctx.lh, "tree", trace, "--min-percent", "20"])
    ctx.check(re.search(r"<static 0x[0-9a-f]+(?: after \S+)?>  \(in Storable/Storable\.so\)$",
                        res.stdout, re.M) is not None, "tree: the module's name",
              "<static 0x...>  (in Storable/Storable.so)", res.stdout[:1200])


def case_diffrows(ctx):
    """`diff A B` then `identify @N`: what holds the objects that grew (audit_hook.pl: a
    before-hook keeping a record per request in @Shop::Web::AUDIT, one SIGUSR2 after 100
    requests, 250 at the end; identify said "@2: no listing yet" after a diff). The row's
    object is one made after A: an AUDIT record of request 101 or later."""
    prog = "audit_hook.pl"
    snap = os.path.join(ctx.workdir, "trace.snap1.lhs")
    trace = lh_field_run(ctx, prog, env={"LH_WAIT_FOR": snap})
    hook = marker(prog, "hook")
    out = shell(ctx, trace, "diff signal-1 exit")
    row = re.search(r"^\s*(\d+)\s+150\s+\d+\s+\d+ -> \d+\s+HASH$", out, re.M)
    ctx.check(row is not None, "diff: 150 more HASHes, a numbered row", "@N 150 ... HASH", out)
    if not row:
        return
    out = shell(ctx, trace, "diff signal-1 exit; identify @%s" % row.group(1))
    head = r"^HASH 0x[0-9a-f]+, \d+ B, retained \d+ B, created at Shop::Web::__ANON__ \(%s:%d\)$" % (
        re.escape(os.path.basename(hook[0])), hook[1])
    path = re.search(r"^  @Shop::Web::AUDIT\[(\d+)\] -> HASH$", out, re.M)
    ctx.check(re.search(head, out, re.M) is not None and path is not None and
              int(path.group(1)) >= 100, "identify @N: a record kept since signal-1",
              "@Shop::Web::AUDIT[>= 100] -> HASH, created at the hook's line",
              out[out.find("\nHASH 0x") + 1:][:600])
    out = shell(ctx, trace, "use signal-1; diff signal-1 exit")
    ctx.check("(`use 2`, then diff again, to identify @N a new object of a row)" in out,
              "diff from the earlier snapshot: how to get numbered rows", "use 2", out[-400:])


def case_asyncloop(ctx):
    """An IO::Async loop in a file-scoped `my $loop` holding 300 session timers
    (async_sessions.pl): IO::Async::Loop->new keeps it in $IO::Async::Loop::ONE_TRUE_LOOP
    too, so neither variable alone retains it and `roots` credited its 300 sessions to no
    one (%Exporter::Cache was first), and `identify` showed one of the two holders. Devel::MAT,
    dumping at the same SIGUSR2, names both holders."""
    need_module(ctx, "IO::Async::Loop", "libio-async-perl")
    prog = "async_sessions.pl"
    # LeakHound::snapshot, not a SIGUSR2: a signal snapshot (taken by the agent's ticker
    # thread while the program runs on) lacked the hashes' arrays in 1 run of 5
    trace = lh_field_run(ctx, prog, env={"PERL5LIB": ctx.lib + ":" + ctx.perl5})
    out = shell(ctx, trace, "use loaded; roots 2")
    row = re.search(r"^\s+1\s+(\S+ \S+)\s+\S+ \S+  (IO::Async::Loop::\w+) held by (.*)$", out,
                    re.M)
    want = "my $loop in main and $IO::Async::Loop::ONE_TRUE_LOOP"
    ctx.check(row is not None and row.group(3) == want,
              "roots: the loop first, held by both variables", want, out)
    cls = row.group(2) if row else "IO::Async::Loop::Poll"
    if row:
        size, unit = row.group(1).split()
        kib = float(size) * {"B": 1 / 1024, "KiB": 1, "MiB": 1024}.get(unit, 0)
        ctx.check(kib >= 300 * 2000 / 1024, "roots: the loop retains the 300 sessions' carts",
                  ">= %d KiB" % (300 * 2000 // 1024), row.group(1))
    count = type_rows(shell(ctx, trace, "use loaded; count --by type"))
    ctx.check(count.get("Shop::Session", (0,))[0] == 300, "count: every session", 300,
              count.get("Shop::Session", (0,))[0])
    if "Shop::Session" in count:
        out = shell(ctx, trace, "use loaded; count --by type; identify @%d" %
                    count["Shop::Session"][1][0])
        out = out[out.find("\nShop::Session 0x") + 1:]
        tail = (r' -> %s -> \{"notifiers"\} -> HASH -> \{"\d+"\} -> '
                r'IO::Async::Timer::Countdown -> \{"on_expire"\} -> CODE -> closure \$session '
                r'-> Shop::Session$' % re.escape(cls))
        lines = out.splitlines()[1:3]
        pats = [r"^  my \$loop in main" + tail, r"^  \$IO::Async::Loop::ONE_TRUE_LOOP" + tail]
        ctx.check(len(lines) == 2 and all(re.match(p, ln) for p, ln in zip(pats, lines)),
                  "identify: a session, through each of the loop's two holders", pats, lines)
    # The oracle: Devel::MAT at the same point (its dump answers FieldSnap's wait)
    if run(ctx, ["perl", "-MDevel::MAT", "-e", "1"]).returncode != 0:
        return  # (the checks above stand without the oracle)
    pmat = os.path.join(ctx.workdir, "at-usr2.pmat")
    res = run(ctx, ["perl", "-MDevel::MAT::Dumper=-dump_at_SIGUSR2,-file," + pmat,
                    os.path.join(FIELD, prog)], env={"LH_WAIT_FOR": pmat})
    # (the Dumper's handler dumps, then lets the signal kill the program)
    ctx.check(res.returncode == -signal.SIGUSR2 and os.path.exists(pmat),
              "Devel::MAT dumped at SIGUSR2",
              pmat, res.stderr[-400:])
    if not os.path.exists(pmat):
        return
    res = run(ctx, ["pmat", pmat, "find", "blessed", "Shop::Session"])
    ctx.check(res.stdout.count("=Shop::Session at 0x") == 300, "Devel::MAT: 300 sessions too",
              300, res.stdout.count("=Shop::Session at 0x"))
    m = re.search(r"=%s at (0x[0-9a-f]+)" % re.escape(cls),
                  run(ctx, ["pmat", pmat, "find", "blessed", cls]).stdout)
    res = run(ctx, ["pmat", pmat, "identify", m.group(1)]) if m else None
    got = res.stdout if res else ""
    ctx.check("the lexical $loop at depth 1 of CODE() at" in got and
              "the glob '*IO::Async::Loop::ONE_TRUE_LOOP" in got,
              "Devel::MAT: the loop held by $loop and by ONE_TRUE_LOOP, as leakhound says",
              "both", got[-600:])


def case_psgicache(ctx):
    """`report --growth` on a PSGI-style app whose response cache is keyed by a new request
    id each time (psgi_cache.pl, --mark-sub Shop::PSGI::call): the script's lines first,
    the rendered body, then the cache line; perl's SV arena slabs (+400 B per request, more
    than the cache line's 65 B) after them, folded into one entry that lists the Perl line
    that took each slab (they were #2, between the two lines to fix)."""
    prog = "psgi_cache.pl"
    trace = os.path.join(ctx.workdir, "trace.lht")
    res = run(ctx, [ctx.lh, "run", "-o", trace, "--mark-sub", "Shop::PSGI::call", "--",
                    "perl", os.path.join(FIELD, prog)])
    if res.returncode != 0:
        raise Failure("leakhound run exited %d: %s" % (res.returncode, res.stderr[-800:]))
    body, cache = marker(prog, "body"), marker(prog, "cache")
    g = lh_json(ctx, ["report", trace, "--growth"])
    growing = [s for s in g["sites"] if s["growing"]]
    locs = [s["location"] for s in growing]
    at = [(l.get("function"), l.get("line")) for l in locs]
    want = [("Shop::App::render", body[1]), ("Shop::Cache::__ANON__", cache[1])]
    ctx.check(at[:2] == want, "growth: the body line, then the cache line", want, at[:4])
    arena = [i for i, l in enumerate(locs) if l.get("function") == ARENA]
    ctx.check(bool(arena) and arena == list(range(len(locs) - len(arena), len(locs))),
              "growth: the arena's sites after every line of the script",
              "the last %d of %d" % (len(arena), len(locs)), arena)
    ctx.check(bool(arena) and len(growing) > 1 and
              max(growing[i]["growth_bytes_per_mark"] for i in arena) >
              growing[1]["growth_bytes_per_mark"],
              "the arena grows faster than the cache line it now follows",
              "> %s" % (growing[1]["growth_bytes_per_mark"] if len(growing) > 1 else "?"),
              [growing[i]["growth_bytes_per_mark"] for i in arena])
    out = run(ctx, [ctx.lh, "report", trace, "--growth"]).stdout
    heads = re.findall(r"^#(\d+) (.*?): ", out, re.M)
    folded = [h for h in heads if h[1] == ARENA]
    ctx.check(len(folded) == 1 and int(folded[0][0]) == len(locs) - len(arena) + 1 and
              heads[-1] == folded[0], "text: the arena one entry, the last",
              "#%d %s" % (len(locs) - len(arena) + 1, ARENA), heads)
    m = re.search(r"^#\d+ %s: \+\S+ \S+ per mark in (\d+) sites?;" % re.escape(ARENA), out, re.M)
    ctx.check(m is not None and int(m.group(1)) == len(arena), "text: the arena's sites summed",
              "in %d sites" % len(arena), out[out.find("perl SV arena"):][:300])
    lines = [ln.strip() for ln in out.splitlines()]
    for i in arena:
        fr = growing[i]["frames"]
        took = ("[site %d] %s (%s:%s)" % (growing[i]["stack_id"], fr[1].get("function"),
                                          fr[1].get("file"), fr[1].get("line"))
                if len(fr) > 1 else "?")
        ctx.check(any(ln.endswith(took) for ln in lines),
                  "text: arena site %d names the line that took its slab" % growing[i]["stack_id"],
                  took, out[out.find("perl SV arena"):][:600])


def case_moogen(ctx):
    """A Moo class's generated constructor (moo_orders.pl): its code is a string eval's, at
    "(eval N):L", a file nobody can open. The report names it by its sub and the line that
    called it: "Shop::Order::new in (eval N):L (called from moo_orders.pl:19 in
    Shop::Orders::place)" (was "(eval 9):53"), and JSON's user_frame is that line."""
    need_module(ctx, "Moo", "libmoo-perl")
    prog = "moo_orders.pl"
    trace = lh_field_run(ctx, prog)
    new = marker(prog, "new")
    sites = lh_json(ctx, ["report", trace, "--top", "1000000"])["sites"]
    gen = [s for s in sites if (s["location"].get("function"), s["location"].get("language")) ==
           ("Shop::Order::new", "perl") and
           re.match(r"^\(eval \d+\)$", s["location"].get("file") or "")]
    big = [s for s in gen if s["leaked_blocks"] >= 500]
    ctx.check(bool(big), "a site in the generated constructor keeps the 500 orders",
              ">= 500 blocks at Shop::Order::new in (eval N)",
              [(where(s["location"]), s["leaked_blocks"]) for s in gen])
    for s in gen:
        uf = s.get("user_frame") or {}
        ctx.check((uf.get("function"), uf.get("file"), uf.get("line")) ==
                  ("Shop::Orders::place", new[0], new[1]),
                  "site %d: user_frame is the line that called new" % s["stack_id"],
                  "Shop::Orders::place at %s:%d" % new, uf)
    if not big:
        return
    s = big[0]
    out = run(ctx, [ctx.lh, "report", trace, "--top", "1000000"]).stdout
    want = ("at Shop::Order::new in %s:%d (called from %s:%d in Shop::Orders::place) "
            "[site %d]" % (s["location"]["file"], s["location"]["line"], new[0], new[1],
                           s["stack_id"]))
    got = [ln for ln in out.splitlines() if "[site %d]" % s["stack_id"] in ln]
    ctx.check(len(got) == 1 and got[0].endswith(want), "text: the sub and its caller's line",
              want, got)
    # the shell's sites too (count --by site, identify's "created at")
    out = shell(ctx, trace, "count --by site")
    label = r"Shop::Order::new \(\(eval \d+\):\d+, called from %s:%d\)" % (
        re.escape(os.path.basename(new[0])), new[1])
    rows = [int(m.group(1)) for m in re.finditer(r"^\s*\d+\s+(\d+)\s+\S+ \S+  %s$" % label,
                                                 out, re.M)]
    ctx.check(len(rows) == 1 and rows[0] >= 500, "count --by site: the constructor's row names "
              "its caller", label + ": >= 500 objects", out[:800])


def case_warnchain(ctx):
    """A server whose every request wraps $SIG{__WARN__} in a closure that calls the one it
    replaced (warn_chain.pl, real HTTP requests): 301 handlers, each holding the one before.
    `roots` named perl's copy "[the interpreter]" (it is PL_warnhook, $SIG{__WARN__});
    `identify` on a request 290 closures down showed 32 hops and then "closure $prev ->
    SCALAR(PV)", a path that does not exist (the hops past 64 were cut); a chain is shown
    folded, "(CODE -> closure $prev) x N", whole."""
    prog = "warn_chain.pl"
    trace = lh_field_run(ctx, prog)
    handler, req = marker(prog, "handler"), marker(prog, "req")
    at = "Shop::Server::tag_warnings (%s:%d)" % (os.path.basename(handler[0]), handler[1])
    out = shell(ctx, trace, "roots 1")
    want = "REF held by %main::SIG and [PL_warnhook ($SIG{__WARN__})]"
    row = re.search(r"^\s+1\s+\S+ \S+\s+\S+ \S+  (.*)$", out, re.M)
    ctx.check(row is not None and row.group(1) == want, "roots: the handler, by both holders",
              want, out)
    # every handler: k closures down the chain, for each k from 0 to 300
    out = shell(ctx, trace, "largest 3000 --retained")
    paths = [m.group(1).strip() for m in re.finditer(
        r"^\s*\d+\s+CODE\s+\S+ \S+\s+\S+ \S+  (.*?)\s*%s$" % re.escape(at), out, re.M)]
    base = '%main::SIG{"__WARN__"}'
    shown = [base + " -> CODE" if k == 0 else
             base + " -> CODE" + " -> closure $prev -> CODE" * k if k < 3 else
             base + " -> (CODE -> closure $prev) x %d -> CODE" % k for k in range(301)]
    ctx.check(sorted(paths, key=lambda p: shown.index(p) if p in shown else -1) == shown,
              "largest: the 301 handlers, each k closures down, the chain folded",
              "%d paths, e.g. %s" % (len(shown), shown[150]),
              "%d paths, not so: %s" % (len(paths), [p for p in paths if p not in shown][:2]))
    # a request's path string: both holders, the chain folded, its request at the end
    out = shell(ctx, trace, "count --by site")
    rows = [int(m.group(1)) for m in re.finditer(
        r"^\s*(\d+)\s+(\d+)\s+\S+ \S+  Shop::Server::parse_request \(%s:%d\)$" %
        (re.escape(os.path.basename(req[0])), req[1]), out, re.M)]
    ctx.check(bool(rows), "count --by site: the request's line", req, out[:600])
    if not rows:
        return
    out = shell(ctx, trace, "count --by site; identify @%d" % rows[0])
    tail = r" -> \(CODE -> closure \$prev\) x (\d+) -> CODE -> closure \$req -> HASH"
    pats = [r"^  " + re.escape(base) + tail, r"^  \[PL_warnhook \(\$SIG\{__WARN__\}\)\] -> REF" +
            tail]
    got = [re.search(p, out, re.M) for p in pats]
    ctx.check(all(got) and got[0].group(1) == got[1].group(1) and
              1 <= int(got[0].group(1)) <= 300, "identify: a request through both holders",
              pats, out[out.find("identify"):][-800:])


def case_evalsubs(ctx):
    """A router compiling a validator per request path with a string eval and keeping each
    (eval_routes.pl): 400 evals at one line, "(eval 1)" to "(eval 400)". Each was a site of
    its own, 400 sites of 2.4 KiB ranked below a qr// cache line of a tenth of their sum;
    they are one site now, at the line that evals, first in the report with all their bytes,
    and one row in the shell's count --by site. `roots` credits %VALIDATORS with the subs'
    op trees."""
    prog = "eval_routes.pl"
    trace = lh_field_run(ctx, prog)
    at = marker(prog, "eval")

    def under_eval(s):
        fr = s["frames"]
        return any(lh_eval(f) for f in fr) and \
            any((f.get("function"), f.get("line")) == ("Shop::Router::validator", at[1])
                for f in fr)

    def lh_eval(f):
        return f.get("language") == "perl" and re.match(r"^\(eval \d+\)$", f.get("file") or "")

    sites = lh_json(ctx, ["report", trace, "--top", "1000000"])["sites"]
    located = [s for s in sites if lh_eval(s["location"]) and under_eval(s)]
    ctx.check(len(located) == 1, "one site in the eval'd code, for the 400 evals", 1,
              [(s["location"].get("file"), s["leaked_bytes"]) for s in located][:5])
    uf = located[0].get("user_frame") or {} if located else {}
    ctx.check(bool(located) and sites[0] is located[0] and
              (uf.get("function"), uf.get("line")) == ("Shop::Router::validator", at[1]),
              "report: the eval'd code first, named by the line that evals",
              "#1, user frame Shop::Router::validator:%d" % at[1],
              [(where(s["location"]), s["leaked_bytes"]) for s in sites[:3]])
    # every byte the evals left: the sum of the native stacks under that line
    native = lh_json(ctx, ["report", trace, "--native", "--top", "1000000"])["sites"]
    want = sum(s["leaked_bytes"] for s in native if under_eval(s))
    got = sum(s["leaked_bytes"] for s in sites if under_eval(s))
    ctx.check(got == want and want > 400 * 2000, "report: the evals' bytes, all of them",
              want, got)
    out = shell(ctx, trace, "count --by site")
    rows = re.findall(r"^\s*\d+\s+(\d+)\s+\S+ \S+  \(eval\) \(\(eval \d+\):1, called from %s:%d\)$"
                      % (re.escape(os.path.basename(at[0])), at[1]), out, re.M)
    ctx.check(len(rows) == 1 and int(rows[0]) >= 400, "count --by site: one row for the evals",
              ">= 400 objects in one row", rows[:5] if rows else out[:600])
    # what %VALIDATORS holds is those subs, their op trees with them: it retained 272.5 KiB
    # of the 967.7 KiB, the ops (in slabs no SV points to the start of) under no object.
    # What it does not hold of the evals' bytes: the patterns of their m{} ops, which a
    # threaded perl keeps in PL_regex_padav (Devel::MAT's "the REGEXP pad AV"): 5% here.
    out = shell(ctx, trace, "roots 1")
    row = re.search(r"^\s+1\s+(\S+) (\S+)\s+\S+ \S+  %Shop::Router::VALIDATORS \(HASH\)$", out,
                    re.M)
    unit = {"B": 1, "KiB": 1024, "MiB": 1024 * 1024}
    kept = float(row.group(1)) * unit.get(row.group(2), 0) if row else 0
    in_eval = located[0]["leaked_bytes"] if located else 0
    ctx.check(row is not None and kept >= 0.9 * in_eval, "roots: %VALIDATORS first, holding "
              "the subs' op trees", ">= 90%% of the site's %d B" % in_eval, out)


def case_compilefiles(ctx):
    """Twenty modules of 300 subs each, compiled by `require` one after the other: what
    perl allocates while compiling a line is at that file and line. The COP of code being
    compiled (PL_compiling) is one address for every file, and its file name's copy is
    freed with each file and made again at the same address for the next: with 16 bits of
    tag beside the address, 4958 of 10966 sites were shown at another module (a Plack
    app: Getopt::Long::GetOptionsFromArray's CV "created at (require) (IO.pm:24)"), and one
    line was up to ten sites."""
    lib = os.path.join(ctx.workdir, "lib")
    os.mkdir(lib)
    n_mods, n_subs = 20, 300
    for i in range(n_mods):
        with open(os.path.join(lib, "M%02d.pm" % i), "w") as f:
            f.write("package Shop::M%02d;\nuse strict;\n" % i)
            f.write("".join("sub f%d { my ($a) = @_; return \"m%d-%d\" . $a }\n" % (n, i, n)
                            for n in range(n_subs)))
            f.write("1;\n")
    main = os.path.join(ctx.workdir, "main.pl")
    with open(main, "w") as f:
        f.write("use lib '%s';\n" % lib)
        f.write("".join("require M%02d;\n" % i for i in range(n_mods)))
    trace = os.path.join(ctx.workdir, "trace.lht")
    res = run(ctx, [ctx.lh, "run", "-o", trace, "--", "perl", main])
    if res.returncode != 0:
        raise Failure("leakhound run exited %d: %s" % (res.returncode, res.stderr[-800:]))
    sites = lh_json(ctx, ["report", trace, "--top", "1000000"])["sites"]
    wrong, lines, per_line = [], {}, {}
    for s in sites:
        fr = s["frames"]
        if (len(fr) < 2 or fr[0].get("function") != "(require)" or fr[1].get("file") != main
                or fr[1].get("line", 0) < 2 or fr[0].get("file") == main):
            continue  # the require being entered is still at its caller's line
        want = os.path.join(lib, "M%02d.pm" % (fr[1]["line"] - 2))
        at = (fr[0].get("file"), fr[0].get("line"))
        if at[0] != want:
            wrong.append("%s:%s required at main.pl:%d" % (os.path.basename(at[0] or "?"),
                                                           at[1], fr[1]["line"]))
        lines.setdefault(at[0], set()).add(at[1])
        per_line[at] = per_line.get(at, 0) + 1
    ctx.check(not wrong, "every compile-time site is at the file being compiled", "none wrong",
              "%d wrong: %s" % (len(wrong), "; ".join(wrong[:4])))
    missing = [i for i in range(n_mods) if not set(range(3, 3 + n_subs)) <=
               lines.get(os.path.join(lib, "M%02d.pm" % i), set())]
    ctx.check(not missing, "each module has a site at each of its %d sub lines" % n_subs,
              "all %d modules" % n_mods, "missing lines in M%s" % missing)
    split = sorted((n, "%s:%s" % (os.path.basename(k[0] or "?"), k[1]))
                   for k, n in per_line.items() if n > 1)
    ctx.check(not split, "one site per compiled line", "none split", split[-4:])


def case_showvalues(ctx):
    """`show` prints what a scalar holds, as Devel::MAT's does (session_tokens.pl): a
    string quoted, escaped, cut at 200 bytes, with its length; UTF-8 text as text; bytes
    escaped; an integer; a number. It printed none (a Perl developer had to read the bytes
    with `elems --native`). From the snapshot's index too (no pages: read for it). And
    `largest`'s "what" column is as wide as its longest: "[PL_strtab (the shared hash
    keys)] -> HASH" ran into "created at"."""
    prog = "session_tokens.pl"
    trace = lh_field_run(ctx, prog)
    raw = 'Welcome "guest"\n\t' + "ab" * 150
    esc = raw[:200].replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") \
        .replace("\t", "\\t")
    want = {
        "$Shop::Session::GREETING": '"%s"... (%d bytes)' % (esc, len(raw)),
        "$Shop::Session::CITY": '"S\u00e3o Paulo \u2603" (14 bytes, UTF-8)',
        "$Shop::Session::RAW": '"\\x00\\x01\\xff" (3 bytes)',
        "$Shop::Session::PORT": "5077",
        "$Shop::Session::RATIO": "0.25",
    }
    roots = shell(ctx, trace, "roots 3000")
    for i, (name, value) in enumerate(sorted(want.items())):
        m = re.search(r"^\s*(\d+)\s+\S+ \S+\s+\S+ \S+  %s \(" % re.escape(name), roots, re.M)
        # the first through the index written by `roots`, one without any index
        out = shell(ctx, trace, "roots 3000; show @%s" % m.group(1)) if m else ""
        if i == 0 and m:
            res = run(ctx, [ctx.lh, "shell", trace, "--no-index", "-c",
                            "roots 3000; show @%s" % m.group(1)])
            ctx.check(res.stdout == out, "show: the same without the index", out, res.stdout)
        got = re.findall(r"^  value: (.*)$", out, re.M)
        ctx.check(got == [value], "show %s: its value" % name, value, got or out[-400:])
    # a value of %TOKENS, through the hash's own listing
    out = shell(ctx, trace, "roots 3000")
    m = re.search(r"^\s*(\d+)\s+\S+ \S+\s+\S+ \S+  %Shop::Session::TOKENS \(HASH\)$", out, re.M)
    listing = shell(ctx, trace, "roots 3000; show @%s" % m.group(1)) if m else ""
    row = re.search(r'^\s*(\d+)  \{"user(\d+)"\}', listing, re.M)
    out = shell(ctx, trace, "roots 3000; show @%s; show @%s" % (m.group(1), row.group(1))) \
        if row else ""
    got = re.findall(r"^  value: (.*)$", out, re.M)
    value = '"tok-%06d" (10 bytes)' % (int(row.group(2)) * 7) if row else "a row"
    ctx.check(got == [value], "show: a value of %TOKENS", value, got or listing[-400:])
    out = shell(ctx, trace, "largest 12").splitlines()
    col = out[0].find("created at") if out else -1
    bad = [l for l in out[1:] if l[col - 2:col] != "  " or l[col:col + 1] in ("", " ")]
    strtab = [l for l in out if "[PL_strtab (the shared hash keys)] -> HASH" in l]
    ctx.check(col > 0 and strtab and not bad, "largest: every row's site under \"created at\"",
              "aligned, with the PL_strtab row", "\n".join(bad[:3] or out[:3]))


def sub_ranges(path):
    """{"Pkg::name": (first line, last line)} of the subs of a field program (`sub NAME`
    up to the next line that is a lone `}`, or the one line when it closes there)."""
    ranges, pkg, cur = {}, "main", None
    with open(path) as f:
        for i, line in enumerate(f, 1):
            m = re.match(r"^package ([\w:]+);", line)
            pkg = m.group(1) if m else pkg
            m = re.match(r"^sub (\w+)", line)
            if m:
                cur = "%s::%s" % (pkg, m.group(1))
                ranges[cur] = (i, i)
                cur = None if line.rstrip().endswith("}") else cur
            elif cur:
                ranges[cur] = (ranges[cur][0], i)
                cur = None if line.rstrip() == "}" else cur
    return ranges


def case_tiedstore(ctx):
    """A tied hash's STORE, called by perl's mg_set for `$AUDIT{...} = ...` (tied_audit.pl):
    what perl allocates entering it (its @_) was shown as "Shop::AuditLog::STORE
    (tied_audit.pl:<the assignment's line>)", a line outside STORE; a sub's frame whose
    first statement has not run is the calling statement's. Every site's innermost frame is
    at a line of its own sub."""
    prog = "tied_audit.pl"
    path = os.path.join(FIELD, prog)
    ranges = sub_ranges(path)
    trace = lh_field_run(ctx, prog)
    sites = lh_json(ctx, ["report", trace, "--top", "1000000"])["sites"]
    outside, at = [], {}
    for s in sites:
        fr = [f for f in s["frames"] if f.get("language") == "perl"]
        if not fr or fr[0].get("file") != path or fr[0].get("function") not in ranges:
            continue
        lo, hi = ranges[fr[0]["function"]]
        if not lo <= fr[0].get("line", 0) <= hi:
            outside.append(where(fr[0]))
        key = (fr[0]["function"], fr[0]["line"])
        at[key] = at.get(key, 0) + s["leaked_bytes"]
    ctx.check(not outside, "every site of a sub is at one of its lines", "none outside",
              outside)
    store, assign = marker(prog, "store"), marker(prog, "assign")
    ctx.check(at.get(("Shop::AuditLog::STORE", store[1]), 0) >= 300 * 70,
              "STORE's push keeps the 300 rows", ">= %d B at line %d" % (300 * 70, store[1]),
              at.get(("Shop::AuditLog::STORE", store[1])))
    ctx.check(("Shop::Handler::handle", assign[1]) in at, "the assignment's own site",
              "Shop::Handler::handle:%d" % assign[1], sorted(at))


def case_evtimers(ctx):
    """AnyEvent timers over EV whose callbacks capture their poller (ev_pollers.pl): EV
    keeps a watcher's callback in its C struct, the EV::Timer object's string buffer, so
    each poller is a cycle through its timer, unreachable at exit (Devel::MAT at END: 200
    Shop::Poller, 200 EV::Timer, every path "found circularly"). The struct's references
    were not read: the callbacks were "[held outside Perl data]" and nothing unreachable."""
    need_module(ctx, "AnyEvent", "libanyevent-perl")
    need_module(ctx, "EV", "libev-perl")
    trace = lh_field_run(ctx, "ev_pollers.pl")
    out = shell(ctx, trace, "unreachable")
    lost = type_rows(out)
    for cls in ("Shop::Poller", "EV::Timer"):
        ctx.check(lost.get(cls, (0,))[0] == 200, "unreachable: every %s" % cls, 200,
                  lost.get(cls, (0,))[0])
    row = lost.get("EV::Timer", (0, []))[1]
    out = shell(ctx, trace, "unreachable; identify @%d" % row[0]) if row else ""
    want = ('EV::Timer -> XS struct -> CODE -> closure $self -> Shop::Poller -> {"timers"} '
            '-> ARRAY -> [0] -> EV::Timer')
    got = re.findall(r"^  the cycle: (.*)$", out, re.M)
    ctx.check(got == [want], "identify: the cycle through the timer's callback", want,
              got or out[-600:])


BASE_KINDS = ("REF", "ARRAY", "HASH", "CODE", "GLOB", "IO", "REGEXP", "FORMAT", "INVLIST",
              "LVALUE", "OBJECT")


def case_countclass(ctx):
    """`count --by class`: the blessed objects per package, as Devel::MAT's `count
    --blessed` lists them (conn_cycle.pl: 200 Shop::Node, 50 Shop::Conn); it was "count:
    cannot group by 'class'", the classes only found among SCALAR(PV), REF and HASH rows
    of `count --by type`."""
    trace = lh_field_run(ctx, "conn_cycle.pl")
    by_type = type_rows(shell(ctx, trace, "count --by type"))
    out = shell(ctx, trace, "count --by class")
    by_class = type_rows(out)
    want = {t: n for t, (n, _) in by_type.items()
            if not t.startswith("SCALAR(") and t not in BASE_KINDS}
    got = {t: n for t, (n, _) in by_class.items()}
    ctx.check(got == want and got.get("Shop::Node") == 200 and got.get("Shop::Conn") == 50,
              "count --by class: every blessed package, its count", want, got)
    total = re.search(r"^total (\d+) blessed of (\d+) perl objects", out, re.M)
    ctx.check(total is not None and int(total.group(1)) == sum(want.values()),
              "count --by class: the total of blessed objects", sum(want.values()),
              total.group(0) if total else out[-300:])
    res = run(ctx, [ctx.lh, "shell", trace, "-c", "native on; count --by class"])
    ctx.check("count --by class: the objects of a perl or python snapshot" in res.stderr,
              "count --by class in the block view: one line saying why", "native off first",
              res.stderr.strip())


def case_libcreated(ctx):
    """Objects a core module creates for the program (handle_pool.pl: IO::Handle->new,
    its glob made in Symbol::gensym): `identify` says where in the library it was made and
    the program's own line that asked for it ("called from handle_pool.pl:N in
    Shop::Pool::checkout"); it said only "created at Symbol::gensym (Symbol.pm:..)". perl's
    SV arena, shared by all code, is named alone (no line "called from")."""
    prog = "handle_pool.pl"
    trace = lh_field_run(ctx, prog)
    rows = type_rows(shell(ctx, trace, "count --by class"))
    n, at = rows.get("IO::Handle", (0, []))
    ctx.check(n == 100, "count --by class: the 100 handles", 100, n)
    out = shell(ctx, trace, "count --by class; identify @%d" % at[0]) if at else ""
    line = marker(prog, "checkout")[1]
    want = ", called from %s:%d in Shop::Pool::checkout" % (prog, line)
    first = next((l for l in out.splitlines() if l.startswith("IO::Handle 0x")), out[-300:])
    alias = shell(ctx, trace, "count --by class; path @%d" % at[0]) if at else ""
    ctx.check(alias == out and bool(out), "path: the same as identify (the brief's word, as "
              "Devel::MAT users say it)", out[-300:], alias[-300:])
    ctx.check(first.startswith("IO::Handle 0x") and "created at Symbol::gensym (Symbol.pm:"
              in first and first.endswith(want), "identify: the library line, then the "
              "program's", "created at Symbol::gensym (Symbol.pm:N)%s" % want, first)
    text = run(ctx, [ctx.lh, "report", trace, "--top", "1000"]).stdout
    heads = [l for l in text.splitlines() if l.startswith("#") and "perl SV arena" in l]
    ctx.check(heads and not any("called from" in l for l in heads),
              "report: the arena's sites say no \"called from\"", "none of %d" % len(heads),
              heads[:2])


CASES = {
    "stopped": case_stopped,
    "modules": case_modules,
    "cycles": case_cycles,
    "dbi": case_dbi,
    "callers": case_callers,
    "routecache": case_routecache,
    "xscopies": case_xscopies,
    "diffrows": case_diffrows,
    "asyncloop": case_asyncloop,
    "psgicache": case_psgicache,
    "moogen": case_moogen,
    "warnchain": case_warnchain,
    "evalsubs": case_evalsubs,
    "compilefiles": case_compilefiles,
    "showvalues": case_showvalues,
    "tiedstore": case_tiedstore,
    "evtimers": case_evtimers,
    "countclass": case_countclass,
    "libcreated": case_libcreated,
}


if __name__ == "__main__":
    sys.exit(run_perl.main(CASES, "perlfield"))
