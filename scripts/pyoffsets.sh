#!/bin/sh
# leakhound - SPDX-License-Identifier: MIT
#
# pyoffsets.sh: CPython struct layouts for agent/python.c, from the headers on this machine.
#   scripts/pyoffsets.sh gen            print one table row per CPython 3.8+ found
#   scripts/pyoffsets.sh check TABLE    each row generated here must be in TABLE verbatim
# Headers looked at: $LH_PY_PREFIXES (space-separated install prefixes), else /usr and every
# pyenv version. A prefix without internal headers is skipped: that machine keeps the
# committed table. Two prefixes of one minor version must agree, or the table cannot serve
# both and the check fails.
set -eu
mode=${1:-gen}
here=$(cd "$(dirname "$0")" && pwd)
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefixes=${LH_PY_PREFIXES:-"/usr $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/* 2>/dev/null || true)"}
rows=$tmp/rows
: >"$rows"
for p in $prefixes; do
    for inc in "$p"/include/python3.*; do
        [ -f "$inc/internal/pycore_runtime.h" ] || [ -f "$inc/internal/pycore_pystate.h" ] || continue
        case $inc in *python3.[0-7]|*python3.[0-7][!0-9]*|*d|*t) continue ;; esac
        $cc -w -DPy_BUILD_CORE -I"$inc" -I"$inc/internal" -o "$tmp/gen" "$here/pyoffsets_gen.c" \
            2>"$tmp/err" || { echo "pyoffsets: cannot compile against $inc:" >&2; head -3 "$tmp/err" >&2; exit 1; }
        "$tmp/gen" >>"$rows"
        echo "$inc" >>"$tmp/seen"
    done
done
sort -u "$rows" >"$tmp/uniq"
dups=$(sed 's/,.*//' "$tmp/uniq" | uniq -d)
if [ -n "$dups" ]; then
    echo "pyoffsets: two header sets of the same minor version disagree: $dups" >&2
    exit 1
fi
case $mode in
gen) sort -t= -k2 -n "$tmp/uniq" ;;
check)
    table=$2
    while IFS= read -r row; do
        grep -qxF "$row" "$table" || { echo "pyoffsets: $table lacks or differs from: $row" >&2; exit 1; }
    done <"$tmp/uniq"
    echo "pyoffsets: $(wc -l <"$tmp/uniq") rows match $table ($(cat "$tmp/seen" 2>/dev/null | wc -l) header sets)"
    ;;
*) echo "usage: $0 gen | check TABLE" >&2; exit 2 ;;
esac
