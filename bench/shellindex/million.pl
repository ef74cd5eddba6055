# leakhound - SPDX-License-Identifier: MIT
# about 1 million perl SVs: 250,000 array refs, each holding a string and a number
my $n = @ARGV ? $ARGV[0] / 4 : 250000;
my @data = map { ["s$_", $_] } 1 .. $n;
LeakHound::snapshot("million");
