# leakhound - SPDX-License-Identifier: MIT
"""Reference cycles with __del__ in a program that turned the collector off, as services
do "for performance": with gc.disable(), then with gc.set_threshold(0), every Session (a
cycle through its own attribute) is never freed: the unreachable objects are the leak,
not garbage on its way out. Then the collector back on: nothing is left."""
import gc


class Session:
    def __init__(self, rid):
        self.rid = rid
        self.data = bytearray(100)
        self.me = self  # a cycle

    def __del__(self):
        pass


def handle(rid):
    Session(rid)


def main(snapshot, say):
    gc.collect()
    gc.disable()
    for i in range(300):
        handle(i)
    say("session", hex(id(Session(-1))))
    snapshot("disabled", collect=False)
    gc.enable()
    gc.collect()
    old = gc.get_threshold()
    gc.set_threshold(0)
    for i in range(200):
        handle(i)
    snapshot("threshold0", collect=False)
    gc.set_threshold(*old)
    snapshot("after")
