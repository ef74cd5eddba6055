# leakhound - SPDX-License-Identifier: MIT
"""functools.lru_cache on a method: the cache is the function's (a class attribute), and
its keys hold every self it was called on, so Renderer objects made per request never
die; and a class-level registry of callbacks (bound methods) that nobody unregisters."""
import functools


class Renderer:
    def __init__(self, n):
        self.n = n
        self.template = bytearray(128)

    @functools.lru_cache(maxsize=None)
    def render(self, page):
        return "page %d of %d" % (page, self.n)


class EventBus:
    handlers = []

    @classmethod
    def subscribe(cls, fn):
        cls.handlers.append(fn)


class Session:
    def __init__(self, n):
        self.n = n
        self.state = {"user": n}
        EventBus.subscribe(self.on_logout)  # never unsubscribed

    def on_logout(self, event):
        self.state.clear()


def request(n):
    Renderer(n).render(1)
    Session(n)


def main(snapshot, say):
    request(0)
    snapshot("before")
    for n in range(1, 201):
        request(n)
    snapshot("after")
    r = next(k[0] for k in _keys() if getattr(k[0], "n", -1) == 150)
    say("renderer", hex(id(r)))
    say("session", hex(id(EventBus.handlers[120].__self__)))


def _keys():
    # the cache's keys, as lru_cache makes them (tuples of the arguments), read from its
    # C struct through gc: the only referents of the wrapper that are a dict
    import gc
    d = [x for x in gc.get_referents(Renderer.render) if isinstance(x, dict)]
    return [k for k in d[0]] if d else []
