#!/bin/sh
# leakhound - SPDX-License-Identifier: MIT
# Runs the leaky server under leakhound, prints the report, then says in plain words which
# line leaks. The answer is read from the JSON report, not hard-coded: when the top site is
# not the per-connection emitter_on() registration, this script says so and exits 1.
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

json=$("$lh" report "$trace" --top 5 --format json)
printf '%s' "$json" | python3 -c '
import json, os, re, sys

src_dir = sys.argv[1]
report = json.load(sys.stdin)
# The registration line is the one marked "LEAK: demo" in leaky_server.c.
reg_line = None
with open(os.path.join(src_dir, "leaky_server.c"), encoding="utf-8") as f:
    for n, text in enumerate(f, 1):
        if "/* LEAK: demo */" in text:
            reg_line = n
sites = report.get("sites") or []
if not sites:
    print("The answer: the report lists no leaking site at all, but leaky_server leaks one "
          "handler per connection. Something is wrong.")
    sys.exit(1)
top = sites[0]
frames = top.get("frames") or []
def where(fr):
    return "%s (%s:%s)" % (fr.get("function") or "??",
                           os.path.basename(fr.get("file") or "??"), fr.get("line") or "?")
caller = next((fr for fr in frames
               if os.path.basename(fr.get("file") or "") == "leaky_server.c"), None)
is_emitter_on = bool(frames) and frames[0].get("function") == "emitter_on"
is_reg_line = caller is not None and caller.get("line") == reg_line
if is_emitter_on and is_reg_line:
    print("The answer: %d bytes in %d blocks (one per connection) leak from %s:"
          % (top["leaked_bytes"], top["leaked_blocks"], where(caller)))
    print("  the on(\"error\") registration that every connection adds to the shared emitter")
    print("  (allocated in %s) and never removes. Register it once, or remove it on close."
          % where(frames[0]))
    sys.exit(0)
print("The answer: unexpected. The top site is %s%s, not the emitter_on() registration at "
      "leaky_server.c:%s." % (where(frames[0]) if frames else "(no frames)",
                             (", called by " + where(frames[1])) if len(frames) > 1 else "",
                             reg_line))
sys.exit(1)
' "$here"
