# leakhound - SPDX-License-Identifier: MIT
"""Per-thread state that grows: a threading.local (C _thread._local), a subclass of it (a
request context), and the pure-Python _threading_local.local, set by a worker thread still
alive at the snapshot and by the main thread; the locals of a ThreadPoolExecutor's named
thread and of a thread threading does not know (_thread.start_new_thread)."""
import _thread
import _threading_local
import concurrent.futures
import threading

ctx = threading.local()
pyctx = _threading_local.local()


class RequestContext(threading.local):
    def __init__(self):
        self.user = None


req = RequestContext()


class Session:
    def __init__(self, n):
        self.n = n
        self.buf = bytearray(32)


def fill(ready, done, ids):
    ctx.sessions = [Session(n) for n in range(60)]
    pyctx.pending = {"s%d" % n: Session(n) for n in range(40)}
    req.user = Session(-1)
    # (strings: the main thread holds no reference to the objects)
    ids.extend(hex(id(o)) for o in (ctx.sessions[7], pyctx.pending["s5"], req.user))
    ready.set()
    done.wait()


def ingest(ready, done, ids):
    batch = [Session(2000 + n) for n in range(5)]
    ids.append(hex(id(batch[3])))
    ready.set()
    done.wait()


def raw(ready, done, ids):
    keep = [Session(3000)]
    ids.extend((hex(id(keep[0])), _thread.get_ident()))
    ready.set()
    done.wait()


def main(snapshot, say):
    ctx.main_only = "main"
    snapshot("before")
    ready, done, ids = threading.Event(), threading.Event(), []
    t = threading.Thread(target=fill, args=(ready, done, ids), name="worker")
    t.start()
    ready.wait()
    pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="ingest")
    pready, rready, pids, rids = threading.Event(), threading.Event(), [], []
    job = pool.submit(ingest, pready, done, pids)
    pready.wait()
    _thread.start_new_thread(raw, (rready, done, rids))
    rready.wait()
    say("pool_session", pids[0])
    say("raw_session", rids[0])
    say("raw_tid", rids[1])
    ctx.sessions = [Session(1000)]
    pyctx.pending = {}  # the main thread's own dict is now pyctx.__dict__
    say("worker_session", ids[0])
    say("pending", ids[1])
    say("user", ids[2])
    say("main_session", hex(id(ctx.sessions[0])))
    say("worker_tid", t.ident)
    say("main_tid", threading.get_ident())
    say("worker_thread", id(t))  # _threading_local's key: id() of the Thread
    snapshot("after")
    done.set()
    t.join()
    job.result()
    pool.shutdown()
