# leakhound - SPDX-License-Identifier: MIT
# A key-value store of 100,000 keys in a perl hash (perl allocates with glibc's malloc), for
# `leakhound snapshot -p` (run_snapshot.py case kv100k): the issue's redis-server test on
# a server that is not linked with jemalloc. Prints "ready PID" and waits for a line on
# standard input.
use strict;
use warnings;

our %DB;
$DB{"key:$_"} = "value-$_-" . ("v" x ($_ % 50)) for 1 .. 100_000;
$| = 1;
print "ready $$\n";
my $line = <STDIN>;
