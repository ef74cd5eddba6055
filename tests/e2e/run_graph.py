#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""End-to-end tests of heap snapshots with contents (issue 5): `leakhound shell` and the
LEAK SUMMARY of `leakhound report`, on progs/graph_handlers.c, graph_thread.c and
graph_registry.cpp. Exact answers: classes, bytes, paths from roots, types; addresses
differ per run, so the scripts find blocks with listings and @N.

Usage:
  run_graph.py --build DIR --case NAME [--keep] [-v]
  run_graph.py --build DIR --all
  run_graph.py --list
Exit status: 0 pass, 1 fail, 2 usage error.
"""

import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_e2e as E  # noqa: E402  (the shared helpers: Ctx, run, lh_run, markers)

Failure = E.Failure


# ---------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------

def record(ctx, prog, env_extra=None, name="trace.lht", args=()):
    trace = os.path.join(ctx.workdir, name)
    if env_extra:
        env = dict(os.environ)
        env.update(env_extra)
        argv = [ctx.lh, "run", "-o", trace, "--", ctx.prog(prog)] + list(args)
        res = E.run(ctx, argv, env=env)
        ctx.check(res.returncode == 0, "leakhound run %s" % prog, 0, res.stderr[-400:])
    else:
        E.lh_run(ctx, [ctx.prog(prog)], out=trace)
    return trace


def shell(ctx, trace, cmds, snapshot=None, expect_status=0):
    """leakhound shell TRACE [SNAPSHOT] -c CMDS: (stdout, stderr)."""
    argv = [ctx.lh, "shell", trace] + ([snapshot] if snapshot else []) + ["-c", cmds]
    res = E.run(ctx, argv)
    if expect_status is not None:
        ctx.check(res.returncode == expect_status, "exit status of shell -c %r" % cmds,
                  expect_status, "%d (stderr: %s)" % (res.returncode, res.stderr[-600:]))
    return res.stdout, res.stderr


def norm(text):
    """Addresses become 0xADDR: they change from run to run."""
    return re.sub(r"0x[0-9a-f]{6,}", "0xADDR", text)


def expect_in(ctx, what, needle, text):
    ctx.check(needle in text, what, repr(needle), text[-1500:])


def expect_line(ctx, what, pattern, text):
    ctx.check(re.search(pattern, text, re.M) is not None, what, "a line matching %r" % pattern,
              text[-1500:])


def site(name):
    fn, line = E.marker(name)
    return "%s:%d" % (fn, line)


def row_of(ctx, listing, needle):
    """The @N row number of the first row containing needle."""
    for ln in listing.splitlines():
        m = re.match(r"\s*(\d+)\s", ln)
        if m and needle in ln:
            return int(m.group(1))
    raise Failure("no row with %r in:\n%s" % (needle, listing))


# ---------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------

def case_summary(ctx):
    """Valgrind's four classes at the exit snapshot of graph_handlers."""
    trace = record(ctx, "graph_handlers")
    out, _ = shell(ctx, trace, "summary")
    expect_in(ctx, "leak summary", "definitely lost: 136 bytes in 4 blocks; indirectly lost: "
              "368 bytes in 13 blocks; possibly lost: 64 bytes in 1 blocks; still reachable: "
              "229496 bytes in 4100 blocks", out)
    expect_in(ctx, "snapshot line", "snapshot 1 of 1: 'exit' (exit)", out)


def case_handlers(ctx):
    """identify names the global and each hop: g_emitter -> emitter -> 32 KiB array ->
    handler; roots ranks g_emitter first with its retained size."""
    trace = record(ctx, "graph_handlers")
    out, _ = shell(ctx, trace, "count --by site; identify @%d" % 1)
    text = norm(out)
    expect_line(ctx, "count: handlers",
                r"^\s+1\s+4096\s+192\.0 KiB\s+handler_new \(%s\) \[site \d+\]$"
                % re.escape(site("handler_new")), out)
    expect_in(ctx, "identify header", "1 shortest path from a root:", out)
    expect_in(ctx, "identify: the root", "g_emitter (graph_handlers.c) [global in "
              "graph_handlers]", out)
    expect_in(ctx, "identify: hop 1", "└─ +0x0 -> 0xADDR: 48 B emitter_new, emitter_new (%s)"
              % site("emitter_new"), text)
    expect_in(ctx, "identify: hop 2", "   └─ +0x0 -> 0xADDR: 32.0 KiB emitter_on, emitter_on "
              "(%s)" % site("emitter_on"), text)
    expect_line(ctx, "identify: hop 3", r"^      └─ \+0x[0-9a-f]+ -> 0xADDR: 48 B handler_new, "
                r"handler_new \(%s\)  <==$" % re.escape(site("handler_new")), text)
    # @N: the rows identify printed (its sources, numbered), not a listing the user never saw
    expect_in(ctx, "identify numbers its sources", "@1 g_emitter (graph_handlers.c)", out)
    out, _ = shell(ctx, trace, "count --by site; identify @1; show @1")
    expect_in(ctx, "show @1 after identify: identify's source", "root g_emitter", out)
    out, _ = shell(ctx, trace, "roots 2; show @1")
    expect_line(ctx, "roots: g_emitter first", r"^\s+1\s+224\.0 KiB\s+1\s+g_emitter "
                r"\(graph_handlers\.c\)$", out)
    # the total line says what the rows do not hold: the other roots, and what is shared
    expect_line(ctx, "roots: the total line adds up", r"^4 roots reach 224\.2 KiB of 224\.7 KiB "
                r"live: the 2 above retain 224\.1 KiB on their own, the other 2 72 B, and 0 B "
                r"is reachable from more than one root$", out)
    expect_in(ctx, "show root", "root g_emitter (graph_handlers.c)", out)
    out, _ = shell(ctx, trace, "largest 2 --retained; show @2")
    expect_line(ctx, "largest --retained", r"^\s+1\s+0x[0-9a-f]+\s+48 B\s+224\.0 KiB\s+reachable"
                r"\s+emitter_new", out)
    expect_in(ctx, "show: retained", "retained: 224.0 KiB (229376 bytes)", out)
    expect_in(ctx, "show: class", "class: reachable", out)
    expect_in(ctx, "show: words", "pointer words: 4096 (the first 8; see elems)", out)
    out, _ = shell(ctx, trace, "largest 1; elems @1 0x10 --count 2")
    expect_in(ctx, "elems", "32.0 KiB, emitter_on): 4096 pointer words", out)
    expect_line(ctx, "elems from +0x10", r"^\s+1\s+\+0x10\s+0x[0-9a-f]+\s+-> 48 B handler_new", out)
    ctx.check(len(re.findall(r"-> 48 B handler_new", out)) == 2, "elems --count 2", 2, out)


def case_overwritten(ctx):
    """Nodes whose last pointer was overwritten: definitely lost; a chain whose head was
    cleared: its head definitely, the rest indirectly."""
    trace = record(ctx, "graph_handlers")
    out, _ = shell(ctx, trace, "unreachable")
    expect_in(ctx, "totals", "definitely lost: 136 bytes in 4 blocks; indirectly lost: 368 "
              "bytes in 13 blocks", out)
    expect_line(ctx, "lone nodes",
                r"^\s+\d+\s+2\s+64 B\s+0\s+0 B\s+lone_new \(%s\) \[site \d+\]$"
                % re.escape(site("lone_new")), out)
    expect_line(ctx, "chain",
                r"^\s+\d+\s+1\s+16 B\s+9\s+144 B\s+chain_new \(%s\) \[site \d+\]$"
                % re.escape(site("chain_new")), out)
    n = row_of(ctx, out, "chain_new")
    out, _ = shell(ctx, trace, "unreachable; identify @%d" % n)
    expect_in(ctx, "identify a lost head", "definitely lost, retains 160 B", out)
    expect_in(ctx, "identify a lost head", "it is where the leak starts", out)


def case_ring(ctx):
    """A ring of reference-counted objects nothing outside reaches: lost as a whole, one
    definitely (the lowest address) and four indirectly."""
    trace = record(ctx, "graph_handlers")
    out, _ = shell(ctx, trace, "unreachable")
    expect_line(ctx, "ring",
                r"^\s+\d+\s+1\s+56 B\s+4\s+224 B\s+obj_new \(%s\) \[site \d+\]$"
                % re.escape(site("obj_new")), out)
    n = row_of(ctx, out, "obj_new")
    out, _ = shell(ctx, trace, "unreachable; show @%d" % n)
    expect_in(ctx, "leader retains the ring", "retained: 280 B (280 bytes)", out)
    expect_in(ctx, "leader class", "class: definitely lost", out)
    out, _ = shell(ctx, trace, "count --by site; elems @%d" % row_of(
        ctx, shell(ctx, trace, "count --by site")[0], "obj_new"))
    expect_in(ctx, "ring member points on", "-> 56 B obj_new", out)


def case_interior(ctx):
    """A block known only through an interior pointer: possibly lost; identify says so."""
    trace = record(ctx, "graph_handlers")
    out, _ = shell(ctx, trace, "count --by site")
    n = row_of(ctx, out, "buffer_new")
    out, _ = shell(ctx, trace, "count --by site; identify @%d" % n)
    expect_in(ctx, "class", "possibly lost", out)
    expect_in(ctx, "identify: interior only", "(only through interior pointers: possibly lost)",
              out)
    expect_in(ctx, "identify: interior hop", "g_cursor (graph_handlers.c)", out)
    expect_line(ctx, "identify: interior hop", r"\+0x0 -> 0x[0-9a-f]+ \(interior pointer to "
                r"\+0x10\): 64 B buffer_new", out)


def case_tag(ctx):
    """A block tagged with lh_tag shows its type."""
    trace = record(ctx, "graph_handlers")
    out, _ = shell(ctx, trace, "count --by type")
    expect_line(ctx, "count --by type", r"^\s+\d+\s+1\s+40 B\s+config_t$", out)
    n = row_of(ctx, out, "config_t")
    out, _ = shell(ctx, trace, "count --by type; show @%d" % n)
    expect_in(ctx, "show type", "type: config_t (tag or vtable)", out)


def count_rows(out, key_re=r"(.*)"):
    """`count` rows: [(blocks, bytes text, key)] in order."""
    rows = []
    for ln in out.splitlines():
        m = re.match(r"^\s*\d+\s+(\d+)\s+(\d+(?:\.\d)? (?:B|KiB|MiB|GiB))\s+" + key_re + "$",
                     ln)
        if m:
            rows.append((int(m.group(1)), m.group(2), m.group(3)))
    return rows


def human(n):
    """lh_text_human_bytes: B below 1 KiB, else one decimal."""
    if n < 1024:
        return "%d B" % n
    for unit in ("KiB", "MiB", "GiB"):
        n /= 1024.0
        if n < 1024 or unit == "GiB":
            return "%.1f %s" % (n, unit)
    return None


def valgrind_summary(ctx, prog):
    """Valgrind's LEAK SUMMARY on the same binary ({class: (bytes, blocks)}), or None when
    Valgrind is not installed."""
    if not shutil.which("valgrind"):
        return None
    res = E.run(ctx, ["valgrind", "--leak-check=summary", "--run-libc-freeres=no",
                      "--run-cxx-freeres=no", ctx.prog(prog)])
    got = {}
    for cls in ("definitely lost", "indirectly lost", "possibly lost", "still reachable"):
        m = re.search(r"%s: ([\d,]+) bytes in ([\d,]+) blocks" % cls, res.stderr)
        got[cls] = (int(m.group(1).replace(",", "")), int(m.group(2).replace(",", ""))) \
            if m else None
    return got


def expect_valgrind(ctx, prog, ls, leaders_by_address=False):
    """The report's leak_summary ls equals Valgrind's LEAK SUMMARY on the same binary
    (when Valgrind is installed). leaders_by_address: the program loses cycles of blocks
    of different sizes, whose "definitely lost" member is the one at the lowest address,
    and Valgrind's allocator lays them out its own way: the definitely and indirectly lost
    blocks are compared, and their bytes together."""
    vg = valgrind_summary(ctx, prog)
    if vg and leaders_by_address:
        lost = ("definitely lost", "indirectly lost")
        mine = [ls.get(c.replace(" ", "_")) or {} for c in lost]
        ctx.check([vg[c][1] if vg[c] else None for c in lost] ==
                  [m.get("blocks") for m in mine], "Valgrind's lost blocks per class",
                  [vg[c] for c in lost], mine)
        ctx.check(sum(vg[c][0] for c in lost if vg[c]) ==
                  sum(m.get("bytes", 0) for m in mine), "Valgrind's lost bytes",
                  [vg[c] for c in lost], mine)
        vg = {c: v for c, v in vg.items() if c not in lost}
    for cls, v in (vg or {}).items():
        mine = ls.get(cls.replace(" ", "_")) or {}
        ctx.check(v == (mine.get("bytes"), mine.get("blocks")), "Valgrind's %s" % cls, v,
                  mine)


def case_cxx_rank(ctx):
    """A C++ session registry (progs/cxx_sessions.cpp): the report lists what may leak
    first, then what the program kept, then the one-time reachable blocks (libstdc++'s
    exception pool, allocated before the agent started, and the stdout buffer), with
    exact figures, the four classes equal to Valgrind's on the same binary; the shell's
    `count --by type` names the pool's block, and `count --by site` has one row per site of
    the report, with its id."""
    trace = record(ctx, "cxx_sessions")
    res = E.run(ctx, [ctx.lh, "report", trace, "--top", "0", "--format", "json"])
    d = json.loads(res.stdout)
    sites = d["sites"]
    E.check_consistency(ctx, d, trace)
    ls = d.get("leak_summary") or {}
    def located(name):
        """The sites the report locates at marker name (the line inside make_shared's
        inlined frames)."""
        return [s for s in sites if E.at_line(s.get("location"), E.marker(name))]

    # Which block of a lost cycle is "definitely" lost is Valgrind's rule: the one at the
    # lowest address. Each session's cycle is its Session (80 B with its control block),
    # its vector's element (16 B) and its handler (88 B); which comes first in memory
    # depends on the holes earlier frees left (the environment's length moves them: one
    # cycle in 20 led by its vector in one checkout, none in another), so the test takes
    # the leaders from the sites' own classes and checks the sums they must make.
    def lost_blocks(marker):
        return sum(((s.get("classification") or {}).get("definitely_lost") or {})
                   .get("blocks", 0) for s in located(marker))
    leaders = {m: lost_blocks(m) for m in ("sess_session", "sess_vector", "sess_handler")}
    ctx.check(sum(leaders.values()) == 20, "one definitely lost block per session cycle",
              20, leaders)
    led = (80 * leaders["sess_session"] + 16 * leaders["sess_vector"] +
           88 * leaders["sess_handler"])
    cycles = 20 * (80 + 88 + 16 + 34)
    want = {"definitely_lost": {"bytes": led + 64 + 72, "blocks": 22},
            "indirectly_lost": {"bytes": cycles - led + 34, "blocks": 61},
            "possibly_lost": {"bytes": 0, "blocks": 0}}
    for k, v in want.items():
        ctx.check(ls.get(k) == v, "leak summary: " + k, v, ls.get(k))
    # the reachable ones: the sites ranked after the leaks hold exactly them
    reach = [s for s in sites if s["rank"] != "leak"]
    ctx.check(ls.get("still_reachable") == {"bytes": sum(s["leaked_bytes"] for s in reach),
                                            "blocks": sum(s["leaked_blocks"] for s in reach)},
              "still reachable == the sites ranked reachable", ls.get("still_reachable"),
              [(s["stack_id"], s["leaked_bytes"]) for s in reach])
    expect_valgrind(ctx, "cxx_sessions", ls, leaders_by_address=True)
    # exact sites, and their rank group
    for name, blocks, nbytes, rank in (("sess_handler", 20, 1760, "leak"),
                                       ("sess_session", 20, 1600, "leak"),
                                       ("sess_vector", 20, 320, "leak"),
                                       ("sess_lost", 1, 64, "leak"),
                                       ("sess_map_node", 20, 1920, "reachable"),
                                       ("sess_map", 1, 48, "reachable_once")):
        got = [(s["leaked_blocks"], s["leaked_bytes"], s["rank"]) for s in located(name)]
        ctx.check(got == [(blocks, nbytes, rank)], "site %s: blocks, bytes, rank" % name,
                  [(blocks, nbytes, rank)], got)
    # a function template named without its return type, as Valgrind and gdb show it
    made = [f.get("function") for s in located("sess_session") for f in s["frames"]
            if "make_shared" in (f.get("function") or "")]
    ctx.check(made == ["std::make_shared<Session>()"], "make_shared's frame, demangled",
              ["std::make_shared<Session>()"], made)
    handlers = located("sess_make_handler")
    ctx.check(sorted((s["rank"], s["leaked_bytes"]) for s in handlers)
              == [("leak", 72), ("reachable_once", 72)],
              "make_handler: two sites on one line, one lost, one kept",
              [("leak", 72), ("reachable_once", 72)],
              [(s["rank"], s["leaked_bytes"]) for s in handlers])
    names = located("sess_name")
    ctx.check(sorted((s["leaked_blocks"], s["leaked_bytes"]) for s in names)
              == [(1, 34), (20, 680)], "session_name: two sites on one line",
              [(1, 34), (20, 680)], [(s["leaked_blocks"], s["leaked_bytes"]) for s in names])
    # C functions by their source names, not their asm labels: glibc calls itself through
    # hidden aliases (__GI__IO_file_doallocate for the stdout buffer's _IO_file_doallocate)
    libc = [f["function"] for s in sites for f in s["frames"]
            if "libc.so" in (f.get("module") or "") and f.get("function")]
    ctx.check(libc and not [f for f in libc if f.startswith("__GI_")],
              "libc's frames named, none by a __GI_ alias", "names without __GI_", libc[:8])
    # libstdc++'s emergency pool: site 0, one-time and reachable, after every leak
    pre = [s for s in sites if s["stack_id"] == 0]
    ctx.check(len(pre) == 1 and pre[0]["rank"] == "reachable_once"
              and pre[0]["classification"]["still_reachable"]["blocks"]
              == pre[0]["leaked_blocks"], "site 0: one-time, still reachable",
              "rank reachable_once, all reachable", pre[:1])
    first_leak = [i for i, s in enumerate(sites) if s["rank"] == "leak"]
    ctx.check(first_leak == list(range(len(first_leak))) and len(first_leak) == 7,
              "the 7 leaking sites come first", list(range(7)), first_leak)
    text = E.run(ctx, [ctx.lh, "report", trace]).stdout
    m = re.search(r"^#1: .* at (\S+) \[site (\d+)\]$", text, re.M)
    ctx.check(m is not None and m.group(1).endswith("cxx_sessions.cpp:%d"
                                                    % E.marker("sess_handler")[1]),
              "text: #1 is the lost handlers", "cxx_sessions.cpp:%d"
              % E.marker("sess_handler")[1], m.group(0) if m else text[-800:])
    expect_in(ctx, "text: the order said", "sites by leaked bytes (lost blocks first):", text)
    pos = [text.find("\n-- still reachable at exit (the program kept them):\n"),
           text.find("\n-- still reachable at exit, allocated once (start-up, buffers):\n")]
    ctx.check(-1 not in pos and pos[0] < pos[1] and text.find("#8:") > pos[0],
              "text: the groups after the leaks, in order", "two separators after #7",
              text[-1500:])
    # the shell: the pool's block has a name, and count --by site is the report's sites
    out, _ = shell(ctx, trace, "count --by type")
    rows = count_rows(out)
    ctx.check(("(before the agent started)" in [r[2] for r in rows]) and
              "?" not in [r[2] for r in rows] and
              [r for r in rows if r[2] == "(before the agent started)"][0][:2]
              == (pre[0]["leaked_blocks"], human(pre[0]["leaked_bytes"])) if pre else False,
              "count --by type: site 0 is (before the agent started)",
              (pre[0]["leaked_blocks"], human(pre[0]["leaked_bytes"])) if pre else None,
              rows)
    out, _ = shell(ctx, trace, "count --by site")
    got = sorted((int(r[2].rsplit("[site ", 1)[1][:-1]), r[0], r[1])
                 for r in count_rows(out, r"(.* \[site \d+\])"))
    ctx.check(got == sorted((s["stack_id"], s["leaked_blocks"], human(s["leaked_bytes"]))
                            for s in sites),
              "count --by site: one row per report site, same figures",
              sorted((s["stack_id"], s["leaked_blocks"], human(s["leaked_bytes"]))
                     for s in sites), got)
    expect_in(ctx, "count --by site: site 0's row", "(before the agent started) [site 0]", out)


def case_slack(ctx):
    """A stale pointer in a chunk's slack (progs/graph_slack.c) does not hold a lost block:
    the 2 KiB buffer is definitely lost, as Valgrind says, and the string reachable."""
    trace = record(ctx, "graph_slack")
    d = json.loads(E.run(ctx, [ctx.lh, "report", trace, "--top", "0", "--format",
                               "json"]).stdout)
    for name, cls in (("slack_buffer", "definitely_lost"), ("slack_name", "still_reachable")):
        got = [s["classification"] for s in d["sites"]
               if E.at_line(s.get("location"), E.marker(name))]
        size = 2048 if name == "slack_buffer" else 17
        ctx.check(len(got) == 1 and got[0] is not None and
                  got[0][cls] == {"bytes": size, "blocks": 1},
                  "%s: %s" % (name, cls), {cls: {"bytes": size, "blocks": 1}}, got)
    ls = d.get("leak_summary") or {}
    ctx.check(ls.get("possibly_lost") == {"bytes": 0, "blocks": 0}, "nothing possibly lost",
              {"bytes": 0, "blocks": 0}, ls.get("possibly_lost"))
    expect_valgrind(ctx, "graph_slack", ls)
    out, _ = shell(ctx, trace, "unreachable")
    expect_line(ctx, "unreachable: the buffer",
                r"^\s+1\s+1\s+2\.0 KiB\s+0\s+0 B\s+main \(%s\) \[site \d+\]$"
                % re.escape(site("slack_buffer")), out)


def case_nosym(ctx):
    """A stripped program without debug information (progs/graph_nosym.c): its one site is
    located at its own call to strdup (<static 0x...> or graph_nosym+0x...), not in libc;
    the report's header says so, and the shell's count --by type / function / site and
    unreachable group its blocks under that location, never "?"."""
    trace = os.path.join(ctx.workdir, "trace.lht")
    # the unwind table: libc's strdup has no frame pointer to walk through
    res = E.run(ctx, [ctx.lh, "run", "-o", trace, "--unwind", "table", "--",
                      ctx.prog("graph_nosym")])
    ctx.check(res.returncode == 0, "leakhound run graph_nosym", 0, res.stderr[-400:])
    d = json.loads(E.run(ctx, [ctx.lh, "report", trace, "--top", "0", "--format",
                               "json"]).stdout)
    mine = [s for s in d["sites"]
            if any("libc.so" in (f.get("module") or "") for f in s["frames"][:1])]
    ctx.check(len(mine) == 1, "one site allocates through libc", 1, len(mine))
    if len(mine) != 1:
        return
    s = mine[0]
    loc = s.get("location") or {}
    ctx.check(os.path.basename(loc.get("module") or "") == "graph_nosym" and
              not loc.get("file"), "location: the program's frame, no source",
              "module graph_nosym, no file", loc)
    ctx.check((s["leaked_blocks"], s["leaked_bytes"]) == (8, 96), "8 copies of 12 B",
              (8, 96), (s["leaked_blocks"], s["leaked_bytes"]))
    c = s.get("classification") or {}
    ctx.check((c.get("definitely_lost"), c.get("still_reachable")) ==
              ({"bytes": 60, "blocks": 5}, {"bytes": 36, "blocks": 3}),
              "5 lost, 3 kept", "60 B in 5, 36 B in 3", c)
    # named as the symbolizer names a stripped function (<static 0x...>), else by offset
    label = loc.get("function") or "graph_nosym+%s" % loc.get("offset")
    where = re.escape(label) + (r" \(graph_nosym\)" if loc.get("function") else "")
    text = E.run(ctx, [ctx.lh, "report", trace]).stdout
    expect_line(ctx, "text: the header names the location",
                r"^#\d+: 96 B \(96 bytes\) leaked in 8 blocks, 8 allocations, at %s \[site %d\]$"
                % (re.escape(label), s["stack_id"]), text)
    out, _ = shell(ctx, trace, "count --by type; count --by function; count --by site; "
                   "unreachable")
    for what, row in (("count --by type", r"^\s+1\s+8\s+96 B\s+%s$" % re.escape(label)),
                      ("count --by function", r"^\s+1\s+8\s+96 B\s+%s$" % re.escape(label)),
                      ("count --by site", r"^\s+1\s+8\s+96 B\s+%s \[site %d\]$"
                       % (where, s["stack_id"])),
                      ("unreachable", r"^\s+1\s+5\s+60 B\s+0\s+0 B\s+%s \[site %d\]$"
                       % (where, s["stack_id"]))):
        expect_line(ctx, what, row, out)
    ctx.check(out.count(label) == 4 and "strdup" not in out and
              not re.search(r"B  \?$", out, re.M), "every listing names the location",
              "4 rows, none in strdup or ?", out)


def case_registry(ctx):
    """C++ objects typed by their vtables; shared_ptr blocks by the object they hold."""
    trace = record(ctx, "graph_registry")
    out, _ = shell(ctx, trace, "count --by type")
    expect_line(ctx, "Circle", r"^\s+\d+\s+3\s+48 B\s+Circle$", out)
    expect_line(ctx, "Square", r"^\s+\d+\s+3\s+72 B\s+Square$", out)
    expect_line(ctx, "make_shared<Circle>'s block (control block and Circle: 16 + 16 B)",
                r"^\s+\d+\s+1\s+32 B\s+Circle \(std::make_shared\)$", out)
    expect_line(ctx, "shared_ptr<Square>(new Square)'s control block",
                r"^\s+\d+\s+1\s+24 B\s+shared_ptr control block of Square$", out)
    expect_line(ctx, "Triangle", r"^\s+\d+\s+1\s+32 B\s+Triangle$", out)
    n = row_of(ctx, out, "Triangle")
    out, _ = shell(ctx, trace, "count --by type; identify @%d" % n)
    expect_in(ctx, "registry root", "g_registry (graph_registry.cpp) [global in "
              "graph_registry]", out)
    expect_line(ctx, "via the array", r"└─ \+0x0 -> 0x[0-9a-f]+: 128 B registry_add", out)
    expect_line(ctx, "to the Triangle", r"└─ \+0x28 -> 0x[0-9a-f]+: 32 B Triangle, build", out)


def case_thread(ctx):
    """A block held only by a sleeping thread's stack is reachable."""
    trace = record(ctx, "graph_thread")
    out, _ = shell(ctx, trace, "snapshots")
    expect_line(ctx, "snapshots", r"^\s+1\s+waiting\s+api\s", out)
    expect_line(ctx, "default: exit", r"^\*\s+2\s+exit\s+exit\s", out)
    out, _ = shell(ctx, trace, "largest 1; identify @1", snapshot="waiting")
    expect_line(ctx, "the block", r"0x[0-9a-f]+: 97\.7 KiB worker_block, worker_block \(%s\); "
                r"reachable" % re.escape(site("worker_block")), out)
    # The agent names the stacks of threads it knows: "[stack of thread TID 'name']".
    expect_in(ctx, "from a thread's stack", "[stack of thread ", out)
    out, _ = shell(ctx, trace, "use exit; summary", snapshot="waiting")
    expect_in(ctx, "use", "using snapshot 2 'exit'", out)


def case_joined(ctx):
    """Threads joined before exit: the DTV of each, which glibc keeps with the stack it
    caches, is reached from the ended thread's descriptor (possibly lost, as a live
    thread's: the descriptor points inside it), never definitely lost; a block known only
    by an ended thread's __thread variable is."""
    trace = record(ctx, "graph_joined")
    res = E.run(ctx, [ctx.lh, "report", trace, "--top", "0"])
    expect_line(ctx, "text summary", r"leak summary:  definitely lost: 300 bytes in 3 blocks; "
                r"indirectly lost: 0 bytes in 0 blocks; possibly lost: \d+ bytes in 3 blocks; "
                r"still reachable: 600 bytes in 3 blocks", res.stdout)
    d = json.loads(E.run(ctx, [ctx.lh, "report", trace, "--top", "0", "--format",
                               "json"]).stdout)
    # by line: the worker's blocks; the DTV's stack may stop inside the loader (the fp
    # unwinder), so its site is the third one
    rest = list(d["sites"])
    for name, cls in (("joined_tls", "definitely_lost"), ("joined_kept", "still_reachable")):
        where = E.marker(name)
        got = [s for s in rest if E.at_line(E.alloc_frame(s)[1], where)]
        ctx.check(len(got) == 1 and got[0]["classification"][cls]["blocks"] == 3 and
                  sum(v["blocks"] for v in got[0]["classification"].values()) == 3,
                  "classification of %s" % name, "3 %s" % cls,
                  [s["classification"] for s in got])
        rest = [s for s in rest if s not in got]
    ctx.check(len(rest) == 1 and rest[0]["classification"]["possibly_lost"]["blocks"] == 3 and
              sum(v["blocks"] for v in rest[0]["classification"].values()) == 3,
              "classification of the DTVs (joined_start)", "3 possibly_lost",
              [(s["classification"], s["frames"][:3]) for s in rest])


def case_report(ctx):
    """`report` gains the LEAK SUMMARY and a classification per site (JSON too)."""
    trace = record(ctx, "graph_handlers")
    res = E.run(ctx, [ctx.lh, "report", trace, "--top", "0"])
    expect_in(ctx, "text summary", "leak summary:  definitely lost: 136 bytes in 4 blocks; "
              "indirectly lost: 368 bytes in 13 blocks; possibly lost: 64 bytes in 1 blocks; "
              "still reachable: 229496 bytes in 4100 blocks", res.stdout)
    expect_in(ctx, "per site", "kind: 1 definitely lost (56 B), 4 indirectly lost (224 B)",
              res.stdout)
    res = E.run(ctx, [ctx.lh, "report", trace, "--top", "0", "--format", "json"])
    d = json.loads(res.stdout)
    ls = d.get("leak_summary") or {}
    ctx.check(ls.get("definitely_lost") == {"bytes": 136, "blocks": 4}, "json definitely_lost",
              {"bytes": 136, "blocks": 4}, ls)
    ctx.check(ls.get("possibly_lost") == {"bytes": 64, "blocks": 1}, "json possibly_lost",
              {"bytes": 64, "blocks": 1}, ls)
    where = E.marker("obj_new")
    ring = [s for s in d["sites"] if E.at_line(E.alloc_frame(s)[1], where)]
    ctx.check(len(ring) == 1 and ring[0]["classification"]["indirectly_lost"]["blocks"] == 4,
              "json classification of obj_new", 4, ring[:1])
    res = E.run(ctx, [ctx.lh, "report", trace, "--no-graph"])
    ctx.check("leak summary" not in res.stdout, "--no-graph", "no leak summary", res.stdout[:600])


def case_read_ahead(ctx):
    """report reads the exit snapshot's file in a thread while the trace streams (the newest
    <stem>.snapN.lhs beside it, heapgraph.c): the same output, warnings and status as read
    after the pass (LEAKHOUND_READ_THREADS=0), with a newer file that is not the exit
    snapshot's beside it, with the file truncated, and with both renamed."""
    trace = record(ctx, "graph_handlers")
    lhs = trace[:-4] + ".snap1.lhs"
    summary = ("leak summary:  definitely lost: 136 bytes in 4 blocks; indirectly lost: 368 "
               "bytes in 13 blocks; possibly lost: 64 bytes in 1 blocks; still reachable: "
               "229496 bytes in 4100 blocks")

    def both(what, path, needle, where="stdout"):
        outs = []
        for threads in (None, "0"):
            env = dict(os.environ)
            env.pop("LEAKHOUND_READ_THREADS", None)
            if threads:
                env["LEAKHOUND_READ_THREADS"] = threads
            for extra in ([], ["--format", "json"]):
                res = E.run(ctx, [ctx.lh, "report", path, "--top", "0"] + extra, env=env)
                outs.append((res.returncode, res.stdout, res.stderr))
        ctx.check(outs[0] == outs[2] and outs[1] == outs[3], what + ": read ahead or after",
                  outs[2][:1] + (outs[2][2][-300:],), outs[0][:1] + (outs[0][2][-300:],))
        text = outs[0][1] if where == "stdout" else outs[0][2]
        expect_in(ctx, what, needle, text)

    both("plain", trace, summary)
    with open(lhs, "rb") as f:
        data = f.read()
    decoy = trace[:-4] + ".snap9.lhs"
    with open(decoy, "wb") as f:
        f.write(data[:len(data) // 3])
    both("a newer file beside it", trace, summary)
    os.unlink(decoy)
    moved = os.path.join(ctx.workdir, "moved.lht")
    os.rename(trace, moved)
    os.rename(lhs, os.path.join(ctx.workdir, "moved.snap1.lhs"))
    both("renamed", moved, summary)
    with open(os.path.join(ctx.workdir, "moved.snap1.lhs"), "wb") as f:
        f.write(data[:len(data) // 2])
    both("truncated", moved, "moved.snap1.lhs: snapshot file truncated", where="stderr")


def case_stdin(ctx):
    """Commands on standard input give the same output as -c; a failing command does not
    stop the next ones but makes the exit status 1."""
    trace = record(ctx, "graph_handlers")
    cmds = "summary; largest 3\ncount --by site\nshow 0x1; roots 2\n"
    out_c, err_c = shell(ctx, trace, cmds.replace("\n", ";"), expect_status=1)
    p = subprocess.run([ctx.lh, "shell", trace], input=cmds, capture_output=True, text=True,
                       cwd=ctx.workdir, timeout=120)
    ctx.check(p.returncode == 1, "stdin mode exit status", 1, p.returncode)
    ctx.check(p.stdout == out_c, "stdin output == -c output", out_c[:800], p.stdout[:800])
    ctx.check(p.stderr == err_c, "stdin errors == -c errors", err_c, p.stderr)
    expect_in(ctx, "later commands ran", "g_emitter", out_c)


def case_badinput(ctx):
    """Unknown and malformed addresses, unknown commands, bad @N: one-line errors."""
    trace = record(ctx, "graph_handlers")
    _, err = shell(ctx, trace, "show 0x10; show 0xzz; show 42; identify @3; frobnicate; "
                   "largest -1; elems; use nope; help nope; roots 2; identify @7",
                   expect_status=1)
    for needle in ["show: 0x10 is not in a live block of snapshot 1",
                   "show: malformed address '0xzz'", "show: malformed address '42'",
                   "identify: @3: no listing yet", "unknown command 'frobnicate'",
                   "largest: unknown argument '-1'", "elems: which block?",
                   "use: no snapshot 'nope'", "help: unknown command 'nope'",
                   "identify: @7: the last listing has 2 rows"]:
        expect_in(ctx, "error", "error: " + needle, err)
    ctx.check(all(ln.startswith("error: ") for ln in err.splitlines()), "one-line errors",
              "only 'error:' lines", err)


def case_no_contents(ctx):
    """A snapshot without contents: graph commands say what is missing and how to get it;
    live-set commands still work."""
    trace = record(ctx, "graph_handlers", {"LEAKHOUND_SNAPSHOT_CONTENTS": "none"})
    out, err = shell(ctx, trace, "summary; count --by site; identify 0x1; roots",
                     expect_status=1)
    expect_in(ctx, "summary", "graph: none:", out)
    expect_in(ctx, "count works", "handler_new", out)
    expect_in(ctx, "identify", "error: identify: snapshot 1 'exit' has no contents; run with "
              "--snapshot-contents pointers", err)
    expect_in(ctx, "roots", "error: roots: snapshot 1 'exit' has no contents", err)
    res = E.run(ctx, [ctx.lh, "report", trace])
    ctx.check(res.returncode == 0 and "leak summary" not in res.stdout, "report without contents",
              "no leak summary, exit 0", res.returncode)


def case_truncated(ctx):
    """A truncated or corrupt .lhs file: a clear error naming it, no crash."""
    trace = record(ctx, "graph_handlers")
    lhs = trace[:-4] + ".snap1.lhs"
    with open(lhs, "rb") as f:
        data = f.read()
    with open(lhs, "wb") as f:
        f.write(data[:len(data) // 2])
    out, err = shell(ctx, trace, "summary; identify 0x1", expect_status=1)
    expect_in(ctx, "summary says why", "graph: none: %s: snapshot file truncated" % lhs, out)
    expect_in(ctx, "identify error", "error: identify: %s: snapshot file truncated" % lhs, err)
    res = E.run(ctx, [ctx.lh, "report", trace])
    ctx.check(res.returncode == 0, "report still works", 0, res.returncode)
    expect_in(ctx, "report warns", "warning: no leak summary", res.stderr)
    bad = bytearray(data)
    bad[len(bad) // 2] ^= 0xff
    with open(lhs, "wb") as f:
        f.write(bytes(bad))
    out, err = shell(ctx, trace, "summary")
    expect_line(ctx, "corrupt", r"graph: none: .*snap1\.lhs: (frame \d+ at offset \d+: "
                r"(payload checksum mismatch|cannot decompress)|snapshot file)", out)
    with open(lhs, "wb") as f:
        f.write(b"LHTRACE\0garbage")
    out, err = shell(ctx, trace, "summary")
    expect_in(ctx, "bad magic", "not a leakhound snapshot file (bad magic)", out)
    os.unlink(lhs)
    out, err = shell(ctx, trace, "summary")
    expect_in(ctx, "missing", "No such file or directory", out)


DELTA_CMDS = "summary; largest 8; count; unreachable; roots"


def delta_twins(ctx, mode, more=0):
    """snap_delta (with `more` snapshots of the same heap at the end) recorded twice in
    contents mode: with delta snapshots (the default) and with every contents file whole
    (LEAKHOUND_SNAPSHOT_DELTA=0). Returns the two traces."""
    traces = []
    for delta in ("1", "0"):
        traces.append(record(ctx, "snap_delta", {"LEAKHOUND_SNAPSHOT_CONTENTS": mode,
                                                 "LEAKHOUND_SNAPSHOT_DELTA": delta},
                             name="delta%s.lht" % delta, args=[str(more)] if more else []))
    return traces


def strip_delta(text):
    """Shell output with what differs between two runs of the same program removed."""
    return re.sub(r"at [0-9.]+ s|thread [0-9]+", "", norm(text)).replace(
        "delta1.lht", "T").replace("delta0.lht", "T")


def check_delta_same(ctx, mode):
    """Every snapshot of the delta run reads back to the same graph as its whole twin:
    same blocks, edges, classes, largest, roots and unreachable sets (addresses aside); and
    the snapshots after the first are deltas (a fraction of their twin's size)."""
    delta, whole = delta_twins(ctx, mode)
    for n in ("1", "2", "3", "4"):
        out_d, _ = shell(ctx, delta, DELTA_CMDS, snapshot=n)
        out_w, _ = shell(ctx, whole, DELTA_CMDS, snapshot=n)
        ctx.check(strip_delta(out_d) == strip_delta(out_w),
                  "snapshot %s read back from a delta" % n, strip_delta(out_w),
                  strip_delta(out_d))
        expect_in(ctx, "snapshot %s has a graph" % n, "graph: ", out_d)
        ctx.check("graph: none" not in out_d, "snapshot %s graph" % n, "a graph", out_d)
    for n in ("2", "3", "4"):
        size_d = os.path.getsize(delta[:-4] + ".snap%s.lhs" % n)
        size_w = os.path.getsize(whole[:-4] + ".snap%s.lhs" % n)
        ctx.check(size_d * 2 < size_w, "snapshot %s written as a delta" % n,
                  "under half of %d bytes" % size_w, size_d)
    return delta


def case_delta_pointers(ctx):
    """Delta snapshots in mode pointers read back to the same objects and edges."""
    out = check_delta_same(ctx, "pointers")
    roots, _ = shell(ctx, out, "roots", snapshot="3")
    # s3: g_keep holds 190 blocks (10 dropped at s2), from a delta of a delta
    expect_line(ctx, "g_keep at s3", r"^ +\d+ +11\.9 KiB +190 +g_keep \(snap_delta\.c\)$", roots)


def case_delta_full(ctx):
    """The same in mode full (pages of bytes)."""
    check_delta_same(ctx, "full")


def case_delta_bound(ctx):
    """A delta refers to at most the 15 files before it: after 20 more snapshots of the same
    heap, every file older than 15 snapshots before the last is deleted and the last still
    reads back to what its whole twin holds."""
    delta, whole = delta_twins(ctx, "pointers", more=20)
    last = 24  # s1, s2, s3, 20 x same, exit
    for n in range(1, last - 15):
        os.unlink(delta[:-4] + ".snap%d.lhs" % n)
    out_d, _ = shell(ctx, delta, DELTA_CMDS, snapshot=str(last))
    out_w, _ = shell(ctx, whole, DELTA_CMDS, snapshot=str(last))
    ctx.check("graph: none" not in out_d, "the last snapshot reads", "a graph", out_d)
    ctx.check(strip_delta(out_d) == strip_delta(out_w), "the last snapshot read back",
              strip_delta(out_w), strip_delta(out_d))
    size_d = os.path.getsize(delta[:-4] + ".snap%d.lhs" % (last - 1))
    size_w = os.path.getsize(whole[:-4] + ".snap%d.lhs" % (last - 1))
    ctx.check(size_d * 2 < size_w, "snapshot %d written as a delta" % (last - 1),
              "under half of %d bytes" % size_w, size_d)


def case_delta_base(ctx):
    """A delta whose base file is missing or corrupt: a one-line error naming both files;
    other snapshots still read; no crash."""
    delta, _ = delta_twins(ctx, "pointers")
    base = delta[:-4] + ".snap1.lhs"
    with open(base, "rb") as f:
        data = f.read()
    os.unlink(base)
    out, err = shell(ctx, delta, "summary; identify 0x1", snapshot="2", expect_status=1)
    expect_line(ctx, "missing base", r"graph: none: \S*delta1\.snap2\.lhs: its unchanged "
                r"pages are in snapshot 1 \(delta1\.snap1\.lhs\), which cannot be read: "
                r"\S*delta1\.snap1\.lhs: No such file or directory$", out)
    ctx.check(len(err.strip().splitlines()) == 1 and "delta1.snap1.lhs" in err,
              "identify: one line naming the base", "one line", err)
    with open(base, "wb") as f:
        f.write(data[:len(data) // 2])
    out, err = shell(ctx, delta, "summary", snapshot="2")
    expect_line(ctx, "truncated base", r"graph: none: \S*delta1\.snap2\.lhs: its unchanged "
                r"pages are in snapshot 1 \(delta1\.snap1\.lhs\), which cannot be read: "
                r"\S*delta1\.snap1\.lhs: snapshot file truncated", out)
    with open(base, "wb") as f:  # another snapshot of the same process in its place
        with open(delta[:-4] + ".snap3.lhs", "rb") as g:
            f.write(g.read())
    out, err = shell(ctx, delta, "summary", snapshot="2")
    expect_line(ctx, "a base that is another snapshot", r"graph: none: \S*delta1\.snap2\.lhs: "
                r"refers to delta1\.snap1\.lhs as snapshot 1 of process [0-9]+, but that file "
                r"is snapshot 3 of process [0-9]+ \(mode 1\)$", out)
    with open(base, "wb") as f:
        f.write(data)
    out, err = shell(ctx, delta, "summary", snapshot="2")
    ctx.check("graph: none" not in out, "the base back: snapshot 2 reads", "a graph", out)


def uffd_wp_kernel():
    """Whether this kernel has userfaultfd (its sysctl exists) and PAGEMAP_SCAN (6.7+)."""
    m = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return (m is not None and (int(m.group(1)), int(m.group(2))) >= (6, 7) and
            os.path.exists("/proc/sys/vm/unprivileged_userfaultfd"))


WP_LINE = re.compile(r"snapwp: (\d+) pages skipped unread, wrong: (\d+)$", re.M)


def wp_verified(ctx, mode, env_extra, args):
    """snap_wp under LEAKHOUND_TEST_SNAPWP_VERIFY=1: each snapshot child reads the pages it
    skipped anyway and logs how many it skipped and how many of them were not what the
    earlier file it refers to holds. Returns the list of (skipped, wrong), one per child."""
    trace = os.path.join(ctx.workdir, "verify.lht")
    env = dict(os.environ)
    env.update({"LEAKHOUND_SNAPSHOT_CONTENTS": mode, "LEAKHOUND_TEST_SNAPWP_VERIFY": "1"})
    env.update(env_extra)
    res = E.run(ctx, [ctx.lh, "run", "-o", trace, "--", ctx.prog("snap_wp")] + args, env=env)
    ctx.check(res.returncode == 0, "leakhound run snap_wp", 0, res.stderr[-400:])
    counts = [(int(a), int(b)) for a, b in WP_LINE.findall(res.stderr)]
    ctx.check(len(counts) == int(args[0]) + 2, "a line per snapshot child", int(args[0]) + 2,
              res.stderr[-1500:])
    return counts


def check_wp_same(ctx, mode, env_extra, args=("4",)):
    """snap_wp (deterministic) with delta snapshots as configured by env_extra, against
    every file whole: every snapshot reads back to the same graph."""
    traces = []
    for name, env in (("delta1.lht", env_extra), ("delta0.lht", {"LEAKHOUND_SNAPSHOT_DELTA": "0"})):
        env = dict(env, LEAKHOUND_SNAPSHOT_CONTENTS=mode)
        traces.append(record(ctx, "snap_wp", env, name=name, args=list(args)))
    for n in ("1", "2", "3", "4", "5", "6"):
        out_d, _ = shell(ctx, traces[0], DELTA_CMDS, snapshot=n)
        out_w, _ = shell(ctx, traces[1], DELTA_CMDS, snapshot=n)
        ctx.check("graph: none" not in out_d, "snapshot %s graph" % n, "a graph", out_d)
        ctx.check(strip_delta(out_d) == strip_delta(out_w),
                  "snapshot %s read back from a delta" % n, strip_delta(out_w),
                  strip_delta(out_d))


def check_wp(ctx, mode):
    """Every page skipped unread (with a writer thread), read anyway, is what the earlier
    file holds; pages are skipped where the kernel can; the graphs equal the whole twins'."""
    counts = wp_verified(ctx, mode, {}, ["4", "thread"])
    ctx.check(all(wrong == 0 for _, wrong in counts), "no skipped page changed",
              "wrong: 0 everywhere", counts)
    if uffd_wp_kernel():
        ctx.check(sum(skipped for skipped, _ in counts) > 1000, "pages skipped",
                  "over 1000 in all", counts)
    check_wp_same(ctx, mode, {})


def case_delta_wp(ctx):
    """Pages the kernel says were not written (userfaultfd + PAGEMAP_SCAN) are skipped
    unread and referred to: every skipped page, read anyway, is what the earlier file holds
    (a thread writes while the snapshots are taken; mappings come, go and move; one is
    another userfaultfd's), and every snapshot reads back to what its whole twin holds."""
    check_wp(ctx, "pointers")


def case_delta_wp_full(ctx):
    """The same in mode full."""
    check_wp(ctx, "full")


def case_delta_wp_off(ctx):
    """Without the kernel's help (LEAKHOUND_SNAPSHOT_WP=0, as where it is missing): nothing
    is skipped and the deltas still read back to what their whole twins hold."""
    counts = wp_verified(ctx, "pointers", {"LEAKHOUND_SNAPSHOT_WP": "0"}, ["4"])
    ctx.check(counts == [(0, 0)] * 6, "nothing skipped", [(0, 0)] * 6, counts)
    check_wp_same(ctx, "pointers", {"LEAKHOUND_SNAPSHOT_WP": "0"})


def case_delta_wp_own_uffd(ctx):
    """A program that registers, with a userfaultfd of its own, memory the agent registered
    for its write tracking (after a snapshot) gets what it would get without the agent
    (the agent lets go of it: without that, EBUSY), its writes there go through (no
    write protection left behind), no page skipped unread differs from the file it refers
    to, and every snapshot reads back to what its whole twin holds."""
    counts = wp_verified(ctx, "pointers", {}, ["4", "late_uffd"])
    ctx.check(all(wrong == 0 for _, wrong in counts), "no skipped page changed",
              "wrong: 0 everywhere", counts)
    held = 1 if uffd_wp_kernel() else 0
    res = E.run(ctx, [ctx.lh, "run", "-o", os.path.join(ctx.workdir, "late.lht"), "--",
                      ctx.prog("snap_wp"), "4", "late_uffd"])
    ctx.check(res.returncode == 0, "leakhound run snap_wp late_uffd", 0, res.stderr[-400:])
    expect_line(ctx, "the program's own registration", "late uffd: agent held it %d, own "
                "register 0 [(]errno 0[)]$" % held, res.stderr)
    res = E.run(ctx, [ctx.lh, "run", "-o", os.path.join(ctx.workdir, "late0.lht"), "--",
                      ctx.prog("snap_wp"), "4", "late_uffd"],
                env=dict(os.environ, LEAKHOUND_SNAPSHOT_WP="0"))
    expect_line(ctx, "without the agent's tracking", "late uffd: agent held it 0, own "
                "register 0 [(]errno 0[)]$", res.stderr)
    check_wp_same(ctx, "pointers", {}, args=("4", "late_uffd"))


CASES = {
    "summary": case_summary,
    "handlers": case_handlers,
    "overwritten": case_overwritten,
    "ring": case_ring,
    "interior": case_interior,
    "tag": case_tag,
    "registry": case_registry,
    "cxx_rank": case_cxx_rank,
    "slack": case_slack,
    "nosym": case_nosym,
    "thread": case_thread,
    "joined": case_joined,
    "report": case_report,
    "read_ahead": case_read_ahead,
    "stdin": case_stdin,
    "badinput": case_badinput,
    "no_contents": case_no_contents,
    "truncated": case_truncated,
    "delta_pointers": case_delta_pointers,
    "delta_full": case_delta_full,
    "delta_base": case_delta_base,
    "delta_bound": case_delta_bound,
    "delta_wp": case_delta_wp,
    "delta_wp_full": case_delta_wp_full,
    "delta_wp_off": case_delta_wp_off,
    "delta_wp_own_uffd": case_delta_wp_own_uffd,
}


def main():
    return E.cases_main('graph', CASES, __doc__)


if __name__ == "__main__":
    sys.exit(main())
