# leakhound - SPDX-License-Identifier: MIT
"""What only a frame that is not running holds: the locals of suspended coroutines (an
asyncio server's tasks that never finish), of suspended generators, and of the frames a
kept exception's traceback holds (an error log of exception objects)."""


class Payload:
    pass


class Blob:
    pass


class Wait:
    """An awaitable that suspends its coroutine once (what asyncio.sleep does)."""

    def __await__(self):
        yield self


pending = []   # coroutines started, never resumed
streams = []   # generators advanced once, never exhausted
errors = []    # exceptions kept with their tracebacks


async def handle(n):
    record = {"request": n, "body": Payload()}
    await Wait()
    return record


def stream(n):
    buf = bytearray(64 + n % 4)
    yield len(buf)
    yield n


def fail(n):
    blob = Blob()
    raise ValueError(n, blob.__class__.__name__)


def serve(n):
    c = handle(n)
    c.send(None)
    pending.append(c)
    g = stream(n)
    next(g)
    streams.append(g)
    try:
        fail(n)
    except ValueError as e:
        errors.append(e)


def main(snapshot, say):
    serve(-1)             # every code path warm before the first snapshot
    for k in (pending, streams, errors):
        for x in k:
            if hasattr(x, "close"):
                x.close()
        k.clear()
    snapshot("before")
    for n in range(200):
        serve(n)
    snapshot("after")
    say("body", hex(id(pending[7].cr_frame.f_locals["record"]["body"])))
    say("buf", hex(id(streams[3].gi_frame.f_locals["buf"])))
    say("blob", hex(id(errors[5].__traceback__.tb_next.tb_frame.f_locals["blob"])))
