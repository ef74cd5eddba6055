#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""End-to-end tests of the stop signals (agent/stopsig.c): a program stopped with SIGTERM,
Ctrl-C (SIGINT to its process group) or SIGHUP at their default disposition gives the
answers of one that exited (final flush, exit snapshot, leak classes; Valgrind as the
oracle where installed) and still dies of the signal; a program with its own handler, or
SIG_IGN, gets what it chose, and never sees the agent's handlers (python's
KeyboardInterrupt, perl's %SIG). progs/stop_wait.c; exact classes and bytes.

Usage:
  run_stopsig.py --build DIR --case NAME [--keep] [-v]
  run_stopsig.py --build DIR --all
  run_stopsig.py --list
"""

import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_e2e as E  # noqa: E402  (the shared helpers: Ctx, run, load_report)

Failure = E.Failure

# stop_wait's blocks: 3 of 1111 bytes lost, 4 of 2222 held by a global, and stdout's
# 4096-byte buffer (glibc keeps it: reachable).
CLASSES = {"definitely_lost": (3333, 3), "indirectly_lost": (0, 0), "possibly_lost": (0, 0),
           "still_reachable": (8888 + 4096, 5)}
PYTHON = "/usr/bin/python3"


# ---------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------

def start(ctx, argv, env=None):
    """argv in its own session (its own process group, as a terminal's job), stdout piped;
    returns the Popen once the program printed its "ready" line."""
    ctx.log("$ " + " ".join(argv))
    p = subprocess.Popen(argv, cwd=ctx.workdir, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True, env=env)
    buf = b""
    deadline = time.monotonic() + 30
    while b"ready" not in buf:
        left = deadline - time.monotonic()
        r, _, _ = select.select([p.stdout], [], [], max(left, 0))
        chunk = os.read(p.stdout.fileno(), 4096) if r else b""
        if not chunk:
            os.killpg(p.pid, signal.SIGKILL)
            _, err = p.communicate()
            raise Failure("%s did not get ready\n    expected: a 'ready' line\n    got:      "
                          "%r, stderr: %s" % (argv[-1], buf, err.decode(errors="replace")[-800:]))
        buf += chunk
    p.ready_out = buf
    return p


def finish(ctx, p, what):
    """Waits (60 s at most) for p: (returncode, stdout, stderr)."""
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise Failure("the program did not end within 60 s of " + what)
    out = (p.ready_out + out).decode(errors="replace")
    err = err.decode(errors="replace")
    ctx.log("exit %s; stdout: %s; stderr: %s" % (p.returncode, out, err))
    return p.returncode, out, err


def lh_run_argv(ctx, trace, prog_argv):
    return [ctx.lh, "run", "-o", trace, "--"] + list(prog_argv)


def report_text(ctx, trace):
    res = E.run(ctx, [ctx.lh, "report", trace, "--top", "0"])
    ctx.check(res.returncode == 0, "report %s" % trace, "exit 0",
              "exit %d: %s" % (res.returncode, res.stderr[-500:]))
    return res.stdout


def exit_line(text):
    return [ln.strip() for ln in text.splitlines() if ln.startswith("  exit:")]


def classes(rep):
    ls = rep.get("leak_summary") or {}
    return dict((k, (v["bytes"], v["blocks"])) for k, v in ls.items())


def expect_killed(ctx, trace, signame, signum):
    """The trace loads without --salvage, says the program was terminated by the signal,
    and its leak classes are stop_wait's."""
    rep = E.load_report(ctx, trace)
    summ = rep["summary"]
    got = (summ.get("exit_kind"), summ.get("exit_signal"), summ.get("exit_status"),
           summ.get("clean_exit"))
    ctx.check(got == ("signal", signame, signum, False), "exit kind, signal, status, clean",
              ("signal", signame, signum, False), got)
    want = "exit:          terminated by %s (signal %d; the trace ended as at exit)" % (
        signame, signum)
    lines = exit_line(report_text(ctx, trace))
    ctx.check(lines == [want], "the report's exit line", want, lines)
    return rep


def valgrind_classes(ctx, sig):
    """stop_wait under valgrind --leak-check=full, sent sig: its LEAK SUMMARY
    ({class: (bytes, blocks)}) and exit status; None when valgrind is not installed."""
    if not shutil.which("valgrind"):
        ctx.log("valgrind is not installed: its answer is not compared")
        return None
    p = start(ctx, ["valgrind", "--leak-check=full", "--show-leak-kinds=all",
                    ctx.prog("stop_wait"), "wait"])
    os.killpg(p.pid, sig)
    rc, _, err = finish(ctx, p, "valgrind's signal")
    text = err.split("LEAK SUMMARY:")[-1]
    got = {}
    for k, b, n in re.findall(r"(definitely lost|indirectly lost|possibly lost|still reachable)"
                              r": ([\d,]+) bytes in ([\d,]+) blocks", text):
        got[k.replace(" ", "_")] = (int(b.replace(",", "")), int(n.replace(",", "")))
    return got, rc


# ---------------------------------------------------------------------------------------
# Native programs
# ---------------------------------------------------------------------------------------

def stopped_by(ctx, sig, signame, to_group):
    """stop_wait under `leakhound run`, stopped by sig (to run itself, which passes SIGTERM
    on, or to the whole process group, as a terminal's Ctrl-C), against its normal exit
    and against valgrind."""
    trace = os.path.join(ctx.workdir, "killed.lht")
    p = start(ctx, lh_run_argv(ctx, trace, [ctx.prog("stop_wait"), "wait"]))
    time.sleep(0.2)
    if to_group:
        os.killpg(p.pid, sig)
    else:
        os.kill(p.pid, sig)
    rc, _, err = finish(ctx, p, signame)
    ctx.check(rc == 128 + sig, "exit status of leakhound run (the program's)", 128 + sig, rc)
    ctx.check("killed by signal %d" % sig in err, "run says how the program ended",
              "'killed by signal %d'" % sig, err[-400:])
    rep = expect_killed(ctx, trace, signame, sig)
    killed = classes(rep)
    ctx.check(killed == CLASSES, "leak classes after %s" % signame, CLASSES, killed)

    normal = os.path.join(ctx.workdir, "exit.lht")
    E.lh_run(ctx, [ctx.prog("stop_wait"), "exit"], out=normal)
    nrep = E.load_report(ctx, normal)
    ctx.check(classes(nrep) == killed, "leak classes: killed as exited", classes(nrep), killed)
    ctx.check(nrep["summary"]["leaked_bytes"] == rep["summary"]["leaked_bytes"],
              "live bytes at the end: killed as exited", nrep["summary"]["leaked_bytes"],
              rep["summary"]["leaked_bytes"])

    vg = valgrind_classes(ctx, sig)
    if vg is not None:
        got, vrc = vg
        ctx.check(got == killed, "valgrind's leak summary after %s" % signame, killed, got)
        ctx.check(vrc == -sig, "valgrind's exit (killed by the signal)", -sig, vrc)


def case_term(ctx):
    """SIGTERM (to leakhound run, which passes it on): status 143, the trace ends as at
    exit, the same leak classes as a normal exit and as Valgrind's."""
    stopped_by(ctx, signal.SIGTERM, "SIGTERM", False)


def case_int(ctx):
    """Ctrl-C (SIGINT to the process group): status 130, the same answers."""
    stopped_by(ctx, signal.SIGINT, "SIGINT", True)


def case_preload(ctx):
    """LD_PRELOAD by hand, SIGHUP to the program itself: it dies of SIGHUP (the parent's
    wait status says so), the trace ends as at exit."""
    trace = os.path.join(ctx.workdir, "hup.lht")
    env = dict(os.environ, LD_PRELOAD=os.path.join(ctx.build, "lib", "libleakhound.so"),
               LEAKHOUND_OUTPUT=trace)
    p = start(ctx, [ctx.prog("stop_wait"), "wait"], env=env)
    os.kill(p.pid, signal.SIGHUP)
    rc, _, _ = finish(ctx, p, "SIGHUP")
    ctx.check(rc == -signal.SIGHUP, "wait status of the program", -signal.SIGHUP, rc)
    rep = expect_killed(ctx, trace, "SIGHUP", signal.SIGHUP)
    ctx.check(classes(rep) == CLASSES, "leak classes after SIGHUP", CLASSES, classes(rep))


def case_handler(ctx):
    """A program with its own SIGTERM handler: the handler runs (prints, exits 3), and the
    trace says so: a clean exit with status 3."""
    trace = os.path.join(ctx.workdir, "handler.lht")
    p = start(ctx, lh_run_argv(ctx, trace, [ctx.prog("stop_wait"), "handler"]))
    time.sleep(0.2)  # out of its fflush: exit() in a handler would flush "ready" again
    os.kill(p.pid, signal.SIGTERM)
    rc, out, _ = finish(ctx, p, "SIGTERM")
    ctx.check(rc == 3, "exit status (the handler's exit(3))", 3, rc)
    ctx.check(out.splitlines()[-1:] == ["handler"], "the handler printed", "handler", out)
    lines = exit_line(report_text(ctx, trace))
    ctx.check(lines == ["exit:          clean exit (status 3)"], "the report's exit line",
              "clean exit (status 3)", lines)


def case_ignored(ctx):
    """SIGHUP ignored by the program (signal(SIGHUP, SIG_IGN)): still ignored, it runs on;
    SIGTERM then stops it as usual."""
    trace = os.path.join(ctx.workdir, "ign.lht")
    p = start(ctx, lh_run_argv(ctx, trace, [ctx.prog("stop_wait"), "ignhup"]))
    pid = int(re.search(rb"ready (\d+)", p.ready_out).group(1))
    os.kill(pid, signal.SIGHUP)
    time.sleep(0.5)
    ctx.check(p.poll() is None, "the program after an ignored SIGHUP", "running",
              "ended with %s" % p.returncode)
    os.kill(p.pid, signal.SIGTERM)
    rc, _, _ = finish(ctx, p, "SIGTERM")
    ctx.check(rc == 143, "exit status after SIGTERM", 143, rc)
    expect_killed(ctx, trace, "SIGTERM", signal.SIGTERM)


def case_during_exit(ctx):
    """SIGTERM while the program's exit is writing its exit snapshot (its contents child
    made to take 1.5 s): the exit's snapshot is completed, END says the program was
    terminated by SIGTERM (as it was: it dies of it), the classes are the exit's."""
    trace = os.path.join(ctx.workdir, "during.lht")
    env = dict(os.environ, LEAKHOUND_TEST_SNAPSHOT_CHILD_DELAY_MS="1500")
    p = start(ctx, lh_run_argv(ctx, trace, [ctx.prog("stop_wait"), "exit"]), env=env)
    time.sleep(0.6)
    os.kill(p.pid, signal.SIGTERM)
    rc, _, err = finish(ctx, p, "SIGTERM")
    ctx.check(rc == 143, "exit status (killed while exiting)", 143, rc)
    rep = expect_killed(ctx, trace, "SIGTERM", signal.SIGTERM)
    ctx.check(classes(rep) == CLASSES, "leak classes of the exit snapshot", CLASSES,
              classes(rep))
    ctx.check("not completed" not in err, "the exit snapshot's contents completed",
              "no 'not completed' on stderr", err[-400:])


def case_view(ctx):
    """What sigaction, signal and sigset report for the agent's signals (INT, TERM, HUP,
    and USR2, the snapshot signal) is what they report without the agent: SIG_DFL, never
    the agent's handler; a handler the program installs is returned as installed."""
    bare = E.run(ctx, [ctx.prog("stop_wait"), "view"])
    traced = E.run(ctx, lh_run_argv(ctx, os.path.join(ctx.workdir, "v.lht"),
                                    [ctx.prog("stop_wait"), "view"]))
    want = ["view %s dfl dfl dfl handler dfl dfl" % s for s in ("INT", "TERM", "HUP", "USR2")]
    ctx.check(bare.stdout.splitlines() == want, "without the agent", want, bare.stdout)
    ctx.check(traced.stdout.splitlines() == want, "under the agent", want, traced.stdout)


def churned(ctx, mode):
    trace = os.path.join(ctx.workdir, mode + ".lht")
    p = start(ctx, lh_run_argv(ctx, trace, [ctx.prog("stop_wait"), mode]))
    time.sleep(0.5)
    os.kill(p.pid, signal.SIGTERM)
    rc, _, _ = finish(ctx, p, "SIGTERM")
    ctx.check(rc == 143, "exit status after SIGTERM", 143, rc)
    rep = expect_killed(ctx, trace, "SIGTERM", signal.SIGTERM)
    summ = rep["summary"]
    ctx.check(summ["total_allocations"] > 1000, "allocations recorded while churning",
              "> 1000", summ["total_allocations"])
    # The threads' rings are not compared: they churn on while the trace ends (as they
    # would through an exit()), so the blocks they hold at the snapshot are not all in it.
    E.expect_site(ctx, rep, "stop_lost", 3, 3333, allocations=3)
    E.expect_site(ctx, rep, "stop_held", 4, 8888, allocations=4)


def case_threads(ctx):
    """4 threads allocating and freeing without pause, main waiting: SIGTERM mid-churn
    leaves a trace that loads without --salvage, with consistent totals."""
    churned(ctx, "threads")


def case_threads_hook(ctx):
    """The same with SIGTERM blocked in main: it lands on a churning thread, nearly always
    inside malloc or free (the agent's hook, its locks held): finished when the hook
    leaves."""
    churned(ctx, "threads_hook")


def twice_then(ctx, mode, sig, bare_expect):
    """stop_wait MODE bare and under `leakhound run`: sig sent twice, 0.4 s apart, then
    SIGTERM if it still runs. (status, stdout lines after "ready", stderr) of each; the
    bare one must be bare_expect's (status, lines)."""
    got = {}
    for traced in (False, True):
        argv = [ctx.prog("stop_wait"), mode]
        trace = os.path.join(ctx.workdir, mode + ".lht")
        if traced:
            argv = lh_run_argv(ctx, trace, argv)
        p = start(ctx, argv)
        pid = int(re.search(rb"ready (\d+)", p.ready_out).group(1))
        time.sleep(0.4)  # past the ticker's first period (rawdfl: its recheck)
        try:
            for _ in range(2):
                os.kill(pid, sig)
                time.sleep(0.4)
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass  # it ended (and leakhound run reaped it)
        rc, out, err = finish(ctx, p, "the signals")
        got[traced] = (rc if not traced or rc < 128 else -(rc - 128), out.splitlines()[1:],
                       err)
    ctx.check(got[False][:2] == bare_expect, "without the agent: status, output", bare_expect,
              got[False][:2])
    ctx.check(got[True][:2] == got[False][:2], "under the agent: as without it",
              got[False][:2], got[True][:2])
    return os.path.join(ctx.workdir, mode + ".lht"), got[True][2]


def case_resethand(ctx):
    """SIGTERM handler set with SA_RESETHAND: the first SIGTERM runs it (prints "once"),
    the second finds SIG_DFL and ends the process, as without the agent; and the trace
    ends as at exit (the agent's handler is back after the first), stop_wait's classes."""
    trace, _ = twice_then(ctx, "resethand", signal.SIGTERM, (-signal.SIGTERM, ["once"]))
    rep = expect_killed(ctx, trace, "SIGTERM", signal.SIGTERM)
    ctx.check(classes(rep) == CLASSES, "leak classes", CLASSES, classes(rep))


def case_sysv(ctx):
    """The same through sysv_signal (SA_RESETHAND|SA_NODEFER)."""
    trace, _ = twice_then(ctx, "sysv", signal.SIGTERM, (-signal.SIGTERM, ["once"]))
    rep = expect_killed(ctx, trace, "SIGTERM", signal.SIGTERM)
    ctx.check(classes(rep) == CLASSES, "leak classes", CLASSES, classes(rep))


def case_raw(ctx):
    """rt_sigaction called directly (no sigaction to interpose): its own SIGTERM handler
    runs (prints "handler", exits 3: a clean exit in the trace); SIG_DFL set so is held by
    the agent again within a period, so SIGTERM still ends the trace as at exit."""
    trace, _ = twice_then(ctx, "rawhandler", signal.SIGTERM, (3, ["handler"]))
    lines = exit_line(report_text(ctx, trace))
    ctx.check(lines == ["exit:          clean exit (status 3)"], "rawhandler: the report's "
              "exit line", "clean exit (status 3)", lines)
    trace, _ = twice_then(ctx, "rawdfl", signal.SIGTERM, (-signal.SIGTERM, []))
    rep = expect_killed(ctx, trace, "SIGTERM", signal.SIGTERM)
    ctx.check(classes(rep) == CLASSES, "rawdfl: leak classes", CLASSES, classes(rep))


def snapshot_labels(ctx, trace):
    res = E.run(ctx, [ctx.lh, "shell", trace, "-c", "snapshots"])
    return re.findall(r"^\*?\s+\d+\s+(\S+)\s+\S+\s+\d", res.stdout, re.M)


def case_usr2(ctx):
    """The snapshot signal (SIGUSR2) with the program's own handler: its handler runs at
    each one as without the agent, no snapshot is taken, and the agent says so once on
    stderr. Set to SIG_DFL by the program: each one is a snapshot (the program sees
    SIG_DFL), it does not die of it."""
    trace, err = twice_then(ctx, "usr2handler", signal.SIGUSR2,
                            (-signal.SIGTERM, ["usr2", "usr2"]))
    said = [ln for ln in err.splitlines() if ln.startswith("<lh>:")]
    want = ["<lh>: stop_wait (pid %s) has its own handler of SIGUSR2: the program's choice "
            "is kept, and that signal takes no snapshot (--snapshot-signal picks another)"]
    ctx.check(len(said) == 1 and re.fullmatch(re.escape(want[0]).replace("%s", r"\d+"),
                                              said[0]),
              "the agent's one line on stderr", want, said)
    ctx.check(snapshot_labels(ctx, trace) == ["exit"], "usr2handler: snapshots", ["exit"],
              snapshot_labels(ctx, trace))
    expect_killed(ctx, trace, "SIGTERM", signal.SIGTERM)

    trace = os.path.join(ctx.workdir, "usr2dfl.lht")
    p = start(ctx, lh_run_argv(ctx, trace, [ctx.prog("stop_wait"), "usr2dfl"]))
    pid = int(re.search(rb"ready (\d+)", p.ready_out).group(1))
    for _ in range(2):
        os.kill(pid, signal.SIGUSR2)
        time.sleep(0.4)
    os.kill(pid, signal.SIGTERM)
    rc, _, err = finish(ctx, p, "SIGTERM")
    ctx.check(rc == 143, "usr2dfl: exit status after SIGTERM (SIGUSR2 did not kill it)", 143,
              rc)
    ctx.check("<lh>:" not in err, "usr2dfl: nothing said", "no <lh> line", err[-300:])
    labels = snapshot_labels(ctx, trace)
    ctx.check(labels == ["signal-1", "signal-2", "exit"], "usr2dfl: snapshots",
              ["signal-1", "signal-2", "exit"], labels)


# ---------------------------------------------------------------------------------------
# Interpreters: their handlers are theirs
# ---------------------------------------------------------------------------------------

PY_CATCH = """
import time
keep = [bytearray(1000) for _ in range(50)]
try:
    print("ready", flush=True)
    while True:
        time.sleep(0.05)
except KeyboardInterrupt:
    print("caught", flush=True)
"""

PERL_CATCH = r"""
$| = 1;
my @keep = map { "x" x 1000 } 1 .. 50;
$SIG{INT} = sub { print "caught\n"; exit 4 };
print "ready\n";
sleep 1 while 1;
"""


def script(ctx, name, text):
    path = os.path.join(ctx.workdir, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def caught_then_killed(ctx, argv, code):
    """argv (an interpreter and its script) under `leakhound run`: Ctrl-C reaches the
    script's own SIGINT handling, which prints "caught" and exits with code: a clean exit
    with that status. Run again, SIGTERM (no handler in the script) ends it as a stop
    signal."""
    trace = os.path.join(ctx.workdir, "caught.lht")
    p = start(ctx, lh_run_argv(ctx, trace, argv))
    time.sleep(0.2)
    os.killpg(p.pid, signal.SIGINT)
    rc, out, _ = finish(ctx, p, "Ctrl-C")
    ctx.check(rc == code and out.splitlines()[-1:] == ["caught"], "its SIGINT handling ran",
              "exit %d after 'caught'" % code, "exit %s, stdout %r" % (rc, out))
    want = "exit:          clean exit (status %d)" % code
    lines = exit_line(report_text(ctx, trace))
    ctx.check(lines == [want], "the report's exit line", want, lines)

    trace = os.path.join(ctx.workdir, "term.lht")
    p = start(ctx, lh_run_argv(ctx, trace, argv))
    time.sleep(0.2)
    os.kill(p.pid, signal.SIGTERM)
    rc, _, _ = finish(ctx, p, "SIGTERM")
    ctx.check(rc == 143, "exit status after SIGTERM", 143, rc)
    expect_killed(ctx, trace, "SIGTERM", signal.SIGTERM)


def case_python(ctx):
    """python3 with try/except KeyboardInterrupt: python installed its SIGINT handler (it
    does only where it finds SIG_DFL), so Ctrl-C raises KeyboardInterrupt, caught: exit 0.
    SIGTERM ends it as a stop signal."""
    if not os.access(PYTHON, os.X_OK):
        raise E.Skip("no " + PYTHON)
    caught_then_killed(ctx, [PYTHON, script(ctx, "catch.py", PY_CATCH)], 0)


def case_perl(ctx):
    """perl with $SIG{INT} = sub {...}: Ctrl-C runs it (prints, exits 4). SIGTERM ends it
    as a stop signal."""
    if not shutil.which("perl"):
        raise E.Skip("no perl")
    caught_then_killed(ctx, ["perl", script(ctx, "catch.pl", PERL_CATCH)], 4)


CASES = {name[5:]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}


if __name__ == "__main__":
    sys.exit(E.cases_main("stopsig", CASES, __doc__))
