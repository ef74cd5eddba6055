# leakhound - SPDX-License-Identifier: MIT
# A hand-rolled HTTP server (IO::Socket::INET, core perl) driven by a forked HTTP::Tiny
# client: 300 GETs, then /quit. Each request installs a __WARN__ handler that tags
# warnings with the request's path and calls the handler it replaced, and never restores
# it: a chain of 301 closures, each holding the one before in $prev and its request in
# $req, from $SIG{__WARN__}, which perl also keeps in PL_warnhook. Devel::MAT at the end:
# 301 CODEs made at the handler's line, each but the first holding the one before.
use strict;
use warnings;
use IO::Socket::INET;
use HTTP::Tiny;

package Shop::Server;

sub parse_request {
    my ($sock) = @_;
    my $line = <$sock> // return;
    my ($method, $path) = $line =~ m{^(\w+) (\S+)};
    my %h;
    while (my $l = <$sock>) {
        last if $l =~ /^\r?\n$/;
        my ($k, $v) = $l =~ /^([^:]+):\s*(.*?)\r?\n$/ or next;
        $h{lc $k} = $v;
    }
    return { method => $method, path => $path, headers => \%h, body => "x" x 1500 };  # @req
}

sub tag_warnings {
    my ($req) = @_;
    my $prev = $SIG{__WARN__};
    $SIG{__WARN__} = sub {    # the bug: never restored, each wraps the last
        my $msg = "[$req->{path}] @_";
        $prev ? $prev->($msg) : print STDERR $msg;
    };    # @handler (perl's line of this statement, as a warn in it would say)
}

sub handle {
    my ($sock) = @_;
    my $req = parse_request($sock) or return;
    tag_warnings($req);
    my $body = "hello $req->{path}\n";
    print $sock "HTTP/1.0 200 OK\r\nContent-Length: " . length($body) . "\r\n\r\n$body";
    return $req->{path};
}

package main;

my $srv = IO::Socket::INET->new(Listen => 10, LocalAddr => '127.0.0.1', LocalPort => 0,
                                ReuseAddr => 1) or die "listen: $!";
my $port = $srv->sockport;
my $pid = fork // die "fork: $!";
if (!$pid) {
    my $ua = HTTP::Tiny->new;
    $ua->get("http://127.0.0.1:$port/item/$_") for 1 .. 300;
    $ua->get("http://127.0.0.1:$port/quit");
    exit 0;
}
while (my $c = $srv->accept) {
    my $path = Shop::Server::handle($c) // '';
    close $c;
    last if $path eq '/quit';
}
waitpid $pid, 0;
