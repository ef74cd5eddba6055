# A server stopped with Ctrl-C (issue 13): SIGINT arrives while it serves, the
# KeyboardInterrupt is not caught, and CPython (3.8+) ends by killing itself with SIGINT
# after its teardown, so the process never reaches exit(). With an argument: sys.exit(N).
import os
import signal
import sys

sessions = []
for i in range(100):
    sessions.append(bytearray(1000))  # SITE:session
    if i == 50 and len(sys.argv) < 2:
        os.kill(os.getpid(), signal.SIGINT)
if len(sys.argv) > 1:
    sys.exit(int(sys.argv[1]))
