# leakhound - SPDX-License-Identifier: MIT
# Real Perl no one here wrote (issue 12): JSON::PP and Storable round trips keep some of
# their results; Devel::MAT::Dumper (the oracle) writes its dump, then the leakhound
# snapshot is taken at the same point: the class counts must agree.
use strict;
use warnings;
use Devel::MAT::Dumper;
use JSON::PP;
use Storable qw(dclone);

package Shop::Item;
sub new { my ($class, %a) = @_; return bless {%a}, $class }

package Shop::Cart;
sub new { my ($class) = @_; return bless { items => [] }, $class }
sub add { my ($self, $item) = @_; push @{ $self->{items} }, $item; return $self }

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
my $json = JSON::PP->new->canonical;
my @kept;
for my $i (1 .. 120) {
    my $cart = Shop::Cart->new;
    $cart->add(Shop::Item->new(sku => "A$i", price => $i * 1.5)) for 1 .. 3;
    my $text = $json->encode({ cart => [ map { {%$_} } @{ $cart->{items} } ] });
    my $back = $json->decode($text);
    my $copy = dclone($cart);
    push @kept, $copy if $i % 4 == 0;
}
Devel::MAT::Dumper::dump($ENV{LH_PMAT_FILE});
main::take_snapshot();
