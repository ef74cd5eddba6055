# leakhound - SPDX-License-Identifier: MIT
"""Shared helpers of the hardening runners (tests/stress, tests/faults, tests/load):
bounded subprocesses (own process group, killed on timeout), free loopback ports, the
report and the event log as JSON, exact per-site accounting, and a failure collector.

Every command runs with a timeout and in its own session, so a hung target (or its
children: nginx workers, fork children) is killed as a group and the test fails instead
of hanging CTest.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77


class Ctx:
    """One test: the build, a scratch directory, the failures and the figures to print."""

    def __init__(self, build, name, verbose=False, other_user=False):
        self.build = os.path.abspath(build)
        self.name = name
        self.verbose = verbose
        self.lh = os.path.join(self.build, "bin", "leakhound")
        # LEAKHOUND_AGENT (read by `leakhound run` too) swaps in another agent: how the
        # tests were shown to fail with a deliberately broken one.
        self.agent = os.environ.get("LEAKHOUND_AGENT") or os.path.join(self.build, "lib",
                                                                        "libleakhound.so")
        self.failures = []
        self.figures = []
        if other_user:
            # A case that runs something as another user (nobody) needs every directory
            # above its files searchable by that user. The checkout may sit in a directory
            # only root can enter (CI clones into a 0700 parent), so such a case works in
            # the system's temporary directory instead of the build tree.
            base = tempfile.gettempdir()
        else:
            base = os.path.join(self.build, "tests", "hardening-work")
            os.makedirs(base, exist_ok=True)
        self.workdir = tempfile.mkdtemp(prefix="leakhound-" + name + ".", dir=base)
        self.cleanups = []

    def check(self, cond, what, expected, got):
        if not cond:
            self.failures.append("%s\n    expected: %s\n    got:      %s" % (what, expected, got))
        return cond

    def fail(self, what, expected, got):
        return self.check(False, what, expected, got)

    def figure(self, line):
        self.figures.append(line)
        print("  " + line, flush=True)

    def log(self, msg):
        if self.verbose:
            print(msg, flush=True)

    def path(self, *parts):
        return os.path.join(self.workdir, *parts)

    def finish(self, keep=False):
        for fn in reversed(self.cleanups):
            try:
                fn()
            except Exception as e:  # cleanups must all run
                print("  cleanup failed: %s" % e)
        if self.failures:
            print("FAIL %s (files kept in %s)" % (self.name, self.workdir))
            for f in self.failures:
                print("  - " + f)
            return 1
        print("ok   %s" % self.name)
        if not keep:
            shutil.rmtree(self.workdir, ignore_errors=True)
        return 0


def need(ctx, *files):
    for f in files:
        if not os.path.exists(f):
            ctx.fail("build output", f, "missing (build it first)")
            return False
    return True


def which(prog):
    """Absolute path of prog, ignoring pyenv shims (shell scripts that exec the real one)."""
    for d in ("/usr/bin", "/usr/sbin", "/bin", "/sbin", "/usr/local/bin"):
        p = os.path.join(d, prog)
        if os.access(p, os.X_OK):
            return p
    return None


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items()
           if (not k.startswith("LEAKHOUND_") or k == "LEAKHOUND_AGENT") and k != "LD_PRELOAD"}
    env.update(AGENT_ENV)
    env.update(extra or {})
    env.setdefault("LSAN_OPTIONS", "suppressions=" + LSAN_SUPP)
    return env


LSAN_SUPP = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lsan.supp")


# Extra agent settings for every traced run (run_stress.py --env, the config matrix).
AGENT_ENV = {}


class Result:
    def __init__(self, rc, out, err, timed_out, secs):
        self.returncode, self.stdout, self.stderr = rc, out, err
        self.timed_out, self.secs = timed_out, secs


def kill_group(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run(ctx, argv, timeout=60, env=None, cwd=None, stdin=None, text=True):
    """Runs argv to completion in its own process group; on timeout kills the group and
    records a failure. stdout/stderr are captured."""
    ctx.log("$ " + " ".join(argv))
    t0 = time.monotonic()
    p = subprocess.Popen(argv, cwd=cwd or ctx.workdir, env=env if env is not None else clean_env(),
                         stdin=stdin if stdin is not None else subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    timed_out = False
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(p)
        out, err = p.communicate()
        timed_out = True
        ctx.fail("command finished within %d s" % timeout, "exit", "timed out (hang?): "
                 + " ".join(argv)[:300])
    if text:
        out = out.decode(errors="replace")
        err = err.decode(errors="replace")
    return Result(p.returncode, out, err, timed_out, time.monotonic() - t0)


def start(ctx, argv, env=None, cwd=None, stdout=None, stderr=None):
    """Starts a long-running process (a server) in its own session; it is killed with its
    whole group at the end of the test whatever happens."""
    ctx.log("$ " + " ".join(argv) + " &")
    p = subprocess.Popen(argv, cwd=cwd or ctx.workdir, env=env if env is not None else clean_env(),
                         stdin=subprocess.DEVNULL,
                         stdout=stdout if stdout is not None else subprocess.DEVNULL,
                         stderr=stderr if stderr is not None else subprocess.DEVNULL,
                         start_new_session=True)
    ctx.cleanups.append(lambda: kill_group(p))
    return p


def wait(ctx, p, timeout, what):
    try:
        return p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(p)
        p.wait()
        ctx.fail("%s exits within %d s" % (what, timeout), "exit", "killed after the timeout")
        return None


def free_port():
    """A port free on 127.0.0.1 now (the kernel's choice)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port, timeout, proc=None):
    """True when 127.0.0.1:port accepts a connection within timeout (False if proc died)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


# ---------------------------------------------------------------------------------------
# Reading traces through the CLI
# ---------------------------------------------------------------------------------------

def report(ctx, trace, extra=(), timeout=120):
    """leakhound report TRACE --format json: the parsed report or None (a failure)."""
    res = run(ctx, [ctx.lh, "report", trace, "--format", "json", "--top", "0"] + list(extra),
              timeout=timeout)
    if not ctx.check(res.returncode == 0, "`leakhound report --format json %s`"
                     % os.path.basename(trace), "exit 0",
                     "exit %s: %s" % (res.returncode, res.stderr.strip()[-600:])):
        return None
    try:
        return json.loads(res.stdout)
    except ValueError as e:
        ctx.fail("report of %s is JSON" % trace, "JSON", "%s: %r" % (e, res.stdout[:300]))
        return None


def check_totals(ctx, trace, summ, clean_exit=True):
    """The report's own figures must agree. Every allocation was freed or is still live;
    realloc is free + alloc and counts as neither. total_frees counts every FREE record,
    including frees of blocks the trace never saw allocated (made before the agent
    started, or inherited from a fork parent), and unmatched_frees counts those plus
    reallocs of such blocks (whose new half is a live block not counted as an
    allocation). Hence, exactly:
        total_allocations - total_frees + unmatched_frees == leaked_blocks
    (a free the agent lost would show up as an allocation of a live address and break
    it). A fork child seeded with its inherited heap counts those blocks as allocations,
    and leaves the ones still live out of leaked_blocks (summary.inherited.live_blocks)."""
    name = os.path.basename(trace)
    a, f, l = summ.get("total_allocations"), summ.get("total_frees"), summ.get("leaked_blocks")
    u = summ.get("unmatched_frees")
    if a is not None:
        a -= (summ.get("inherited") or {}).get("live_blocks", 0)
    ok = ctx.check(None not in (a, f, l, u) and a - f + u == l,
                   "%s: total_allocations - inherited.live_blocks - total_frees + "
                   "unmatched_frees == leaked_blocks" % name,
                   "%s - %s + %s = %s" % (a, f, u, None if None in (a, f, u) else a - f + u), l)
    ctx.check(0 <= (l if l is not None else -1) <= (a or 0) + (u or 0)
              and summ.get("leaked_bytes", -1) >= 0,
              "%s: leaked figures within bounds" % name, "0 <= leaked_blocks <= allocations",
              summ)
    if clean_exit is not None:
        ctx.check(summ.get("clean_exit") is clean_exit, "%s: summary.clean_exit" % name,
                  clean_exit, summ.get("clean_exit"))
    return ok


def event_log(ctx, trace, timeout=180):
    """leakhound log --limit 0 --format json: (events, sites) or (None, None)."""
    res = run(ctx, [ctx.lh, "log", trace, "--limit", "0", "--frames", "64", "--format", "json"],
              timeout=timeout)
    if not ctx.check(res.returncode == 0, "`leakhound log --format json %s`"
                     % os.path.basename(trace), "exit 0",
                     "exit %s: %s" % (res.returncode, res.stderr.strip()[-600:])):
        return None, None
    try:
        doc = json.loads(res.stdout)
    except ValueError as e:
        ctx.fail("log of %s is JSON" % trace, "JSON", "%s: %r" % (e, res.stdout[:300]))
        return None, None
    return doc.get("events") or [], doc.get("sites") or {}


ALLOC_EVENTS = ("malloc", "calloc", "realloc", "memalign", "valloc", "reallocarray")


def count_by_sites(events, sites, mine):
    """Exact accounting of the events whose site is 'mine' (mine(frames) -> key or None):
    {key: {"allocs", "frees", "reallocs", "bytes"}}. An allocation counts at its site; a
    free counts at the site of the block it freed (FREE records carry no stack); a realloc
    counts once, at the site of its new half."""
    key_of = {}
    for sid, s in sites.items():
        key_of[int(sid)] = mine(s.get("frames") or [])
    out = {}

    def bucket(k):
        return out.setdefault(k, {"allocs": 0, "frees": 0, "reallocs": 0, "bytes": 0})

    for e in events:
        ev = e.get("event")
        if ev in ALLOC_EVENTS:
            k = key_of.get(e.get("site"))
            if k is not None:
                b = bucket(k)
                b["allocs"] += 1
                b["bytes"] += e.get("size", 0)
        elif ev == "free":
            k = key_of.get(e.get("freed_site"))
            if k is not None:
                bucket(k)["frees"] += 1
        elif ev == "realloc-to":
            k = key_of.get(e.get("site"))
            if k is not None:
                bucket(k)["reallocs"] += 1
    return out


def functions(frames):
    return [fr.get("function") or "" for fr in frames]


def program_counts(text, prefix="COUNT"):
    """Lines 'COUNT key=value key=value ...' printed by the stress programs."""
    res = {}
    for line in text.splitlines():
        if line.startswith(prefix + " "):
            parts = line.split()
            name = parts[1]
            res[name] = {k: int(v) for k, v in (p.split("=", 1) for p in parts[2:])}
    return res


def main_wrapper(fn):
    try:
        sys.exit(fn())
    except KeyboardInterrupt:
        sys.exit(130)
