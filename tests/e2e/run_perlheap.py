#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""End-to-end tests of the Perl heap in snapshots (issue 12): small Perl programs in
perl/ run under the agent, a snapshot asked for with SIGUSR2, and `leakhound shell`
speaking Perl on it: count --by type, largest, identify, roots, unreachable, with exact
answers. The oracle case compares class counts with Devel::MAT on the same program.

Usage:
  run_perlheap.py --build DIR --case NAME [--keep] [-v]
  run_perlheap.py --build DIR --all
  run_perlheap.py --list
Exit status: 0 pass, 1 fail, 2 usage error, 77 skipped (no perl / no Devel::MAT).
"""

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_e2e as E  # noqa: E402  (the shared helpers: Ctx, run)

Failure = E.Failure
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "perl")
SKIP = E.SKIP


Skip = E.Skip


def site_line(prog, tag):
    """The line of prog marked `# SITE: tag`."""
    with open(os.path.join(SRC, prog), encoding="utf-8") as f:
        for i, ln in enumerate(f, 1):
            if re.search(r"# SITE: %s\b" % re.escape(tag), ln):
                return i
    raise Failure("no SITE %s in %s" % (tag, prog))


def record(ctx, prog, extra=(), env_extra=None):
    """Runs perl prog under the agent; its snapshot 'signal-1' is the one to read."""
    trace = os.path.join(ctx.workdir, prog.replace(".pl", ".lht"))
    env = dict(os.environ)
    env["LH_WAIT_FOR"] = trace[:-4] + ".snap1.lhs"
    env.update(env_extra or {})
    argv = [ctx.lh, "run", "-o", trace] + list(extra) + ["--", "perl",
                                                         os.path.join(SRC, prog)]
    res = E.run(ctx, argv, env=env)
    ctx.check(res.returncode == 0, "leakhound run perl %s" % prog, 0,
              "%d: %s" % (res.returncode, res.stderr[-600:]))
    return trace


def shell(ctx, trace, cmds):
    res = E.run(ctx, [ctx.lh, "shell", trace, "signal-1", "-c", cmds])
    ctx.check(res.returncode == 0, "exit status of shell -c %r" % cmds, 0,
              "%d (stderr: %s)" % (res.returncode, res.stderr[-600:]))
    return res.stdout


def expect_line(ctx, what, pattern, text):
    ctx.check(re.search(pattern, text, re.M) is not None, what,
              "a line matching %r" % pattern, text[-2500:])


def count_rows(text):
    """`count` listing: {type: count}."""
    rows = {}
    for ln in text.splitlines():
        m = re.match(r"\s*\d+\s+(\d+)\s+\S+ \S+\s+(\S+)\s*$", ln)
        if m:
            rows[m.group(2)] = int(m.group(1))
    return rows


def row_with(text, needle):
    """The @N of the first listing row containing needle (None if absent)."""
    for ln in text.splitlines():
        m = re.match(r"\s*(\d+)\s", ln)
        if m and needle in ln:
            return int(m.group(1))
    return None


# ---------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------

def case_session_cache(ctx):
    """A never-evicting hash: `roots` ranks it first, `identify` on an entry's page names
    the package variable and the keys, the page's creating line is the Perl line."""
    t = record(ctx, "session_cache.pl")
    out = shell(ctx, t, "roots 3")
    expect_line(ctx, "roots: the session cache first",
                r"^\s*1\s+\S+ \S+\s+\S+ \S+\s+%MyApp::SESSION_CACHE \(HASH\)$", out)
    # The cache's first entry -> its REF -> the anonymous hash -> its "rendered" value.
    out = shell(ctx, t, "roots 1; show @1; show @1; show @1")
    rendered = row_with(out[out.rfind("HASH 0x"):], "{\"rendered\"}")
    ctx.check(rendered is not None, "show lists the entry's {\"rendered\"}", "a row",
              out[-1200:])
    out = shell(ctx, t, "roots 1; show @1; show @1; show @1; identify @%d" % (rendered or 1))
    expect_line(ctx, "identify: the path in Perl terms",
                r'^  %MyApp::SESSION_CACHE\{"[0-9a-f]{40}"\} -> HASH -> \{"rendered"\} -> '
                r"SCALAR\(PV\)$", out)
    expect_line(ctx, "identify: the page was made on its Perl line",
                r"^SCALAR\(PV\) 0x[0-9a-f]+, 2\.0 KiB, retained 2\.0 KiB, created at "
                r"MyApp::handle_request \(session_cache\.pl:%d\)$"
                % site_line("session_cache.pl", "page"), out)
    out = shell(ctx, t, "count --by type")
    rows = count_rows(out)
    ctx.check(rows.get("HASH", 0) >= 300, "count: the 300 entries' hashes are HASHes",
              ">= 300", rows.get("HASH"))


def case_cycles(ctx):
    """Two blessed classes in a cycle per request: exact counts by class, and
    `unreachable` lists both by class and by the line that created them."""
    t = record(ctx, "cycles.pl")
    rows = count_rows(shell(ctx, t, "count --by type"))
    ctx.check(rows.get("Highlight::Engine") == 250, "count: Highlight::Engine", 250,
              rows.get("Highlight::Engine"))
    ctx.check(rows.get("Highlight::Theme") == 250, "count: Highlight::Theme", 250,
              rows.get("Highlight::Theme"))
    out = shell(ctx, t, "unreachable")
    expect_line(ctx, "unreachable: the engines by class and line",
                r"^\s*\d+\s+250\s+\S+ \S+\s+Highlight::Engine\s+Highlight::Engine::new "
                r"\(cycles\.pl:%d\)$" % site_line("cycles.pl", "engine"), out)
    expect_line(ctx, "unreachable: the themes by class and line",
                r"^\s*\d+\s+250\s+\S+ \S+\s+Highlight::Theme\s+Highlight::Theme::new "
                r"\(cycles\.pl:%d\)$" % site_line("cycles.pl", "theme"), out)
    # Nothing but the cycles' own SVs: the engines, themes, their REFs and the values.
    m = re.search(r"reference cycles nothing refers to\): (\d+) objects", out)
    ctx.check(m and int(m.group(1)) == 1500, "unreachable: 250 x (2 objects, 2 REFs, "
              "2 strings)", 1500, m and m.group(1))
    out = shell(ctx, t, "unreachable; identify @%d" % (row_with(out, "Highlight::Engine")
                                                        or 1))
    expect_line(ctx, "identify on a lost engine says why", r"^  unreachable: no root "
                r"reaches it", out)


def case_audit_log(ctx):
    """A string grown with .=: `largest` names the variable."""
    t = record(ctx, "audit_log.pl")
    out = shell(ctx, t, "largest 1")
    expect_line(ctx, "largest: the log string",
                r"^\s*1\s+SCALAR\(PV\)\s+\S+ (KiB|MiB)\s+\S+ \S+\s+\$main::AUDIT_LOG\s+"
                r"main \(audit_log\.pl:%d\)$" % site_line("audit_log.pl", "append"), out)
    out = shell(ctx, t, "largest 1; show @1")
    m = re.search(r"^\$main::AUDIT_LOG \(SCALAR\(PV\) 0x[0-9a-f]+\), ([\d.]+) KiB", out, re.M)
    ctx.check(m is not None and float(m.group(1)) * 1024 >= 20000 * 49,
              "show: the string's buffer holds the 980000 bytes", ">= 957.0 KiB",
              m and m.group(1))


def case_closure(ctx):
    """A closure capturing a growing array: the path goes through the CODE and its
    capture."""
    t = record(ctx, "closure.pl")
    out = shell(ctx, t, "roots 1")
    expect_line(ctx, "roots: the handler holds it all",
                r"^\s*1\s+\S+ KiB\s+24 B\s+\$main::HANDLER \(REF\)$", out)
    out = shell(ctx, t, "roots 1; show @1; show @1")
    cap = row_with(out[out.rfind("CODE 0x"):], "closure @seen")
    ctx.check(cap is not None, "the CODE's capture is listed", "closure @seen", out[-800:])
    out = shell(ctx, t, "roots 1; show @1; show @1; show @%d; show @1; show @1; identify @1"
                % (cap or 1))
    expect_line(ctx, "identify through the closure",
                r"^  \$main::HANDLER -> CODE -> closure @seen -> \[\d+\] -> ARRAY -> \[0\] "
                r"-> SCALAR\(IV\)$", out)
    rows = count_rows(shell(ctx, t, "count"))
    ctx.check(rows.get("ARRAY", 0) >= 401, "count: 400 arrays and @seen", ">= 401",
              rows.get("ARRAY"))


def case_frees_all(ctx):
    """A program that frees everything: no Perl cycle, no Node left."""
    t = record(ctx, "frees_all.pl")
    out = shell(ctx, t, "unreachable")
    expect_line(ctx, "unreachable: nothing",
                r"^unreachable perl objects \(reference cycles nothing refers to\): 0 "
                r"objects, 0 B$", out)
    rows = count_rows(shell(ctx, t, "count --by type"))
    ctx.check("Node" not in rows, "count: no Node left", "no Node row", rows.get("Node"))


def case_no_full(ctx):
    """Pointers-only contents of a perl process: one line says what is missing, and the
    commands stay in the block view."""
    t = record(ctx, "session_cache.pl", extra=["--snapshot-contents", "pointers"])
    out = shell(ctx, t, "summary; count")
    expect_line(ctx, "summary: why there is no Perl heap",
                r"^perl heap: snapshot 1 'signal-1' of this perl process has no full "
                r"contents: run with --snapshot-contents full to see the Perl heap$", out)
    expect_line(ctx, "count: the block view", r"^\s+@\s+blocks\s+bytes\s+type$", out)


def case_native(ctx):
    """--native and `native on` give the block view of a perl snapshot."""
    t = record(ctx, "audit_log.pl")
    out = shell(ctx, t, "count --native")
    expect_line(ctx, "count --native: blocks", r"^\s+@\s+blocks\s+bytes\s+type$", out)
    out = shell(ctx, t, "native on; count; native off; count")
    expect_line(ctx, "native on: blocks", r"^\s+@\s+blocks\s+bytes\s+type$", out)
    expect_line(ctx, "native off: objects", r"^\s+@\s+count\s+bytes\s+type$", out)


def case_xs_struct(ctx):
    """Native blocks that Perl data points to hang under their SV: Digest::MD5's C
    context under each object, in `show`, `identify` and the retained size."""
    t = record(ctx, "xs_struct.pl")
    rows = count_rows(shell(ctx, t, "count --by type"))
    ctx.check(rows.get("Digest::MD5") == 100, "count: the objects", 100,
              rows.get("Digest::MD5"))
    out = shell(ctx, t, "roots 1; show @1; show @1; show @1")
    expect_line(ctx, "roots: @main::CTX", r"^\s*1\s+.*\s@main::CTX \(ARRAY\)$", out)
    obj = out[out.rfind("Digest::MD5 0x"):]
    m = re.search(r"^Digest::MD5 0x[0-9a-f]+, (\d+) B, retained (\d+) B", obj, re.M)
    nat = row_with(obj, "native 0x")
    ctx.check(m is not None and nat is not None, "show: the object and its C struct",
              "a 'native' row", obj[:800])
    out = shell(ctx, t, "roots 1; show @1; show @1; show @1; identify @%d" % (nat or 1))
    m2 = re.search(r"^native 0x[0-9a-f]+ \(.*\), (\d+) B, retained \d+ B$", out, re.M)
    expect_line(ctx, "identify: the struct through its object",
                r"^  @main::CTX\[\d+\] -> Digest::MD5 -> native block \(\d+ B, allocated "
                r"in main\)$", out)
    if m and m2:
        ctx.check(int(m.group(2)) >= int(m.group(1)) + int(m2.group(1)),
                  "the object retains its C struct", ">= %d" % (int(m.group(1)) +
                                                               int(m2.group(1))),
                  int(m.group(2)))


def case_diff(ctx):
    """`diff` between two snapshots groups the objects by class: 150 more sessions and
    users, each (a cycle per request)."""
    t = record(ctx, "grows.pl")
    out = shell(ctx, t, "diff signal-1 signal-3")
    expect_line(ctx, "diff: the header", r"^from snapshot 1 'signal-1' to 3 'signal-3', "
                r"perl objects by type:$", out)
    expect_line(ctx, "diff: 150 more sessions",
                r"^\s+(?:\d+\s+)?150\s+\d+\s+100 -> 250\s+Grow::Session$", out)
    expect_line(ctx, "diff: 150 more users",
                r"^\s+(?:\d+\s+)?150\s+\d+\s+100 -> 250\s+Grow::User$",
                out)
    out = shell(ctx, t, "unreachable")
    expect_line(ctx, "unreachable at signal-1: the first 100 requests' sessions",
                r"^\s*\d+\s+100\s+\S+ \S+\s+Grow::Session\s+Grow::Session::new", out)


def case_exit_native(ctx):
    """The native view of a perl heap at exit: the SV arena holding the biggest SV is no
    "possibly lost" block (the blocks the objects are made of are classified by them), in
    the shell and in the report's leak summary."""
    t = record(ctx, "audit_log.pl", env_extra={"LH_NO_SIGNAL": "1"})
    res = E.run(ctx, [ctx.lh, "shell", t, "exit", "-c", "largest 1; show --native @1"])
    ctx.check(res.returncode == 0, "shell on the exit snapshot", 0, res.stderr[-600:])
    expect_line(ctx, "largest: the log string at exit",
                r"^\s*1\s+SCALAR\(PV\)\s+.*\$main::AUDIT_LOG", res.stdout)
    expect_line(ctx, "the SV's arena block (PERL_ARENA_SIZE)",
                r"^block 0x[0-9a-f]+, 4\.0 KiB \(4080 bytes\); 0x[0-9a-f]+ is at \+0x",
                res.stdout)
    expect_line(ctx, "the arena is reachable", r"^  class: reachable$", res.stdout)
    rep = E.run(ctx, [ctx.lh, "report", t])
    m = re.search(r"possibly lost: (\d+) bytes in (\d+) blocks; still reachable: (\d+) "
                  r"bytes", rep.stdout)
    ctx.check(m is not None and int(m.group(1)) * 10 < int(m.group(3)),
              "report: the perl heap is still reachable, not possibly lost",
              "possibly lost < 10% of still reachable", m and m.group(0))


def case_prefork(ctx):
    """Pre-fork workers: each child's trace is seeded with the heap it inherited, so its
    exit snapshot names %main::CACHE, created at the parent's line, with the parent's 300
    entries (before: the hash was no root at all, 1512 objects had no stack, and the
    child's report had 27 unmatched frees)."""
    trace = os.path.join(ctx.workdir, "prefork.lht")
    res = E.run(ctx, [ctx.lh, "run", "-o", trace, "--", "perl",
                      os.path.join(SRC, "prefork.pl")])
    m = re.search(r"parent (\d+) children (\d+) (\d+)", res.stdout)
    if not ctx.check(res.returncode == 0 and m is not None, "leakhound run perl prefork.pl",
                     "exit 0, 'parent P children C1 C2'", "%d: %s %s" % (
                         res.returncode, res.stdout[-300:], res.stderr[-600:])):
        return
    line = site_line("prefork.pl", "parent_build")
    built = "main::build_cache (prefork.pl:%d)" % line
    for child in (m.group(2), m.group(3)):
        ct = "%s.%s" % (trace, child)
        rep = E.load_report(ctx, ct)
        ctx.check(rep["summary"].get("unmatched_frees") == 0,
                  "child %s: unmatched frees" % child, 0, rep["summary"].get("unmatched_frees"))
        # Its leaks are its own: the parent's entries, inherited and still live, are not.
        mine = [s["location"].get("line") for s in rep["sites"] if s.get("leaked_bytes") and
                os.path.basename((s.get("location") or {}).get("file") or "") == "prefork.pl"]
        ctx.check(line not in mine and site_line("prefork.pl", "child_add") in mine,
                  "child %s: leaking lines of prefork.pl" % child,
                  "line %d (its own), not %d (inherited)" % (site_line("prefork.pl",
                                                                       "child_add"), line),
                  mine)
        r = E.run(ctx, [ctx.lh, "shell", ct, "exit", "-c", "roots 1; show @1; count --by site"])
        ctx.check(r.returncode == 0, "child %s: shell" % child, 0, r.stderr[-600:])
        expect_line(ctx, "child %s: the top root is the inherited %%main::CACHE" % child,
                    r"^\s*1\s+\S+ \S+\s+\S+ \S+\s+%main::CACHE \(HASH\)$", r.stdout)
        expect_line(ctx, "child %s: %%main::CACHE created at the parent's line" % child,
                    r"^%%main::CACHE \(HASH 0x[0-9a-f]+\), .*, created at %s$" % re.escape(built),
                    r.stdout)
        expect_line(ctx, "child %s: the parent's 300 values (and the hash's body and array) "
                    "at that line" % child,
                    r"^\s*\d+\s+302\s+\S+ \S+\s+%s$" % re.escape(built), r.stdout)


PMAT_COUNT = r"""
use Devel::MAT;
my $df = Devel::MAT->load($ARGV[0])->dumpfile;
my %c;
for my $sv ($df->heap) {
    my $b = $sv->blessed;
    $c{$b ? $b->stashname : $sv->type}++;
}
print "$_ $c{$_}\n" for sort keys %c;
"""


def case_oracle(ctx):
    """Real Perl (JSON::PP, Storable): class counts match Devel::MAT's on the same
    program at the same point."""
    probe = subprocess.run(["perl", "-MDevel::MAT", "-MDevel::MAT::Dumper", "-e", "1"],
                           capture_output=True)
    if probe.returncode != 0:
        raise Skip("Devel::MAT / Devel::MAT::Dumper not installed "
                   "(libdevel-mat-perl, libdevel-mat-dumper-perl)")
    pmat = os.path.join(ctx.workdir, "oracle.pmat")
    t = record(ctx, "oracle.pl", env_extra={"LH_PMAT_FILE": pmat})
    res = E.run(ctx, ["perl", "-e", PMAT_COUNT, pmat])
    mat = {}
    for ln in res.stdout.splitlines():
        k, v = ln.rsplit(" ", 1)
        mat[k] = int(v)
    ours = count_rows(shell(ctx, t, "count --by type"))
    # Devel::MAT names pads and stashes apart; for us they are ARRAYs and HASHes.
    merged = dict(mat)
    merged["ARRAY"] = mat.get("ARRAY", 0) + mat.get("PAD", 0)
    merged["HASH"] = mat.get("HASH", 0) + mat.get("STASH", 0)
    merged.pop("PAD", None)
    merged.pop("STASH", None)
    scalar_kinds = ("SCALAR", "UNDEF", "BOOL")
    for k, v in sorted(merged.items()):
        if k in scalar_kinds:
            continue
        ctx.check(ours.get(k) == v, "count of %s against Devel::MAT" % k, v, ours.get(k))
    # Scalars come and go with every statement: between the dump and the snapshot the
    # program runs take_snapshot() (measured: 7 more than Devel::MAT's count less its 4
    # immortals, PL_sv_undef/_yes/_no/_zero, which live in the interpreter struct and not
    # in the arenas). The containers and classes above are exact.
    mat_sc = sum(merged.get(k, 0) for k in scalar_kinds)
    our_sc = sum(v for k, v in ours.items() if k.startswith("SCALAR("))
    ctx.check(abs(mat_sc - 4 - our_sc) <= 16, "scalars against Devel::MAT (less its 4 "
              "immortals, within 16 temporaries)", mat_sc - 4, our_sc)


CASES = {
    "session_cache": case_session_cache,
    "cycles": case_cycles,
    "audit_log": case_audit_log,
    "closure": case_closure,
    "frees_all": case_frees_all,
    "no_full": case_no_full,
    "native": case_native,
    "exit_native": case_exit_native,
    "xs_struct": case_xs_struct,
    "diff": case_diff,
    "oracle": case_oracle,
    "prefork": case_prefork,
}


def main():
    return E.cases_main('perlheap', CASES, __doc__, needs=('perl',))


if __name__ == "__main__":
    sys.exit(main())
