# leakhound - SPDX-License-Identifier: MIT
# A closure that captures a growing array (issue 12): @seen lives only in the closure
# stored in $main::HANDLER, and gets one 3-element array per call (400 calls).
use strict;
use warnings;

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

sub make_handler {
    my @seen;
    return sub { push @seen, [ $_[0], "req", time ]; return scalar @seen };  # SITE: push
}

our $HANDLER = make_handler();
$HANDLER->($_) for 1 .. 400;
main::take_snapshot();
