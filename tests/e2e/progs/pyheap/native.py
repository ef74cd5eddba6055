# leakhound - SPDX-License-Identifier: MIT
"""Objects whose memory is mostly a native buffer the decoder does not know they own: 100
ctypes string buffers (each a 100000-byte calloc) and, where numpy is installed (Debian's
python3-numpy), 200 numpy arrays (their data), kept in a module-level dict. `diff` and
`count --by type` must count those buffers in the objects' bytes."""
import ctypes
import sys

try:
    import numpy
except ImportError:
    numpy = None

KEEP = {}


def main(snapshot, say):
    snapshot("before")
    for i in range(100):
        KEEP["c%d" % i] = ctypes.create_string_buffer(100000)
        if numpy is not None:
            KEEP["z%d" % i] = numpy.zeros(5000)
            KEEP["a%d" % i] = numpy.arange(2048, dtype=numpy.float64) * i
    say("cbuf", hex(id(KEEP["c7"])))
    # numpy's own accounting: an array's __sizeof__ is its struct and the data it owns
    say("numpy_sizeof", "absent" if numpy is None else
        sum(sys.getsizeof(v) for k, v in KEEP.items() if k[0] in "za"))
    snapshot("after")
