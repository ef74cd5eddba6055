# leakhound - SPDX-License-Identifier: MIT
"""Records made by a stripped native library (stripped_ext.c, path in argv[1]) through
ctypes, kept by the program: the site is the Python line, with the library's frames
under it named from .dynsym and .eh_frame."""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
lib.lh_ext_fill.restype = ctypes.c_void_p
lib.lh_ext_fill.argtypes = [ctypes.c_size_t]
KEEP = []


def load(n):
    for _ in range(n):
        KEEP.append(lib.lh_ext_fill(4096))  # SITE:fill


load(200)
