# One Perl line whose allocations take several paths through perl's C code: the hash entry
# (key), the anonymous hash's body and array, its values' bodies and strings. Displayed
# stacks are the same, so it must be one site.
package MyApp;
use strict;
use warnings;
our %CACHE;

sub handle {
    my ($i) = @_;
    $CACHE{"k$i"} = { user => "u$i", r => "x" x 200 };   # @store
    return 1;
}

package main;
my $n = $ARGV[0] // 1000;
MyApp::handle($_) for 1 .. $n;   # @loop
