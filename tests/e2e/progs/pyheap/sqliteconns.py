# leakhound - SPDX-License-Identifier: MIT
"""A sqlite3 connection opened per request and never closed, kept in a module-level
list. A connection's C struct points to its module's state (3.11+: a block of the
_sqlite3 module that starts with its exception types), which the decoder's scan of the
struct's words must not take for an object (a DatabaseError no program made)."""
import sqlite3

CONNS = []


def handle(n):
    db = sqlite3.connect(":memory:")
    db.execute("create table t(x)")
    db.execute("insert into t values (?)", (n,))
    CONNS.append(db)


def main(snapshot, say):
    handle(0)
    snapshot("before")
    for n in range(1, 61):
        handle(n)
    snapshot("after")
    say("conn", hex(id(CONNS[20])))
