# leakhound - SPDX-License-Identifier: MIT
# A loopback server that leaks on every request (tests/e2e/run_attach.py, case perl): one
# line in, "ok N" out; every request keeps a 1000-byte string in @CACHE for ever.
use strict;
use warnings;
use IO::Socket::INET;

my $server = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Listen => 16,
                                   ReuseAddr => 1) or die "listen: $!";
$| = 1;
print $server->sockport, "\n";
our @CACHE;
my $n = 0;

sub remember {
    my ($i) = @_;
    push @CACHE, ("x" x 1000) . $i;    # LEAK: perl_request
}

while (my $c = $server->accept) {
    while (my $line = <$c>) {
        remember(++$n);
        print $c "ok $n\n";
    }
    close $c;
}
