# leakhound - SPDX-License-Identifier: MIT
"""An asyncio service without network: each request schedules a background task kept in
a set nobody discards from (the done-callback that would was forgotten), and leaves its
reply future in a dict of waiters that is never popped."""
import asyncio


class Request:
    def __init__(self, n):
        self.n = n
        self.body = bytearray(200)


class Server:
    def __init__(self):
        self.background = set()
        self.waiters = {}

    async def audit(self, req):
        await asyncio.sleep(0)
        return len(req.body)

    async def handle(self, req):
        loop = asyncio.get_running_loop()
        task = loop.create_task(self.audit(req))
        self.background.add(task)  # never discarded: finished tasks pile up
        fut = loop.create_future()
        self.waiters[req.n] = fut  # the reply future is never popped
        fut.set_result(req)
        await task


SERVER = Server()


async def serve(first, n):
    for i in range(first, first + n):
        await SERVER.handle(Request(i))


def main(snapshot, say):
    asyncio.run(serve(0, 20))
    snapshot("before")
    asyncio.run(serve(1000, 300))
    snapshot("after")
    say("reply", hex(id(SERVER.waiters[1100].result())))
    task = next(t for t in SERVER.background if t.result() == 200)
    say("task", hex(id(task)))
    say("request", hex(id(SERVER.waiters[1200].result())))
