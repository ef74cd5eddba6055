# leakhound - SPDX-License-Identifier: MIT
"""A logging handler added per request to a module's logger and never removed (a
per-request file or buffer handler): the logger's handlers list grows."""
import io
import logging

log = logging.getLogger("svc.requests")


class RequestHandler(logging.StreamHandler):
    def __init__(self, n):
        super().__init__(io.StringIO())
        self.request_id = n


def handle(n):
    log.addHandler(RequestHandler(n))  # never removed


def main(snapshot, say):
    handle(0)
    snapshot("before")
    for n in range(1, 151):
        handle(n)
    snapshot("after")
    say("handler", hex(id(log.handlers[100])))
    say("buffer", hex(id(log.handlers[120].stream)))
