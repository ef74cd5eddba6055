# A loop whose only garbage is reference cycles the collector frees (issue 13): nothing
# stays from the loop once the collector ran.
import gc

N = 400


class Node:
    def __init__(self):
        self.blob = bytes(2000)  # SITE:blob
        self.me = self


for i in range(N):
    Node()
    if i % 50 == 49:
        gc.collect()
gc.collect()
