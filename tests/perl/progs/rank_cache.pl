# A daemon whose leak is a cache it still reaches, one entry per request, beside a buffer
# of a fixed size it made at start-up (the report's order, issue 10).
package Daemon;
our %CACHE;
our $CONFIG = "c" x 200000;   # @config
sub handle {
    my ($i) = @_;
    $CACHE{"k$i"} = "v" x 3000;   # @entry
    return;
}
package main;
Daemon::handle($_) for 1 .. ($ARGV[0] // 50);
