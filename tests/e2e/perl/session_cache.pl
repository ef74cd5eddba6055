# leakhound - SPDX-License-Identifier: MIT
# A request loop whose session cache never evicts (issue 12): 300 entries stay in
# %MyApp::SESSION_CACHE, each a hash with a 2000-byte rendered page.
use strict;
use warnings;

package MyApp;
our %SESSION_CACHE;

sub handle_request {
    my ($n) = @_;
    my $sid = sprintf("%040x", $n * 7919);
    my $page = "<p>" . ("x" x 1993) . "</p>";  # SITE: page
    $SESSION_CACHE{$sid} = { rendered => $page, hits => $n };  # SITE: store
    return length $page;
}

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
MyApp::handle_request($_) for 1 .. 300;
main::take_snapshot();
