#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""End-to-end tests of programs that drop privileges under the agent (agent/ticker.c,
"Credentials"): glibc repeats a setuid-family call on every thread and aborts the process
when one fails, and capabilities are per thread; the agent's thread must never be the one
that fails, and must keep no privilege the program gave up. Run as root (skipped
otherwise): progs/priv_drop.c (capset between setresuid and setgroups/setresgid), setpriv,
nginx with a `user` directive, memcached -u, and unshare -U (one thread wanted). Exact
leak figures and exit statuses.

Usage:
  run_privs.py --build DIR --case NAME [--keep] [-v]
  run_privs.py --build DIR --all
  run_privs.py --list
"""

import atexit
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_e2e as E  # noqa: E402  (the shared helpers: Ctx, run, load_report)

# priv_drop's blocks: 3 of 777 bytes lost, 2 of 555 held by a global.
LOST = {"definitely_lost": (2331, 3)}


def need_root():
    if os.geteuid() != 0:
        raise E.Skip("needs root (the programs drop root's privileges)")


def classes(rep):
    ls = rep.get("leak_summary") or {}
    return dict((k, (v["bytes"], v["blocks"])) for k, v in ls.items())


def expect_priv_drop(ctx, trace, label):
    rep = E.load_report(ctx, trace)
    summ = rep["summary"]
    ctx.check(summ.get("clean_exit") is True and summ.get("exit_status") == 0,
              label + "the trace's exit", "clean exit, status 0",
              (summ.get("exit_kind"), summ.get("exit_status")))
    got = classes(rep).get("definitely_lost")
    ctx.check(got == LOST["definitely_lost"], label + "definitely lost (bytes, blocks)",
              LOST["definitely_lost"], got)
    E.expect_site(ctx, rep, "priv_lost", 3, 2331, allocations=3, label=label)
    E.expect_site(ctx, rep, "priv_held", 2, 1110, allocations=2, label=label)


def no_empty_reservations(ctx):
    """The contents files the agent reserved before the drop (or chroot) and no snapshot
    used are gone: `leakhound run` removes them once the process ended (it could not)."""
    empty = sorted(f for f in os.listdir(ctx.workdir) if f.endswith(".lhs") and
                   os.path.getsize(os.path.join(ctx.workdir, f)) == 0)
    ctx.check(empty == [], "no empty snapshot contents file left", [], empty)


def where_nobody_reaches(ctx, progs=()):
    """Moves the case's files to a directory nobody can reach and write: the checkout may
    sit in a directory only root can enter (CI clones into a 0700 parent), where a program
    that became nobody can neither load the agent, nor be executed, nor write its trace,
    nor serve a file. The agent (LEAKHOUND_AGENT) and progs are copied there; returns
    {prog: its copy}. The directory goes when the case passed."""
    d = tempfile.mkdtemp(prefix="leakhound-privs.", dir=tempfile.gettempdir())
    os.chmod(d, 0o777)
    ctx.workdir = d
    atexit.register(lambda: None if ctx.failures else shutil.rmtree(d, ignore_errors=True))
    agent = os.path.join(d, "libleakhound.so")
    shutil.copy(os.path.join(ctx.build, "lib", "libleakhound.so"), agent)
    os.chmod(agent, 0o755)
    os.environ["LEAKHOUND_AGENT"] = agent
    copies = {}
    for name in progs:
        copies[name] = os.path.join(d, name)
        shutil.copy(ctx.prog(name), copies[name])
        os.chmod(copies[name], 0o755)
    return copies


def case_capdrop(ctx):
    """priv_drop: PR_SET_KEEPCAPS, setresuid(nobody), capset raising CAP_SETGID on the main
    thread, setgroups and setresgid (glibc aborted on the agent's thread, which had lost
    CAP_SETGID), capset dropping all: exits 0 as without the agent, every thread (the
    agent's included) with the main thread's credentials, the exact leaks."""
    need_root()
    bare = E.run(ctx, [ctx.prog("priv_drop")])
    want = ["uid 65534 gid 65534", "threads 1 same"]
    ctx.check(bare.returncode == 0 and bare.stdout.splitlines() == want, "without the agent",
              "exit 0, %s" % want, "exit %d, %r %s" % (bare.returncode, bare.stdout,
                                                       bare.stderr[-300:]))
    trace = os.path.join(ctx.workdir, "priv.lht")
    res = E.lh_run(ctx, [ctx.prog("priv_drop")], out=trace)
    lines = res.stdout.splitlines()
    # The agent's thread is running: two threads, the same credentials and capabilities.
    want = ["uid 65534 gid 65534", "threads 2 same"]
    ctx.check(lines == want, "under the agent: its output", want, lines)
    expect_priv_drop(ctx, trace, "")
    no_empty_reservations(ctx)


def case_setpriv(ctx):
    """setpriv --reuid=nobody --regid=nogroup --init-groups -- priv_drop norun: exits 0
    (it aborted), and the program it runs as nobody has its own trace with the exact
    leaks."""
    need_root()
    if not shutil.which("setpriv"):
        raise E.Skip("no setpriv")
    prog = where_nobody_reaches(ctx, ["priv_drop"])["priv_drop"]  # it writes its trace
    trace = os.path.join(ctx.workdir, "sp.lht")
    E.lh_run(ctx, ["setpriv", "--reuid=nobody", "--regid=nogroup", "--init-groups", "--",
                   prog, "norun"], out=trace, expect_status=0)
    rep = E.load_report(ctx, trace)
    ctx.check(rep["summary"].get("exit_kind") == "exec", "setpriv's trace ends in its exec",
              "exec", rep["summary"].get("exit_kind"))
    expect_priv_drop(ctx, trace + ".1", "priv_drop's trace: ")


def case_chroot(ctx):
    """priv_drop jail DIR: a fork child that chroots into an empty directory before it
    allocates anything (sshd's pre-authentication child in /run/sshd), then leaks: its
    trace is made before the chroot (agent/shims.c chroot; it was made on first use, by a
    name that no longer existed: "cannot create trace file", nothing recorded), and holds
    its exit and its exact leaks."""
    need_root()
    jail = os.path.join(ctx.workdir, "jail")
    os.mkdir(jail)
    trace = os.path.join(ctx.workdir, "jail.lht")
    res = E.lh_run(ctx, [ctx.prog("priv_drop"), "jail", jail], out=trace)
    m = re.match(r"child (\d+)$", res.stdout.strip())
    if not m:
        raise E.Failure("no 'child PID' line: %r" % res.stdout)
    child = "%s.%s" % (trace, m.group(1))
    ctx.check("cannot create trace file" not in res.stderr, "no failure to create a trace",
              "", res.stderr[-400:])
    if not os.path.exists(child):
        raise E.Failure("no trace of the jailed child %s: %s" % (child, res.stderr[-400:]))
    expect_priv_drop(ctx, child, "the jailed child's trace: ")
    no_empty_reservations(ctx)


def case_unshare(ctx):
    """unshare -U -r -- priv_drop norun (a new user namespace wants a process of one
    thread: it failed with EINVAL beside the agent's): exits 0, and the program's trace
    has its exact leaks. Skipped where user namespaces are not allowed."""
    if not shutil.which("unshare"):
        raise E.Skip("no unshare")
    argv = ["unshare", "-U", "-r", "--", ctx.prog("priv_drop"), "norun"]
    bare = E.run(ctx, argv)
    if bare.returncode != 0:
        raise E.Skip("unshare -U fails here without the agent too: " + bare.stderr.strip())
    trace = os.path.join(ctx.workdir, "u.lht")
    E.lh_run(ctx, argv, out=trace, expect_status=0)
    rep = E.load_report(ctx, trace)
    E.expect_program(ctx, rep, "priv_drop")
    expect_priv_drop(ctx, trace, "")


# ---------------------------------------------------------------------------------------
# Servers started as root that drop privileges
# ---------------------------------------------------------------------------------------

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port, p, what):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if p.poll() is not None:
            raise E.Failure("%s ended early with status %s" % (what, p.returncode))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise E.Failure("%s: nothing listens on port %d after 30 s" % (what, port))


def talk(port, data):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return out
            out += chunk


def users_of(pids):
    """The real uid of each pid (from /proc): {pid: uid}."""
    got = {}
    for pid in pids:
        try:
            with open("/proc/%d/status" % pid) as f:
                for ln in f:
                    if ln.startswith("Uid:"):
                        got[pid] = int(ln.split()[1])
        except OSError:
            pass
    return got


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def stop(ctx, p, pid, sig, what):
    """Sends sig to pid, then waits (60 s at most) for p: (status, stderr)."""
    os.kill(pid, sig)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise E.Failure("%s did not end within 60 s of its signal" % what)
    ctx.log("%s: exit %s; stderr: %s" % (what, p.returncode, err.decode(errors="replace")))
    return p.returncode, err.decode(errors="replace")


def start(ctx, argv):
    ctx.log("$ " + " ".join(argv))
    return subprocess.Popen(argv, cwd=ctx.workdir, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)


def serve(ctx, argv, trace, traced, name, port):
    """Starts the server argv (under `leakhound run -o trace` when traced) and waits until
    it listens on port: (Popen, what to call it, the server's own pid)."""
    if traced:
        argv = [ctx.lh, "run", "-o", trace, "--"] + argv
    p = start(ctx, argv)
    what = "%s%s" % (name, " (traced)" if traced else "")
    wait_port(port, p, what)
    return p, what, children(p.pid)[0] if traced else p.pid


def case_nginx(ctx):
    """nginx as root with `user nobody nogroup;` and 2 workers, under `leakhound run`:
    the workers run as nobody and serve a file as the bare server does; the master's trace
    and each worker's load; SIGQUIT (graceful stop) ends the master with status 0."""
    need_root()
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK)
                                      else None)
    if not nginx:
        raise E.Skip("no nginx")
    where_nobody_reaches(ctx)  # the workers, nobody, write their traces and serve files
    for sub in ("logs", "html", "tmp"):
        os.makedirs(os.path.join(ctx.workdir, sub))
    with open(os.path.join(ctx.workdir, "html", "index.html"), "w") as f:
        f.write("privs ok\n")
    os.chmod(os.path.join(ctx.workdir, "html"), 0o755)
    got = {}
    for traced in (False, True):
        port = free_port()
        conf = os.path.join(ctx.workdir, "nginx.%d.conf" % traced)
        with open(conf, "w") as f:
            f.write("""user nobody nogroup;
worker_processes 2;
daemon off;
master_process on;
pid %(d)s/nginx.%(t)d.pid;
error_log %(d)s/logs/error.%(t)d.log;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path %(d)s/tmp; proxy_temp_path %(d)s/tmp;
    fastcgi_temp_path %(d)s/tmp; uwsgi_temp_path %(d)s/tmp; scgi_temp_path %(d)s/tmp;
    server { listen 127.0.0.1:%(p)d; root %(d)s/html; }
}
""" % {"d": ctx.workdir, "p": port, "t": traced})
        argv = [nginx, "-p", ctx.workdir, "-c", conf, "-e", os.path.join(ctx.workdir, "logs",
                                                                         "stderr.log")]
        p, what, master = serve(ctx, argv, os.path.join(ctx.workdir, "ngx.lht"), traced,
                                "nginx", port)
        body = talk(port, b"GET /index.html HTTP/1.0\r\nHost: x\r\n\r\n")
        deadline = time.monotonic() + 20  # a worker may still be starting
        while True:
            uids = sorted(users_of(children(master)).values())
            if uids == [65534, 65534] or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        rc, err = stop(ctx, p, master, signal.SIGQUIT, what)  # run passes on no SIGQUIT
        got[traced] = (rc, body.split(b"\r\n")[0], body.split(b"\r\n\r\n")[-1], uids)
    want = (0, b"HTTP/1.1 200 OK", b"privs ok\n", [65534, 65534])
    ctx.check(got[False] == want, "bare nginx: exit, status line, body, workers' uids", want,
              got[False])
    ctx.check(got[True] == want, "nginx under leakhound run", want, got[True])
    traces = sorted(f for f in os.listdir(ctx.workdir) if re.match(r"^ngx\.lht(\.\d+)?$", f))
    ctx.check(len(traces) == 3, "traces: the master's and each worker's", 3, traces)
    for f in traces:
        rep = E.load_report(ctx, os.path.join(ctx.workdir, f))
        summ = rep["summary"]
        ctx.check(summ.get("clean_exit") is True and summ.get("exit_status") == 0,
                  "%s: a clean exit, status 0" % f, "clean, 0",
                  (summ.get("exit_kind"), summ.get("exit_status")))
        ctx.check(summ.get("unmatched_frees") == 0, "%s: every free matched" % f, 0,
                  summ.get("unmatched_frees"))


def case_memcached(ctx):
    """memcached -u nobody as root under `leakhound run`: it runs as nobody, stores and
    returns a value as the bare server does; SIGTERM, which memcached handles itself,
    ends it with status 0 and a clean exit in the trace."""
    need_root()
    mc = shutil.which("memcached")
    if not mc:
        raise E.Skip("no memcached")
    got = {}
    for traced in (False, True):
        port = free_port()
        argv = [mc, "-u", "nobody", "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-t", "2"]
        p, what, pid = serve(ctx, argv, os.path.join(ctx.workdir, "mc.lht"), traced,
                             "memcached", port)
        out = talk(port, b"set k 0 0 5\r\nhello\r\nget k\r\nquit\r\n")
        uid = users_of([pid]).get(pid)
        rc, _ = stop(ctx, p, p.pid, signal.SIGTERM, what)
        got[traced] = (out, uid, rc)
    want = (b"STORED\r\nVALUE k 0 5\r\nhello\r\nEND\r\n", 65534, 0)
    ctx.check(got[False] == want, "bare memcached: replies, uid, status", want, got[False])
    ctx.check(got[True] == want, "memcached under leakhound run", want, got[True])
    rep = E.load_report(ctx, os.path.join(ctx.workdir, "mc.lht"))
    summ = rep["summary"]
    got = (summ.get("clean_exit"), summ.get("exit_status"), summ.get("unmatched_frees"))
    ctx.check(got == (True, 0, 0), "memcached's trace: a clean exit, status 0, every free "
              "matched", (True, 0, 0), got)


CASES = {name[5:]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}


if __name__ == "__main__":
    sys.exit(E.cases_main("privs", CASES, __doc__))
