#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""End-to-end tests of the snapshot index files (issue 14.4, analysis/graphindex.h): the
first `leakhound shell` on a snapshot writes TRACE.N.lhx (and the catalog TRACE.lhx), later
shells load it instead of rebuilding the graph. Exact answers: every command prints the
same bytes with the index, without it (--no-index) and while building it; an index that is
stale (the trace or its contents file changed), corrupt (a flipped byte, cut short, a
forged checksum) or a symbolic link is not used, and the reader never crashes on it.

  c        progs/graph_handlers.c: summary, count, largest, roots, identify, show, elems,
           unreachable
  python   progs/pyheap/closures.py on /usr/bin/python3 (skipped without it): the object
           view and the block view, `use` of the other snapshot, diff by class, site and
           function (from the two snapshots' indexes; --no-index: a pass over the trace)
  stale    the trace rewritten, the contents file touched, another trace at the same path
  corrupt  flipped bytes, truncation, a garbage header, a damaged catalog, and 40 forged
           indexes (a byte changed and the checksum recomputed): never a crash
  symlink  TRACE.1.lhx a symbolic link to another file: not followed, not written through
  readonly the trace in a directory its reader (nobody) cannot write: the index goes in the
           cache directory (LEAKHOUND_CACHE_DIR/index), nothing beside the trace, and the
           second shell loads it (same answers, not rewritten); skipped unless root

Usage: run_gindex.py --build DIR --case NAME [--keep] [-v]
Exit status: 0 pass, 1 fail, 2 usage error, 77 skipped.
"""

import os
import random
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_e2e as E  # noqa: E402

HEADER = 256
C_CMDS = ["summary", "snapshots", "count", "count --by site", "count --by function",
          "largest 5", "largest 5 --retained", "roots 3", "unreachable",
          "count --by site; identify @1", "largest 3; show @1", "largest 3; elems @1",
          "roots; show @1", "largest 2; identify @2 --all --weak"]


def shell(ctx, trace, cmds, extra=(), snapshot=None, lh=None):
    argv = [lh or ctx.lh, "shell", trace] + ([snapshot] if snapshot else []) + list(extra) + \
        ["-c", cmds]
    res = E.run(ctx, argv)
    ctx.check(res.returncode >= 0, "shell -c %r: no crash" % cmds, ">= 0", res.returncode)
    return res.returncode, res.stdout, res.stderr


def index_files(trace):
    return [trace + ".lhx", trace + ".1.lhx"]


def same_with_and_without(ctx, trace, cmds, what, snapshot=None):
    """Each command: --no-index, then with the index (built by the first command, loaded
    by the others): identical status, output and errors."""
    for c in cmds:
        want = shell(ctx, trace, c, ["--no-index"], snapshot)
        got = shell(ctx, trace, c, (), snapshot)
        ctx.check(got == want, "%s: shell -c %r with the index = without" % (what, c),
                  want, got)


def ino(path):
    return os.stat(path).st_ino


def record_c(ctx, prog="graph_handlers", name="trace.lht"):
    trace = os.path.join(ctx.workdir, name)
    E.lh_run(ctx, [ctx.prog(prog)], out=trace)
    return trace


def case_c(ctx):
    trace = record_c(ctx)
    for f in index_files(trace):
        ctx.check(not os.path.exists(f), "no index before the first shell", "absent", f)
    _, first, _ = shell(ctx, trace, "summary")
    for f in index_files(trace):
        ctx.check(os.path.exists(f), "index written by the first shell", "present", f)
        if os.path.exists(f):
            mode = os.stat(f).st_mode & 0o777
            ctx.check(mode == 0o600, "mode of %s" % os.path.basename(f), "0600", oct(mode))
    ctx.check("definitely lost: 136 bytes in 4 blocks; indirectly lost: 368 bytes in 13 "
              "blocks; possibly lost: 64 bytes in 1 blocks; still reachable: 229496 bytes in "
              "4100 blocks" in first, "leak summary", "graph_handlers' classes", first)
    i0 = ino(trace + ".1.lhx")
    same_with_and_without(ctx, trace, C_CMDS, "graph_handlers")
    ctx.check(ino(trace + ".1.lhx") == i0, "a valid index is not rewritten", i0,
              ino(trace + ".1.lhx"))
    leftovers = [f for f in os.listdir(ctx.workdir) if ".tmp." in f]
    ctx.check(not leftovers, "no temporary files left", [], leftovers)


def python3():
    py = "/usr/bin/python3"
    if not os.path.exists(py):
        raise E.Skip("no /usr/bin/python3")
    v = subprocess.run([py, "-c", "import sys; print(sys.version_info[1])"],
                       capture_output=True, text=True).stdout.strip()
    if not v.isdigit() or int(v) < 8:
        raise E.Skip("/usr/bin/python3 is older than 3.8")
    return py


def case_python(ctx):
    py = python3()
    progs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "progs", "pyheap")
    prefix = os.path.join(ctx.workdir, "closures")
    trace = prefix + ".lht"
    res = E.lh_run(ctx, [py, os.path.join(progs, "driver.py"), "closures", prefix, progs],
                   out=trace)
    said = dict(ln.split() for ln in res.stdout.splitlines() if len(ln.split()) == 2)
    cmds = ["summary", "count", "count --by site", "largest 5", "largest 5 --retained",
            "roots 5", "unreachable", "identify " + said["state"],
            "identify " + said["handler"], "show " + said["state"], "diff before after",
            "diff before after --by site", "diff before after --by function",
            "count --native", "largest 3 --native; identify @1 --native",
            "use before; summary; count", "native on; largest 3; show @1"]
    same_with_and_without(ctx, trace, cmds, "python closures", "after")
    ctx.check(os.path.exists(trace + ".2.lhx"), "index of snapshot 2 ('after')", "present",
              os.listdir(ctx.workdir))


def case_stale(ctx):
    trace = record_c(ctx)
    cmds = ["summary", "count --by site; identify @1"]
    want = [shell(ctx, trace, c, ["--no-index"]) for c in cmds]
    shell(ctx, trace, "summary")
    idx = trace + ".1.lhx"
    # the same bytes with another mtime: rebuilt (rewritten), same answers
    i0 = ino(idx)
    st = os.stat(trace)
    os.utime(trace, ns=(st.st_atime_ns, st.st_mtime_ns + 1000000000))
    got = [shell(ctx, trace, c) for c in cmds]
    ctx.check(got == want, "trace touched: same answers", want, got)
    ctx.check(ino(idx) != i0, "trace touched: index rebuilt", "a new file", "the old one")
    # the contents file touched
    i0 = ino(idx)
    lhs = [f for f in os.listdir(ctx.workdir) if f.endswith(".lhs")][0]
    st = os.stat(os.path.join(ctx.workdir, lhs))
    os.utime(os.path.join(ctx.workdir, lhs), ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    got = [shell(ctx, trace, c) for c in cmds]
    ctx.check(got == want, "contents touched: same answers", want, got)
    ctx.check(ino(idx) != i0, "contents touched: index rebuilt", "a new file", "the old one")
    # another leakhound binary (a rebuild: here a copy, another inode): rebuilt, and the
    # index it wrote is rebuilt again by the first binary
    i0 = ino(idx)
    copy = os.path.join(ctx.workdir, "leakhound-rebuilt")
    shutil.copy2(ctx.lh, copy)
    got = [shell(ctx, trace, c, lh=copy) for c in cmds]
    ctx.check(got == want, "another binary: same answers", want, got)
    ctx.check(ino(idx) != i0, "another binary: index rebuilt", "a new file", "the old one")
    i0 = ino(idx)
    shell(ctx, trace, "summary")
    ctx.check(ino(idx) != i0, "back to the first binary: index rebuilt", "a new file",
              "the old one")
    # another program's trace at the same path: its own answers, not the index's
    other = record_c(ctx, "graph_thread", "other.lht")
    want2 = [shell(ctx, other, c, ["--no-index"]) for c in cmds]
    ctx.check(want2 != want, "graph_thread differs from graph_handlers", "different", want2)
    for f in os.listdir(ctx.workdir):
        if f.startswith("other.") and f.endswith(".lhs"):
            os.replace(os.path.join(ctx.workdir, f),
                       os.path.join(ctx.workdir, f.replace("other.", "trace.", 1)))
    with open(other, "rb") as f:
        data = f.read()
    data = data.replace(b"other.snap", b"trace.snap")
    with open(trace, "wb") as f:
        f.write(data)
    got = [shell(ctx, trace, c) for c in cmds]
    want3 = [shell(ctx, trace, c, ["--no-index"]) for c in cmds]
    ctx.check(got == want3, "another trace at the path: its answers", want3, got)
    ctx.check(got != want, "another trace at the path: not the old index", "different", got)


def mix(h, w):
    h = ((h ^ w) * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    return h ^ (h >> 31)


def forge(path, pos, byte):
    """Sets payload byte pos and rewrites the header's checksum so that only the
    reader's own checks can reject the file."""
    with open(path, "rb") as f:
        data = bytearray(f.read())
    data[HEADER + pos] = byte
    h = 0x6c68676964780001
    for (w,) in struct.iter_unpack("<Q", bytes(data[HEADER:])):
        h = mix(h, w)
    struct.pack_into("<Q", data, 32, h)
    with open(path, "wb") as f:
        f.write(data)


def case_corrupt(ctx):
    trace = record_c(ctx)
    cmds = "summary; count --by site; identify @1; largest 3 --retained; roots; show @1"
    want = shell(ctx, trace, cmds, ["--no-index"])
    shell(ctx, trace, "summary")
    idx = trace + ".1.lhx"
    with open(idx, "rb") as f:
        good = f.read()
    size = len(good)

    def damaged(what, data, path=idx):
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, 0o600)
        got = shell(ctx, trace, cmds)
        ctx.check(got == want, "%s: same answers as without the index" % what, want, got)
        with open(idx, "rb") as f:
            ctx.check(f.read() == good, "%s: index rebuilt" % what, "the good index",
                      "something else")

    mid = bytearray(good)
    mid[size // 2] ^= 0x40
    damaged("a flipped byte", bytes(mid))
    damaged("cut short", good[:size // 3])
    damaged("empty", b"")
    damaged("garbage header", b"\xff" * HEADER + good[HEADER:])
    with open(trace + ".lhx", "rb") as f:
        cat = f.read()
    damaged("a damaged catalog", cat[:-8] + b"\x01" * 8, trace + ".lhx")
    # forged: checksum right, contents wrong; the answers may differ, a crash may not
    rng = random.Random(14)
    for k in range(40):
        with open(idx, "wb") as f:
            f.write(good)
        pos = rng.randrange(0, size - HEADER)
        forge(idx, pos, rng.randrange(0, 256))
        res = E.run(ctx, [ctx.lh, "shell", trace, "-c", cmds])
        ctx.check(res.returncode in (0, 1) and "Sanitizer" not in res.stderr,
                  "forged index (byte %d): exit status 0 or 1, no crash" % pos, "0 or 1",
                  "%d %s" % (res.returncode, res.stderr[-300:]))


def case_symlink(ctx):
    trace = record_c(ctx)
    want = shell(ctx, trace, "summary; largest 3", ["--no-index"])
    victim = os.path.join(ctx.workdir, "victim.txt")
    with open(victim, "w") as f:
        f.write("not an index\n")
    os.symlink(victim, trace + ".1.lhx")
    got = shell(ctx, trace, "summary; largest 3")
    ctx.check(got == want, "symlinked index: same answers", want, got)
    with open(victim) as f:
        ctx.check(f.read() == "not an index\n", "the link's target is untouched",
                  "not an index", "changed")
    ctx.check(not os.path.islink(trace + ".1.lhx"), "the link was replaced by an index",
              "a regular file", "a link")
    got = shell(ctx, trace, "summary; largest 3")
    ctx.check(got == want, "then loaded: same answers", want, got)


def case_readonly(ctx):
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or not setpriv:
        raise E.Skip("needs root and setpriv (runs the shell as nobody)")
    import pwd
    import tempfile
    nob = pwd.getpwnam("nobody")
    # Every directory above nobody's files must be searchable by nobody, and the checkout
    # may sit in a directory only root can enter (CI clones into a 0700 parent): work in
    # the system's temporary directory.
    top = tempfile.mkdtemp(prefix="leakhound-gindex-ro.")
    try:
        readonly_in(ctx, top, nob, setpriv)
    finally:
        os.chmod(top, 0o700)
        for d, _, _ in os.walk(top):
            os.chmod(d, 0o700)
        shutil.rmtree(top, ignore_errors=True)


def readonly_in(ctx, top, nob, setpriv):
    ro = os.path.join(top, "ro")
    os.mkdir(ro)
    trace = os.path.join(ro, "trace.lht")
    # The program too must be readable by nobody (the shell symbolizes it).
    prog = os.path.join(top, "graph_handlers")
    shutil.copy(ctx.prog("graph_handlers"), prog)
    os.chmod(prog, 0o755)
    E.lh_run(ctx, [prog], out=trace)
    res = E.run(ctx, [ctx.lh, "shell", trace, "--no-index", "-c", "summary; largest 3"],
                cwd=top)
    want = (res.returncode, res.stdout, res.stderr)
    # nobody reads the trace and its contents file, in a directory it cannot write, with a
    # copy of the CLI (the build directory may be closed to others: a 0700 checkout).
    for f in os.listdir(ro):
        os.chown(os.path.join(ro, f), nob.pw_uid, nob.pw_gid)
    os.chmod(ro, 0o555)
    os.chmod(top, 0o755)
    lh = os.path.join(top, "leakhound")
    shutil.copy(ctx.lh, lh)
    os.chmod(lh, 0o755)
    cache = os.path.join(top, "cache")
    os.mkdir(cache, 0o700)
    os.chown(cache, nob.pw_uid, nob.pw_gid)
    before = sorted(os.listdir(ro))
    argv = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--",
            "/usr/bin/env", "-i", "LEAKHOUND_CACHE_DIR=" + cache, "HOME=/nonexistent",
            lh, "shell", trace, "-c", "summary; largest 3"]
    first = E.run(ctx, argv, cwd=top)
    got = (first.returncode, first.stdout, first.stderr)
    ctx.check(got == want, "as nobody, building the index: same answers", want, got)
    ctx.check(sorted(os.listdir(ro)) == before, "nothing written beside the trace", before,
              sorted(os.listdir(ro)))
    idx = os.path.join(cache, "index")
    files = sorted(os.listdir(idx)) if os.path.isdir(idx) else []
    ok = len(files) == 2 and files[0].endswith(".1.lhx") and files[1].endswith(".lhx") and \
        files[0][:16] == files[1][:16] and len(files[1]) == 16 + 4
    ctx.check(ok, "the catalog and the index in the cache directory", "H.1.lhx, H.lhx", files)
    if not ok:
        return
    snap = os.path.join(idx, files[0])
    st = os.stat(snap)
    ctx.check((st.st_uid, st.st_mode & 0o777) == (nob.pw_uid, 0o600), "owned by nobody, 0600",
              (nob.pw_uid, "0o600"), (st.st_uid, oct(st.st_mode & 0o777)))
    second = E.run(ctx, argv, cwd=top)
    got = (second.returncode, second.stdout, second.stderr)
    ctx.check(got == want, "as nobody, from the index: same answers", want, got)
    ctx.check(ino(snap) == st.st_ino, "the index was loaded, not rebuilt", st.st_ino, ino(snap))


CASES = {
    "c": case_c,
    "python": case_python,
    "stale": case_stale,
    "corrupt": case_corrupt,
    "symlink": case_symlink,
    "readonly": case_readonly,
}


def main():
    return E.cases_main('gindex', CASES, __doc__)


if __name__ == "__main__":
    sys.exit(main())
