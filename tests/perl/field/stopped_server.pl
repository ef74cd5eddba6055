# leakhound - SPDX-License-Identifier: MIT
# A request handler that leaks through a closure cycle (a callback stored on $self captures
# $self), in a server its operator checks with one SIGUSR2 half-way and then stops with
# Ctrl-C (SIGINT, perl's default action; the agent ends the trace as exit does). Every request also
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

use FindBin;
use lib "$FindBin::Bin/lib";
use FieldSnap;    # one_snapshot: as `kill -USR2 PID` from a shell

for my $n (1 .. 600) {
    handle($n);    # @request
    FieldSnap::one_snapshot() if $n == 300;
}
kill 'INT', $$;
