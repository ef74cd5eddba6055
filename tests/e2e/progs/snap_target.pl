# leakhound - SPDX-License-Identifier: MIT
# A perl process holding known objects, for `leakhound snapshot -p` (run_snapshot.py case
# perl): 400 MyApp::Session objects in %MyApp::SESSIONS, 60 MyApp::Job objects in
# @MyApp::QUEUE, 25 MyApp::Node objects in reference cycles nothing else holds. Under
# `leakhound run` (LH_WAIT_FOR set) it takes its snapshot with SIGUSR2 and exits; alone it
# prints "ready PID" and waits for a line on standard input.
use strict;
use warnings;

package MyApp::Session;
sub new { my ($class, $id) = @_; return bless { id => $id, user => "u$id" }, $class }

package MyApp::Job;
sub new { my ($class, $n) = @_; return bless [$n, "job $n"], $class }

package MyApp::Node;
sub new { my ($class) = @_; return bless { peer => undef }, $class }

package MyApp;
our %SESSIONS;
our @QUEUE;

package main;

$MyApp::SESSIONS{sprintf "s%03d", $_} = MyApp::Session->new($_) for 1 .. 400;
push @MyApp::QUEUE, MyApp::Job->new($_) for 1 .. 60;
for (1 .. 25) {
    my $a = MyApp::Node->new;
    $a->{peer} = $a;    # a cycle of one: unreachable once $a goes
}

# Under the agent: the same handshake as tests/e2e/perl/session_cache.pl.
if (my $f = $ENV{LH_WAIT_FOR}) {
    for my $file ($f, $f =~ s/snap1\.lhs$/snap2.lhs/r) {
        kill 'USR2', $$;
        for (1 .. 2400) { last if -e $file; select(undef, undef, undef, 0.05) }
    }
    exit 0;
}
$| = 1;
print "ready $$\n";
my $line = <STDIN>;
