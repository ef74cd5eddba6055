#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""Real programs under load: servers (redis-server, nginx with its workers) driven by
their benchmark clients on 127.0.0.1, and allocation-heavy runs of python3, perl, sqlite3
and a C++ program, each once bare and once under `leakhound run`.

What must hold: the traced program does what the bare one does (same stdout and exit
status; for servers, every request answered and the same answers to a few fixed
queries), it neither crashes nor hangs (every command has a timeout; servers are started
on a free port in their own process group and killed with it whatever happens), every
trace it leaves (one per process: nginx's workers are fork children) loads with
`leakhound report --format json`, and the report's figures agree with each other.

Usage: run_load.py --build DIR --case redis|nginx|python3|perl|sqlite3|cxx|memcached|haproxy|
                   postgres [--keep] [-v]
Exit status: 0 pass, 1 fail, 77 the program is not installed (CTest: skipped).
"""

import argparse
import glob
import os
import re
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "stress"))
import harness as H  # noqa: E402


def lh_argv(ctx, out):
    return [ctx.lh, "run", "-o", out, "--"]


def check_trace(ctx, trace, what, clean_exit=True):
    rep = H.report(ctx, trace)
    if rep is None:
        return None
    summ = rep.get("summary") or {}
    H.check_totals(ctx, trace, summ, clean_exit=clean_exit)
    ctx.check(summ.get("total_allocations", 0) > 0, "%s: allocations recorded" % what, "> 0",
              summ.get("total_allocations"))
    ctx.check(summ.get("dropped_events", 0) == 0, "%s: dropped events" % what, 0,
              summ.get("dropped_events"))
    return summ


def summary_line(summ):
    return ("%s allocations, %s frees, %s reallocs, %s leaked blocks (%s B), %s unmatched "
            "frees, %s events" % (summ.get("total_allocations"), summ.get("total_frees"),
                                  summ.get("total_reallocs"), summ.get("leaked_blocks"),
                                  summ.get("leaked_bytes"), summ.get("unmatched_frees"),
                                  summ.get("total_events")))


# ---------------------------------------------------------------------------------------
# Batch programs: bare and traced, same stdout and exit status
# ---------------------------------------------------------------------------------------

def batch(ctx, name, argv_of, env_extra=None, stdin_file=None, timeout=120):
    results = []
    for traced in (False, True):
        sub = ctx.path("traced" if traced else "bare")
        os.makedirs(sub, exist_ok=True)
        argv = argv_of(sub)
        trace = os.path.join(ctx.workdir, "trace.lht")
        if traced:
            argv = lh_argv(ctx, trace) + argv
        stdin = open(stdin_file, "rb") if stdin_file else None
        try:
            res = H.run(ctx, argv, timeout=timeout, env=H.clean_env(env_extra), cwd=sub,
                        stdin=stdin)
        finally:
            if stdin:
                stdin.close()
        results.append(res)
    bare, lh = results
    ctx.check(bare.returncode == 0 and bare.stdout, "bare run", "exit 0 and output",
              "exit %s: %s" % (bare.returncode, bare.stderr[-300:]))
    ctx.check(lh.returncode == bare.returncode, "exit status under the agent", bare.returncode,
              "%s: %s" % (lh.returncode, lh.stderr.strip()[-500:]))
    ctx.check(lh.stdout == bare.stdout, "stdout under the agent is the bare stdout",
              "%d bytes: %r" % (len(bare.stdout), bare.stdout[:300]),
              "%d bytes: %r" % (len(lh.stdout), lh.stdout[:300]))
    ctx.check("<lh>" not in lh.stderr, "no agent message on stderr", "none", lh.stderr[-300:])
    trace = os.path.join(ctx.workdir, "trace.lht")
    if ctx.check(os.path.exists(trace), "trace file", trace, "missing"):
        summ = check_trace(ctx, trace, name)
        if summ:
            ctx.figure("%s: bare %.2f s, traced %.2f s; %s" % (name, bare.secs, lh.secs,
                                                              summary_line(summ)))


def case_python3(ctx):
    py = H.which("python3")
    if not py:
        return H.SKIP
    batch(ctx, "python3", lambda d: [py, "-S", os.path.join(HERE, "objects.py")],
          {"PYTHONMALLOC": "malloc", "PYTHONHASHSEED": "0"})


def case_perl(ctx):
    perl = H.which("perl")
    if not perl:
        return H.SKIP
    batch(ctx, "perl", lambda d: [perl, os.path.join(HERE, "text.pl")])


def case_sqlite3(ctx):
    sq = H.which("sqlite3")
    if not sq:
        return H.SKIP
    batch(ctx, "sqlite3", lambda d: [sq, os.path.join(d, "orders.db")],
          stdin_file=os.path.join(HERE, "orders.sql"))


def case_cxx(ctx):
    prog = os.path.join(ctx.build, "tests", "load", "cxx_load")
    if not H.need(ctx, prog):
        return None
    batch(ctx, "cxx", lambda d: [prog])


# ---------------------------------------------------------------------------------------
# redis-server
# ---------------------------------------------------------------------------------------

def redis_session(ctx, traced, requests):
    """Starts redis-server on a free port (traced or bare), benchmarks it, checks a few
    answers, shuts it down. Returns (exit status, benchmark lines, answers, trace)."""
    server, bench, cli = H.which("redis-server"), H.which("redis-benchmark"), H.which("redis-cli")
    port = H.free_port()
    sub = ctx.path("traced" if traced else "bare")
    os.makedirs(sub, exist_ok=True)
    trace = os.path.join(sub, "redis.lht")
    argv = [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
            "no", "--dir", sub, "--logfile", os.path.join(sub, "redis.log")]
    if traced:
        argv = lh_argv(ctx, trace) + argv
    err = open(os.path.join(sub, "stderr"), "wb")
    p = H.start(ctx, argv, cwd=sub, stderr=err)
    if not ctx.check(H.wait_port(port, 30, p), "redis-server%s listening on 127.0.0.1:%d"
                     % (" (traced)" if traced else "", port), "within 30 s",
                     "not listening (exit %s)" % p.poll()):
        return None, [], [], trace
    b = H.run(ctx, [bench, "-h", "127.0.0.1", "-p", str(port), "-n", str(requests), "-c", "8",
                    "-q", "-t", "set,get,incr,lpush,lpop"], timeout=120, cwd=sub)
    lines = [ln.strip() for ln in re.split(r"[\r\n]+", b.stdout) if "requests per second" in ln]
    ctx.check(b.returncode == 0 and len(lines) == 5, "redis-benchmark%s"
              % (" (traced)" if traced else ""), "exit 0 and 5 results",
              "exit %s: %r %s" % (b.returncode, lines, b.stderr[-300:]))
    answers = []
    for q in (["SET", "lh:key", "hello"], ["GET", "lh:key"], ["INCRBY", "lh:n", "41"],
              ["INCR", "lh:n"], ["RPUSH", "lh:l", "a", "b", "c"], ["LRANGE", "lh:l", "0", "-1"],
              ["EXISTS", "lh:key", "lh:none"]):
        r = H.run(ctx, [cli, "-h", "127.0.0.1", "-p", str(port)] + q, timeout=30, cwd=sub)
        answers.append((" ".join(q), r.returncode, r.stdout.strip()))
    H.run(ctx, [cli, "-h", "127.0.0.1", "-p", str(port), "shutdown", "nosave"], timeout=30,
          cwd=sub)
    rc = H.wait(ctx, p, 60, "redis-server after shutdown nosave")
    err.close()
    return rc, lines, answers, trace


def case_redis(ctx):
    if not all(H.which(p) for p in ("redis-server", "redis-benchmark", "redis-cli")):
        print("SKIP load.redis: redis-server/redis-tools not installed")
        return H.SKIP
    requests = 200000
    rc_bare, lines_bare, ans_bare, _ = redis_session(ctx, False, 20000)
    rc, lines, ans, trace = redis_session(ctx, True, requests)
    ctx.check(rc == rc_bare == 0, "redis-server exit status after shutdown nosave",
              "0 (bare: %s)" % rc_bare, rc)
    ctx.check(ans == ans_bare, "answers of the traced server", ans_bare, ans)
    with open(os.path.join(os.path.dirname(trace), "stderr"), errors="replace") as f:
        stderr = f.read()
    ctx.check("<lh>" not in stderr, "no agent message on stderr", "none", stderr[-300:])
    if ctx.check(os.path.exists(trace), "trace of redis-server", trace, "missing"):
        summ = check_trace(ctx, trace, "redis-server")
        if summ:
            ctx.figure("redis: %d requests x 5 tests (-c 8) served under the agent: %s"
                       % (requests, " | ".join(lines)))
            ctx.figure("redis: trace %s" % summary_line(summ))


# ---------------------------------------------------------------------------------------
# nginx: master + 2 workers (fork children), each with its own trace
# ---------------------------------------------------------------------------------------

NGINX_CONF = """daemon off;
master_process on;
worker_processes 2;
user root;
pid {d}/nginx.pid;
error_log stderr warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {d}/tmp/body;
    proxy_temp_path {d}/tmp/proxy;
    fastcgi_temp_path {d}/tmp/fastcgi;
    uwsgi_temp_path {d}/tmp/uwsgi;
    scgi_temp_path {d}/tmp/scgi;
    server {{
        listen 127.0.0.1:{port};
        root {d}/www;
        location / {{ }}
    }}
}}
"""


def nginx_session(ctx, traced, requests):
    nginx, ab = H.which("nginx"), H.which("ab")
    port = H.free_port()
    d = ctx.path("traced" if traced else "bare")
    for sub in ("tmp", "www"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    body = "".join("line %05d of the leakhound load test page\n" % i for i in range(100))
    with open(os.path.join(d, "www", "index.html"), "w") as f:
        f.write(body)
    conf = os.path.join(d, "nginx.conf")
    with open(conf, "w") as f:
        f.write(NGINX_CONF.format(d=d, port=port))
    argv = [nginx, "-c", conf, "-p", d, "-e", "stderr"]
    if traced:
        # No -o: the default name, leakhound.<program>.<pid>.lht in the working directory,
        # one per process (-o takes its argument literally, % included).
        argv = [ctx.lh, "run", "--"] + argv
    err = open(os.path.join(d, "stderr"), "wb")
    p = H.start(ctx, argv, cwd=d, stderr=err)
    if not ctx.check(H.wait_port(port, 30, p), "nginx%s listening on 127.0.0.1:%d"
                     % (" (traced)" if traced else "", port), "within 30 s",
                     "not listening (exit %s)" % p.poll()):
        return None, {}, d
    a = H.run(ctx, [ab, "-q", "-n", str(requests), "-c", "8", "http://127.0.0.1:%d/" % port],
              timeout=120, cwd=d)
    stats = {}
    for key in ("Complete requests", "Failed requests", "Non-2xx responses",
                "Requests per second", "Document Length"):
        m = re.search(r"^%s:\s+(\S+)" % key, a.stdout, re.M)
        stats[key] = m.group(1) if m else ("0" if key == "Non-2xx responses" else None)
    ctx.check(a.returncode == 0 and stats["Complete requests"] == str(requests)
              and stats["Failed requests"] == "0" and stats["Non-2xx responses"] == "0"
              and stats["Document Length"] == str(len(body)),
              "ab against nginx%s" % (" (traced)" if traced else ""),
              "%d complete, 0 failed, 0 non-2xx, %d bytes each" % (requests, len(body)),
              "exit %s: %s" % (a.returncode, stats))
    # Graceful stop: SIGQUIT to the master (its pid file); the workers finish and exit.
    try:
        with open(os.path.join(d, "nginx.pid")) as f:
            master = int(f.read().strip())
        os.kill(master, signal.SIGQUIT)
    except (OSError, ValueError) as e:
        ctx.fail("nginx pid file", "a pid", e)
        p.terminate()
    rc = H.wait(ctx, p, 60, "nginx after SIGQUIT")
    err.close()
    stats["rc"] = rc
    return rc, stats, d


def case_nginx(ctx):
    if not H.which("nginx") or not H.which("ab"):
        print("SKIP load.nginx: nginx (nginx-light) or ab (apache2-utils) not installed")
        return H.SKIP
    if os.geteuid() != 0:
        print("SKIP load.nginx: needs root (the configuration says user root, so that the "
              "workers can write their traces)")
        return H.SKIP
    requests = 20000
    rc_bare, _, _ = nginx_session(ctx, False, 2000)
    rc, stats, d = nginx_session(ctx, True, requests)
    ctx.check(rc == rc_bare == 0, "nginx exit status after SIGQUIT", "0 (bare: %s)" % rc_bare, rc)
    with open(os.path.join(d, "stderr"), errors="replace") as f:
        stderr = f.read()
    # nginx's SIGUSR2 is its binary upgrade: the agent says once (the master's, before the
    # fork) that it takes no snapshot on it.
    usr2 = re.compile(r"^<lh>: nginx \(pid \d+\) has its own handler of SIGUSR2: the "
                      r"program's choice is kept, and that signal takes no snapshot "
                      r"\(--snapshot-signal picks another\)$")
    said = [ln for ln in stderr.splitlines() if "<lh>" in ln]
    ctx.check(len(said) == 1 and usr2.match(said[0]) and "[alert]" not in stderr and
              "[emerg]" not in stderr, "nginx's and the agent's stderr",
              "one <lh> line (SIGUSR2 is nginx's), no alert or emerg line", stderr[-500:])
    traces = sorted(glob.glob(os.path.join(d, "leakhound.nginx.*.lht")))
    # The master, 2 workers; more if a worker was respawned (it must not be: a crash).
    ctx.check(len(traces) == 3, "one trace per nginx process (master + 2 workers)", 3,
              [os.path.basename(t) for t in traces])
    pids, unmatched = {}, {}
    for t in traces:
        summ = check_trace(ctx, t, os.path.basename(t))
        if summ is None:
            continue
        pids[summ.get("pid")] = summ.get("ppid")
        unmatched[summ.get("pid")] = summ.get("unmatched_frees")
        ctx.figure("nginx %s: %s" % (os.path.basename(t), summary_line(summ)))
    # The workers' parent is the master, whose trace is among them.
    workers = [pid for pid, ppid in pids.items() if ppid in pids]
    ctx.check(len(workers) == 2, "traces of the 2 workers (forked by the traced master)", 2,
              pids)
    # Each worker's trace is seeded with the master's heap at the fork (analysis/trace.h):
    # its frees of the configuration the master built match (read alone: 1968 unmatched).
    ctx.check([unmatched[w] for w in workers] == [0] * len(workers),
              "workers' unmatched frees", [0] * len(workers), [unmatched[w] for w in workers])
    ctx.figure("nginx: %s requests served by 2 traced workers (ab -c 8: %s requests/s, "
               "failed %s)" % (stats.get("Complete requests"), stats.get("Requests per second"),
                               stats.get("Failed requests")))


# ---------------------------------------------------------------------------------------
# memcached: 4 worker threads on libevent, started as root with -u nobody
# ---------------------------------------------------------------------------------------

def memcached_load(port, n):
    """n sets of values 50-449 bytes long, a get of every third key, a delete of every
    other one: the answers to a few fixed gets."""
    import socket
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    f = s.makefile("rb")
    try:
        for i in range(n):
            v = b"v%d:" % i + b"x" * (50 + i % 400)
            s.sendall(b"set key%d 0 0 %d\r\n%s\r\n" % (i, len(v), v))
            if f.readline() != b"STORED\r\n":
                return None
        for i in range(0, n, 3):
            s.sendall(b"get key%d\r\n" % i)
            while f.readline() != b"END\r\n":
                pass
        for i in range(0, n, 2):
            s.sendall(b"delete key%d\r\n" % i)
            f.readline()
        answers = []
        for key in (b"key1", b"key2", b"key%d" % (n - 1)):
            s.sendall(b"get " + key + b"\r\n")
            lines = []
            while True:
                ln = f.readline()
                lines.append(ln[:40])
                if ln in (b"END\r\n", b""):
                    break
            answers.append(b"".join(lines).decode(errors="replace"))
        return answers
    finally:
        s.close()


def start_listening(ctx, argv, d, port, what):
    """Starts a server in directory d, its stderr in d/stderr: (Popen, stderr file) once it
    listens on 127.0.0.1:port (within 30 s), else (None, None) and a failure."""
    err = open(os.path.join(d, "stderr"), "wb")
    p = H.start(ctx, argv, cwd=d, stderr=err)
    if not ctx.check(H.wait_port(port, 30, p), "%s listening on 127.0.0.1:%d" % (what, port),
                     "within 30 s", "not listening (exit %s)" % p.poll()):
        err.close()
        return None, None
    return p, err


def child_of(pid):
    """The one child of pid (`leakhound run` runs the program as its child)."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            kids = f.read().split()
        return int(kids[0]) if len(kids) == 1 else None
    except (OSError, ValueError):
        return None


def case_memcached(ctx):
    """memcached (4 threads, libevent) started as root with -u nobody: the agent makes the
    contents files of the snapshot asked for while it runs (SIGUSR2) and of the exit
    snapshot before the uid change, so both have the heap's pointers and the report its
    leak summary; the traced server answers as the bare one does."""
    mc = H.which("memcached")
    if not mc:
        print("SKIP load.memcached: memcached not installed")
        return H.SKIP
    if os.geteuid() != 0:
        print("SKIP load.memcached: needs root (-u nobody: the server drops root itself)")
        return H.SKIP
    n = 5000
    got = {}
    for traced in (False, True):
        d = ctx.path("traced" if traced else "bare")
        os.makedirs(d)
        port = H.free_port()
        trace = os.path.join(d, "mc.lht")
        argv = [mc, "-u", "nobody", "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-t", "4"]
        if traced:
            argv = lh_argv(ctx, trace) + argv
        what = "memcached%s" % (" (traced)" if traced else "")
        p, err = start_listening(ctx, argv, d, port, what)
        if p is None:
            return None
        server = child_of(p.pid) if traced else p.pid
        with open("/proc/%d/status" % server) as f:
            uid = re.search(r"^Uid:\s+\d+\s+(\d+)", f.read(), re.M).group(1)
        ctx.check(uid == "65534", "%s runs as nobody" % what, "euid 65534", uid)
        answers = memcached_load(port, n)
        if traced:
            os.kill(server, signal.SIGUSR2)
            time.sleep(0.5)
        answers2 = memcached_load(port, n // 5)
        os.kill(server, signal.SIGTERM)
        rc = H.wait(ctx, p, 60, what + " after SIGTERM")
        err.close()
        got[traced] = (rc, answers, answers2)
    ctx.check(got[True] == got[False] and got[False][0] == 0 and None not in got[False][1:],
              "exit status and answers of the traced server", got[False], got[True])
    trace = ctx.path("traced", "mc.lht")
    with open(ctx.path("traced", "stderr"), errors="replace") as f:
        stderr = f.read()
    ctx.check("<lh>" not in stderr, "no agent message on stderr (every snapshot had its file)",
              "none", stderr[-400:])
    if not ctx.check(os.path.exists(trace), "trace of memcached", trace, "missing"):
        return None
    rep = H.report(ctx, trace)
    summ = check_trace(ctx, trace, "memcached")
    if rep is None or summ is None:
        return None
    ls = rep.get("leak_summary")
    ctx.check(ls is not None and ls["still_reachable"]["blocks"] > 0,
              "report: the leak summary, from the exit snapshot's pointers",
              "a leak_summary with reachable blocks", ls)
    res = H.run(ctx, [ctx.lh, "shell", trace, "-c", "snapshots"])
    rows = re.findall(r"^\*?\s+(\d+)\s+(\S+)\s+(\w+)\s.*\s(\w+)$", res.stdout, re.M)
    ctx.check([(r[1], r[3]) for r in rows] == [("signal-1", "pointers"), ("exit", "pointers")],
              "snapshots: the signal's and the exit's, both with pointers",
              "signal-1 pointers, exit pointers", res.stdout)
    for cmd in (["leaks", trace], ["report", trace, "--growth"],
                ["shell", trace, "signal-1", "-c", "summary"]):
        res = H.run(ctx, [ctx.lh] + cmd)
        ctx.check(res.returncode == 0 and "leakhound: " not in res.stderr,
                  "`leakhound %s`" % " ".join(cmd[:1] + cmd[2:]), "exit 0, no error",
                  "exit %s: %s" % (res.returncode, res.stderr[-400:]))
    ctx.figure("memcached: %d sets under the agent, answers as bare; %s; leak summary %s"
               % (n + n // 5, summary_line(summ), ls))


# ---------------------------------------------------------------------------------------
# haproxy -W: the first process forks the worker, then re-executes itself as its master
# ---------------------------------------------------------------------------------------

HAPROXY_CONF = """global
    maxconn 256
defaults
    mode http
    timeout connect 5s
    timeout client 10s
    timeout server 10s
frontend fe
    bind 127.0.0.1:{port}
    http-request return status 200 content-type text/plain string "leakhound load test"
"""


def case_haproxy(ctx):
    """haproxy in master-worker mode (-W): the worker, forked before the master re-executes
    itself, keeps its trace (it served every request) and reads its inherited heap from the
    first image's trace; ab's requests all answered, as bare."""
    hp, ab = H.which("haproxy"), H.which("ab")
    if not hp or not ab:
        print("SKIP load.haproxy: haproxy or ab (apache2-utils) not installed")
        return H.SKIP
    requests = 3000
    got = {}
    for traced in (False, True):
        d = ctx.path("traced" if traced else "bare")
        os.makedirs(d)
        port = H.free_port()
        conf = os.path.join(d, "haproxy.cfg")
        with open(conf, "w") as f:
            f.write(HAPROXY_CONF.format(port=port))
        argv = [hp, "-W", "-db", "-f", conf]
        trace = os.path.join(d, "hp.lht")
        if traced:
            argv = lh_argv(ctx, trace) + argv
        what = "haproxy%s" % (" (traced)" if traced else "")
        p, err = start_listening(ctx, argv, d, port, what)
        if p is None:
            return None
        a = H.run(ctx, [ab, "-q", "-n", str(requests), "-c", "4",
                        "http://127.0.0.1:%d/" % port], timeout=120, cwd=d)
        stats = tuple((re.search(r"^%s:\s+(\S+)" % k, a.stdout, re.M) or [None, None])[1]
                      for k in ("Complete requests", "Failed requests", "Document Length"))
        master = child_of(p.pid) if traced else p.pid
        os.kill(master, signal.SIGUSR1)  # soft stop: the worker finishes, the master exits
        rc = H.wait(ctx, p, 60, what + " after SIGUSR1")
        err.close()
        got[traced] = (rc, stats)
    ctx.check(got[True] == got[False] and got[False][1][:2] == (str(requests), "0"),
              "exit status and ab's figures of the traced haproxy", got[False], got[True])
    files = sorted(f for f in os.listdir(ctx.path("traced")) if re.match(r"^hp\.lht(\.\d+)?$", f))
    workers = [f for f in files if f not in ("hp.lht", "hp.lht.1")]
    if not ctx.check(files[:2] == ["hp.lht", "hp.lht.1"] and len(workers) == 1,
                     "traces: the first image's, the master's (after its exec), the worker's",
                     "hp.lht, hp.lht.1, hp.lht.<worker pid>", files):
        return None
    for f in files:
        # The first image ends in its exec, not an exit.
        summ = check_trace(ctx, ctx.path("traced", f), f, clean_exit=None if f == "hp.lht"
                           else True)
        if summ and f in workers:
            ctx.check(summ.get("unmatched_frees") == 0 and (summ.get("inherited") or {})
                      .get("live_blocks", 0) > 0, "%s: the worker's inherited heap, read from "
                      "the first image's trace" % f, "inherited blocks, 0 unmatched frees",
                      (summ.get("inherited"), summ.get("unmatched_frees")))
            ctx.figure("haproxy worker %s: %s" % (f, summary_line(summ)))


# ---------------------------------------------------------------------------------------
# postgres: a postmaster and its forked children (checkpointer, walwriter, autovacuum,
# one backend per connection), run as the user postgres, driven by pgbench
# ---------------------------------------------------------------------------------------

def pg_bin():
    import glob as g
    found = sorted(g.glob("/usr/lib/postgresql/*/bin/postgres"))
    return os.path.dirname(found[-1]) if found else None


def case_postgres(ctx):
    """postgres (as the user postgres) under pgbench: every process's trace (the postmaster
    and each forked child) loads, its figures agree (a child's inherited heap read from the
    postmaster's trace at the fork's time: no unmatched free), the answers are the bare
    server's. Started as a user would, as root: `leakhound run -- setpriv --reuid=postgres
    --regid=postgres --init-groups -- postgres ...` (setpriv keeps its capabilities across
    setresuid and raises CAP_SETGID again on its own thread before setresgid and setgroups:
    the agent's thread follows, agent/ticker.c). The first trace is setpriv's, ending in its
    exec; the postmaster's is the next."""
    bindir, setpriv = pg_bin(), H.which("setpriv")
    if not bindir or not setpriv or not H.which("pgbench") or not H.which("psql"):
        print("SKIP load.postgres: postgresql, pgbench, psql or setpriv not installed")
        return H.SKIP
    if os.geteuid() != 0:
        print("SKIP load.postgres: needs root (to run the server as postgres)")
        return H.SKIP
    import pwd
    import shutil
    try:
        pg = pwd.getpwnam("postgres")
    except KeyError:
        print("SKIP load.postgres: no user postgres")
        return H.SKIP
    # The checkout may be in a directory only root can enter: the user postgres runs copies.
    for sub in ("bin", "lib", "out", "sock"):
        os.makedirs(ctx.path(sub))
    shutil.copy2(ctx.lh, ctx.path("bin", "leakhound"))
    shutil.copy2(ctx.agent, ctx.path("lib", "libleakhound.so"))
    for root, dirs, files in os.walk(ctx.workdir):
        for n in dirs + files:
            os.chown(os.path.join(root, n), pg.pw_uid, pg.pw_gid)
    os.chown(ctx.workdir, pg.pw_uid, pg.pw_gid)
    os.chmod(ctx.workdir, 0o755)
    as_pg = [setpriv, "--reuid=postgres", "--regid=postgres", "--init-groups", "--"]
    env = H.clean_env({"LEAKHOUND_AGENT": ctx.path("lib", "libleakhound.so")})
    data, sock = ctx.path("data"), ctx.path("sock")
    r = H.run(ctx, as_pg + [os.path.join(bindir, "initdb"), "-D", data, "-A", "trust"],
              timeout=120, env=env)
    if not ctx.check(r.returncode == 0, "initdb", "exit 0", r.stderr[-400:]):
        return None
    got = {}
    for traced in (False, True):
        port = H.free_port()
        argv = [os.path.join(bindir, "postgres"), "-D", data, "-p", str(port), "-k", sock,
                "-c", "listen_addresses="]
        trace = ctx.path("out", "pg.lht")
        argv = as_pg + argv
        if traced:
            argv = [ctx.path("bin", "leakhound"), "run", "-o", trace, "--"] + argv
        err = open(ctx.path("stderr.%d" % traced), "wb")
        p = H.start(ctx, argv, env=env, stderr=err)
        sockfile = os.path.join(sock, ".s.PGSQL.%d" % port)
        deadline = time.monotonic() + 60
        while not os.path.exists(sockfile) and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        what = "postgres%s" % (" (traced)" if traced else "")
        if not ctx.check(os.path.exists(sockfile), "%s accepting connections" % what,
                         "within 60 s", "not (exit %s)" % p.poll()):
            return None
        cli = ["-h", sock, "-p", str(port)]
        if not traced:
            H.run(ctx, as_pg + ["pgbench", "-i", "-s", "1", "-q"] + cli + ["postgres"],
                  timeout=120, env=env)
        b = H.run(ctx, as_pg + ["pgbench", "-c", "4", "-t", "200"] + cli + ["postgres"],
                  timeout=300, env=env)
        failed = re.search(r"number of failed transactions: (\d+)", b.stdout)
        q = H.run(ctx, as_pg + ["psql", "-Atc", "select count(*), sum(abalance) = sum(bbalance)"
                                " from pgbench_accounts, (select sum(bbalance) bbalance from "
                                "pgbench_branches) b"] + cli + ["postgres"], env=env)
        s = H.run(ctx, as_pg + [os.path.join(bindir, "pg_ctl"), "-D", data, "stop", "-m", "fast",
                                "-t", "120"], timeout=180, env=env)
        rc = H.wait(ctx, p, 60, what + " after pg_ctl stop")
        err.close()
        got[traced] = (b.returncode, failed.group(1) if failed else None, q.stdout.strip(),
                       s.returncode, rc)
    ctx.check(got[True][0] == got[False][0] == 0 and got[True][1] == got[False][1] == "0" and
              got[True][3:] == got[False][3:] == (0, 0),
              "pgbench, pg_ctl stop and the server's exit under the agent",
              got[False], got[True])
    ctx.check(got[True][2].split("|")[0] == got[False][2].split("|")[0] == "100000",
              "rows of pgbench_accounts (bare, traced)", "100000", (got[False][2], got[True][2]))
    traces = sorted(f for f in os.listdir(ctx.path("out")) if re.match(r"^pg\.lht(\.\d+)?$", f))
    # setpriv, the postmaster, its 5 background processes, a backend per pgbench client and
    # psql
    ctx.check(len(traces) >= 11 and traces[:2] == ["pg.lht", "pg.lht.1"],
              "setpriv's trace, the postmaster's (after the exec), one per postgres process",
              ">= 11, pg.lht and pg.lht.1 first", traces)
    children = 0
    for f in traces:
        # setpriv's trace ends in its exec, not an exit.
        summ = check_trace(ctx, ctx.path("out", f), f, clean_exit=None if f == "pg.lht"
                           else True)
        if summ and f not in ("pg.lht", "pg.lht.1"):
            children += 1
            ctx.check(summ.get("unmatched_frees") == 0 and
                      (summ.get("inherited") or {}).get("from", "").endswith("pg.lht.1"),
                      "%s: its inherited heap read from the postmaster's trace" % f,
                      "0 unmatched frees", (summ.get("unmatched_frees"), summ.get("inherited")))
    rep = H.report(ctx, ctx.path("out", "pg.lht.1"))
    ctx.check(rep is not None and rep.get("leak_summary") is not None,
              "the postmaster's leak summary (exit snapshot with contents)", "present",
              rep and rep.get("leak_summary"))
    ctx.figure("postgres: pgbench -c 4 -t 200 under the agent, %d children traced; "
               "postmaster leak summary %s" % (children, rep and rep.get("leak_summary")))


CASES = {"redis": case_redis, "nginx": case_nginx, "python3": case_python3, "perl": case_perl,
         "sqlite3": case_sqlite3, "cxx": case_cxx, "memcached": case_memcached,
         "haproxy": case_haproxy, "postgres": case_postgres}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--case", required=True, choices=sorted(CASES))
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    # postgres runs as the user postgres: its files in the system's temporary directory
    ctx = H.Ctx(args.build, "load." + args.case, args.verbose,
                other_user=args.case == "postgres")
    rc = None
    if H.need(ctx, ctx.lh, ctx.agent):
        try:
            rc = CASES[args.case](ctx)
        except Exception:
            import traceback
            ctx.fail("runner", "no exception", traceback.format_exc()[-1500:])
    if rc == H.SKIP and not ctx.failures:
        ctx.finish(False)
        return H.SKIP
    return ctx.finish(args.keep)


if __name__ == "__main__":
    H.main_wrapper(main)
