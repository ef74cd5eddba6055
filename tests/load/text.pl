# leakhound - SPDX-License-Identifier: MIT
# load.perl workload: a report generator: records in hashes of arrays, sprintf-built lines,
# regex substitutions, nested data freed and rebuilt in rounds; deterministic output.
use strict;
use warnings;

my $total = 0;
my %seen;
for my $round (1 .. 6) {
    my @recs;
    for my $i (1 .. 20000) {
        my %r = (id => $i, name => sprintf("item-%06d-%d", $i, $round),
                 tags => [map { "tag$_" } 1 .. ($i % 5 + 1)]);
        push @recs, \%r;
    }
    my @lines = map { sprintf("%s|%s|%d", $_->{name}, join(",", @{ $_->{tags} }), $_->{id}) } @recs;
    for (@lines) {
        s/tag(\d)/T$1/g;
        s/item-0*/I/;
    }
    $seen{$_}++ for map { (split /\|/)[1] } @lines;
    $total += length join("\n", @lines);
    printf "round %d: %d lines, last %s\n", $round, scalar @lines, $lines[-1];
}
printf "total %d, tag sets %d\n", $total, scalar keys %seen;
for my $k (sort keys %seen) {
    printf "  %-20s %d\n", $k, $seen{$k};
}
