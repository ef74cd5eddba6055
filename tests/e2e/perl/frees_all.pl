# leakhound - SPDX-License-Identifier: MIT
# A program that frees everything it makes (issue 12): objects, cycles broken by
# weaken, closures and big strings come and go; nothing is left in a cycle.
use strict;
use warnings;
use Scalar::Util qw(weaken);

package Node;
sub new { my ($class, %a) = @_; return bless {%a}, $class }

package main;

# The test's snapshot: SIGUSR2 asks the agent for one, and its contents file appearing
# means the snapshot's copy of the process is being made (LH_WAIT_FOR names it). A second
# snapshot's file appearing means the agent has finished recording the first one (one
# thread serves both in turn): only then may the program exit. Polling, no timing.
sub take_snapshot {
    return if $ENV{LH_NO_SIGNAL};    # the exit snapshot only
    my $f = $ENV{LH_WAIT_FOR} or return kill 'USR2', $$;
    for my $file ($f, $f =~ s/snap1\.lhs$/snap2.lhs/r) {
        kill 'USR2', $$;
        for (1 .. 2400) { last if -e $file; select(undef, undef, undef, 0.05) }
    }
}
for my $i (1 .. 300) {
    my $parent = Node->new(id => $i, kids => []);
    for my $k (1 .. 3) {
        my $kid = Node->new(id => "$i.$k", parent => $parent);
        weaken($kid->{parent});
        push @{ $parent->{kids} }, $kid;
    }
    my $s = "y" x 10000;
    my $cb = sub { return length($s) + $parent->{id} };
    $cb->();
}
main::take_snapshot();
