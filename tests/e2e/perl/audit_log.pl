# leakhound - SPDX-License-Identifier: MIT
# A log string that grows with .= forever (issue 12): $main::AUDIT_LOG ends at 20000 lines
# of 49 bytes (980000 bytes).
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

our $AUDIT_LOG = "";
for my $i (1 .. 20000) {
    $AUDIT_LOG .= sprintf("%08d user=alice action=login status=ok t=%06d\n", $i, $i);  # SITE: append
}
main::take_snapshot();
