# Two leaks from sibling subs, called alternately under the same callers: each site must
# keep its own Perl stack (frames shared with the previous allocation's stack, or not).
use strict;
use warnings;
our (@A, @B);
sub inner_a { push @A, "a" x 100 }   # @a
sub inner_b { push @B, "b" x 300 }   # @b
sub middle {
    inner_a();   # @call_a
    inner_b();   # @call_b
}
sub outer { middle() }   # @call_middle
outer() for 1 .. ($ARGV[0] // 500);   # @loop
