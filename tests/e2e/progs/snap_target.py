# leakhound - SPDX-License-Identifier: MIT
# A python process holding known objects, for `leakhound snapshot -p` (run_snapshot.py
# case python): 300 Session objects in the module dict CACHE, 40 Job objects in QUEUE.
# Prints "ready PID" and waits for a line on standard input.
import os
import sys


class Session:
    def __init__(self, i):
        self.id = i
        self.user = "u%d" % i


class Job:
    def __init__(self, n):
        self.n = n


CACHE = {i: Session(i) for i in range(300)}
QUEUE = [Job(n) for n in range(40)]
print("ready", os.getpid(), flush=True)
sys.stdin.readline()
