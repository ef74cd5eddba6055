# leakhound - SPDX-License-Identifier: MIT
# Run with pymalloc kept (LEAKHOUND_PYMALLOC=keep): each bytearray object (56 bytes) is a
# slice of a pymalloc arena, a mapping of the program's own; its 2000-byte buffer is a
# malloc block that only the object points to.
import leakhound

KEEP = None  # the global exists before the line: storing it resizes no dict there
KEEP = list(map(bytearray, [2000] * 300))  # SITE:buffers (no comprehension: no frame)
print(hex(id(KEEP[7])))
leakhound.snapshot("kept")
