# leakhound - SPDX-License-Identifier: MIT
"""Reference cycles: a loop whose only garbage is cycles the collector frees (nothing may
be reported lost), then cycles made while the collector is off (pending garbage: shown by
`unreachable` as cycles the collector has not freed yet, not as leaks)."""
import gc


class Node:
    def __init__(self):
        self.peer = None


def churn(n):
    for _ in range(n):
        a, b = Node(), Node()
        a.peer, b.peer = b, a


def main(snapshot, say):
    churn(10)
    gc.collect()
    snapshot("before")
    churn(2000)
    gc.collect()
    snapshot("after")
    gc.disable()
    churn(25)
    gc.enable()  # (on again: the cycles are pending, the next collection frees them)
    snapshot("pending", collect=False)
