# leakhound - SPDX-License-Identifier: MIT
# A loopback server that leaks on every request (tests/e2e/run_attach.py, case python): one
# line in, "ok N" out; every request keeps a 1000-byte bytearray in CACHE for ever.
import socket

CACHE = []


def remember(i):
    CACHE.append(bytearray(1000))  # LEAK: python_request


def main():
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    print(server.getsockname()[1], flush=True)
    n = 0
    while True:
        c, _ = server.accept()
        for _line in c.makefile("rb"):
            n += 1
            remember(n)
            c.sendall(b"ok %d\n" % n)
        c.close()


main()
