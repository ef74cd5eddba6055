# A daemon whose leak is a cache it still reaches, one entry per request, beside a buffer
# of a fixed size it made at start-up (the report's order, issue 10).
import sys

N = int(sys.argv[1]) if len(sys.argv) > 1 else 60
CONFIG = [bytes(200000)]  # SITE:config
cache = {}


def handle(i):
    cache[i] = bytes(3000)  # SITE:entry


for i in range(N):
    handle(i)
