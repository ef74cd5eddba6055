# leakhound - SPDX-License-Identifier: MIT
"""Objects whose bytes are in a buffer of their own, a native block the decoder has no
field for: a cache of received frames as bytearrays (a bytearray's ob_bytes, the same
for array.array, io.BytesIO, a C extension object's malloc'd struct)."""
frames = []


def main(snapshot, say):
    snapshot("before")
    for n in range(10):
        frames.append(bytearray(100000 + n))
    snapshot("after")
    say("buf", hex(id(frames[3])))
