# Python frames at known points, with Python's own answer beside them: each probe() call
# makes the preloaded tests/python/probe.c print the frames agent/python.c reads (stderr),
# and prints the same frames as sys._getframe sees them (stdout). run_python.py compares.
import os
import sys
import threading


def probe():
    os.getppid(); at = sys._getframe().f_lineno  # noqa: E702 (one line: same line number)
    f = sys._getframe(0)
    while f is not None:
        code = f.f_code
        line = at if f is sys._getframe(0) else f.f_lineno
        if sys.version_info >= (3, 11):
            name = code.co_qualname
            if name != "<module>":
                name = f.f_globals["__name__"] + "." + name
        else:
            name = code.co_name
        print("%s %s:%d" % (name, code.co_filename, line))
        f = f.f_back
    print("--", flush=True)


class Handler:
    def handle(self, n):
        return inner(n)

    @staticmethod
    def static():
        probe()


def inner(n):
    probe()
    return [(lambda: probe())() for _ in range(n)]


def gen():
    probe()
    yield 1


async def coro():
    probe()


def décor():
    return probe()


def deep(n):
    if n == 0:
        return probe()
    return deep(n - 1)


def in_thread():
    t = threading.Thread(target=Handler.static)
    t.start()
    t.join()


Handler().handle(1)
list(gen())
try:
    coro().send(None)
except StopIteration:
    pass
décor()
deep(40)
in_thread()
exec("probe()")
probe()
