# Calls an XS function that leaks memory malloc'ed in C.
use strict;
use warnings;
use Leaky;

sub fill_buffers {
    my ($n) = @_;
    Leaky::grab(1000 + $_) for 1 .. $n;   # @grab
}

fill_buffers($ARGV[0] // 100);
