# leakhound - SPDX-License-Identifier: MIT
"""What only a collections.deque holds: its items live in a chain of 64-item blocks
malloc'd apart from the deque, so they need decoding (before, "referenced from C"). A
queue.Queue nobody consumes (300 jobs: five blocks), a bounded deque(maxlen=50) that
dropped its oldest, and an event bus whose listeners (closures) are added at the left."""
import collections
import queue


class Job:
    def __init__(self, n):
        self.n = n
        self.payload = bytearray(64)


class Bus:
    def __init__(self):
        self.listeners = collections.deque()


JOBS = queue.Queue()
RECENT = collections.deque(maxlen=50)
BUS = Bus()


def subscribe(job):
    def on_event(ev):
        return job.n + ev
    BUS.listeners.appendleft(on_event)


def main(snapshot, say):
    snapshot("before")
    for i in range(300):
        JOBS.put(Job(i))
    for i in range(200):
        RECENT.append(Job(-i))
    for i in range(150):
        subscribe(Job(1000 + i))
    say("queued", hex(id(JOBS.queue[200])))
    say("recent", hex(id(RECENT[10])))
    say("listener", hex(id(BUS.listeners[99].__closure__[0].cell_contents)))
    snapshot("after")
