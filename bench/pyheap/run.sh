#!/bin/sh
# leakhound - SPDX-License-Identifier: MIT
#
# run.sh BUILD [PYTHON] [N]: snapshot cost on a Python heap of N objects (default 1e6):
# the target's pause (the SNAPSHOT record's pause_ns, shown by `snapshots`), the size of
# the contents file, and the time `leakhound shell ... -c summary` takes to decode and
# report it (wall and peak RSS from /usr/bin/time). Prints the numbers; asserts nothing.
set -eu
build=$(cd "$1" && pwd)
py=${2:-/usr/bin/python3}
n=${3:-1000000}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lh=$build/bin/leakhound
"$lh" run -o "$tmp/m.lht" -- "$py" "$here/million.py" "$n" >/dev/null 2>&1
echo "python: $("$py" -c 'import sys; print(sys.version.split()[0])'), objects asked: $n"
"$lh" shell "$tmp/m.lht" million -c snapshots   # the pause column
ls -l "$tmp"/m.snap1.lhs | awk '{printf "contents file: %.1f MiB\n", $5 / 1048576}'
/usr/bin/time -f "shell summary: %e s wall, %M KiB peak RSS" \
    "$lh" shell "$tmp/m.lht" million -c summary 2>&1 | grep -E "python|shell summary|live:"
