# Core modules no one here wrote, run unchanged: JSON::PP and Storable round trips.
use strict;
use warnings;
use JSON::PP;
use Storable qw(freeze thaw);

my $json = JSON::PP->new->canonical;
my @keep;
for my $i (1 .. ($ARGV[0] // 200)) {
    my $doc = { id => $i, name => "item $i", tags => [ map { "t$_" } 1 .. 5 ],
                nested => { a => [1 .. 10], b => "x" x 50 } };
    my $text = $json->encode($doc);
    my $back = $json->decode($text);
    my $copy = thaw(freeze($back));
    push @keep, $copy if $i % 10 == 0;
}
print scalar(@keep), "\n";
