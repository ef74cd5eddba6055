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

Usage: run_load.py --build DIR --case redis|nginx|python3|perl|sqlite3|cxx [--keep] [-v]
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
    ctx.check("<lh>" not in stderr and "[alert]" not in stderr and "[emerg]" not in stderr,
              "nginx's and the agent's stderr", "no <lh>, alert or emerg line", stderr[-500:])
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


CASES = {"redis": case_redis, "nginx": case_nginx, "python3": case_python3, "perl": case_perl,
         "sqlite3": case_sqlite3, "cxx": case_cxx}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--case", required=True, choices=sorted(CASES))
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    ctx = H.Ctx(args.build, "load." + args.case, args.verbose)
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
