# leakhound - SPDX-License-Identifier: MIT
# A web framework's "before" hook (as a Dancer2 app's `hook before => sub { push @AUDIT,
# {...} }`) that keeps one record per request forever, checked with one SIGUSR2 after 100
# requests and left to run 150 more. Each request also builds and frees a response hash.
# Devel::MAT at the end: @Shop::Web::AUDIT holds 250 HASHes.
use strict;
use warnings;

package Shop::Web;
our @AUDIT;
my @HOOKS = (sub {
    my ($req) = @_;
    push @AUDIT, { path => $req->{path}, agent => $req->{agent} };    # @hook
});

sub dispatch {
    my ($req) = @_;
    $_->($req) for @HOOKS;
    my %res = (status => 200, body => "ok $req->{path}");
    return $res{status};
}

package main;

use FindBin;
use lib "$FindBin::Bin/lib";
use FieldSnap;    # one_snapshot: as `kill -USR2 PID` from a shell

for my $n (1 .. 250) {
    Shop::Web::dispatch({ path => "/item/$n", agent => "ab/2.3" });
    FieldSnap::one_snapshot() if $n == 100;
}
