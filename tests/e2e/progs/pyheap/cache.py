# leakhound - SPDX-License-Identifier: MIT
"""A dict cache without eviction: every key ever asked for stays."""
cache = {}


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
    snapshot("after")
    say("entry", hex(id(cache["user42"])))
