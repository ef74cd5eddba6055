# A request loop whose session cache never evicts: every request stores one entry.
package MyApp;
use strict;
use warnings;
our %SESSION_CACHE;

sub remember {
    my ($id) = @_;
    $SESSION_CACHE{"session-$id"} = "s" x 200;  # @store
}

sub handle_request {
    my ($id) = @_;
    my @work = map { $_ * 2 } 1 .. 10;   # temporary: freed at the end of the call
    remember($id);                        # @call
    return scalar @work;
}

package main;
my $n = $ARGV[0] // 1000;
MyApp::handle_request($_) for 1 .. $n;   # @loop
