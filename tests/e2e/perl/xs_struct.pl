# leakhound - SPDX-License-Identifier: MIT
# An XS module's C structs under their Perl objects (issue 12): 100 Digest::MD5 objects
# kept in @main::CTX, each holding a malloc'd MD5 context through its ext magic.
use strict;
use warnings;
use Digest::MD5;

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

our @CTX = map { my $c = Digest::MD5->new; $c->add("x" x $_); $c } 1 .. 100;  # SITE: ctx
main::take_snapshot();
