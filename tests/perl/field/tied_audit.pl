# leakhound - SPDX-License-Identifier: MIT
# An audit log behind a tied hash (as Tie::Hash::NamedCapture or a session store's): every
# `$AUDIT{...} = ...` in a handler calls STORE from perl's mg_set, which keeps each write.
# perl enters STORE (its @_ made, its arguments pushed) while the assignment's statement
# is still the current one: those allocations are the assignment's, not STORE's.
use strict;
use warnings;

package Shop::AuditLog;

sub TIEHASH { return bless { rows => [] }, shift }

sub STORE {
    my ($self, $key, $value) = @_;
    push @{ $self->{rows} }, "$key=$value";    # @store
    return;
}

sub FETCH { return undef }

package Shop::Handler;
tie our %AUDIT, 'Shop::AuditLog';

sub handle {
    my ($n) = @_;
    my $path = "/item/$n";
    $AUDIT{"req$n"} = $path x 10;    # @assign
    return $n;
}

package main;
Shop::Handler::handle($_) for 1 .. 300;
