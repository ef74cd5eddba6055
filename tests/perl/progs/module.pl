# Marks and a snapshot from Perl code through the LeakHound module.
use strict;
use warnings;
use LeakHound;
our @KEEP;
for my $i (1 .. ($ARGV[0] // 30)) {
    LeakHound::mark("request");
    push @KEEP, "entry $i" x 3;   # @keep
    LeakHound::snapshot("after-warmup") if $i == 10;
    LeakHound::snapshot("late") if $i == 20;
}
print LeakHound::active() ? "active\n" : "inactive\n";
