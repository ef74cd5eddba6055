#!/bin/sh
# leakhound - SPDX-License-Identifier: MIT
#
# run.sh BUILD [N]: `leakhound shell -c CMD` on three heaps of about N (default 1e6) blocks
# or objects, each command twice: rebuilding everything (--no-index, what every shell did
# before the index) and loading the snapshot's index (issue 14.4). Prints one line per
# command: wall, user and sys seconds and peak RSS from /usr/bin/time. Asserts nothing.
#   c       mgraph.c: N blocks in lists, a binary tree, a hash table, a lost list
#           (--snapshot-contents pointers)
#   python  ../pyheap/million.py on /usr/bin/python3: N/2 one-item lists with their str
#   perl    million.pl: N/4 array refs holding a string and a number (contents full)
set -eu
build=$(cd "$1" && pwd)
n=${2:-1000000}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lh=$build/bin/leakhound
cc -O2 -g -o "$tmp/mgraph" "$here/mgraph.c"
"$lh" run --snapshot-contents pointers -o "$tmp/c.lht" -- "$tmp/mgraph" "$n" >/dev/null 2>&1
"$lh" run -o "$tmp/py.lht" -- /usr/bin/python3 "$here/../pyheap/million.py" "$n" \
    >/dev/null 2>&1
"$lh" run --snapshot-contents full -o "$tmp/pl.lht" -- perl -MLeakHound "$here/million.pl" \
    "$n" >/dev/null 2>&1
measure() { # trace snapshot label cmd [--no-index]
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/t" "$lh" shell "$1" "$2" ${5:-} -c "$4" \
        >/dev/null 2>&1 || true
    set -- "$3" "$4" "${5:-index}" $(cat "$tmp/t" | tail -1)
    printf '%-7s %-28s %-10s %6s s wall %6s s user %6s s sys %8s KiB\n' "$@"
}
for w in "c exit" "py million" "pl million"; do
    set -- $w
    t=$tmp/$1.lht
    # builds the indexes (of both snapshots: diff opens the other one)
    "$lh" shell "$t" "$2" -c "summary; diff 1 2" >/dev/null 2>&1 || true
    addr=$("$lh" shell "$t" "$2" -c 'largest 1 --native' 2>/dev/null |
           awk 'NR == 2 { print $2 }')
    for c in summary largest count roots "largest 3; identify @1" "identify $addr" \
             unreachable "largest 3; show @1" "diff 1 2"; do
        [ "$1" = c ] && [ "$c" = "diff 1 2" ] && continue # one snapshot
        measure "$t" "$2" "$1" "$c" --no-index
        measure "$t" "$2" "$1" "$c"
    done
done
