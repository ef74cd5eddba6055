# leakhound - SPDX-License-Identifier: MIT
# Two blessed classes in a reference cycle, created per request and never freed
# (issue 12): 250 Highlight::Engine and 250 Highlight::Theme nothing refers to.
use strict;
use warnings;

package Highlight::Theme;
sub new { my ($class, %a) = @_; return bless {%a}, $class }  # SITE: theme

package Highlight::Engine;
sub new {
    my ($class, $lang) = @_;
    my $self = bless { lang => $lang }, $class;  # SITE: engine
    $self->{theme} = Highlight::Theme->new(engine => $self, name => "dark");
    return $self;
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
sub handle_request { my $e = Highlight::Engine->new("perl"); return $e->{lang} }
my $total = 0;
$total += length handle_request() for 1 .. 250;
main::take_snapshot();
