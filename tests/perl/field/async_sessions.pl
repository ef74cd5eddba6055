# leakhound - SPDX-License-Identifier: MIT
# An IO::Async server's session timeouts: each request makes a session and a countdown
# timer whose on_expire closure captures it, added to the loop in a file-scoped `my $loop`.
# The timeout is an hour, so every session stays until then. IO::Async::Loop->new also
# keeps the loop in $IO::Async::Loop::ONE_TRUE_LOOP: two variables hold it, neither alone
# (Devel::MAT's identify: "the lexical $loop at depth 1 of main_cv" and "the scalar of
# GLOB *IO::Async::Loop::ONE_TRUE_LOOP"). One snapshot after 300 requests: the LeakHound
# module's when it is found (under leakhound), else a SIGUSR2 (Devel::MAT's dump at it).
use strict;
use warnings;
use IO::Async::Loop;
use IO::Async::Timer::Countdown;

package Shop::Session;
sub new {
    my ($class, %args) = @_;
    return bless { %args, cart => "item;" x 400 }, $class;    # @session
}

package main;

use FindBin;
use lib "$FindBin::Bin/lib";
use FieldSnap;

my $loop = IO::Async::Loop->new;
for my $n (1 .. 300) {
    my $session = Shop::Session->new(id => "s$n");
    my $timeout = IO::Async::Timer::Countdown->new(
        delay     => 3600,
        on_expire => sub { $session->{expired} = 1 },    # @expire
    );
    $timeout->start;
    $loop->add($timeout);
}
$loop->loop_once(0);
if (eval { require LeakHound }) {
    LeakHound::snapshot("loaded");
} else {
    FieldSnap::one_snapshot();
}
