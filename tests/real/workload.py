# leakhound - SPDX-License-Identifier: MIT
# real.python3 workload (run with PYTHONMALLOC=malloc so every object goes through malloc):
# dicts, lists and strings; deterministic output.
import collections

words = []
for i in range(1, 50001):
    words.append("".join(chr(97 + ((i * 2654435761 + k * 40503) >> 9) % 26) for k in range(1, 3 + i % 9)))
counts = collections.Counter(words)
index = {}
for w in words:
    index.setdefault(len(w), []).append(w.upper())
ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
print("words", len(words), "distinct", len(counts), "checksum", sum(map(len, words)))
for n in sorted(index):
    print("len %2d: %6d words, first %s" % (n, len(index[n]), min(index[n])))
print("top:", " ".join(w for w, _ in ranked[:5]))
joined = ",".join(words[:20000]).split(",")
print("roundtrip", joined == words[:20000])
