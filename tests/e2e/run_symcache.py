#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""End-to-end tests of the on-disk symbol cache (issue 14, item 3; analysis/symcache.h,
docs/FORMAT.md "Symbol cache files").

The program is progs/calltree.c (an inlined frame: inl() inside f_inline()). Every report
below must be byte-identical to the report made without the cache (`--no-symbol-cache`),
text and JSON, whatever state the cache is in: empty, filled, corrupt, or unusable.

Cases:
  identical  cold, warm and no-cache reports are the same; files 0600, directory 0700
  used       a cache file edited by hand (same format, new checksum) is what the report shows
  corrupt    truncated, flipped, foreign-version and garbage files are ignored and rebuilt
  unsafe     a directory open to others, a symlink, or one owned by another user is not used
  default    without LEAKHOUND_CACHE_DIR the cache is $XDG_CACHE_HOME/leakhound
  vars       the variables table (<build-id>.vars): shell's roots and identify, which name
             a global and its declaration file, are the same cold, warm and without it
  nodebuginfod  no debuginfod server set: libdebuginfod is not loaded, same reports as
             with it loaded and finding nothing
  dsym       the symbol tables' answers (<build-id>.dsym): a warm shell names the roots and
             probes for perl from the cache, opening no separate debug file (strace) and
             reading no symbol table; the answers are the cache's (an edited name shows);
             the program rebuilt with another build id is answered from its own table, not
             from the old program's file

Usage: run_symcache.py --build DIR --case NAME [-v]
"""

import argparse
import os
import shutil
import stat
import struct
import subprocess
import sys

CMD_TIMEOUT = 60
HEADER = 40  # docs/FORMAT.md


class Failure(Exception):
    pass


def fnv1a64(data):
    h = 14695981039346656037
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def edit_cache_file(path, old, new, check=False):
    """Replaces the NUL-terminated string old (bytes) by new, of the same length, in the
    cache file at path and recomputes its trailing FNV-1a checksum, so that the reader
    accepts the edited file (check: parse it first)."""
    with open(path, "rb") as fh:
        data = bytearray(fh.read())
    if check:
        parse(bytes(data))
    i = data.index(old + b"\0")
    data[i:i + len(new)] = new
    struct.pack_into("<Q", data, len(data) - 8, fnv1a64(bytes(data[:-8])))
    with open(path, "wb") as fh:
        fh.write(data)


class Ctx:
    def __init__(self, build, case, verbose):
        self.build = os.path.abspath(build)
        self.lh = os.path.join(self.build, "bin", "leakhound")
        self.prog = os.path.join(self.build, "tests", "e2e", "progs", "calltree")
        self.art = os.path.join(self.build, "tests", "e2e", "artifacts", "symcache", case)
        shutil.rmtree(self.art, ignore_errors=True)
        os.makedirs(self.art)
        self.verbose = verbose
        self.failures = []

    def eq(self, what, expected, got):
        if expected != got:
            self.failures.append("%s\n    expected: %r\n    got:      %r" %
                                 (what, expected, got))

    def run(self, argv, env=None):
        if self.verbose:
            print("$ " + " ".join(argv))
        e = dict(os.environ)
        e.pop("LEAKHOUND_CACHE_DIR", None)
        e.update(env or {})
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=CMD_TIMEOUT, env=e)
        if p.returncode != 0:
            raise Failure("%s exited %d\nstderr: %s" % (" ".join(argv), p.returncode,
                                                       p.stderr[-2000:]))
        return p

    def path(self, name):
        return os.path.join(self.art, name)

    def trace(self):
        t = self.path("calltree.lht")
        self.run([self.lh, "run", "-o", t, "--", self.prog],
                 env={"LEAKHOUND_CACHE_DIR": self.path("unused")})
        return t

    def reports(self, trace, cache_dir, extra=()):
        """(text, json) reports of trace with the cache in cache_dir (None: no cache)."""
        env = {"LEAKHOUND_CACHE_DIR": cache_dir or self.path("never")}
        flags = ["--no-symbol-cache"] if cache_dir is None else []
        text = self.run([self.lh, "report"] + flags + [trace] + list(extra), env=env).stdout
        js = self.run([self.lh, "report", "--format", "json"] + flags + [trace] + list(extra),
                      env=env).stdout
        return text, js

    def sym_files(self, d):
        """The cache files: frames (.sym), variables tables (.vars) and symbol tables'
        answers (.dsym)."""
        return sorted(f for f in os.listdir(d) if f.endswith((".sym", ".vars", ".dsym"))) \
            if os.path.isdir(d) else []

    def calltree_file(self, d):
        """The cache file of the calltree program: the one whose strings hold f_inline."""
        for f in self.sym_files(d):
            if not f.endswith(".sym"):
                continue
            with open(os.path.join(d, f), "rb") as fh:
                if b"f_inline\0" in fh.read():
                    return os.path.join(d, f)
        return None


def parse(data):
    """Checks a cache file against docs/FORMAT.md; returns its entries' offsets."""
    if data[:8] != b"LHSYMC\r\n":
        raise ValueError("magic")
    version, kind, key_len, fp, n_ents, n_frames, n_strs = struct.unpack_from("<IIIQIII", data, 8)
    size = HEADER + key_len + 16 * n_ents + 16 * n_frames + n_strs + 8
    if version != 1 or kind not in (1, 2) or size != len(data):
        raise ValueError("header")
    if struct.unpack_from("<Q", data, len(data) - 8)[0] != fnv1a64(data[:-8]):
        raise ValueError("checksum")
    offs = [struct.unpack_from("<QII", data, HEADER + key_len + 16 * k)[0] for k in range(n_ents)]
    if offs != sorted(offs):
        raise ValueError("entries not sorted")
    return offs


def case_identical(c):
    t = c.trace()
    base = c.reports(t, None)
    d = c.path("cache")  # missing: created 0700
    c.eq("no cache file before the first report", [], c.sym_files(d))
    cold = c.reports(t, d)
    warm = c.reports(t, d)
    c.eq("text report, cold cache = no cache", base[0], cold[0])
    c.eq("JSON report, cold cache = no cache", base[1], cold[1])
    c.eq("text report, warm cache = no cache", base[0], warm[0])
    c.eq("JSON report, warm cache = no cache", base[1], warm[1])
    c.eq("the inlined frame is in the report", True,
         b"at inl (" in base[0] and b"calltree.c:72) [inlined]\n" in base[0])
    c.eq("cache directory mode", 0o700, stat.S_IMODE(os.lstat(d).st_mode))
    files = c.sym_files(d)
    c.eq("cache files written", True, len(files) >= 1)
    for f in files:
        with open(os.path.join(d, f), "rb") as fh:
            try:
                parse(fh.read())
                ok = True
            except ValueError as e:
                ok = str(e)
        c.eq("%s is a valid cache file" % f, True, ok)
    c.eq("cache file modes", [0o600] * len(files),
         [stat.S_IMODE(os.stat(os.path.join(d, f)).st_mode) for f in files])
    c.eq("no temporary file left", files, sorted(os.listdir(d)))
    ct = c.calltree_file(d)
    c.eq("the program has a cache file", True, ct is not None)
    if ct:
        with open(ct, "rb") as fh:
            offs = parse(fh.read())
        c.eq("the program's file holds its addresses", True, len(offs) >= 6)
    # --no-symbol-cache neither reads nor writes
    d2 = c.path("cache2")
    os.mkdir(d2, 0o700)
    c.run([c.lh, "report", "--no-symbol-cache", t], env={"LEAKHOUND_CACHE_DIR": d2})
    c.eq("--no-symbol-cache writes nothing", [], os.listdir(d2))


def case_used(c):
    t = c.trace()
    d = c.path("cache")
    text, js = c.reports(t, d)
    ct = c.calltree_file(d)
    if not ct:
        raise Failure("no cache file holds f_inline")
    edit_cache_file(ct, b"f_inline", b"g_inline", check=True)
    text2, js2 = c.reports(t, d)
    c.eq("text report from the edited cache", text.replace(b"f_inline", b"g_inline"), text2)
    c.eq("JSON report from the edited cache", js.replace(b"f_inline", b"g_inline"), js2)
    c.eq("the edit changed a frame", True, b"by g_inline (" in text2)


def case_corrupt(c):
    t = c.trace()
    base = c.reports(t, None)
    d = c.path("cache")
    c.reports(t, d)
    ct = c.calltree_file(d)
    if not ct:
        raise Failure("no cache file holds f_inline")
    with open(ct, "rb") as fh:
        good = fh.read()

    def flipped(b):
        b = bytearray(b)
        b[len(b) // 2] ^= 0x40
        return bytes(b)

    def version(b):
        b = bytearray(b)
        struct.pack_into("<I", b, 8, 99)
        struct.pack_into("<Q", b, len(b) - 8, fnv1a64(bytes(b[:-8])))
        return bytes(b)

    def count(b):  # a consistent checksum over a lie: one entry too many
        b = bytearray(b)
        n = struct.unpack_from("<I", b, 28)[0]
        struct.pack_into("<I", b, 28, n + 1)
        struct.pack_into("<Q", b, len(b) - 8, fnv1a64(bytes(b[:-8])))
        return bytes(b)

    bad = [("truncated", good[:len(good) // 2]), ("empty", b""), ("flipped byte", flipped(good)),
           ("foreign version", version(good)), ("wrong count", count(good)),
           ("garbage", b"\xff" * 4096)]
    for name, data in bad:
        with open(ct, "wb") as fh:
            fh.write(data)
        got = c.reports(t, d)
        c.eq("text report with a %s cache file" % name, base[0], got[0])
        c.eq("JSON report with a %s cache file" % name, base[1], got[1])
        with open(ct, "rb") as fh:
            now = fh.read()
        try:
            parse(now)
            ok = b"f_inline\0" in now
        except ValueError as e:
            ok = str(e)
        c.eq("the %s cache file was rebuilt" % name, True, ok)


def case_unsafe(c):
    t = c.trace()
    base = c.reports(t, None)
    open_dir = c.path("open")
    os.mkdir(open_dir)
    os.chmod(open_dir, 0o755)
    c.eq("text report, directory open to others", base[0], c.reports(t, open_dir)[0])
    c.eq("nothing written in a directory open to others", [], os.listdir(open_dir))
    target = c.path("target")
    os.mkdir(target, 0o700)
    link = c.path("link")
    os.symlink(target, link)
    c.eq("text report, symlinked directory", base[0], c.reports(t, link)[0])
    c.eq("nothing written through a symlink", [], os.listdir(target))
    if os.geteuid() == 0:
        other = c.path("other")
        os.mkdir(other, 0o700)
        os.chown(other, 65534, 65534)
        c.eq("text report, directory of another user", base[0], c.reports(t, other)[0])
        c.eq("nothing written in another user's directory", [], os.listdir(other))
    # a cache file owned by another user is not read
    mine = c.path("mine")
    os.mkdir(mine, 0o700)
    c.reports(t, mine)
    ct = c.calltree_file(mine)
    if os.geteuid() == 0 and ct:
        edit_cache_file(ct, b"f_inline", b"g_inline")
        os.chown(ct, 65534, 65534)
        c.eq("a file of another user is not read", base[0], c.reports(t, mine)[0])


def case_default(c):
    t = c.trace()
    base = c.reports(t, None)
    xdg = c.path("xdg")
    e = {"XDG_CACHE_HOME": xdg}
    text = c.run([c.lh, "report", t], env=e).stdout
    c.eq("text report with the default directory", base[0], text)
    d = os.path.join(xdg, "leakhound")
    c.eq("default directory mode", 0o700, stat.S_IMODE(os.lstat(d).st_mode))
    c.eq("the program's file is in $XDG_CACHE_HOME/leakhound", True,
         c.calltree_file(d) is not None)


def case_vars(c):
    prog = os.path.join(c.build, "tests", "e2e", "progs", "graph_handlers")
    t = c.path("handlers.lht")
    c.run([c.lh, "run", "-o", t, "--", prog], env={"LEAKHOUND_CACHE_DIR": c.path("unused")})
    cmds = "roots 3; count --by site; identify @1"
    d = c.path("cache")

    def shell(cache_dir):
        env = {"LEAKHOUND_CACHE_DIR": cache_dir or c.path("never")}
        flags = ["--no-symbol-cache"] if cache_dir is None else []
        return c.run([c.lh, "shell", "--no-index"] + flags + [t, "-c", cmds], env=env).stdout

    base = shell(None)
    c.eq("the root and its file are named", True, b"g_emitter (graph_handlers.c)" in base)
    c.eq("shell output, cold cache = no cache", base, shell(d))
    vars_files = [f for f in c.sym_files(d) if f.endswith(".vars")]
    holder = None
    for f in vars_files:
        with open(os.path.join(d, f), "rb") as fh:
            data = fh.read()
        parse(data)
        if b"graph_handlers.c\0" in data:
            holder = f
    c.eq("the program's variables table is cached", True, holder is not None)
    c.eq("shell output, warm cache = no cache", base, shell(d))
    if holder:  # the table is what the warm run read: edit a file name, see it
        edit_cache_file(os.path.join(d, holder), b"graph_handlers.c", b"graph_handlerz.c")
        c.eq("shell output from the edited table",
             base.replace(b"(graph_handlers.c)", b"(graph_handlerz.c)"), shell(d))


def case_nodebuginfod(c):
    """Without a debuginfod server (DEBUGINFOD_URLS empty) libdw does not load libdebuginfod
    (cli/nodebuginfod.c), and the reports are those made with it loaded, finding nothing (a
    server that refuses connections). The program is python3: a stripped binary with a build
    id and no local debug file, which libdw asks debuginfod about."""
    t = c.path("py.lht")
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    c.run([c.lh, "run", "-o", t, "--", py, "-c", "x = [bytes(100)] * 10"],
          env={"LEAKHOUND_CACHE_DIR": c.path("unused")})
    out = {}
    for urls in ("", "http://127.0.0.1:9"):
        env = {"LEAKHOUND_CACHE_DIR": c.path("never"), "DEBUGINFOD_URLS": urls,
               "XDG_CACHE_HOME": c.path("xdg"), "LD_DEBUG": "files"}
        reps = [c.run([c.lh, "report", "--no-symbol-cache"] + f + [t], env=env)
                for f in ([], ["--format", "json"])]
        loaded = any(b"file=libdebuginfod" in p.stderr for p in reps)
        c.eq("libdebuginfod loaded with DEBUGINFOD_URLS=%r" % urls, bool(urls), loaded)
        out[urls] = [p.stdout for p in reps]
    c.eq("text and json reports without and with a server", out[""], out["http://127.0.0.1:9"])


def debug_opens(log):
    """The separate debug files an strace log shows opened (successfully)."""
    got = []
    with open(log) as fh:
        for ln in fh:
            if "= -1" in ln or '"' not in ln:
                continue
            path = ln.split('"')[1]
            if path.startswith("/usr/lib/debug/") or path.endswith(".debug") or \
                    "/debuginfod_client/" in path:
                got.append(path)
    return sorted(set(got))


def case_dsym(c):
    prog = c.path("graph_handlers")  # a copy: its build id is changed below
    shutil.copy(os.path.join(c.build, "tests", "e2e", "progs", "graph_handlers"), prog)
    t = c.path("handlers.lht")
    c.run([c.lh, "run", "-o", t, "--", prog], env={"LEAKHOUND_CACHE_DIR": c.path("unused")})
    cmds = "roots 3; count --by site"
    d = c.path("cache")

    def shell(cache_dir, log=None):
        env = {"LEAKHOUND_CACHE_DIR": cache_dir or c.path("never")}
        flags = ["--no-symbol-cache"] if cache_dir is None else []
        pre = ["strace", "-f", "-qq", "-e", "trace=openat,open", "-o", log] if log else []
        if log:  # (LeakSanitizer, in the sanitizer build, stops with a fatal error under ptrace)
            env["ASAN_OPTIONS"] = ":".join(o for o in (os.environ.get("ASAN_OPTIONS"),
                                                       "detect_leaks=0") if o)
        return c.run(pre + [c.lh, "shell", "--no-index"] + flags + [t, "-c", cmds],
                     env=env).stdout

    base = shell(None)
    c.eq("the roots are named", True, b"g_emitter (graph_handlers.c)" in base and
         b"g_cursor (graph_handlers.c)" in base)
    have_strace = shutil.which("strace") is not None
    cold_log, warm_log = c.path("cold.strace"), c.path("warm.strace")
    c.eq("shell output, cold cache = no cache", base, shell(d, cold_log if have_strace else None))
    c.eq("shell output, warm cache = no cache", base, shell(d, warm_log if have_strace else None))
    if have_strace:
        cold, warm = debug_opens(cold_log), debug_opens(warm_log)
        if cold:  # the machine has separate debug files (libc6-dbg): cold reads them
            c.eq("separate debug files opened by the warm shell (cold: %s)" % cold, [], warm)
        if c.verbose:
            print("debug files opened cold: %s" % cold)
    holder = None
    for f in c.sym_files(d):
        with open(os.path.join(d, f), "rb") as fh:
            data = fh.read()
        parse(data)
        if f.endswith(".dsym") and b"g_emitter\0" in data:
            holder = f
    c.eq("the program's symbol answers are cached", True, holder is not None)
    if not holder:
        return
    # the warm answer is the cache's: a name edited in it is what the shell shows
    edit_cache_file(os.path.join(d, holder), b"g_emitter", b"g_emittez")
    c.eq("shell output from the edited answers",
         base.replace(b"g_emitter (", b"g_emittez ("), shell(d))
    # the program rebuilt (another build id, same path and size): its own table answers
    old_id = bytes.fromhex(holder[:-len(".dsym")])
    with open(prog, "rb") as fh:
        elf = bytearray(fh.read())
    at = elf.find(b"GNU\0" + old_id)
    c.eq("the build id is in the program's file once", True,
         at > 0 and elf.find(b"GNU\0" + old_id, at + 1) < 0)
    new_id = bytes([old_id[0] ^ 0xFF]) + old_id[1:]
    elf[at + 4:at + 4 + len(old_id)] = new_id
    with open(prog, "wb") as fh:
        fh.write(elf)
    c.eq("shell output after the rebuild = no cache", base, shell(d))
    new_file = os.path.join(d, new_id.hex() + ".dsym")
    c.eq("the rebuilt program has its own answers file", True, os.path.exists(new_file))
    if os.path.exists(new_file):
        with open(new_file, "rb") as fh:
            c.eq("its answers name g_emitter", True, b"g_emitter\0" in fh.read())


CASES = {"dsym": case_dsym, "identical": case_identical, "used": case_used, "corrupt": case_corrupt,
         "unsafe": case_unsafe, "default": case_default, "vars": case_vars,
         "nodebuginfod": case_nodebuginfod}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--case", required=True, choices=sorted(CASES))
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    c = Ctx(a.build, a.case, a.v)
    try:
        CASES[a.case](c)
    except Failure as e:
        c.failures.append(str(e))
    if c.failures:
        print("FAIL e2e.symcache.%s:\n  %s" % (a.case, "\n  ".join(c.failures)))
        return 1
    print("ok e2e.symcache.%s" % a.case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
