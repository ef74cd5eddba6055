# leakhound - SPDX-License-Identifier: MIT
"""bench workload for python3 (run with PYTHONMALLOC=malloc so every object is a malloc):
builds and drops dicts, lists, tuples and strings, keeps a slowly growing cache.
Usage: python3 alloc.py [ROUNDS]   (default 40)"""
import sys

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
cache = {}
checksum = 0
for r in range(rounds):
    table = {}
    for i in range(20000):
        key = "k%d-%d" % (r, i)
        table[key] = [i, str(i * 7), (key, i % 13), {"n": i, "s": key.upper()}]
    words = " ".join(k for k in table if k.endswith("7")).split()
    checksum += len(words) + sum(len(v[1]) for v in table.values())
    cache[r] = words[: 50]
    del table, words
print("alloc.py: %d rounds, checksum %d" % (rounds, checksum))
