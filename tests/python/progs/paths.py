# One Python line whose allocations take several paths through CPython's C code (the
# dict, its keys table, the strings, the list and its item array): one site.
N = 400
store = {}


def handle(i):
    store[i] = {"user": "u%d" % i, "r": "x" * (200 + i), "n": [i] * 20}  # SITE:store


for i in range(N):
    handle(i)
