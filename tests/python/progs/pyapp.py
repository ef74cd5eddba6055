# The module of marks.py: each call of handle() keeps 3 buffers.
kept = []


def handle(n):
    for _ in range(3):
        kept.append(bytearray(1500))  # SITE:handle
    return n


class Handler:
    def run(self):
        return handle(0)
