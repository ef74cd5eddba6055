# leakhound - SPDX-License-Identifier: MIT
# A PSGI-style app behind a response cache keyed by the request's X-Request-Id, which is
# new for every request: nothing is ever served from it, every response stays. Run with
# --mark-sub Shop::PSGI::call (each request a mark). Devel::MAT at the end:
# %Shop::Cache::BY_REQUEST holds 2000 ARRAYs, each a response with its rendered body.
use strict;
use warnings;

package Shop::Cache;
our %BY_REQUEST;

sub wrap {
    my ($app) = @_;
    return sub {
        my ($env) = @_;
        my $key = $env->{HTTP_X_REQUEST_ID};
        return $BY_REQUEST{$key} //= $app->($env);    # @cache
    };
}

package Shop::App;

sub render {
    my ($env) = @_;
    my @rows = map { "<tr><td>$_</td><td>$env->{PATH_INFO}</td></tr>" } 1 .. 20;
    return [200, ['Content-Type' => 'text/html'], [join "", "<table>", @rows, "</table>"]];  # @body
}

package Shop::PSGI;
my $app = Shop::Cache::wrap(\&Shop::App::render);

sub call {
    my ($n) = @_;
    my %env = (REQUEST_METHOD => 'GET', PATH_INFO => "/orders/" . ($n % 50),
               HTTP_X_REQUEST_ID => sprintf("req-%08d", $n));
    my $res = $app->(\%env);
    return $res->[0];
}

package main;
Shop::PSGI::call($_) for 1 .. 2000;
