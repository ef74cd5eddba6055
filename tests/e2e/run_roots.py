#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""End-to-end tests of issue 11, "leak classes you can trust": entry points that survive
a misaligned stack, and roots where Valgrind and LeakSanitizer find them (thread stacks
from the threads themselves, malloc arenas as heap, the capturing thread from the
program's stack pointer, TLS and thread descriptors), on progs/misaligned.c and
progs/roots_*.c. Exact classes and bytes; addresses differ per run. Where valgrind is
installed, each case also runs the same binary under it and checks its class of the case's
blocks at exit (valgrind_agrees), and for roots_tls and roots_exited also at a leak check the
program requests where it takes its snapshot (vg_check.h): the same as leakhound's, except
the one documented difference (other_thread_register).

Usage:
  run_roots.py --build DIR --case NAME [--keep] [-v]
  run_roots.py --build DIR --all
  run_roots.py --list
Exit status: 0 pass, 1 fail, 2 usage error, 77 skipped (not on this architecture).
"""

import os
import platform
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_e2e as E  # noqa: E402  (the shared helpers: Ctx, run, lh_run, load_report)

Failure = E.Failure


Skip = E.Skip


# ---------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------

def record(ctx, prog, args=(), name="trace.lht", extra=()):
    trace = os.path.join(ctx.workdir, name)
    E.lh_run(ctx, [ctx.prog(prog)] + list(args), out=trace, extra=extra)
    return trace


def shell(ctx, trace, cmds, snapshot=None, extra=()):
    argv = [ctx.lh, "shell", trace] + ([snapshot] if snapshot else []) + ["-c", cmds] + list(extra)
    res = E.run(ctx, argv)
    ctx.check(res.returncode == 0, "exit status of shell -c %r" % cmds, 0,
              "%d (stderr: %s)" % (res.returncode, res.stderr[-600:]))
    return res.stdout


def expect_in(ctx, what, needle, text):
    ctx.check(needle in text, what, repr(needle), text[-2000:])


# ---------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------

def case_misaligned(ctx):
    """Every allocation function, free, malloc_usable_size, exit and the public API called
    with a stack 8 bytes off the ABI's alignment: the program runs to its end, the trace
    is complete and holds exactly what was left live through the misaligning trampoline."""
    if platform.machine() != "x86_64":
        raise Skip("the misaligned-stack case is x86-64's")
    trace = record(ctx, "misaligned")
    rep = E.load_report(ctx, trace)
    summ = rep["summary"]
    ctx.check(summ["clean_exit"] is True, "clean exit", True, summ["clean_exit"])
    # The trampoline has no frame of its own: its caller's frame is skipped by the fp
    # unwinder, so the sites are told apart by their innermost frame.
    mine = [s for s in rep["sites"] if s["leaked_blocks"] and s["frames"]
            and s["frames"][0]["function"] == "mis3"]
    blocks = sum(s["leaked_blocks"] for s in mine)
    nbytes = sum(s["leaked_bytes"] for s in mine)
    ctx.check((blocks, nbytes) == (9, 2490), "blocks and bytes left live through mis3",
              (9, 2490), (blocks, nbytes))
    out = shell(ctx, trace, "snapshots")
    ctx.check(re.search(r"^\s+1\s+misaligned\s+api\s", out, re.M) is not None,
              "lh_snapshot called misaligned", "snapshot 1 'misaligned' (api)", out)
    out = shell(ctx, trace, "count --by type")
    ctx.check(re.search(r"^\s+\d+\s+1\s+100 B\s+mis_block$", out, re.M) is not None,
              "lh_tag called misaligned", "1 block of 100 B typed mis_block", out)
    # one mark: the analysis says why there is no interval, the CLI where the answer is
    for args, need in ((["leaks", "--use", "marks"], "differential leaks need at least 2 "
                        "(one interval)"), (["counts"], "growth needs at least 2")):
        res = E.run(ctx, [ctx.lh, args[0], trace] + args[1:])
        want = ("leakhound: the trace has 1 mark: %s; report --growth answers without them"
                % need)
        ctx.check((res.returncode, res.stderr.strip()) == (2, want), args[0] + " of one mark",
                  (2, want), (res.returncode, res.stderr.strip()))


def site(name):
    fn, line = E.marker(name)
    return "%s:%d" % (fn, line)


def row(ctx, trace, snapshot, name, extra=()):
    """The @N row of the one block allocated at marker `name` in `count --by site` (name
    an int: the one block of that size)."""
    out = shell(ctx, trace, "count --by site", snapshot, extra)
    if isinstance(name, int):
        where = "%d B" % name
        rows = [ln for ln in out.splitlines() if re.match(r"\s*\d+\s+1\s+%s\s" % where, ln)]
    else:
        where = "(%s)" % site(name)
        # a row ends with the report's site id: "func (file:line) [site N]"
        rows = [ln for ln in out.splitlines()
                if re.sub(r" \[site \d+\]$", "", ln.rstrip()).endswith(where)]
    if len(rows) != 1:
        raise Failure("snapshot %s: one row for %s expected in:\n%s" % (snapshot, where, out))
    m = re.match(r"\s*(\d+)\s+1\s", rows[0])
    if not m:
        raise Failure("snapshot %s: one block at %s expected: %s" % (snapshot, where, rows[0]))
    return int(m.group(1))


def identify(ctx, trace, snapshot, name, extra=(), cmd="identify"):
    """`identify` (or cmd) of the one block allocated at marker `name`: its text."""
    n = row(ctx, trace, snapshot, name, extra)
    out = shell(ctx, trace, "count --by site; %s @%d" % (cmd, n), snapshot, extra)
    return out.split("\ntotal ", 1)[-1].split("\n", 1)[-1]  # the command's part


def expect_class(ctx, trace, snapshot, name, cls, root=None, extra=()):
    """The block of marker `name` has class cls ('reachable', 'definitely lost', ...) in the
    snapshot; when reachable, its first path starts at a root whose name starts with root."""
    out = identify(ctx, trace, snapshot, name, extra)
    head = out.splitlines()[0] if out else ""
    ctx.check(re.search(r"; %s(,|$)" % re.escape(cls), head) is not None,
              "%s in snapshot %s: class" % (name, snapshot), cls, out[:1500])
    if root:
        lines = out.splitlines()
        first = re.sub(r"^@\d+ ", "", lines[2]) if len(lines) > 2 else ""  # "@N ": its row
        ctx.check(first.startswith(root), "%s in snapshot %s: the root" % (name, snapshot),
                  root + "...", out[:1500])


def thread_name(tid, prog, what=""):
    return "[%%s of thread %d '%s'%s]" % (tid, prog, what)


def pids(ctx, trace):
    """(pid of the program, {tid: name}) from the trace's report."""
    rep = E.load_report(ctx, trace)
    return rep["summary"]["pid"]


def arena_run(ctx, k):
    trace = record(ctx, "roots_arena", name="arena%d.lht" % k)
    for snap in ("arenas", "exit"):
        out = shell(ctx, trace, "count --by site; unreachable", snap)
        ok = ctx.check(re.search(r"^\s+\d+\s+200\s+12\.5 KiB\s+arena_block \(%s\) \[site \d+\]$"
                                 % re.escape(site("arena_block")), out, re.M) is not None
                       and "arena_block" not in out.split("unreachable")[-1].split("total")[-1]
                       and out.count("arena_block") == 1,
                       "run %d, snapshot %s: the 200 blocks of the threads' arenas, all "
                       "reachable" % (k, snap), "one count row, no unreachable row", out)
        if not ok:
            return False
    os.unlink(trace)
    for f in os.listdir(ctx.workdir):
        if f.startswith("arena%d." % k):
            os.unlink(os.path.join(ctx.workdir, f))
    return True


def case_arena_once(ctx):
    """Blocks of four threads, each in its own malloc arena, referenced from a global only:
    reachable in the snapshot taken while the threads wait and at exit."""
    arena_run(ctx, 0)
    valgrind_agrees(ctx, "roots_arena", {(12800, 200): "reachable"})


def case_arenas_50(ctx):
    """The same, 50 times: where the kernel puts the arenas varies from run to run (a
    second arena may follow the first one's reserved tail, the shape of a thread stack
    below its guard page); the answer must not."""
    for k in range(50):
        if not arena_run(ctx, k):
            break


def case_exited_thread(ctx):
    """A block whose only pointer is on the stack of a thread that has ended (glibc keeps
    the stack for reuse) is definitely lost; one on the stack of a waiting thread is
    reachable, from that thread's stack."""
    trace = record(ctx, "roots_exited")
    expect_class(ctx, trace, "exit", "exited_block", "definitely lost")
    expect_class(ctx, trace, "live", "exited_block", "definitely lost")
    pid = pids(ctx, trace)
    expect_class(ctx, trace, "live", "live_block", "reachable", "[stack of thread ")
    out = identify(ctx, trace, "live", "live_block")
    ctx.check("[stack of thread %d " % pid not in out, "live_block: not main's stack",
              "the worker's stack", out[:800])
    valgrind_agrees(ctx, "roots_exited", {333: "definitely lost"})
    valgrind_agrees(ctx, "roots_exited", {333: "definitely lost", 444: "reachable"}, check=0)


def case_returned_frame(ctx):
    """A pointer left only in the frame of a function that has returned: lost, although
    the agent's own frames reuse that stack when the program calls lh_snapshot; a local of
    the caller: reachable, from the stack of the thread that took the snapshot."""
    trace = record(ctx, "roots_frame")
    expect_class(ctx, trace, "returned", "frame_block", "definitely lost")
    expect_class(ctx, trace, "returned", "kept_block", "reachable",
                 "[stack of thread %d 'roots_frame' (took the snapshot)]" % pids(ctx, trace))
    expect_class(ctx, trace, "exit", "frame_block", "definitely lost")
    valgrind_agrees(ctx, "roots_frame", {555: "definitely lost"})


def case_register(ctx):
    """A pointer held only in a callee-saved register (rbx) at the call to lh_snapshot:
    reachable (the registers are pushed where the program's stack begins); at exit, the
    register long overwritten: lost."""
    if platform.machine() != "x86_64":
        raise Skip("the register case is written in x86-64 assembly")
    trace = record(ctx, "roots_frame")
    expect_class(ctx, trace, "returned", "reg_block", "reachable",
                 "[stack of thread %d 'roots_frame' (took the snapshot)]" % pids(ctx, trace))
    expect_class(ctx, trace, "exit", "reg_block", "definitely lost")
    # Valgrind's run has no lh_snapshot to call with rbx set: its answer is the exit's.
    valgrind_agrees(ctx, "roots_frame", {777: "definitely lost"})


def lost_and_worker_held(ctx, prog, label, lost, held):
    """In prog's snapshot label and at exit: the block of marker lost is definitely lost,
    the block of marker held reachable from a worker's stack (not main's)."""
    trace = record(ctx, prog)
    pid = pids(ctx, trace)
    for snap in (label, "exit"):
        expect_class(ctx, trace, snap, lost, "definitely lost")
        expect_class(ctx, trace, snap, held, "reachable", "[stack of thread ")
        out = identify(ctx, trace, snap, held)
        ctx.check("[stack of thread %d " % pid not in out, "%s in snapshot %s: from the "
                  "worker's stack, not main's" % (held, snap), "the worker's stack", out[:800])


def case_other_thread_register(ctx):
    """The documented limit (docs/FORMAT.md, "Roots"): another thread's registers are not
    read. A worker blocked in read(2) holds the only pointer to regs_block in rbx: definitely
    lost, in the snapshot main takes and at exit; the block its stack holds is reachable,
    from the worker's stack. Valgrind on the same binary (when installed) keeps every
    thread's registers and says still reachable: the difference this case documents."""
    if platform.machine() != "x86_64":
        raise Skip("the register case is written in x86-64 assembly")
    lost_and_worker_held(ctx, "roots_regs", "blocked", "regs_block", "regs_stack_block")
    # The documented difference: Valgrind keeps the worker's rbx, leakhound does not.
    valgrind_agrees(ctx, "roots_regs", {1234: "reachable", 4321: "reachable"})


VG_CLASS = {"reachable": "still reachable", "definitely lost": "definitely lost",
            "possibly lost": "possibly lost", "indirectly lost": "indirectly lost"}


def valgrind_agrees(ctx, prog, want, args=(), vg_opts=(), check=None):
    """The same binary under valgrind: at its exit (check None), or at its first leak check
    on request (check 0: vg_check.h, where the program takes its snapshot), each block of
    want ({size: class in leakhound's words}, or {(bytes, blocks): class} for one site's
    blocks) is one loss record of that class. Not compared (said in the log) when valgrind
    is not installed, or the program was built without Valgrind's headers."""
    if not shutil.which("valgrind"):
        ctx.log("valgrind is not installed: its answer is not compared")
        return
    res = E.run(ctx, ["valgrind", "--leak-check=full", "--show-leak-kinds=all"] +
                list(vg_opts) + [ctx.prog(prog)] + list(args), timeout=300)
    checks = res.stderr.split("LEAK SUMMARY:")
    if check is not None and len(checks) < check + 3:  # the requested one, the exit's, a tail
        ctx.log("no leak check on request (built without Valgrind's headers): not compared")
        return
    text = checks[check if check is not None else -2]
    got = {}
    for b, n, k in re.findall(r"== ([\d,]+) bytes in ([\d,]+) blocks are (still reachable|"
                              r"definitely lost|possibly lost|indirectly lost) in loss record",
                              text):
        got.setdefault((int(b.replace(",", "")), int(n.replace(",", ""))), []).append(k)
    for key, cls in sorted(want.items(), key=lambda kv: str(kv[0])):
        key = key if isinstance(key, tuple) else (key, 1)
        ctx.check(got.get(key) == [VG_CLASS[cls]], "valgrind %s(%s): %d bytes in %d blocks"
                  % (" ".join(vg_opts), "exit" if check is None else "check %d" % check,
                     key[0], key[1]), VG_CLASS[cls], "%s\n%s" % (got.get(key), text[-1500:]))


def case_hidden_thread(ctx):
    """A thread started with libc's own pthread_create (past the interposition, as jemalloc
    starts its background threads) that never calls malloc holds the only pointers to two
    blocks, in its stack and its TLS: reachable, from those roots of that thread (found in
    glibc's thread list), in the snapshot and at exit; Valgrind agrees."""
    trace = record(ctx, "roots_hidden")
    pid = pids(ctx, trace)
    for snap in ("hidden", "exit"):
        for name, root in (("hidden_stack_block", "[stack of thread "),
                           ("hidden_tls_block", "[tls of thread ")):
            expect_class(ctx, trace, snap, name, "reachable", root)
            out = identify(ctx, trace, snap, name)
            ctx.check("%s%d " % (root, pid) not in out, "%s in snapshot %s: from the hidden "
                      "thread, not main" % (name, snap), "another thread's root", out[:800])
    valgrind_agrees(ctx, "roots_hidden", {2222: "reachable", 3333: "reachable"})


def case_asleep_thread(ctx):
    """A worker asleep in read(2) whose dead stack (below its stack pointer: the calls it
    returned from, the allocator's frames) still holds the address of a block it dropped:
    definitely lost, as Valgrind says, in the snapshot main takes and at exit (the worker's
    stack is scanned from its stack pointer up, read from /proc while it sleeps); the block
    a local of its live frame holds is reachable, from the worker's stack."""
    lost_and_worker_held(ctx, "roots_asleep", "asleep", "asleep_stale_block",
                         "asleep_live_block")
    valgrind_agrees(ctx, "roots_asleep", {1111: "definitely lost", 2222: "reachable"})


def case_loader_linkmap(ctx):
    """A plugin dlopen'd after the start, no handle kept: the link_map the loader calloc'd
    for it (in _dl_new_object) is reachable, in the snapshot and
    at exit, from the loader's own memory (mapped before malloc existed: the link_maps of
    the libraries loaded at startup), through the previous link_map's l_next; Valgrind says
    still reachable too."""
    trace = record(ctx, "roots_linkmap", [ctx.prog("libe2e_plugin.so")])
    size = None
    for snap in ("loaded", "exit"):
        listing = shell(ctx, trace, "largest 50", snap)
        found = []
        for n in re.findall(r"^\s*(\d+)\s+0x", listing, re.M):
            out = shell(ctx, trace, "largest 50; show @%s" % n, snap)
            if re.search(r"^\s+by _dl_new_object ", out, re.M) and "at calloc" in out:
                found.append((n, out))
        if len(found) != 1:
            raise Failure("snapshot %s: one block calloc'd by _dl_new_object expected among:"
                          "\n%s" % (snap, listing))
        n, out = found[0]
        m = re.search(r"^block 0x[0-9a-f]+, [^(]*\((\d+) bytes\)", out, re.M)
        size = int(m.group(1)) if m else None
        ident = shell(ctx, trace, "largest 50; identify @%s --all" % n, snap)
        ident = ident.split("\ntotal ", 1)[-1]
        ctx.check(re.search(r"; reachable(,|$)", ident, re.M) is not None and
                  re.search(r"\[data of ld-linux[^]]*\][^\n]*\n\S*\s*\+0x18 -> ", ident)
                  is not None, "the plugin's link_map in snapshot %s: reachable from the "
                  "loader's memory, through l_next (+0x18)" % snap,
                  "reachable, a path from [data of ld-linux...] +0x18", ident[-1500:])
    if size:
        valgrind_agrees(ctx, "roots_linkmap", {size: "reachable"},
                        args=[ctx.prog("libe2e_plugin.so")])


def case_environ(ctx):
    """The environment strings moved to one heap block and environ[] pointed at the copies
    (nginx's setproctitle): the block is reachable at exit, from the environment array the
    kernel put on the main thread's stack, as Valgrind says (before: the agent's putenv had
    replaced environ[] with an array no snapshot follows, and the block looked lost)."""
    trace = record(ctx, "roots_environ")
    expect_class(ctx, trace, "exit", "environ_copy", "reachable", "[stack of thread ")
    valgrind_agrees(ctx, "roots_environ", {65536: "reachable"})


def tls_trace(ctx):
    return record(ctx, "roots_tls", [ctx.prog("roots_tlsmod.so")])


def tls_at_exit(ctx, trace, name, size):
    """At exit too: the block is reachable in leakhound's exit snapshot and in Valgrind's
    answer on the same binary."""
    expect_class(ctx, trace, "exit", name, "reachable")
    valgrind_agrees(ctx, "roots_tls", {size: "reachable"}, [ctx.prog("roots_tlsmod.so")])
    valgrind_agrees(ctx, "roots_tls", {size: "reachable"}, [ctx.prog("roots_tlsmod.so")],
                    check=0)


def case_tls(ctx):
    """A main-thread __thread variable holding the only pointer: reachable, from
    "[tls of thread PID]"."""
    trace = tls_trace(ctx)
    expect_class(ctx, trace, "tls", "tls_block", "reachable",
                 "[tls of thread %d 'roots_tls']" % pids(ctx, trace))
    expect_class(ctx, trace, "exit", "tls_block", "reachable",
                 "[tls of thread %d 'roots_tls']" % pids(ctx, trace))
    tls_at_exit(ctx, trace, "tls_block", 1001)


def case_specific(ctx):
    """A pthread_setspecific slot of a key below 32 (in the thread descriptor itself):
    reachable, from "[specific data of thread PID]"."""
    trace = tls_trace(ctx)
    expect_class(ctx, trace, "tls", "spec1_block", "reachable",
                 "[specific data of thread %d 'roots_tls']" % pids(ctx, trace))
    tls_at_exit(ctx, trace, "spec1_block", 1002)


def case_specific2(ctx):
    """A slot of key 40, in a second-level array glibc calloc'd: reachable, from
    "[specific data of thread PID]" through that array."""
    trace = tls_trace(ctx)
    out = identify(ctx, trace, "tls", "spec2_block")
    expect_class(ctx, trace, "tls", "spec2_block", "reachable",
                 "[specific data of thread %d 'roots_tls']" % pids(ctx, trace))
    ctx.check(re.search(r"^└─ \[0x[0-9a-f]+\] -> 0x[0-9a-f]+: 512 B ", out, re.M) is not None,
              "through the second-level array (32 slots of 16 bytes)", "a 512 B hop", out)
    tls_at_exit(ctx, trace, "spec2_block", 1003)


def case_dlopen_tls(ctx):
    """A __thread variable of a dlopen'd module (dynamic TLS, found through the DTV):
    reachable, from "[tls of thread PID]"."""
    trace = tls_trace(ctx)
    expect_class(ctx, trace, "tls", "dtls_block", "reachable",
                 "[tls of thread %d 'roots_tls']" % pids(ctx, trace))
    tls_at_exit(ctx, trace, "dtls_block", 1004)


def case_thread_tls(ctx):
    """A worker thread's __thread variable, while it waits: reachable from its TLS."""
    trace = tls_trace(ctx)
    out = identify(ctx, trace, "tls", "wtls_block")
    expect_class(ctx, trace, "tls", "wtls_block", "reachable")
    pid = pids(ctx, trace)
    ctx.check(re.search(r"^(@\d+ )?\[tls of thread (?!%d )\d+ 'roots_tls'\]$" % pid, out, re.M)
              is not None, "wtls_block: a root in the worker's TLS",
              "[tls of thread TID 'roots_tls']", out[:1500])
    # Freed before the exit: Valgrind's answer where the snapshot is taken.
    valgrind_agrees(ctx, "roots_tls", {1005: "reachable"}, [ctx.prog("roots_tlsmod.so")],
                    check=0)


def case_exit_return(ctx):
    """main returns after a function left 8192 copies of a pointer in its dead frame: at
    exit, scanned from where main returned (not from the exit handler's frames that run
    over that stack), the block is definitely lost, and main's own local too."""
    trace = record(ctx, "roots_exit")
    expect_class(ctx, trace, "exit", "dead_block", "definitely lost")
    expect_class(ctx, trace, "exit", "main_block", "definitely lost")
    valgrind_agrees(ctx, "roots_exit", {888: "definitely lost", 999: "definitely lost"})


def case_exit_call(ctx):
    """The same program calling exit(0) from a function below main: the dead frame's block
    is definitely lost, main's local (a live frame above the exit call) reachable."""
    trace = record(ctx, "roots_exit", ["exit"])
    expect_class(ctx, trace, "exit", "dead_block", "definitely lost")
    expect_class(ctx, trace, "exit", "main_block", "reachable",
                 "[stack of thread %d 'roots_exit' (took the snapshot)]" % pids(ctx, trace))
    valgrind_agrees(ctx, "roots_exit", {888: "definitely lost", 999: "reachable"}, ["exit"])


def case_mmap(ctx):
    """Memory the program mapped itself (mmap, a shared mapping, one mremap moved) is a root
    where no block lies, as Valgrind has it: the blocks only those mappings point to are
    reachable, from "[mmap 0x...]", in the snapshot and at exit; a pointer in a mapping
    made PROT_NONE or unmapped since keeps nothing (definitely lost), and a thread running
    on a stack the program mapped keeps its local's block from its stack. Valgrind agrees on
    every block, at its leak check where the snapshot is taken and at exit."""
    trace = record(ctx, "roots_mmap")
    for snap in ("mapped", "exit"):
        for size in (601, 602, 603):
            expect_class(ctx, trace, snap, size, "reachable", "[mmap 0x")
        for size in (604, 605):
            expect_class(ctx, trace, snap, size, "definitely lost")
    expect_class(ctx, trace, "mapped", 606, "reachable", "[stack of thread ")
    out = shell(ctx, trace, "summary", "exit")
    expect_in(ctx, "exit: leak summary", "definitely lost: 1209 bytes in 2 blocks; indirectly "
              "lost: 0 bytes in 0 blocks; possibly lost: 0 bytes in 0 blocks; still reachable: "
              "1806 bytes in 3 blocks", out)
    want = {601: "reachable", 602: "reachable", 603: "reachable", 604: "definitely lost",
            605: "definitely lost"}
    valgrind_agrees(ctx, "roots_mmap", want)
    valgrind_agrees(ctx, "roots_mmap", dict(list(want.items()) + [(606, "reachable")]), check=0)


def case_reserve(ctx):
    """A 1 TiB MAP_NORESERVE reservation with three pages written (roots_reserve.c): the
    block whose only pointer lies in the middle one is reachable from "[mmap 0x", the other
    definitely lost, in the snapshot taken while running and at exit (a snapshot lists the
    pages a private anonymous mapping has in its page tables: PAGEMAP_SCAN where the kernel
    has it, mincore's byte per page elsewhere)."""
    trace = record(ctx, "roots_reserve")
    for snap in ("reserved", "exit"):
        expect_class(ctx, trace, snap, 607, "reachable", "[mmap 0x")
        expect_class(ctx, trace, snap, 608, "definitely lost")


def case_stripped_data(ctx):
    """A stripped program's globals (roots_stripped.c): the blocks held by a static of .bss
    and a static of .data are reachable from "[data of roots_stripped]" (2 pointers, 333
    bytes), the one held by the exported g_stripped_exported from that global, as Valgrind
    says; no root is named after a label of the linker (data_start, __data_start, _edata,
    __bss_start, _end), which have no size and hold no variable: that name once took in
    every unnamed word of the writable data (lighttpd's statics)."""
    trace = record(ctx, "roots_stripped")
    prog = "[data of roots_stripped]"
    out = shell(ctx, trace, "roots", "exit")
    rows = re.findall(r"^\s+\d+\s+(\S+ \S+)\s+(\d+)\s+(.+)$", out, re.M)
    ctx.check(sorted(rows) == sorted([("333 B", "2", prog), ("999 B", "1",
                                                                "g_stripped_exported")]),
              "roots at exit", [("333 B", "2", prog), ("999 B", "1", "g_stripped_exported")],
              out)
    for size, root in ((111, prog), (222, prog), (999, "g_stripped_exported")):
        expect_class(ctx, trace, "exit", size, "reachable", root)
    out = shell(ctx, trace, "summary", "exit")
    expect_in(ctx, "exit: leak summary", "definitely lost: 0 bytes in 0 blocks; indirectly "
              "lost: 0 bytes in 0 blocks; possibly lost: 0 bytes in 0 blocks; still reachable: "
              "1332 bytes in 3 blocks", out)
    valgrind_agrees(ctx, "roots_stripped", {111: "reachable", 222: "reachable",
                                            999: "reachable"})


# Blocks found by size: libstdc++'s operator new has no frame pointer, so the fp unwinder
# does not see make_string's frame.
HEUR = [("heur_stdstring", "stdstring", 125), ("heur_length64", "length64", 208),
        ("heur_newarray", "newarray", 68), ("heur_mi", "multipleinheritance", 40)]


def case_heuristics_default(ctx):
    """Valgrind's four heuristics are on by default: each block known only through an
    interior pointer of its shape is reachable; `summary`, `show` and `identify` name the
    heuristic."""
    trace = record(ctx, "heuristics")
    out = shell(ctx, trace, "summary")
    expect_in(ctx, "summary", "possibly lost: 0 bytes in 0 blocks", out)
    expect_in(ctx, "summary: via heuristic", "of which reachable via heuristic: stdstring: 125 "
              "bytes in 1 blocks; length64: 208 bytes in 1 blocks; newarray: 68 bytes in 1 "
              "blocks; multipleinheritance: 40 bytes in 1 blocks\n", out)
    for name, heur, size in HEUR:
        out = identify(ctx, trace, None, size)
        expect_in(ctx, "%s: class" % name, "%d B " % size, out.splitlines()[0])
        expect_in(ctx, "%s: class" % name, "; reachable, retains", out.splitlines()[0])
        expect_in(ctx, "%s: identify names the heuristic" % name, ", the %s heuristic): " % heur,
                  out)
        out = identify(ctx, trace, None, size, cmd="show")
        expect_in(ctx, "%s: show names the heuristic" % name,
                  "  reachable via heuristic: %s (" % heur, out)
    valgrind_agrees(ctx, "heuristics", dict((size, "reachable") for _, _, size in HEUR))


def case_heuristics_none(ctx):
    """--heuristics none: the same four blocks are possibly lost (Valgrind's answer with
    --leak-check-heuristics=none)."""
    trace = record(ctx, "heuristics")
    out = shell(ctx, trace, "summary", extra=["--heuristics", "none"])
    expect_in(ctx, "summary", "possibly lost: 441 bytes in 4 blocks", out)
    ctx.check("via heuristic" not in out, "no heuristic line", "none", out)
    for name, heur, size in HEUR:
        expect_class(ctx, trace, None, size, "possibly lost", extra=["--heuristics", "none"])
    valgrind_agrees(ctx, "heuristics", dict((size, "possibly lost") for _, _, size in HEUR),
                    vg_opts=["--leak-check-heuristics=none"])


def case_heuristics_list(ctx):
    """--heuristics length64,multipleinheritance: those two blocks reachable, the string
    and the array possibly lost."""
    trace = record(ctx, "heuristics")
    extra = ["--heuristics", "length64,multipleinheritance"]
    for name, heur, size in HEUR:
        want = "reachable" if heur in ("length64", "multipleinheritance") else "possibly lost"
        expect_class(ctx, trace, None, size, want, extra=extra)
    valgrind_agrees(ctx, "heuristics", dict(
        (size, "reachable" if heur in ("length64", "multipleinheritance") else "possibly lost")
        for _, heur, size in HEUR), vg_opts=["--leak-check-heuristics=length64,"
                                             "multipleinheritance"])


def case_heuristics_report(ctx):
    """`report --heuristics` gives the same split in the LEAK SUMMARY."""
    trace = record(ctx, "heuristics")
    res = E.run(ctx, [ctx.lh, "report", trace, "--heuristics", "none"])
    expect_in(ctx, "report --heuristics none", "possibly lost: 441 bytes in 4 blocks",
              res.stdout)
    res = E.run(ctx, [ctx.lh, "report", trace])
    # Besides the program's five blocks (449 bytes), libstdc++'s emergency exception pool,
    # allocated by its constructor before the agent's: recorded with no stack, reachable.
    pool = re.search(r"\((\d+) bytes\) leaked in 1 block, 1 allocation \[site 0\]\n"
                     r"\s+\(no stack recorded:", res.stdout)
    ctx.check(pool is not None, "report: libstdc++'s pool, from before the agent started",
              "one block with no stack", res.stdout[-2000:])
    if pool:
        expect_in(ctx, "report (default: all)", "possibly lost: 0 bytes in 0 blocks; still "
                  "reachable: %d bytes in 6 blocks" % (449 + int(pool.group(1))), res.stdout)


def case_heuristics_badarg(ctx):
    """An unknown heuristic: a one-line error naming it, a non-zero exit status."""
    trace = record(ctx, "heuristics")
    for argv in ([ctx.lh, "shell", trace, "--heuristics", "stdstring,bogus", "-c", "summary"],
                 [ctx.lh, "report", trace, "--heuristics", "bogus"]):
        res = E.run(ctx, argv)
        lines = res.stderr.strip().splitlines()
        ctx.check(res.returncode != 0 and len(lines) == 1 and
                  "--heuristics: unknown heuristic 'bogus'" in lines[0],
                  "one-line error for %s" % argv[1], "--heuristics: unknown heuristic 'bogus'",
                  "exit %d: %s" % (res.returncode, res.stderr))


CASES = {
    "misaligned": case_misaligned,
    "arena_once": case_arena_once,
    "arenas_50": case_arenas_50,
    "exited_thread": case_exited_thread,
    "returned_frame": case_returned_frame,
    "register": case_register,
    "other_thread_register": case_other_thread_register,
    "hidden_thread": case_hidden_thread,
    "asleep_thread": case_asleep_thread,
    "loader_linkmap": case_loader_linkmap,
    "environ": case_environ,
    "tls": case_tls,
    "specific": case_specific,
    "specific2": case_specific2,
    "dlopen_tls": case_dlopen_tls,
    "thread_tls": case_thread_tls,
    "exit_return": case_exit_return,
    "exit_call": case_exit_call,
    "heuristics_default": case_heuristics_default,
    "heuristics_none": case_heuristics_none,
    "heuristics_list": case_heuristics_list,
    "heuristics_report": case_heuristics_report,
    "heuristics_badarg": case_heuristics_badarg,
    "mmap": case_mmap,
    "reserve": case_reserve,
    "stripped_data": case_stripped_data,
}


def main():
    return E.cases_main('roots', CASES, __doc__)


if __name__ == "__main__":
    sys.exit(main())
