#!/bin/sh
# leakhound - SPDX-License-Identifier: MIT
#
# check.sh: the committed analysis/pyoffsets_table.c is what gen.sh makes from the CPython
# headers on this machine (a row of a version whose headers are absent is kept as
# committed, so a machine without headers checks nothing but the merge).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
table=$here/../../analysis/pyoffsets_table.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$table" "$tmp/table.c"
"$here/gen.sh" "$tmp/table.c"
if ! diff -u "$table" "$tmp/table.c"; then
    echo "pyoffsets_table.c differs from the headers on this machine: run scripts/pyoffsets/gen.sh" >&2
    exit 1
fi
n=$(sed -n 's/^#define LH_PYOFF_MINORS //p' "$table" | tr ',' '\n' | grep -c .)
echo "pyoffsets_table.c: $n CPython versions, matching the headers found here"
