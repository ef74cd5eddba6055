#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""End-to-end tests of issue 15, `leakhound attach -p PID`: a loopback server that leaks
on every request (progs/attach_server.c) is attached after some requests and detached
after more; the leak site and per-request figures are exact, the server answers every
request during and after, and its heap grows no faster after the detach than before. A
process attached and detached many times stays correct and alive. Perl and python servers
get their script lines after an attach as under `run`. Bad targets get one line each and
are left as they were.

Usage:
  run_attach.py --build DIR --case NAME [--keep] [-v]
  run_attach.py --list
Exit status: 0 pass, 1 fail, 2 usage error, 77 skipped (no gdb, no ptrace, not x86-64/aarch64).
"""

import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_e2e as E  # noqa: E402  (the shared helpers: Ctx, run, load_report, markers)

Failure = E.Failure


Skip = E.Skip


# ---------------------------------------------------------------------------------------
# The server and its client
# ---------------------------------------------------------------------------------------

class Server:
    """attach_server in its own session, with one persistent connection."""

    def __init__(self, ctx, argv=None):
        self.ctx = ctx
        self.p = subprocess.Popen(argv or [ctx.prog("attach_server")], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, start_new_session=True,
                                  cwd=ctx.workdir)
        line = self.p.stdout.readline().decode().strip()
        if not line.isdigit():
            self.stop()
            raise Failure("attach_server did not print its port: %r" % line)
        self.port = int(line)
        self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=120)
        self.rfile = self.sock.makefile("rb")
        self.answered = 0

    @property
    def pid(self):
        return self.p.pid

    def ask(self, what):
        self.sock.sendall(what.encode() + b"\n")
        line = self.rfile.readline().decode().strip()
        if not line:
            raise Failure("attach_server (pid %d) did not answer %r: %s"
                          % (self.pid, what, "exited %s" % self.p.poll()
                             if self.p.poll() is not None else "connection closed"))
        self.answered += 1
        return line

    def requests(self, n):
        last = None
        for _ in range(n):
            last = self.ask("REQ")
        return int(last.split()[1]) if last else None



    def heap(self):
        return int(self.ask("STATS").split()[1])

    def alive(self):
        return self.p.poll() is None and state(self.pid) not in ("Z", "X", "t", "T", None)

    def stop(self):
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.p.wait()


def state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def tracer(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("TracerPid:"):
                return int(line.split()[1])
    return None


class Attach:
    """`leakhound attach -p PID -o TRACE` in the background until stop()."""

    def __init__(self, ctx, pid, trace, extra=()):
        self.ctx = ctx
        self.trace = trace
        argv = [ctx.lh, "attach", "-p", str(pid), "-o", trace] + list(extra)
        ctx.log("$ " + " ".join(argv))
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  start_new_session=True, cwd=ctx.workdir)
        line = self.p.stderr.readline().decode()
        if "attached to process" not in line:
            out, err = self.p.communicate(timeout=120)
            if "cannot trace process" in line + err.decode():
                # A container without CAP_SYS_PTRACE, a restrictive LSM: not ours to test.
                raise Skip("this machine does not let us ptrace: " + line.strip())
            raise Failure("`leakhound attach -p %d` did not attach\n    got: exit %s, %s%s"
                          % (pid, self.p.returncode, line, err.decode()[-800:]))

    def stop(self):
        self.p.send_signal(signal.SIGINT)
        try:
            out, err = self.p.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            os.killpg(self.p.pid, signal.SIGKILL)
            raise Failure("`leakhound attach` did not detach within 180 s")
        self.ctx.check(self.p.returncode == 0, "exit status of leakhound attach", 0,
                       "%d (stderr: %s)" % (self.p.returncode, err.decode()[-800:]))
        return out.decode()


def site_of(rep, name):
    s = E.sites_at(rep, name)
    return s[0] if len(s) == 1 else None


def need_gdb():
    if platform.machine() not in ("x86_64", "aarch64"):
        raise Skip("attach supports x86-64 and aarch64 only")
    if not shutil.which("gdb"):
        raise Skip("gdb is not installed (scripts/deps.sh test)")
    try:
        with open("/proc/sys/kernel/yama/ptrace_scope") as f:
            if int(f.read()) >= 1 and os.geteuid() != 0:
                raise Skip("kernel.yama.ptrace_scope forbids attaching as non-root")
    except OSError:
        pass


# ---------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------

N_BEFORE = 1000
N_DURING = 1000
N_AFTER = 1000


def case_server(ctx):
    """Attached after 1,000 requests, detached after 1,000 more: exact leak figures, every
    request answered (also while gdb holds the process), heap growth unchanged after."""
    need_gdb()
    srv = Server(ctx)
    try:
        srv.requests(50)  # the ring (RING in attach_server.c) is full from here on
        heap0 = srv.heap()
        srv.requests(N_BEFORE - 50)
        heap1 = srv.heap()
        before = (heap1 - heap0) / (N_BEFORE - 50)
        trace = os.path.join(ctx.workdir, "attach.lht")
        # A client pinging while gdb attaches and detaches: every ping is answered.
        pinger = subprocess.Popen(
            [sys.executable, "-c",
             "import socket,sys,time\n"
             "s=socket.create_connection(('127.0.0.1',%d),timeout=300);f=s.makefile('rb')\n"
             "n=0;worst=0.0\n"
             "end=time.monotonic()+1e9\n"
             "while True:\n"
             "    t=time.monotonic();s.sendall(b'PING\\n');l=f.readline()\n"
             "    if l!=b'pong\\n': print('bad',l,flush=True);sys.exit(1)\n"
             "    n+=1;worst=max(worst,time.monotonic()-t)\n"
             "    if sys.stdin in __import__('select').select([sys.stdin],[],[],0.005)[0]:\n"
             "        break\n"
             "print(n,worst,flush=True)\n" % srv.port],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        att = Attach(ctx, srv.pid, trace)
        last = srv.requests(N_DURING)
        ctx.check(last == N_BEFORE + N_DURING, "requests answered while attached",
                  N_BEFORE + N_DURING, last)
        out = att.stop()
        pinger.stdin.write("x\n")
        pinger.stdin.flush()
        pout, _ = pinger.communicate(timeout=60)
        ctx.check(pinger.returncode == 0, "every PING answered during attach and detach",
                  "exit 0", "%s %s" % (pinger.returncode, pout))
        ctx.log("pings: %s" % pout.strip())
        ctx.check(srv.alive() and tracer(srv.pid) == 0, "server running, not traced, after "
                  "the detach", "alive, TracerPid 0", "state %s, TracerPid %s"
                  % (state(srv.pid), tracer(srv.pid)))
        ctx.check("stopped by gdb about" in out, "attach's summary line",
                  "stopped by gdb about ...", out)
        heap2 = srv.heap()
        last = srv.requests(N_AFTER)
        heap3 = srv.heap()
        after = (heap3 - heap2) / N_AFTER
        ctx.check(last == N_BEFORE + N_DURING + N_AFTER, "requests answered after detach",
                  N_BEFORE + N_DURING + N_AFTER, last)
        ctx.check(after <= before, "heap growth per request after the detach is no faster "
                  "than before the attach", "<= %.1f B" % before, "%.1f B" % after)
        rep = E.load_report(ctx, trace)
        summ = rep["summary"]
        ctx.check(summ.get("exit_kind") == "detach", "exit kind", "detach",
                  summ.get("exit_kind"))
        # Exactly one leaked 100-byte block per request recorded, at the leaking line.
        E.expect_site(ctx, rep, "attach_request", N_DURING, 100 * N_DURING,
                      allocations=N_DURING, function="remember_request")
        # The ring holds the last 50 requests' blocks at the detach; the 50 it held at the
        # attach were allocated before it: their frees are unmatched, counted apart.
        ring = site_of(rep, "attach_ring")
        ctx.check(ring is not None and ring.get("leaked_blocks") == 50 and
                  ring.get("allocations") == N_DURING,
                  "ring site: live at the detach / allocations", "50 / %d" % N_DURING,
                  ring and "%s / %s" % (ring.get("leaked_blocks"), ring.get("allocations")))
        ctx.check(summ.get("unmatched_frees") == 50, "frees of blocks allocated before the "
                  "attach (unmatched frees)", 50, summ.get("unmatched_frees"))
        ctx.check(summ.get("leaked_blocks") == N_DURING + 50, "blocks live at the detach",
                  N_DURING + 50, summ.get("leaked_blocks"))
        res = E.run(ctx, [ctx.lh, "report", trace])
        ctx.check("frees of blocks allocated before tracing started" in res.stdout,
                  "text report names the unmatched frees", "a line about them",
                  res.stdout[-800:])
    finally:
        srv.stop()


def case_loop(ctx):
    """Attached and detached N times (LH_ATTACH_LOOPS, default 100): every trace exact,
    the server alive and answering throughout."""
    need_gdb()
    loops = int(os.environ.get("LH_ATTACH_LOOPS", "100"))
    srv = Server(ctx)
    try:
        srv.requests(60)
        for i in range(loops):
            trace = os.path.join(ctx.workdir, "loop.%d.lht" % i)
            att = Attach(ctx, srv.pid, trace, ["--unwind", "fp"])
            srv.requests(5)
            att.stop()
            ctx.check(srv.alive() and tracer(srv.pid) == 0, "server alive after cycle %d" % i,
                      "alive", state(srv.pid))
            rep = E.load_report(ctx, trace)
            s = site_of(rep, "attach_request")
            ok = ctx.check(s is not None and s.get("leaked_blocks") == 5 and
                           s.get("leaked_bytes") == 500,
                           "cycle %d: leaked at attach_request" % i, "500 B in 5 blocks",
                           s and "%s B in %s blocks" % (s.get("leaked_bytes"),
                                                         s.get("leaked_blocks")))
            ok = ctx.check(rep["summary"].get("unmatched_frees") == 5,
                           "cycle %d: unmatched frees (ring blocks from before)" % i, 5,
                           rep["summary"].get("unmatched_frees")) and ok
            if not ok:
                break
            os.unlink(trace)
        last = srv.requests(10)
        ctx.check(last == 60 + 5 * loops + 10, "requests answered after %d cycles" % loops,
                  60 + 5 * loops + 10, last)
    finally:
        srv.stop()


SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "attach")


def leak_line(script, tag):
    with open(script, encoding="utf-8") as f:
        for n, text in enumerate(f, 1):
            if "LEAK: " + tag in text:
                return n
    raise SystemExit("run_attach: no LEAK: %s in %s" % (tag, script))


def script_case(ctx, argv, script, tag, function):
    """A perl or python server attached after 100 requests, detached after 300 more: the
    site is the script line, with exactly 300 blocks; the server answers before, during
    and after."""
    need_gdb()
    srv = Server(ctx, argv + [script])
    try:
        srv.requests(100)
        trace = os.path.join(ctx.workdir, "script.lht")
        att = Attach(ctx, srv.pid, trace)
        last = srv.requests(300)
        att.stop()
        last = srv.requests(100)
        ctx.check(last == 500 and srv.alive() and tracer(srv.pid) == 0,
                  "server answers every request, untraced after the detach",
                  "ok 500, alive", "%s, state %s" % (last, state(srv.pid)))
        line = leak_line(script, tag)

        # perl's SV arena slabs, taken at the line for SVs made anywhere, are a site of
        # their own in the default view (scriptstack.h); the line's own blocks are the rest
        arena = ("perl SV arena (room for new SVs, shared by all code)",
                 "Perl_more_bodies", "Perl_more_sv", "S_more_sv", "S_more_he")

        def at_line(rep):
            found = []
            for site in rep["sites"]:
                if any(f.get("function") in arena for f in site.get("frames") or []):
                    continue
                # the innermost script frame (with --native, C frames come before it)
                fr = next((f for f in site.get("frames") or []
                           if f.get("language") in ("perl", "python")), {})
                if (fr.get("function") == function and fr.get("line") == line and
                        os.path.basename(fr.get("file") or "") == os.path.basename(script)):
                    found.append(site)
            return found, "; ".join(E.fmt_site(x) for x in rep["sites"][:4])

        # --native keeps one site per recorded stack: the line's own blocks are one site;
        # the container they go into (@CACHE, the list) grows by realloc at the same line,
        # under other native stacks.
        nat = E.load_report(ctx, trace, ["--native"])
        found, top = at_line(nat)
        ctx.check(len(found) >= 1, "--native: a site at %s (%s:%d)" % (function, script, line),
                  ">= 1", "none; top sites: %s" % top)
        if found:
            big = max(found, key=lambda x: x.get("leaked_blocks", 0))
            ctx.check(big.get("leaked_blocks") == 300 and big.get("allocations") == 300 and
                      big is nat["sites"][0],
                      "%s: --native top site; leaked blocks / allocations while attached"
                      % function, "top, 300 / 300", "%s / %s; top sites: %s"
                      % (big.get("leaked_blocks"), big.get("allocations"), top))
        # The default view shows the script line once: one site, the top one, holding the
        # sum of the native stacks at that line.
        rep = E.load_report(ctx, trace)
        merged, top = at_line(rep)
        want = (sum(x.get("leaked_blocks", 0) for x in found),
                sum(x.get("allocations", 0) for x in found))
        got = (merged[0].get("leaked_blocks"), merged[0].get("allocations")) if merged else None
        ctx.check(len(merged) == 1 and merged[0] is rep["sites"][0] and got == want,
                  "%s: one site at the line, the top one, with the --native sums" % function,
                  "1 site, top, %s" % (want,), "%d sites, %s; top sites: %s"
                  % (len(merged), got, top))
    finally:
        srv.stop()


def case_perl(ctx):
    if not shutil.which("perl"):
        raise Skip("no perl")
    script_case(ctx, ["perl"], os.path.join(SCRIPTS, "leaky_server.pl"), "perl_request",
                "main::remember")


def case_python(ctx):
    py = "/usr/bin/python3"
    if not os.path.exists(py):
        raise Skip("no Debian python3")
    script_case(ctx, [py], os.path.join(SCRIPTS, "leaky_server.py"), "python_request",
                "__main__.remember")


def expect_refusal(ctx, argv, needle, what, env=None):
    res = E.run(ctx, argv, env=env)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    ctx.check(res.returncode != 0 and len(lines) == 1 and needle in lines[0],
              "%s: one line naming the problem, non-zero exit" % what, "*%s*" % needle,
              "exit %d, stderr %r" % (res.returncode, res.stderr[-600:]))


def untouched(ctx, pid, what, want_state=None):
    st = state(pid)
    ok = st is not None and (st == want_state if want_state else st in ("S", "R", "D"))
    ctx.check(ok and tracer(pid) == 0, "%s: the process is left as it was" % what,
              want_state or "running, TracerPid 0", "state %s, TracerPid %s"
              % (st, tracer(pid) if st else None))


def case_badtargets(ctx):
    """A PID that does not exist, a zombie, a static binary, a jemalloc program, a seccomp
    filter, another user's process as non-root: one line each, the target untouched."""
    need_gdb()
    lh = ctx.lh
    trace = os.path.join(ctx.workdir, "bad.lht")
    # A pid that does not exist: the highest free one below pid_max.
    with open("/proc/sys/kernel/pid_max") as f:
        pid = int(f.read()) - 1
    while os.path.exists("/proc/%d" % pid):
        pid -= 1
    expect_refusal(ctx, [lh, "attach", "-p", str(pid), "-o", trace], "no process",
                   "nonexistent pid")
    # A zombie: a child that exited and that its parent (python, here) has not reaped.
    z = subprocess.Popen(["true"])
    for _ in range(500):
        if state(z.pid) == "Z":
            break
        time.sleep(0.01)
    expect_refusal(ctx, [lh, "attach", "-p", str(z.pid), "-o", trace], "zombie", "zombie")
    untouched(ctx, z.pid, "zombie", "Z")
    z.wait()
    procs = []
    try:
        # A static binary.
        static = ctx.prog("attach_static")
        p = subprocess.Popen([static], stdout=subprocess.PIPE, start_new_session=True)
        procs.append(p)
        p.stdout.readline()
        expect_refusal(ctx, [lh, "attach", "-p", str(p.pid), "-o", trace], "static",
                       "static binary")
        untouched(ctx, p.pid, "static binary")
        # A program on jemalloc (preloaded, as a program linked with it would load it).
        jem = "/usr/lib/%s-linux-gnu/libjemalloc.so.2" % platform.machine()
        if os.path.exists(jem):
            env = dict(os.environ, LD_PRELOAD=jem)
            p = subprocess.Popen([ctx.prog("attach_server")], stdout=subprocess.PIPE,
                                 start_new_session=True, env=env)
            procs.append(p)
            p.stdout.readline()
            expect_refusal(ctx, [lh, "attach", "-p", str(p.pid), "-o", trace], "jemalloc",
                           "jemalloc program")
            untouched(ctx, p.pid, "jemalloc program")
        else:
            ctx.log("no %s: jemalloc case not run" % jem)
        # A seccomp filter.
        p = subprocess.Popen([ctx.prog("attach_static"), "seccomp"], stdout=subprocess.PIPE,
                             start_new_session=True)
        procs.append(p)
        p.stdout.readline()
        expect_refusal(ctx, [lh, "attach", "-p", str(p.pid), "-o", trace], "seccomp",
                       "seccomp filter")
        untouched(ctx, p.pid, "seccomp filter")
        # Another user's process, as a non-root user: leakhound runs as nobody against a
        # process of ours (root's). Copied where nobody may run it (CI's checkout is 0700).
        if os.geteuid() == 0:
            tmp = tempfile.mkdtemp(prefix="lh-attach-")
            try:
                os.chmod(tmp, 0o755)
                os.makedirs(os.path.join(tmp, "bin"))
                os.makedirs(os.path.join(tmp, "lib"))
                shutil.copy2(lh, os.path.join(tmp, "bin", "leakhound"))
                shutil.copy2(os.path.join(ctx.build, "lib", "libleakhound_attach.so"),
                             os.path.join(tmp, "lib"))
                for d in ("", "bin", "lib"):
                    os.chmod(os.path.join(tmp, d), 0o755)
                srv = Server(ctx)
                try:
                    expect_refusal(ctx, ["setpriv", "--reuid=65534", "--regid=65534",
                                         "--clear-groups",
                                         os.path.join(tmp, "bin", "leakhound"), "attach",
                                         "-p", str(srv.pid), "-o", "/tmp/never.lht"],
                                   "another user", "another user's process as non-root")
                    untouched(ctx, srv.pid, "another user's process")
                    srv.requests(3)
                finally:
                    srv.stop()
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        ctx.check(not os.path.exists(trace), "no trace written for a refused target",
                  "no %s" % trace, "it exists")
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


CASES = {
    "server": case_server,
    "perl": case_perl,
    "python": case_python,
    "loop": case_loop,
    "badtargets": case_badtargets,
}


def main():
    return E.cases_main('attach', CASES, __doc__)


if __name__ == "__main__":
    sys.exit(main())
