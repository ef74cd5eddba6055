# leakhound - SPDX-License-Identifier: MIT
# A web app's shape (as Mojolicious::Lite's `get '/item' => sub {...}`): the route's
# handler is a closure kept in a routes table; each request renders a page and hands it to
# a package-level cache that never evicts. At start-up three pages were rendered ahead into
# %Shop::Pages::WARM, by the same line. Devel::MAT: %Shop::Cache::RENDERED holds 400 pages,
# %Shop::Pages::WARM 3: what holds that line's strings is the cache.
use strict;
use warnings;

package Shop::Pages;
our %WARM;

sub render {
    my ($n) = @_;
    my $body = "<p>item $n</p>" x 40;    # @body
    return $body;
}

package Shop::Cache;
our %RENDERED;    # never evicted

sub remember {
    my ($key, $body) = @_;
    $RENDERED{$key} = { body => $body, at => time };    # @remember
    return $RENDERED{$key};
}

package main;

$Shop::Pages::WARM{$_} = Shop::Pages::render($_) for 1 .. 3;
my %ROUTES;
my $n = 0;
$ROUTES{'/item'} = sub {
    my ($path) = @_;
    $n++;
    Shop::Cache::remember("$path-$n", Shop::Pages::render($n));
    return 1;
};
$ROUTES{'/item'}->('/item') for 1 .. 400;
