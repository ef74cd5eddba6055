# A pre-fork server, gunicorn-style (issue 13): the parent forks 3 workers; each serves
# 200 "requests", keeping 1000 + w bytes per request, and exits as gunicorn's workers do:
# worker 0 by os._exit (no finalization), workers 1 and 2 by sys.exit (SystemExit up
# to the top, then the interpreter's finalization). The parent waits for them, keeps its
# own 100 buffers, and exits normally.
import os
import sys

kept = []


def serve(worker):
    for _ in range(200):
        kept.append(bytearray(1000 + worker))  # SITE:worker


def main():
    pids = []
    for w in range(3):
        pid = os.fork()
        if pid == 0:
            serve(w)
            sys.stdout.flush()
            if w == 0:
                os._exit(0)
            sys.exit(0)
        pids.append(pid)
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert status == 0, status
    kept.extend(bytearray(500) for _ in range(100))  # SITE:parent
    print("workers done")


main()
