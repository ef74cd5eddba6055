#!/bin/sh
# leakhound - SPDX-License-Identifier: MIT
# Runs the leaky server under leakhound, prints the exit-time report and the growth ranking
# (`leakhound leaks`: what piled up request after request), then says in plain words which
# line leaks. The answer is read from the JSON of both, not hard-coded: when the top site of
# either is not the per-connection emitter_on() registration, this script says so and
# exits 1.
# Usage: examples/demo.sh BUILD_DIR
set -eu
if [ $# -ne 1 ]; then
  echo "usage: examples/demo.sh BUILD_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
lh="$build/bin/leakhound"
trace="$build/demo.lht"
for f in "$lh" "$build/bin/leaky_server" "$build/lib/libleakhound.so"; do
  if [ ! -e "$f" ]; then
    echo "demo.sh: $f is missing; build first (make)" >&2
    exit 1
  fi
done

rm -f "$trace"
echo "\$ leakhound run -o $trace -- leaky_server"
"$lh" run -o "$trace" -- "$build/bin/leaky_server"
echo
echo "\$ leakhound report $trace --top 5"
"$lh" report "$trace" --top 5
echo

echo "\$ leakhound leaks $trace --top 3"
"$lh" leaks "$trace" --top 3
echo

report_json=$("$lh" report "$trace" --top 5 --format json)
leaks_json=$("$lh" leaks "$trace" --top 3 --format json)
printf '{"report": %s, "leaks": %s}' "$report_json" "$leaks_json" | python3 -c '
import json, os, re, sys

src_dir = sys.argv[1]
both = json.load(sys.stdin)
report, leaks = both["report"], both["leaks"]
# The registration line is the one marked "LEAK: demo" in leaky_server.c.
reg_line = None
with open(os.path.join(src_dir, "leaky_server.c"), encoding="utf-8") as f:
    for n, text in enumerate(f, 1):
        if "/* LEAK: demo */" in text:
            reg_line = n
def where(fr):
    return "%s (%s:%s)" % (fr.get("function") or "??",
                           os.path.basename(fr.get("file") or "??"), fr.get("line") or "?")
def check(doc, name):
    """The top site of doc, its frames and its caller in leaky_server.c, or exits 1."""
    sites = doc.get("sites") or []
    if not sites:
        print("The answer: `leakhound %s` lists no leaking site at all, but leaky_server leaks "
              "one handler per connection. Something is wrong." % name)
        sys.exit(1)
    top = sites[0]
    frames = top.get("frames") or []
    caller = next((fr for fr in frames
                   if os.path.basename(fr.get("file") or "") == "leaky_server.c"), None)
    if (frames and frames[0].get("function") == "emitter_on" and caller is not None
            and caller.get("line") == reg_line):
        return top, frames, caller
    print("The answer: unexpected. The top site of `leakhound %s` is %s%s, not the "
          "emitter_on() registration at leaky_server.c:%s."
          % (name, where(frames[0]) if frames else "(no frames)",
             (", called by " + where(frames[1])) if len(frames) > 1 else "", reg_line))
    sys.exit(1)
top, frames, caller = check(report, "report")
ltop, _, _ = check(leaks, "leaks")
if True:
    print("The answer: %d bytes in %d blocks (one per connection) leak from %s:"
          % (top["leaked_bytes"], top["leaked_blocks"], where(caller)))
    print("  the on(\"error\") registration that every connection adds to the shared emitter")
    print("  (allocated in %s) and never removes. Register it once, or remove it on close."
          % where(frames[0]))
    print("  It is also what grows while the server runs: %s bytes per request, in %d of %d "
          "intervals between lh_mark(\"request\") calls (`leakhound leaks`)."
          % (ltop["bytes_per_mark"], ltop["leaked_intervals"], ltop["intervals"]))
    sys.exit(0)
' "$here"
