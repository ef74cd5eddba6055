# leakhound - SPDX-License-Identifier: MIT
"""A ThreadingHTTPServer driven by real requests (urllib over loopback) whose handler
leaks three ways: a logger named per request (logging's manager keeps every logger ever
asked for), the exception of each failed validation kept with its traceback (which holds
the handler's frame and the validator's: the order, the handler, its socket), and a
cleanup partial registered with atexit per request (held by the interpreter: atexit's
callbacks, in no object)."""
import atexit
import functools
import json
import logging
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ERRORS = []
AT_INDEX = []


class Order:
    def __init__(self, n, body):
        self.n = n
        self.body = body


class Scratch:
    pass


def cleanup(order_id):
    pass


def validate(order):
    scratch = Scratch()
    raise ValueError("order %d: no stock" % order.n, type(scratch).__name__)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        n = int(self.path.rsplit("/", 1)[1])
        order = Order(n, json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        log = logging.getLogger("svc.req%d" % n)  # one logger per request, never freed
        log.propagate = False
        if n == 9:
            AT_INDEX.append(atexit._ncallbacks())  # the entry the next register() fills
        atexit.register(functools.partial(cleanup, n))
        try:
            validate(order)
        except ValueError as e:
            ERRORS.append(e)  # the traceback keeps both frames alive
        out = json.dumps({"n": n}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


def post(port, n):
    data = json.dumps({"sku": "A%d" % n, "qty": n}).encode()
    req = urllib.request.Request("http://127.0.0.1:%d/order/%d" % (port, n), data=data,
                                 method="POST")
    with urllib.request.urlopen(req) as r:
        r.read()


def serve(srv):
    while True:
        srv.handle_request()  # (no timeout: idle in select, making nothing, between them)


def settle():
    """Every request's thread gone: the server allocates nothing while a snapshot is
    counted and taken."""
    while threading.active_count() > 2:
        time.sleep(0.01)


def main(snapshot, say):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = srv.server_address[1]
    threading.Thread(target=serve, args=(srv,), daemon=True).start()
    post(port, 1000)  # every code path warm before the first snapshot
    settle()
    snapshot("before")
    for n in range(100):
        post(port, n)
    lg = logging.getLogger("svc.req7")  # what a developer looking at it has in hand
    settle()
    snapshot("after")
    say("logger", hex(id(lg)))
    tb = ERRORS[5 + 1].__traceback__
    say("order", hex(id(tb.tb_frame.f_locals["order"])))
    say("scratch", hex(id(tb.tb_next.tb_frame.f_locals["scratch"])))
    say("partial", hex(id([x for x in __import__("gc").get_objects()
                           if type(x) is functools.partial and x.args == (9,)][0])))
    say("partial_index", AT_INDEX[0])
