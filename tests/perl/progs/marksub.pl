# Each request stores one array of three strings under a new key: five blocks per call
# (the key, the array's body, its three strings).
package MyApp;
our %SEEN;
sub handle_request {
    my ($i) = @_;
    $SEEN{"k$i"} = [ map { "item $_" } 1 .. 3 ];   # @store
    return;
}
package main;
MyApp::handle_request($_) for 1 .. ($ARGV[0] // 50);
