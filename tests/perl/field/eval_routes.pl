# leakhound - SPDX-License-Identifier: MIT
# A router that compiles a validator per path with a string eval and keeps it, keyed by
# the path, which is new for every request (/item/1, /item/2, ...): 400 subs compiled by
# 400 evals, "(eval 5)" to "(eval 404)", at one line of the program. It also keeps a
# compiled pattern per search word (one qr// per request). Devel::MAT at the end:
# %Shop::Router::VALIDATORS holds 400 CODEs, %Shop::Router::RX 400 REGEXPs.
use strict;
use warnings;

package Shop::Router;
our %VALIDATORS;
our %RX;

sub validator {
    my ($path) = @_;
    my $src = "sub { my (\$v) = \@_; return \$v =~ m{^\\Q$path\\E} ? 1 : 0 }";
    return $VALIDATORS{$path} //= eval $src // die $@;    # @eval
}

sub matcher {
    my ($word) = @_;
    return $RX{$word} //= qr/\b\Q$word\E\b/i;    # @qr
}

package main;
for my $n (1 .. 400) {
    my $path = "/item/$n";
    Shop::Router::validator($path)->($path) or die "no match";
    "find widget$n here" =~ Shop::Router::matcher("widget$n") or die "no match";
}
