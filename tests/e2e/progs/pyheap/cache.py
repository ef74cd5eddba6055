# leakhound - SPDX-License-Identifier: MIT
"""A dict cache without eviction: every key ever asked for stays. And one keyed by a
tuple, as per-client caches are: the path writes the key as Python does."""
cache = {}
by_peer = {}


def lookup(key):
    if key not in cache:
        cache[key] = [key] * 4
    return cache[key]


def main(snapshot, say):
    lookup("warm")
    del cache["warm"]
    snapshot("before")
    for n in range(300):
        lookup("user%d" % n)
    by_peer[("10.0.0.7", 443)] = bytearray(8)
    by_peer[(("a", -1), 7, None)] = bytearray(8)
    snapshot("after")
    say("entry", hex(id(cache["user42"])))
    say("peer", hex(id(by_peer[("10.0.0.7", 443)])))
    say("other", hex(id(by_peer[(("a", -1), 7, None)])))
