# leakhound - SPDX-License-Identifier: MIT
"""A reference never released: what a C extension's missing Py_DECREF does, here with
ctypes' Py_IncRef. The 30 bytearrays are dropped by the program but stay allocated; no
object refers to them, so only the native graph sees them (blocks nothing points to)."""
import ctypes


def main(snapshot, say):
    snapshot("before")
    for n in range(30):
        b = bytearray(1000 + n)
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(b))
    del b
    snapshot("after")
