# A module-level list of closures (issue 13): each keeps a 4000-byte buffer alive.
N = 500
_error_handlers = []


def make_handler(i):
    buf = bytearray(4000)  # SITE:buffer
    def handler():
        return len(buf) + i
    return handler


for i in range(N):
    _error_handlers.append(make_handler(i))
