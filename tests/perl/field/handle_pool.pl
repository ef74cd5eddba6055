# leakhound - SPDX-License-Identifier: MIT
# A connection pool that opens a handle per request and never gives one back: the objects
# are made inside a core module (IO::Handle->new blesses a glob from Symbol::gensym), so
# where they were created is a line of Symbol.pm; the line to act on is the program's own
# call, which `identify` names after it. Devel::MAT at the end: @Shop::Pool::HANDLES holds
# 100 IO::Handle.
use strict;
use warnings;
use IO::Handle;

package Shop::Pool;
our @HANDLES;

sub checkout {
    my ($n) = @_;
    my $h = IO::Handle->new;    # @checkout
    push @HANDLES, $h;
    return $h;
}

package main;
Shop::Pool::checkout($_) for 1 .. 100;
my @tmp = map { [ ("row") x 50 ] } 1 .. 2000;    # fills SV arenas
