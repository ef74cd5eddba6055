# leakhound - SPDX-License-Identifier: MIT
# A request handler that leaks through a closure cycle (a callback stored on $self captures
# $self), in a server its operator checks with one SIGUSR2 half-way and then stops with
# Ctrl-C (SIGINT, perl's default action: no exit snapshot, no trailer). Every request also
# makes and frees short-lived objects, so perl's SV arenas grow only with the leaked ones.
use strict;
use warnings;

package Shop::Handler;

sub new {
    my ($class, $req) = @_;
    my $self = bless { req => $req, on_done => [] }, $class;
    push @{ $self->{on_done} }, sub { $self->{req}{path} };    # @cycle
    $self->{body} = "b" x 3000;                                # @body
    return $self;
}

package main;

sub handle {
    my ($n) = @_;
    my $h = Shop::Handler->new({ path => "/item/$n", query => "id=$n" });
    my @tmp = map { { n => $_ } } 1 .. 20;    # freed at once
    return $h->{on_done}[0]->();
}

# One snapshot, as `kill -USR2 PID` from a shell: LH_WAIT_FOR names the contents file the
# agent writes when it takes it (polling, no timing).
sub one_snapshot {
    my $f = $ENV{LH_WAIT_FOR} or return;
    kill 'USR2', $$;
    for (1 .. 2400) { last if -e $f; select(undef, undef, undef, 0.05) }
}

for my $n (1 .. 600) {
    handle($n);    # @request
    one_snapshot() if $n == 300;
}
kill 'INT', $$;
