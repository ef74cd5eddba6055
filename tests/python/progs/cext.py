# A C extension allocating (issue 13): SQLite's own memory, allocated by libsqlite3 called
# from the _sqlite3 extension, under the Python line that called it.
import sqlite3

conns = []
for i in range(20):
    c = sqlite3.connect(":memory:")  # SITE:connect
    c.execute("create table t (x)")
    conns.append(c)
