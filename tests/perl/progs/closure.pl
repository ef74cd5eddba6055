# A closure that captures an array and pushes to it on every call.
use strict;
use warnings;

sub make_collector {
    my @seen;
    return sub {
        my ($v) = @_;
        push @seen, { value => $v, text => "event number $v" };   # @push
        return scalar @seen;
    };
}

our $COLLECT = make_collector();   # kept by a package variable: not freed when the program ends
$COLLECT->($_) for 1 .. ($ARGV[0] // 1000);   # @call
