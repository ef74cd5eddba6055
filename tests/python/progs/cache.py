# A dict cache without eviction (issue 13): one string per key stays.
N = 700
cache = {}


def lookup(key):
    if key not in cache:
        cache[key] = "v" * 3000 + str(key)  # SITE:value
    return cache[key]


for i in range(N):
    lookup(i)
    lookup(i)
