# leakhound - SPDX-License-Identifier: MIT
# A Moo class whose constructor Moo generates with a string eval on the first ->new (its
# lines are "(eval N)"), orders kept forever in a registry by the place() that made them.
# Devel::MAT at the end: %Shop::Orders::PLACED holds 500 Shop::Order objects.
use strict;
use warnings;

package Shop::Order;
use Moo;
has id    => (is => 'ro', required => 1);
has lines => (is => 'ro', default => sub { [] });
has note  => (is => 'rw');

package Shop::Orders;
our %PLACED;

sub place {
    my ($id) = @_;
    my $order = Shop::Order->new(id => $id, note => "gift wrap " x 10);    # @new
    $PLACED{$id} = $order;
    return $order;
}

package main;
Shop::Orders::place("o$_") for 1 .. 500;
