# leakhound - SPDX-License-Identifier: MIT
# An event-style connection that registers a callback capturing $self on $self (the
# classic closure cycle), and a tree whose child points back at its parent through a copy
# that was never weakened (weaken() was called on the wrong slot). Both are unreachable
# cycles at exit: `identify` must name the reference to break.
use strict;
use warnings;
use Scalar::Util qw(weaken);

package Shop::Conn;

sub new {
    my ($class, $id) = @_;
    my $self = bless { id => $id, buf => "r" x 2000, on_close => [] }, $class;
    push @{ $self->{on_close} }, sub { warn "closed $self->{id}\n" if $ENV{NOISY} };
    return $self;
}

package Shop::Node;

sub new {
    my ($class, $parent) = @_;
    my $self = bless { parent => $parent, kids => [] }, $class;
    if ($parent) {
        push @{ $parent->{kids} }, $self;
        $self->{owner} = $parent;           # the strong copy nobody weakened
        Scalar::Util::weaken($self->{parent});
    }
    return $self;
}

package main;

for my $n (1 .. 50) {
    my $c = Shop::Conn->new($n);
    my $root = Shop::Node->new(undef);
    Shop::Node->new($root) for 1 .. 3;
}
