# leakhound - SPDX-License-Identifier: MIT
# bench workload for perl: hash and string work (build, join, split, sort, delete).
# Usage: perl hash.pl [ROUNDS]   (default 30)
use strict;
use warnings;

my $rounds = $ARGV[0] // 30;
my $checksum = 0;
for my $r (1 .. $rounds) {
    my %h;
    for my $i (1 .. 20000) {
        my $k = "key-$r-$i";
        $h{$k} = { n => $i, s => uc($k) x 2, l => [ $i, $i * 2 ] };
    }
    my $text = join(",", map { "$_=$h{$_}{n}" } sort keys %h);
    my @parts = split /,/, $text;
    $checksum += scalar(@parts) + length($text);
    delete $h{$_} for grep { /7$/ } keys %h;
    $checksum += scalar(keys %h);
}
print "hash.pl: $rounds rounds, checksum $checksum\n";
