#!/usr/bin/env python3
# leakhound - SPDX-License-Identifier: MIT
"""The entropy floor of a trace's events (issue 14: traces no bigger than heaptrack's).

Reads the events of a trace exported with `leakhound export TRACE --sqlite DB --events` and
prints the empirical (order-0) entropy of each field of an allocation event, coded as the
encoder codes it (time and address as deltas from the thread's previous event), and two
floors in bytes per event: fields coded independently with ns or us time stamps, and a model
that knows the live set (a free names one of the live blocks, an allocation at the address
its thread freed last costs one flag). An encoder that codes each field on its own cannot
beat the first floor; the second shows what address reuse is worth.

Usage: bench/entropy.py DB
"""
import math, sqlite3, sys, collections
db = sqlite3.connect(sys.argv[1])
rows = db.execute("select ts_ns, type, tid, address, size, stack_id from events "
                  "where type in ('alloc','free','realloc') order by seq").fetchall()
def H(counter):
    n = sum(counter.values())
    return -sum(c / n * math.log2(c / n) for c in counter.values())
last = {}
f = {k: collections.Counter() for k in ("type", "dts_ns", "dts_us", "daddr", "size", "stack",
                                     "size_stack")}

for ts, typ, tid, addr, size, stack in rows:
    lt, la = last.get(tid, (ts, 0))
    f["type"][typ] += 1
    f["dts_ns"][ts - lt] += 1
    f["dts_us"][(ts - lt) // 1000] += 1
    f["daddr"][addr - la] += 1
    if typ != "free":
        f["size"][size] += 1
        f["stack"][stack] += 1
        f["size_stack"][(size, stack)] += 1
    last[tid] = (ts, addr)
n = len(rows)
n_alloc = sum(v for k, v in f["type"].items() if k != "free")
bits = {k: H(c) for k, c in f.items()}
print("events %d (allocs %d)" % (n, n_alloc))
for k in ("type", "dts_ns", "dts_us", "daddr", "size", "stack", "size_stack"):
    per = bits[k] * (n_alloc / n if k in ("size", "stack", "size_stack") else 1)
    print("  %-10s %6.2f bits/event of its kind, %6.2f bits per event" % (k, bits[k], per))
ns = bits["type"] + bits["dts_ns"] + bits["daddr"] + bits["size_stack"] * n_alloc / n
us = bits["type"] + bits["dts_us"] + bits["daddr"] + bits["size_stack"] * n_alloc / n
nots = bits["type"] + bits["daddr"] + bits["size_stack"] * n_alloc / n
print("floor, ns stamps: %.2f B/event; us stamps: %.2f B/event; no stamps: %.2f B/event"
      % (ns / 8, us / 8, nots / 8))
# A model that knows the live set: a free names one of the live blocks (log2(live) bits at
# most); an allocation at the address its thread freed last costs one flag, else its delta.
live = set()
lastfree = {}
bits_free = 0.0
reuse = collections.Counter()
other = collections.Counter()
lastaddr = {}
for ts, typ, tid, addr, size, stack in rows:
    if typ == "free":
        bits_free += math.log2(max(len(live), 1))
        live.discard(addr)
        lastfree[tid] = addr
    else:
        hit = lastfree.get(tid) == addr
        reuse[hit] += 1
        if not hit:
            other[addr - lastaddr.get(tid, 0)] += 1
        live.add(addr)
    lastaddr[tid] = addr
n_free = n - n_alloc
alloc_addr_bits = H(reuse) * n_alloc + H(other) * sum(other.values()) if other else H(reuse) * n_alloc
addr_bits = (bits_free + alloc_addr_bits) / n
print("live-set model: address %.2f bits/event (allocs at the thread's last freed address: "
      "%.0f%%)" % (addr_bits, 100.0 * reuse[True] / max(n_alloc, 1)))
for name, ts_bits in (("ns", bits["dts_ns"]), ("us", bits["dts_us"])):
    tot = bits["type"] + ts_bits + addr_bits + bits["size_stack"] * n_alloc / n
    print("floor with the live-set model, %s stamps: %.2f B/event" % (name, tot / 8))
