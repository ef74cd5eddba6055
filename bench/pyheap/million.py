# leakhound - SPDX-License-Identifier: MIT
"""A Python heap of about N objects (default 1 million: N/2 one-item lists, each holding
its own str), then one snapshot through the agent's lh_snapshot. Run by run.sh."""
import ctypes
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
data = [[str(i)] for i in range(n // 2)]
ctypes.CDLL(None).lh_snapshot(b"million")
