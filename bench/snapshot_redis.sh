#!/usr/bin/env bash
# leakhound - SPDX-License-Identifier: MIT
#
# snapshot_redis.sh BUILD [WORKDIR]: issue 15's redis check, by hand (not a CTest test: it
# downloads and builds redis). Debian's redis-server links jemalloc, which `snapshot -p`
# refuses (it walks glibc's malloc), so this builds Debian's own redis source with
# MALLOC=libc, loads 100,000 keys, takes `leakhound snapshot -p`, and compares the
# in-use chunk bytes with glibc's mallinfo2() (uordblks + hblkhd) read through gdb, then
# times shell commands on the snapshot. Needs root (apt-get source, gdb -p), gdb,
# redis-tools (redis-cli) and a Debian mirror with sources.
set -euo pipefail
BUILD=$(cd "${1:?usage: snapshot_redis.sh BUILD [WORKDIR]}" && pwd)
WORK=${2:-/tmp/lh-snapshot-redis}
LH=$BUILD/bin/leakhound
mkdir -p "$WORK"
cd "$WORK"

if [ ! -x redis-src/src/redis-server ]; then
    # Debian's sources of the redis package the machine has, through a deb-src list of
    # the machine's own mirror (kept in WORK: the system's apt configuration is untouched).
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > src.sources
    mkdir -p apt/lists/partial apt/archives/partial
    APT=(-o Dir::Etc::SourceList="$WORK/src.sources" -o Dir::Etc::SourceParts=/dev/null
         -o Dir::State::Lists="$WORK/apt/lists" -o Dir::Cache::Archives="$WORK/apt/archives")
    apt-get "${APT[@]}" update >/dev/null
    apt-get "${APT[@]}" source --download-only redis >/dev/null
    rm -rf redis-src && mkdir redis-src
    tar xzf redis_*.orig.tar.gz -C redis-src --strip-components=1
    make -C redis-src MALLOC=libc BUILD_TLS=no -j"$(nproc)" >build.log 2>&1
fi

SOCK=$WORK/redis.sock
rm -f "$SOCK"
redis-src/src/redis-server --port 0 --unixsocket "$SOCK" --save '' --appendonly no \
    >redis.log 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done

/usr/bin/python3 - >load.resp <<'EOF'
import sys
out = sys.stdout.buffer
for i in range(100000):
    k = b"key:%d" % i
    v = b"value-%08d-" % i + b"x" * 40
    out.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v))
EOF
redis-cli -s "$SOCK" --pipe <load.resp | tail -1
echo "keys: $(redis-cli -s "$SOCK" dbsize)"

rm -f r.lht r.snap*.lhs
"$LH" snapshot -p "$PID" -o r.lht | tee snapshot.out
gdb -p "$PID" -batch -ex 'print mallinfo2()' 2>/dev/null | grep '^\$1' >mallinfo.out
/usr/bin/python3 - <<'EOF'
import re
snap = open("snapshot.out").read()
mi = open("mallinfo.out").read()
m = re.search(r"(\d+) in chunks, \+ (\d+) in \d+ tcache chunks", snap)
ours = int(m.group(1)) + int(m.group(2))
g = dict((k, int(v)) for k, v in re.findall(r"(\w+) = (\d+)", mi))
glibc = g["uordblks"] + g["hblkhd"]
print("in-use chunk bytes: leakhound %d, mallinfo2 uordblks + hblkhd %d (%+.4f%%)"
      % (ours, glibc, 100.0 * (ours - glibc) / glibc))
EOF
for c in summary "largest 5" count "roots 5" "largest 1; identify @1"; do
    /usr/bin/time -f "  shell -c '$c': %e s wall, %U s user, %M KB peak" \
        "$LH" shell r.lht -c "$c" 2>&1 | tail -4
done
redis-cli -s "$SOCK" ping
