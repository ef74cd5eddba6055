# leakhound - SPDX-License-Identifier: MIT
# A pre-fork server (Starman, a prefork daemon): the parent fills %main::CACHE with 300
# entries, then forks 2 workers; each adds 40 entries of its own to the same hash and exits.
# Each worker's trace, read alone, holds the heap it inherited (analysis/trace.h): its
# snapshot names %main::CACHE and the parent's line that built it.
use strict;
use warnings;
our %CACHE;

sub build_cache {
    for my $i (1 .. 300) {
        $CACHE{"key$i"} = "v" x (100 + $i % 7);    # SITE: parent_build
    }
}

build_cache();
my @kids;
for my $n (1 .. 2) {
    my $pid = fork();
    die "fork: $!" unless defined $pid;
    if ($pid == 0) {
        for my $i (1 .. 40) {
            $CACHE{"child$n-$i"} = "w" x 500;    # SITE: child_add
        }
        exit 0;
    }
    push @kids, $pid;
}
waitpid($_, 0) for @kids;
print "parent $$ children @kids\n";
