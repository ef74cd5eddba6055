# leakhound - SPDX-License-Identifier: MIT
# A request loop that leaks a cycle of two blessed objects per request, with a snapshot
# after 100 requests (signal-1) and another after 250 (signal-3): `diff` by class says
# 150 more of each (issue 12).
use strict;
use warnings;

package Grow::Session;
sub new { my ($class, $id) = @_; my $s = bless { id => $id }, $class;
          $s->{user} = Grow::User->new($s); return $s }

package Grow::User;
sub new { my ($class, $session) = @_; return bless { session => $session }, $class }

package main;

# Snapshot number $n by SIGUSR2; waiting for the contents files of $n and $n + 1 (asked
# for right after) means snapshot $n is fully recorded (one agent thread serves them in
# turn). LH_WAIT_FOR names the first contents file. Polling, no timing.
sub take_snapshot {
    my ($n) = @_;
    my $f = $ENV{LH_WAIT_FOR} or return kill 'USR2', $$;
    for my $k ($n, $n + 1) {
        my $file = $f =~ s/snap1\.lhs$/snap$k.lhs/r;
        kill 'USR2', $$;
        for (1 .. 2400) { last if -e $file; select(undef, undef, undef, 0.05) }
    }
}

sub handle_request { my $s = Grow::Session->new($_[0]); return $s->{id} }
handle_request($_) for 1 .. 100;
take_snapshot(1);
handle_request($_) for 101 .. 250;
take_snapshot(3);
