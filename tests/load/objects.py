# leakhound - SPDX-License-Identifier: MIT
# load.python3 workload (PYTHONMALLOC=malloc: every object through malloc): a JSON
# round-trip of nested records, a graph of small objects with reference cycles collected
# by gc, regex tokenizing and big string joins; deterministic output.
import gc
import json
import re


class Node:
    def __init__(self, key, payload):
        self.key = key
        self.payload = payload
        self.edges = []


records = [{"id": i, "name": "user%05d" % i, "tags": ["t%d" % (i % 13), "g%d" % (i % 7)],
            "score": (i * 7919) % 1000 / 10.0, "nested": {"a": [i, i * 2, i * 3]}}
           for i in range(12000)]
text = json.dumps(records, sort_keys=True)
back = json.loads(text)
print("json", len(text), back == records)

nodes = [Node(i, "x" * (i % 50)) for i in range(15000)]
for i, n in enumerate(nodes):
    n.edges.append(nodes[(i * 31) % len(nodes)])
    n.edges.append(nodes[(i + 1) % len(nodes)])
reach = sum(len(n.edges) for n in nodes)
del nodes
collected = gc.collect()
print("graph", reach, collected >= 0)

tokens = re.findall(r"[a-z]+|\d+", text[:400000])
freq = {}
for t in tokens:
    freq[t] = freq.get(t, 0) + 1
top = sorted(freq.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
print("tokens", len(tokens), top)
big = "".join(str(i) for i in range(100000))
print("join", len(big), big[-10:])
