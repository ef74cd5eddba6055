# leakhound - SPDX-License-Identifier: MIT
"""A service that keeps what the stdlib made for it: json documents parsed per request
(the allocations happen inside json's decoder) and encoded events in a history. The
report's site is json's line; the user's line that asked is named beside it."""
import collections
import json

DOCS = []
HISTORY = collections.defaultdict(list)


def handle(i):
    body = "x" * 5000
    doc = json.loads('{"id": %d, "body": "%s"}' % (i, body))  # SITE:loads
    DOCS.append(doc)


def record(i):
    HISTORY[i % 7].append(json.dumps({"i": i, "pad": "y" * 3000}))  # SITE:dumps


def main():
    for i in range(2000):
        handle(i)
        record(i)


main()
