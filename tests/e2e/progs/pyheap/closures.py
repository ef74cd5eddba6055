# leakhound - SPDX-License-Identifier: MIT
"""A module-level list of closures: every request registers an error handler that is never
removed; each closure keeps its own state dict alive through a cell."""
_error_handlers = []


def register(n):
    state = {"request": n}

    def on_error():
        return state

    _error_handlers.append(on_error)


def main(snapshot, say):
    register(-1)          # every code path warm before the first snapshot
    _error_handlers.clear()
    snapshot("before")
    for n in range(500):
        register(n)
    snapshot("after")
    say("state", hex(id(_error_handlers[123].__closure__[0].cell_contents)))
    say("handler", hex(id(_error_handlers[123])))
