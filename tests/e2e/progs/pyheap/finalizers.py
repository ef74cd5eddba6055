# leakhound - SPDX-License-Identifier: MIT
"""Clean-up callbacks that pile up, one per connection opened: atexit.register(close, conn)
(its arguments keep the connection), atexit.register(close, conn=conn) (its keyword
arguments), and weakref.finalize (whose registry, a class attribute, keeps the finalizer;
the connection itself is also kept, in a list). atexit's callbacks are in no object: the
interpreter holds them (3.8-3.9: the atexit module's state)."""
import atexit
import weakref

OPEN = []


class Conn:
    def __init__(self, n):
        self.n = n
        self.buf = bytearray(64)


def close(conn):
    pass


def main(snapshot, say):
    snapshot("before")
    at = {}
    for n in range(120):
        at[n] = atexit._ncallbacks()  # the entry the next register() fills
        if n % 2:
            atexit.register(close, conn=Conn(n))
        else:
            atexit.register(close, Conn(n))
        c = Conn(1000 + n)
        OPEN.append(c)
        weakref.finalize(c, close, n)
    snapshot("after")
    say("args_conn", hex(id(_conn(40))))
    say("args_index", at[40])
    say("kwargs_conn", hex(id(_conn(41))))
    say("kwargs_index", at[41])
    say("finalizer", hex(id([f for f in weakref.finalize._registry if f.peek()[0] is OPEN[30]][0])))


def _conn(n):
    import gc
    return [o for o in gc.get_objects() if type(o) is Conn and o.n == n][0]
