# leakhound - SPDX-License-Identifier: MIT
# real.perl workload: build, sort and fold hashes of strings; deterministic output.
use strict;
use warnings;

my %words;
my %by_len;
for my $i (1 .. 60000) {
    my $w = join("", map { chr(97 + (($i * 2654435761 + $_ * 40503) >> 9) % 26) } 1 .. (3 + $i % 9));
    $words{$w}++;
    push @{ $by_len{ length $w } }, $w;
}
my @sorted = sort { $words{$b} <=> $words{$a} || $a cmp $b } keys %words;
my $sum = 0;
$sum += ord(substr($_, 0, 1)) for @sorted;
printf "words %d distinct %d checksum %d\n", 60000, scalar(@sorted), $sum;
for my $len (sort { $a <=> $b } keys %by_len) {
    my @uniq = do { my %s; grep { !$s{$_}++ } @{ $by_len{$len} } };
    printf "len %2d: %6d words, %6d distinct, first %s\n", $len, scalar @{ $by_len{$len} },
        scalar @uniq, (sort @uniq)[0];
}
print "top: @sorted[0 .. 4]\n";
