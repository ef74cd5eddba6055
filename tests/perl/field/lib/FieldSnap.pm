# leakhound - SPDX-License-Identifier: MIT
# One snapshot, as `kill -USR2 PID` from a shell, for the field programs: LH_WAIT_FOR names
# the contents file the agent writes when it takes it (polling, no timing). Without it
# (the program run by hand) nothing is sent.
package FieldSnap;
use strict;
use warnings;

sub one_snapshot {
    my $f = $ENV{LH_WAIT_FOR} or return;
    kill 'USR2', $$;
    for (1 .. 2400) { last if -e $f; select(undef, undef, undef, 0.05) }
}

1;
