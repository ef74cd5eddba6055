#!/bin/sh
# leakhound - SPDX-License-Identifier: MIT
# Installs the Debian packages leakhound needs to build and test, when missing.
# As root it runs apt-get; otherwise it prints the exact command and exits 1.
# Usage: scripts/deps.sh [build|test|bench]   (each set includes the previous ones)
set -eu
set_name=${1:-build}
build="gcc g++ make cmake pkg-config libunwind-dev libdw-dev libelf-dev libzstd-dev libcmocka-dev libsqlite3-dev libedit-dev zlib1g-dev"
test="python3 perl libperl-dev sqlite3 binutils file gdb libjemalloc2 chromium golang-go redis-server redis-tools nginx-light apache2-utils clang libclang-rt-14-dev zstd cppcheck util-linux strace python3.11-dbg libc6-dbg python3.11-dev libpython3.11-testsuite libdevel-mat-perl libdevel-mat-dumper-perl python3-numpy memcached haproxy libtcmalloc-minimal4 libmimalloc2.0"
bench="heaptrack valgrind redis-server redis-tools time"
case "$set_name" in
  build) want="$build" ;;
  test) want="$build $test" ;;
  bench) want="$build $test $bench" ;;
  *) echo "deps.sh: unknown set '$set_name' (build, test or bench)" >&2; exit 2 ;;
esac
missing=""
for p in $want; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "leakhound: missing Debian packages; run as root:" >&2
  echo "  apt-get install -y$missing" >&2
  exit 1
fi
echo "leakhound: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null 2>&1 || apt-get update
apt-get install -y -qq $missing >/dev/null || apt-get install -y $missing
