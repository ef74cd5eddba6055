# leakhound - SPDX-License-Identifier: MIT
"""Objects of a user class kept by a class attribute (a registry nobody empties)."""


class Connection:
    pool = []

    def __init__(self, n):
        self.peer = "10.0.0.%d" % (n % 250)
        self.buf = bytearray(64)
        Connection.pool.append(self)


class Slotted:
    __slots__ = ("payload",)

    def __init__(self):
        self.payload = {"kind": "slot"}


def main(snapshot, say):
    Connection(-1)
    Connection.pool.clear()
    snapshot("before")
    for n in range(40):
        Connection(n)
    s = Slotted()
    snapshot("after")
    say("conn", hex(id(Connection.pool[7])))
    say("peer", hex(id(Connection.pool[7].peer)))
    say("payload", hex(id(s.payload)))
