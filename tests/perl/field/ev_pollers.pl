# leakhound - SPDX-License-Identifier: MIT
# AnyEvent pollers over EV (Debian libanyevent-perl, libev-perl): each poller stores a
# tick callback that captures $self on $self and hands it to an hour-long AnyEvent timer
# kept in $self->{timers}; the registry meant to hold them only weakly. EV keeps a
# watcher's callback in its C struct (the watcher object's string buffer), so each poller
# is a cycle through its timer: poller -> {timers} -> EV::Timer -> XS struct -> CODE ->
# closure $self -> poller. Devel::MAT at END: 200 Shop::Poller, 200 EV::Timer.
use strict;
use warnings;
use AnyEvent;
use EV;
use Scalar::Util qw(weaken);

package Shop::Poller;

sub new {
    my ($class, $id) = @_;
    return bless { id => $id, timers => [], buffer => "x" x 500 }, $class;
}

sub start {
    my ($self) = @_;
    $self->{on_tick} = sub { $self->{buffer} .= "." };    # @tick
    push @{ $self->{timers} }, AnyEvent->timer(after => 3600, cb => $self->{on_tick});
}

package Shop::Registry;
our %POLLERS;

sub add {
    my ($n) = @_;
    my $p = Shop::Poller->new($n);
    $p->start;
    $POLLERS{$n} = $p;
    Scalar::Util::weaken($POLLERS{$n});    # only the cycle keeps it
}

package main;
Shop::Registry::add($_) for 1 .. 200;
my $cv = AnyEvent->condvar;
my $w = AnyEvent->timer(after => 0.01, cb => sub { $cv->send });
$cv->recv;
