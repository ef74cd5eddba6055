# leakhound - SPDX-License-Identifier: MIT
# Run with pymalloc kept (LEAKHOUND_PYMALLOC=keep): each bytearray object (56 bytes) is a
# slice of a pymalloc arena, a mapping of the program's own; its 2000-byte buffer is a
# malloc block that only the object points to.
KEEP = [bytearray(2000) for _ in range(300)]  # SITE:buffers
